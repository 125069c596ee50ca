"""LocalVisBackend: lazy directories, config copy, JSON-lines scalars."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cadence.config import Config
from cadence.registry import VISBACKENDS
from cadence.visualization import LocalVisBackend


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_nothing_is_created_until_written(tmp_path):
    save_dir = tmp_path / "run" / "vis_data"
    backend = LocalVisBackend(save_dir)
    assert not save_dir.exists()
    backend.add_scalar("lr", 0.1, step=3)
    assert save_dir.is_dir()
    assert read_lines(save_dir / "scalars.json") == [{"lr": 0.1, "step": 3}]


def test_add_scalars_appends_one_line_per_call(tmp_path):
    backend = LocalVisBackend(tmp_path)
    backend.add_scalars({"loss": torch.tensor(0.5), "acc": np.float64(0.25)}, step=1)
    backend.add_scalars({"loss": 0.25, "vec": torch.tensor([1, 2])}, step=2)
    backend.add_scalars({"loss": 0.125, "step": 99}, step=3)  # an explicit step wins
    assert read_lines(tmp_path / "scalars.json") == [
        {"loss": 0.5, "acc": 0.25, "step": 1},
        {"loss": 0.25, "vec": [1, 2], "step": 2},
        {"loss": 0.125, "step": 99},
    ]


def test_extra_scalar_file(tmp_path):
    backend = LocalVisBackend(tmp_path, scalar_save_file="all.json")
    backend.add_scalars({"acc": 0.9}, step=5, file_path="val.json")
    assert read_lines(tmp_path / "val.json") == [{"acc": 0.9, "step": 5}]
    assert read_lines(tmp_path / "all.json") == [{"acc": 0.9, "step": 5}]
    with pytest.raises(ValueError, match="scalar log itself"):
        backend.add_scalars({"acc": 1.0}, file_path="all.json")
    with pytest.raises(ValueError, match=".json"):
        backend.add_scalars({"acc": 1.0}, file_path="val.txt")
    with pytest.raises(TypeError, match="dict"):
        backend.add_scalars([("acc", 1.0)])  # type: ignore[arg-type]


def test_add_config_writes_pretty_text_or_str(tmp_path):
    cfg = Config({"model": {"type": "Net", "depth": 3}, "lr": 0.1})
    backend = LocalVisBackend(tmp_path)
    backend.add_config(cfg)
    text = (tmp_path / "config.py").read_text()
    assert text == cfg.pretty_text
    namespace: dict = {}
    exec(text, namespace)  # the copy is a loadable python config
    assert namespace["model"] == {"type": "Net", "depth": 3} and namespace["lr"] == 0.1
    LocalVisBackend(tmp_path / "plain", config_save_file="cfg.py").add_config({"a": 1})
    assert (tmp_path / "plain" / "cfg.py").read_text() == "{'a': 1}"


def test_file_names_are_checked_and_registered(tmp_path):
    with pytest.raises(ValueError, match=".py"):
        LocalVisBackend(tmp_path, config_save_file="config.yaml")
    with pytest.raises(ValueError, match=".json"):
        LocalVisBackend(tmp_path, scalar_save_file="scalars.csv")
    built = VISBACKENDS.build(dict(type="LocalVisBackend", save_dir=str(tmp_path)))
    assert isinstance(built, LocalVisBackend) and built.save_dir == str(tmp_path)
    assert built.experiment is built
    built.close()

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


def test_lines_are_readable_at_once_and_writes_after_close_append(tmp_path):
    backend = LocalVisBackend(tmp_path)
    backend.add_scalars({"loss": 1.0}, step=1)
    # flushed per line although the file stays open between writes
    assert read_lines(tmp_path / "scalars.json") == [{"loss": 1.0, "step": 1}]
    backend.close()
    backend.close()  # twice is fine
    backend.add_scalar("acc", 0.5, step=2)
    backend.add_scalars({"acc": 0.75}, step=3, file_path="val.json")
    backend.close()
    assert read_lines(tmp_path / "scalars.json") == [
        {"loss": 1.0, "step": 1},
        {"acc": 0.5, "step": 2},
        {"acc": 0.75, "step": 3},
    ]
    assert read_lines(tmp_path / "val.json") == [{"acc": 0.75, "step": 3}]


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
    with pytest.raises(AssertionError):  # as mmengine's, which asserts
        LocalVisBackend(tmp_path, config_save_file="config.yaml")
    with pytest.raises(ValueError, match=".json"):
        LocalVisBackend(tmp_path, scalar_save_file="scalars.csv")
    built = VISBACKENDS.build(dict(type="LocalVisBackend", save_dir=str(tmp_path)))
    assert isinstance(built, LocalVisBackend) and built.save_dir == str(tmp_path)
    assert built.experiment is built
    built.close()


def test_add_image_writes_png_named_by_step(tmp_path):
    from PIL import Image

    backend = LocalVisBackend(tmp_path / "vis_data")
    chw = torch.zeros(3, 4, 6)
    chw[0] = 1.0  # pure red
    backend.add_image("pred", chw, step=7)
    backend.add_image("val/sample", np.full((2, 2), 9, dtype=np.uint8))  # gray, step 0
    with Image.open(tmp_path / "vis_data" / "vis_image" / "pred_7.png") as png:
        pixels = np.asarray(png)
    assert pixels.shape == (4, 6, 3)
    assert (pixels == np.array([255, 0, 0], dtype=np.uint8)).all()
    with Image.open(tmp_path / "vis_data" / "vis_image" / "val" / "sample_0.png") as png:
        assert np.asarray(png).tolist() == [[[9, 9, 9]] * 2] * 2


def test_add_image_refuses_names_leaving_the_image_dir(tmp_path):
    backend = LocalVisBackend(tmp_path / "vis_data", img_save_dir="imgs")
    with pytest.raises(ValueError, match="outside"):
        backend.add_image("../../escape", np.zeros((2, 2, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="outside"):
        backend.add_image(str(tmp_path / "abs"), np.zeros((2, 2, 3), dtype=np.uint8))
    assert not (tmp_path / "escape_0.png").exists()


def test_scalar_number_and_split_step():
    from cadence.visualization.vis_backend import scalar_number, split_step

    assert scalar_number(3) == 3 and scalar_number(0.5) == 0.5 and scalar_number(True) == 1
    assert scalar_number(torch.tensor(2.5)) == 2.5
    assert scalar_number(np.array([4])) == 4 and scalar_number(np.float32(0.25)) == 0.25
    assert scalar_number("x") is None and scalar_number(torch.tensor([1, 2])) is None
    values = {"loss": 1.0}
    assert split_step(values, 5) == ({"loss": 1.0}, 5)
    assert split_step({"loss": 1.0, "step": torch.tensor(9)}, 5) == ({"loss": 1.0}, 9)
    with pytest.raises(TypeError, match="'step' entry"):
        split_step({"step": 1.5}, 0)
    with pytest.raises(TypeError, match="dict"):
        split_step([("loss", 1.0)], 0)  # type: ignore[arg-type]

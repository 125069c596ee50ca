"""WandbVisBackend: calls into wandb (a recording stand-in), then a real offline run."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import torch

from cadence.config import Config
from cadence.registry import VISBACKENDS
from cadence.visualization import WandbVisBackend


class FakeRun:
    def __init__(self, calls: list) -> None:
        self.calls = calls
        self.config = types.SimpleNamespace(
            update=lambda values, allow_val_change=False: calls.append(
                ("config", values, allow_val_change)
            )
        )

    def log(self, values, commit=None):
        self.calls.append(("log", values, commit))

    def log_code(self, name=None):
        self.calls.append(("log_code", name))

    def finish(self):
        self.calls.append(("finish",))


@pytest.fixture
def fake_wandb(monkeypatch):
    calls: list = []
    module = types.ModuleType("wandb")
    module.init = lambda **kwargs: calls.append(("init", kwargs)) or FakeRun(calls)
    module.define_metric = lambda *args, **kwargs: calls.append(("define_metric", args, kwargs))
    module.watch = lambda model, **kwargs: calls.append(("watch", model, kwargs))
    module.Image = lambda array: ("Image", array)
    monkeypatch.setitem(sys.modules, "wandb", module)
    return calls


def test_init_is_lazy_and_defaults_dir_to_save_dir(tmp_path, fake_wandb):
    backend = WandbVisBackend(tmp_path / "vis", init_kwargs={"project": "p"})
    assert fake_wandb == [] and not (tmp_path / "vis").exists()
    assert backend.experiment is sys.modules["wandb"]
    assert fake_wandb == [("init", {"project": "p", "dir": str(tmp_path / "vis")})]
    assert (tmp_path / "vis").is_dir()
    given = WandbVisBackend(tmp_path, init_kwargs={"dir": "/elsewhere"})
    given.add_scalar("x", 1)
    assert fake_wandb[1] == ("init", {"dir": "/elsewhere"})


def test_define_metric_as_dict_or_list(tmp_path, fake_wandb):
    WandbVisBackend(tmp_path, define_metric_cfg={"acc": "max", "loss": "min"}).add_scalar("x", 1)
    listed = [dict(name="loss", step_metric="epoch")]
    WandbVisBackend(tmp_path, define_metric_cfg=listed).add_scalar("x", 1)
    defined = [call[1:] for call in fake_wandb if call[0] == "define_metric"]
    assert defined == [
        (("acc",), {"summary": "max"}),
        (("loss",), {"summary": "min"}),
        ((), {"name": "loss", "step_metric": "epoch"}),
    ]
    with pytest.raises(TypeError, match="define_metric_cfg"):
        WandbVisBackend(tmp_path, define_metric_cfg="acc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"define_metric_cfg\[0\]"):
        WandbVisBackend(tmp_path, define_metric_cfg=["acc"]).add_scalar("x", 1)  # type: ignore


def test_scalars_config_images_graph_and_close(tmp_path, fake_wandb):
    backend = VISBACKENDS.build(
        dict(
            type="WandbVisBackend",
            save_dir=str(tmp_path),
            commit=False,
            log_code_name="code",
            watch_kwargs={"log": "all"},
            init_kwargs={"allow_val_change": True},
        )
    )
    backend.add_scalars({"loss": torch.tensor(0.5), "step": 3, "acc": np.float32(0.25)}, step=1)
    backend.add_scalar("lr", torch.tensor(0.1))
    backend.add_config(Config({"model": {"depth": 3}}))
    backend.add_image("sample", torch.ones(3, 2, 2))
    backend.add_graph("the model")
    backend.close()
    backend.close()  # only the first close finishes the run
    calls = fake_wandb[1:]
    assert calls[0] == ("log", {"loss": 0.5, "acc": 0.25}, False)  # no step sent to wandb
    assert calls[1][0] == "log" and calls[1][1]["lr"] == pytest.approx(0.1)
    assert calls[2] == ("config", {"model": {"depth": 3}}, True)
    assert calls[3] == ("log_code", "code")
    kind, logged, commit = calls[4]
    assert kind == "log" and commit is False
    (label, image) = logged["sample"]
    assert label == "Image" and image.shape == (2, 2, 3) and image.dtype == np.uint8
    assert (image == 255).all()
    assert calls[5] == ("watch", "the model", {"log": "all"})
    assert calls[6:] == [("finish",)]


def test_missing_wandb_names_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(ImportError, match="pip install wandb"):
        WandbVisBackend(tmp_path).add_scalar("x", 1)
    with pytest.raises(TypeError, match="init_kwargs"):
        WandbVisBackend(tmp_path, init_kwargs=["project"])  # type: ignore[arg-type]


def test_offline_run(tmp_path, wandb_offline):
    (tmp_path / "train.py").write_text("x = 1\n")
    save_dir = tmp_path / "vis_data"
    backend = WandbVisBackend(
        save_dir, init_kwargs={"project": "cadence-test"}, define_metric_cfg={"acc": "max"}
    )
    backend.add_scalars({"loss": torch.tensor(0.5), "acc": 0.2}, step=1)
    backend.add_scalars({"loss": 0.25, "acc": 0.9}, step=2)
    backend.add_scalar("acc", 0.3)
    backend.add_config(Config({"model": {"depth": 3}}))
    backend.add_image("sample", np.zeros((4, 4, 3), dtype=np.uint8))
    run = backend._run
    assert run.summary["loss"] == 0.25
    assert dict(run.summary["acc"]) == {"max": 0.9}
    assert run.config["model"] == {"depth": 3}
    backend.close()
    (run_dir,) = (save_dir / "wandb").glob("offline-run-*")
    (record_file,) = run_dir.glob("run-*.wandb")
    assert record_file.stat().st_size > 0
    assert list(run_dir.glob("files/media/images/sample_*.png"))


def test_a_write_after_close_resumes_the_same_run(tmp_path, fake_wandb):
    backend = WandbVisBackend(tmp_path, init_kwargs={"project": "p"})
    backend.add_scalar("loss", 1.0)
    run = backend._run
    run.id = "run-7"
    backend.close()
    backend.add_scalar("acc", 0.5, step=3)
    inits = [call[1] for call in fake_wandb if call[0] == "init"]
    assert inits[0] == {"project": "p", "dir": str(tmp_path)}
    assert inits[1] == {"project": "p", "dir": str(tmp_path), "id": "run-7", "resume": "allow"}

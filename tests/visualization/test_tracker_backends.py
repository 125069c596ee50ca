"""ClearML, Neptune, DVCLive and Aim backends: what reaches each tracker (recording
stand-ins of the packages, which cadence's test environment does not install) and the
error when a package is missing."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from cadence.config import Config
from cadence.registry import VISBACKENDS
from cadence.visualization import (
    AimVisBackend,
    ClearMLVisBackend,
    DVCLiveVisBackend,
    NeptuneVisBackend,
)


def _aim(monkeypatch, calls: list) -> None:
    class Run(dict):
        def __init__(self, **kwargs):
            super().__init__()
            calls.append(("init", kwargs))

        def track(self, name, value, step):
            calls.append(("track", name, value, step))

        def close(self):
            calls.append(("close",))

    module = types.ModuleType("aim")
    module.Run = Run
    module.Image = lambda array: ("image", array.shape, array.dtype)
    monkeypatch.setitem(sys.modules, "aim", module)


def test_nothing_is_imported_or_started_until_the_first_write(monkeypatch):
    monkeypatch.setitem(sys.modules, "aim", None)  # an import would fail
    backend = VISBACKENDS.build(dict(type="AimVisBackend"))
    backend.close()
    with pytest.raises(ImportError, match="pip install aim"):
        backend.add_scalar("loss", 1.0)


def test_aim_run_is_named_after_the_save_dir_and_gets_plain_values(monkeypatch, tmp_path):
    calls: list = []
    _aim(monkeypatch, calls)
    backend = AimVisBackend(str(tmp_path / "exp" / "vis_data"))
    backend.add_config(Config(dict(a=1, b=dict(c=[0, 1]))))
    backend.add_scalars({"loss": np.float32(0.5), "step": 3})
    backend.add_image("img", np.zeros((2, 2), dtype=np.uint8), step=4)
    run = backend.experiment
    backend.close()
    assert calls[0] == ("init", {"experiment": "exp_vis_data"})
    assert run["hparams"] == {"a": 1, "b": {"c": [0, 1]}}
    assert calls[1:] == [("track", "loss", 0.5, 3),
                         ("track", "img", ("image", (2, 2, 3), np.uint8), 4),
                         ("close",)]  # fmt: skip


def test_clearml_reports_to_the_task_and_uploads_the_work_dirs_artifacts(monkeypatch, tmp_path):
    calls: list = []

    class Task:
        @staticmethod
        def init(**kwargs):
            calls.append(("init", kwargs))
            return Task()

        def get_logger(self):
            return types.SimpleNamespace(
                report_scalar=lambda **kw: calls.append(("scalar", kw)),
                report_image=lambda **kw: calls.append(("image", kw["title"], kw["iteration"])),
            )

        def connect_configuration(self, cfg):
            calls.append(("config", cfg))

        def upload_artifact(self, name, path):
            calls.append(("artifact", name))

        def close(self):
            calls.append(("close",))

    monkeypatch.setitem(sys.modules, "clearml", types.SimpleNamespace(Task=Task))
    (tmp_path / "config.py").write_text("a = 1\n")
    (tmp_path / "notes.txt").write_text("not an artifact\n")
    backend = ClearMLVisBackend(init_kwargs=dict(project_name="p"))
    backend.add_config(Config(dict(work_dir=str(tmp_path))))
    backend.add_scalar("acc", 0.9, step=2)
    backend.close()
    assert calls == [
        ("init", {"project_name": "p"}),
        ("config", {"work_dir": str(tmp_path)}),
        ("scalar", dict(title="acc", series="acc", value=0.9, iteration=2)),
        ("artifact", "config.py"),
        ("close",),
    ]


@pytest.mark.parametrize("cls", [NeptuneVisBackend, DVCLiveVisBackend, ClearMLVisBackend])
def test_missing_tracker_package_names_the_pip_command(cls, monkeypatch, tmp_path):
    for name in ("neptune", "dvclive", "clearml"):
        monkeypatch.setitem(sys.modules, name, None)
    backend = cls(str(tmp_path))
    with pytest.raises(ImportError, match=f"{cls.__name__} needs the .* package: pip install"):
        backend.add_scalar("x", 1)

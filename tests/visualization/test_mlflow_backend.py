"""MLflowVisBackend: calls into mlflow (a recording stand-in), then real local stores."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import torch

from cadence.config import Config
from cadence.visualization import MLflowVisBackend
from cadence.visualization.mlflow_backend import flatten_config


def test_flatten_config():
    tree = {
        "model": {"type": "Net", "depth": 3},
        "pipeline": [{"type": "Load"}, 5],
        "sizes": [1, 2],
        "lr": 0.1,
    }
    assert flatten_config(tree) == {
        "model.type": "Net",
        "model.depth": 3,
        "pipeline.0.type": "Load",
        "pipeline.1": 5,
        "sizes": [1, 2],
        "lr": 0.1,
    }


@pytest.fixture
def fake_mlflow(monkeypatch):
    calls: list = []
    experiments: set = {"Default"}
    module = types.ModuleType("mlflow")

    def record(name):
        return lambda *args, **kwargs: calls.append((name, args, kwargs))

    for name in ("set_tracking_uri", "set_experiment", "start_run", "log_params", "log_text"):
        setattr(module, name, record(name))
    for name in ("log_image", "log_metrics", "log_artifact", "end_run"):
        setattr(module, name, record(name))
    module.get_experiment_by_name = lambda name: name if name in experiments else None
    module.create_experiment = lambda name, artifact_location=None: (
        experiments.add(name) or calls.append(("create_experiment", name, artifact_location))
    )
    module.active_run = lambda: None
    monkeypatch.setitem(sys.modules, "mlflow", module)
    return calls


def test_default_local_store_and_run_setup(tmp_path, fake_mlflow):
    save_dir = tmp_path / "vis_data"
    backend = MLflowVisBackend(save_dir, run_name="r1", tags={"team": "a"}, params={"seed": 1})
    assert fake_mlflow == [] and not save_dir.exists()
    assert backend.experiment is sys.modules["mlflow"]
    assert fake_mlflow == [
        ("set_tracking_uri", (f"sqlite:///{save_dir}/mlflow.db",), {}),
        ("create_experiment", "cadence", str(save_dir / "mlartifacts")),
        ("set_experiment", ("cadence",), {}),
        ("start_run", (), {"run_name": "r1", "tags": {"team": "a"}, "nested": False}),
        ("log_params", ({"seed": 1},), {}),
    ]


def test_given_tracking_uri_uses_the_default_experiment(tmp_path, fake_mlflow):
    assert MLflowVisBackend(tmp_path, tracking_uri="http://server:5000").experiment is not None
    assert fake_mlflow[0] == ("set_tracking_uri", ("http://server:5000",), {})
    assert fake_mlflow[1] == ("set_experiment", ("Default",), {})  # it exists already
    assert fake_mlflow[2] == ("start_run", (), {"run_name": None, "tags": None, "nested": False})


def test_metrics_config_images_and_artifacts(tmp_path, fake_mlflow):
    work_dir = tmp_path / "work"
    save_dir = work_dir / "20260101_000000" / "vis_data"
    (save_dir / "mlartifacts").mkdir(parents=True)
    (save_dir / "mlartifacts" / "config.py").write_text("logged already")
    (save_dir / "scalars.json").write_text("{}\n")
    (work_dir / "cfg.py").write_text("a = 1\n")
    (work_dir / "epoch_1.pth").write_text("weights")
    backend = MLflowVisBackend(save_dir, tracked_config_keys=["model"])
    assert backend.experiment is sys.modules["mlflow"]
    start = len(fake_mlflow)
    backend.add_scalars({"loss": torch.tensor(0.5), "acc": np.float64(0.25)}, step=4)
    backend.add_scalars({"loss": 0.25, "step": 9})
    with pytest.warns(UserWarning, match="'vec' is not a single number"):
        backend.add_scalar("vec", [1, 2], step=5)
    cfg = Config({"model": {"type": "Net", "depth": 3}, "work_dir": str(work_dir), "lr": 0.1})
    backend.add_config(cfg)
    backend.add_image("sample", torch.zeros(3, 2, 2), step=6)
    backend.add_image("pic.png", np.zeros((2, 2), dtype=np.uint8))
    backend.close()
    calls = fake_mlflow[start:]
    assert calls[0] == ("log_metrics", ({"loss": 0.5, "acc": 0.25},), {"step": 4})
    assert calls[1] == ("log_metrics", ({"loss": 0.25},), {"step": 9})
    assert calls[2] == ("log_params", ({"model.type": "Net", "model.depth": 3},), {})
    assert calls[3] == ("log_text", (cfg.pretty_text, "config.py"), {})
    name, args, kwargs = calls[4]
    assert name == "log_image" and kwargs == {"key": "sample", "step": 6}
    assert args[0].shape == (2, 2, 3) and args[0].dtype == np.uint8
    assert calls[5][0] == "log_image" and calls[5][2] == {"artifact_file": "pic.png"}
    uploaded = [(args[0], args[1]) for name, args, _ in calls if name == "log_artifact"]
    assert uploaded == [
        (str(work_dir / "cfg.py"), None),
        (str(save_dir / "scalars.json"), "20260101_000000/vis_data"),
    ]
    assert calls[-1][0] == "end_run"
    with pytest.raises(KeyError, match="tracked_config_keys"):
        MLflowVisBackend(tmp_path, tracked_config_keys=["optim"]).add_config(cfg)


def test_missing_mlflow_names_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(ImportError, match="pip install mlflow"):
        MLflowVisBackend(tmp_path).add_scalar("x", 1.0)
    MLflowVisBackend(tmp_path).close()  # never started: nothing to end


def _metric_history(mlflow, run_id, key):
    client = mlflow.tracking.MlflowClient()
    return [(m.step, m.value) for m in client.get_metric_history(run_id, key)]


def test_file_store_run(tmp_path, monkeypatch):
    import mlflow  # a test dependency (the `test` extra): missing, the test fails

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # mlflow 3 gates the file store
    store = tmp_path / "mlruns"
    backend = MLflowVisBackend(
        tmp_path / "vis_data", exp_name="exp", run_name="r", tracking_uri=store.as_uri()
    )
    backend.add_scalars({"loss": 0.5, "acc": 0.25}, step=2)
    backend.add_scalar("loss", torch.tensor(0.25), step=4)
    backend.add_config(Config({"model": {"depth": 3}}))
    run_id = mlflow.active_run().info.run_id
    backend.close()
    assert mlflow.active_run() is None
    assert _metric_history(mlflow, run_id, "loss") == [(2, 0.5), (4, 0.25)]
    run = mlflow.get_run(run_id)
    assert run.data.params == {"model.depth": "3"}
    assert run.data.tags["mlflow.runName"] == "r"
    assert mlflow.get_experiment(run.info.experiment_id).name == "exp"
    assert store.is_dir()


@pytest.mark.slow  # creating the SQLite store runs mlflow's migrations (several seconds)
def test_default_sqlite_store_stays_in_save_dir(tmp_path, monkeypatch):
    import mlflow  # a test dependency (the `test` extra): missing, the test fails

    monkeypatch.chdir(tmp_path)
    save_dir = tmp_path / "vis_data"
    backend = MLflowVisBackend(save_dir)
    backend.add_scalars({"acc": 0.75}, step=3)
    backend.add_image("sample", np.zeros((2, 2, 3), dtype=np.uint8), step=3)
    run_id = mlflow.active_run().info.run_id
    backend.close()
    assert (save_dir / "mlflow.db").is_file()
    assert _metric_history(mlflow, run_id, "acc") == [(3, 0.75)]
    assert list((save_dir / "mlartifacts").rglob("*.png"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vis_data"]  # nothing in the cwd


def test_a_write_after_close_resumes_the_same_run(tmp_path, fake_mlflow, monkeypatch):
    mlflow = sys.modules["mlflow"]
    run = types.SimpleNamespace(info=types.SimpleNamespace(run_id="abc123"))
    monkeypatch.setattr(
        mlflow, "start_run", lambda **kwargs: fake_mlflow.append(("start_run", kwargs)) or run
    )
    backend = MLflowVisBackend(tmp_path / "vis", params={"seed": 1})
    backend.add_scalar("loss", 1.0)
    backend.close()
    backend.add_scalar("acc", 0.5, step=3)
    starts = [call[1] for call in fake_mlflow if call[0] == "start_run"]
    assert starts == [
        {"run_name": None, "tags": None, "nested": False},
        {"run_id": "abc123", "nested": False},
    ]
    assert [c for c in fake_mlflow if c[0] == "log_params"] == [("log_params", ({"seed": 1},), {})]

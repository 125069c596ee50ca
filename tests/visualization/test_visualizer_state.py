"""Visualizer.state_dict / load_state_dict and the backends' tracker-run states, with the
real TensorBoard, MLflow (file store) and wandb (offline) underneath."""

from __future__ import annotations

from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cadence.visualization import (
    LocalVisBackend,
    MLflowVisBackend,
    TensorboardVisBackend,
    Visualizer,
    WandbVisBackend,
)


def steps(log_dir: Path, tag: str) -> list[int]:
    events = EventAccumulator(str(log_dir))
    events.Reload()
    return [event.step for event in events.Scalars(tag)]


def tensorboard_visualizer(session: Path) -> Visualizer:
    backends = [dict(type="LocalVisBackend"), dict(type="TensorboardVisBackend", name="tb")]
    return Visualizer(vis_backends=backends, save_dir=session)


def test_state_names_the_tracker_runs_once_they_exist(tmp_path):
    visualizer = tensorboard_visualizer(tmp_path / "work" / "t1")
    assert visualizer.state_dict() == {"root": str(tmp_path / "work"), "backends": {}}
    visualizer.add_scalar("loss", 1.0, step=1)
    log_dir = tmp_path / "work" / "t1" / "vis_data"
    assert visualizer.state_dict()["backends"] == {  # the local backend has no tracker run
        "tb": {"type": "TensorboardVisBackend", "log_dir": str(log_dir)},
    }
    visualizer.close()


def test_load_continues_the_stored_log_dir_of_the_same_backend(tmp_path):
    first = tensorboard_visualizer(tmp_path / "work" / "t1")
    first.add_scalar("loss", 1.0, step=1)
    first.close()
    state = first.state_dict()
    second = tensorboard_visualizer(tmp_path / "work" / "t2")
    second.load_state_dict(state)
    second.add_scalar("loss", 0.5, step=2)
    second.close()
    assert steps(tmp_path / "work" / "t1" / "vis_data", "loss") == [1, 2]
    assert not list((tmp_path / "work" / "t2").rglob("events.out.tfevents.*"))
    assert second.get_backend("tb").save_dir == str(tmp_path / "work" / "t1" / "vis_data")


def test_entries_of_other_names_or_types_are_ignored(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    state = {"root": str(tmp_path), "backends": {
        "tb": {"type": "LocalVisBackend", "log_dir": str(old)},  # same name, other type
        "gone": {"type": "TensorboardVisBackend", "log_dir": str(old)},
    }}  # fmt: skip
    visualizer = tensorboard_visualizer(tmp_path / "t2")
    visualizer.load_state_dict(state)
    visualizer.load_state_dict({})  # a checkpoint of an older cadence: nothing to continue
    assert visualizer.get_backend("tb").save_dir == str(tmp_path / "t2" / "vis_data")


def test_ranks_other_than_0_restore_nothing(tmp_path, monkeypatch):
    old = tmp_path / "t1" / "vis_data"
    old.mkdir(parents=True)
    state = {"root": str(tmp_path), "backends": {
        "tb": {"type": "TensorboardVisBackend", "log_dir": str(old)},
    }}  # fmt: skip
    monkeypatch.setenv("RANK", "1")  # they never record, and may not see rank 0's files
    visualizer = tensorboard_visualizer(tmp_path / "t2")
    visualizer.load_state_dict(state)
    assert visualizer.get_backend("tb").save_dir == str(tmp_path / "t2" / "vis_data")


def test_an_open_event_file_is_closed_and_the_next_events_go_to_the_stored_dir(tmp_path):
    old, new = tmp_path / "t1", tmp_path / "t2"
    old.mkdir()
    backend = TensorboardVisBackend(new)
    backend.add_scalar("loss", 1.0, step=1)
    with pytest.warns(UserWarning, match="already written to .* before the resume"):
        backend.load_state_dict({"log_dir": str(old)})
    backend.add_scalar("loss", 0.5, step=2)
    backend.close()
    assert steps(new, "loss") == [1] and steps(old, "loss") == [2]
    assert backend.state_dict() == {"log_dir": str(old)}


def test_local_backend_has_no_tracker_run(tmp_path):
    backend = LocalVisBackend(tmp_path)
    backend.add_scalar("loss", 1.0)
    assert backend.state_dict() == {}
    backend.load_state_dict({"log_dir": str(tmp_path / "elsewhere")})
    assert backend.save_dir == str(tmp_path)


# ---------------------------------------------------------------------- MLflow
@pytest.fixture
def file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # mlflow 3 gates the file store
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    return "file:" + str(tmp_path / "mlruns")


def history(uri: str, run_id: str) -> list[int]:
    return [m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run_id, "loss")]


def test_mlflow_switches_from_a_run_opened_before_the_resume(tmp_path, file_store):
    first = MLflowVisBackend(tmp_path / "t1", exp_name="e", tracking_uri=file_store)
    first.add_scalar("loss", 1.0, step=1)
    state = first.state_dict()
    first.close()
    second = MLflowVisBackend(tmp_path / "t2", exp_name="e", tracking_uri=file_store)
    second.add_scalar("loss", 9.0, step=1)
    early = second.state_dict()["run_id"]
    with pytest.warns(UserWarning, match=f"run {early} was started before the resume"):
        second.load_state_dict(state)
    assert mlflow.active_run() is None
    second.add_scalar("loss", 0.5, step=2)
    assert second.state_dict() == state
    second.close()
    assert history(file_store, state["run_id"]) == [1, 2] and history(file_store, early) == [1]


def test_mlflow_run_that_cannot_be_continued_warns_and_starts_a_new_one(tmp_path, file_store):
    first = MLflowVisBackend(tmp_path / "t1", exp_name="e", tracking_uri=file_store)
    first.add_scalar("loss", 1.0, step=1)
    state = first.state_dict()
    first.close()
    second = MLflowVisBackend(tmp_path / "t2", exp_name="other", tracking_uri=file_store)
    second.load_state_dict(state)  # the stored run is in experiment "e"
    with pytest.warns(UserWarning, match=f"resumed run {state['run_id']} .* cannot be continued"):
        second.add_scalar("loss", 0.5, step=2)
    new = second.state_dict()["run_id"]
    second.close()
    assert new != state["run_id"] and history(file_store, new) == [2]


def test_mlflow_run_id_argument_or_environment_wins(tmp_path, file_store, monkeypatch):
    stored = {"run_id": "0" * 32, "experiment_id": "1"}
    given = MLflowVisBackend(tmp_path, tracking_uri=file_store, run_id="a" * 32)
    given.load_state_dict(stored)
    assert given.state_dict() == {}  # nothing started, nothing taken from the checkpoint
    monkeypatch.setenv("MLFLOW_RUN_ID", "b" * 32)
    from_env = MLflowVisBackend(tmp_path, tracking_uri=file_store)
    from_env.load_state_dict(stored)
    assert from_env.state_dict() == {}


def test_mlflow_local_store_that_is_gone_warns(tmp_path):
    backend = MLflowVisBackend(tmp_path / "t2")
    with pytest.warns(UserWarning, match="local store of the resumed run r1, .* is gone"):
        backend.load_state_dict({"run_id": "r1", "store_dir": str(tmp_path / "t1")})
    assert backend.state_dict() == {} and backend.save_dir == str(tmp_path / "t2")


# ----------------------------------------------------------------------- wandb
def test_wandb_switches_from_a_run_opened_before_the_resume(tmp_path, wandb_offline):
    backend = WandbVisBackend(tmp_path / "t2", init_kwargs=dict(project="cadence-test"))
    backend.add_scalar("loss", 1.0)
    early = backend.state_dict()["run_id"]
    with pytest.warns(UserWarning, match=f"run {early} was started before the resume"):
        backend.load_state_dict({"run_id": "stored0"})
    assert backend.state_dict() == {"run_id": "stored0"}
    backend.add_scalar("loss", 0.5)
    assert backend._run.id == "stored0"
    backend.close()


def test_wandb_id_argument_or_environment_wins(tmp_path, monkeypatch):
    given = WandbVisBackend(tmp_path, init_kwargs=dict(id="given0"))
    given.load_state_dict({"run_id": "stored0"})
    assert given.state_dict() == {}
    monkeypatch.setenv("WANDB_RUN_ID", "env0")
    from_env = WandbVisBackend(tmp_path)
    from_env.load_state_dict({"run_id": "stored0"})
    assert from_env.state_dict() == {}

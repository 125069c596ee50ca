"""A resumed run continues the same experiment-tracker run (real TensorBoard, MLflow file
store and offline wandb): 2 epochs with checkpoints, then a new Runner resumes to 4."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import mlflow
import pytest
import torch
from mlflow.tracking import MlflowClient
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from vis_toys import loader, register_toys

from cadence.config import Config
from cadence.hooks import Hook
from cadence.runner import Runner

ITERS = 4  # per epoch: 64 samples, batch 16

# The runner restores the tracker runs before anything is recorded: never a run to switch from.
pytestmark = pytest.mark.filterwarnings("error:.*before the resume:UserWarning")


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()


def config(work_dir: Path, backend: dict[str, Any], max_epochs: int, resume: bool) -> Config:
    """Train with a checkpoint every epoch and the scalars logged every iteration."""
    return Config(
        dict(
            model=dict(type="TinyClassifier"),
            work_dir=str(work_dir),
            train_dataloader=loader(64, 0, 16, True),
            train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
            default_hooks=dict(logger=dict(type="LoggerHook", interval=1)),
            visualizer=dict(type="Visualizer", vis_backends=[backend]),
            randomness=dict(seed=0),
            resume=resume,
        )
    )


def train(work_dir: Path, backend: dict[str, Any], max_epochs: int, resume: bool,
          hooks: tuple[Hook, ...] = ()) -> Runner:  # fmt: skip
    runner = Runner.from_cfg(config(work_dir, backend, max_epochs, resume))
    for hook in hooks:
        runner.register_hook(hook)
    runner.train()
    return runner


def two_parts(work_dir: Path, first: dict[str, Any],
              second: dict[str, Any] | None = None) -> tuple[Runner, Runner]:  # fmt: skip
    """Train 2 epochs, then resume in a new Runner (same work dir) to 4 epochs."""
    part1 = train(work_dir, first, 2, False)
    part2 = train(work_dir, second or first, 4, True)
    assert part2.epoch == 4 and part2.log_dir != part1.log_dir
    return part1, part2


def stored_state(work_dir: Path, name: str) -> dict[str, Any]:
    """The visualizer entry of backend ``name`` in the last checkpoint."""
    checkpoint = torch.load(work_dir / "epoch_4.pth", weights_only=True)
    return checkpoint["visualizer"]["backends"][name]


class DropVisualizerState(Hook):
    """Saves checkpoints as cadence did before tracker runs were stored."""

    def before_save_checkpoint(self, runner: Any, checkpoint: dict[str, Any]) -> None:
        checkpoint.pop("visualizer")


# ----------------------------------------------------------------- TensorBoard
def event_dirs(work_dir: Path) -> list[Path]:
    return sorted({p.parent for p in work_dir.rglob("events.out.tfevents.*")})


def scalar_steps(log_dir: Path, tag: str = "loss") -> list[int]:
    """Every step recorded under ``tag``, sorted (duplicates kept).

    TensorBoard reads a folder's event files in name order, and two files made in the same
    second by one process sort by a counter compared as text ("10" < "9"), so the read order
    of the two parts is not theirs to choose; TensorBoard plots by step.
    """
    events = EventAccumulator(str(log_dir))
    events.Reload()
    return sorted(event.step for event in events.Scalars(tag))


def test_tensorboard_resumed_run_writes_into_the_same_log_dir(tmp_path):
    work = tmp_path / "work"
    part1, part2 = two_parts(work, dict(type="TensorboardVisBackend"))
    first_dir = Path(part1.log_dir) / "vis_data"
    assert event_dirs(work) == [first_dir]  # nothing in the second part's log folder
    assert len(list(first_dir.glob("events.out.tfevents.*"))) == 2  # one file per part
    assert scalar_steps(first_dir) == list(range(1, 4 * ITERS + 1))
    assert stored_state(work, "TensorboardVisBackend") == {
        "type": "TensorboardVisBackend", "log_dir": str(first_dir),
    }  # fmt: skip
    assert Path(part2.log_dir, f"{part2.timestamp}.log").is_file()  # the text log is per part


def test_a_copied_work_dir_continues_in_its_own_copy(tmp_path):
    backend = dict(type="TensorboardVisBackend")
    part1 = train(tmp_path / "a", backend, 2, False)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    train(tmp_path / "b", backend, 4, True)
    copied = tmp_path / "b" / part1.timestamp / "vis_data"
    assert event_dirs(tmp_path / "b") == [copied]
    assert scalar_steps(copied) == list(range(1, 4 * ITERS + 1))
    assert scalar_steps(Path(part1.log_dir) / "vis_data") == list(range(1, 2 * ITERS + 1))


def test_a_gone_log_dir_warns_and_starts_a_new_one(tmp_path):
    work = tmp_path / "work"
    backend = dict(type="TensorboardVisBackend")
    part1 = train(work, backend, 2, False)
    shutil.rmtree(Path(part1.log_dir) / "vis_data")
    with pytest.warns(UserWarning, match="is gone or not writable"):
        part2 = train(work, backend, 4, True)
    assert event_dirs(work) == [Path(part2.log_dir) / "vis_data"]
    assert scalar_steps(Path(part2.log_dir) / "vis_data")[0] == 2 * ITERS + 1


def test_a_checkpoint_without_the_entry_resumes_into_a_new_run(tmp_path):
    work = tmp_path / "work"
    backend = dict(type="TensorboardVisBackend")
    part1 = train(work, backend, 2, False, hooks=(DropVisualizerState(),))
    assert "visualizer" not in torch.load(work / "epoch_2.pth", weights_only=True)
    part2 = train(work, backend, 4, True)
    assert part2.epoch == 4
    first, second = (Path(p.log_dir) / "vis_data" for p in (part1, part2))
    assert event_dirs(work) == [first, second]
    assert scalar_steps(first) == list(range(1, 2 * ITERS + 1))
    assert scalar_steps(second) == list(range(2 * ITERS + 1, 4 * ITERS + 1))


# ---------------------------------------------------------------------- MLflow
@pytest.fixture
def file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # mlflow 3 gates the file store
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    return "file:" + str(tmp_path / "mlruns")


def mlflow_runs(uri: str, experiment: str) -> list[Any]:
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id])


def metric_steps(uri: str, run_id: str, key: str = "loss") -> list[int]:
    return [m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run_id, key)]


def test_mlflow_resumed_run_continues_the_same_run(tmp_path, file_store):
    backend = dict(type="MLflowVisBackend", exp_name="resume", tracking_uri=file_store)
    part1 = train(tmp_path / "work", backend, 2, False)
    with pytest.warns(UserWarning, match=r"keeps its first values of the params \[.*max_epochs"):
        train(tmp_path / "work", backend, 4, True)
    (run,) = mlflow_runs(file_store, "resume")
    assert metric_steps(file_store, run.info.run_id) == list(range(1, 4 * ITERS + 1))
    assert run.data.params["train_cfg.max_epochs"] == "2"  # params never change
    assert run.info.status == "FINISHED" and mlflow.active_run() is None
    stored = stored_state(tmp_path / "work", "MLflowVisBackend")
    assert stored == {"type": "MLflowVisBackend", "run_id": run.info.run_id,
                      "experiment_id": run.info.experiment_id}  # fmt: skip
    assert part1.log_dir != str(tmp_path / "work")


def test_mlflow_run_id_in_the_config_wins_over_the_stored_run(tmp_path, file_store):
    backend = dict(type="MLflowVisBackend", exp_name="resume", tracking_uri=file_store)
    train(tmp_path / "work", backend, 2, False)
    (first,) = mlflow_runs(file_store, "resume")
    client = MlflowClient(tracking_uri=file_store)
    chosen = client.create_run(first.info.experiment_id).info.run_id
    client.set_terminated(chosen)
    train(tmp_path / "work", {**backend, "run_id": chosen}, 4, True)
    assert metric_steps(file_store, first.info.run_id) == list(range(1, 2 * ITERS + 1))
    assert metric_steps(file_store, chosen) == list(range(2 * ITERS + 1, 4 * ITERS + 1))
    assert client.get_run(chosen).data.params["train_cfg.max_epochs"] == "4"
    assert len(mlflow_runs(file_store, "resume")) == 2


@pytest.mark.slow  # creating the SQLite store runs mlflow's migrations (several seconds)
def test_mlflow_default_local_store_is_the_first_parts(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    with pytest.warns(UserWarning, match="keeps its first values"):
        part1, part2 = two_parts(tmp_path / "work", dict(type="MLflowVisBackend"))
    store = Path(part1.log_dir) / "vis_data"
    assert not (Path(part2.log_dir) / "vis_data" / "mlflow.db").exists()
    uri = f"sqlite:///{store / 'mlflow.db'}"
    (run,) = mlflow_runs(uri, "cadence")
    assert metric_steps(uri, run.info.run_id) == list(range(1, 4 * ITERS + 1))
    assert stored_state(tmp_path / "work", "MLflowVisBackend")["store_dir"] == str(store)


# ----------------------------------------------------------------------- wandb
def offline_runs(work_dir: Path) -> list[Path]:
    """The offline run folders, oldest part first (one per part, named ...-<run id>[-n])."""
    return sorted(work_dir.glob("*/vis_data/wandb/offline-run-*"))


def run_id_of(folder: Path) -> str:
    (record,) = folder.glob("run-*.wandb")
    return record.stem.removeprefix("run-")


def test_wandb_resumed_run_continues_the_same_run(tmp_path, wandb_offline):
    backend = dict(type="WandbVisBackend", init_kwargs=dict(project="cadence-test"))
    part1, part2 = two_parts(tmp_path / "work", backend)
    first, second = offline_runs(tmp_path / "work")
    assert first.is_relative_to(part1.log_dir) and second.is_relative_to(part2.log_dir)
    run_id = run_id_of(first)
    assert run_id_of(second) == run_id
    assert (second / f"run-{run_id}.wandb").stat().st_size > 0
    assert stored_state(tmp_path / "work", "WandbVisBackend") == {
        "type": "WandbVisBackend", "run_id": run_id,
    }  # fmt: skip


def test_wandb_id_in_the_config_wins_over_the_stored_run(tmp_path, wandb_offline):
    backend = dict(type="WandbVisBackend", init_kwargs=dict(project="cadence-test"))
    chosen = {**backend, "init_kwargs": dict(project="cadence-test", id="chosen0")}
    two_parts(tmp_path / "work", backend, chosen)
    first, second = offline_runs(tmp_path / "work")
    assert run_id_of(first) != "chosen0" and run_id_of(second) == "chosen0"

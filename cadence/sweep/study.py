"""The Optuna study of a sweep: its storage, creating or joining it, and its trial budget.

The study lives in an RDB storage (an SQLite file in the sweep folder unless
``--storage`` names another database URL), so that several workers can share it
and a sweep stopped at any point goes on with ``--resume``:

* a trial whose worker died stays RUNNING in the database; it is marked FAIL and
  queued again with the same parameters (Optuna's ``RetryFailedTrialCallback``):
  at once when the worker ran on this host and its process is gone, otherwise
  when its heartbeat is older than :data:`GRACE_PERIOD_S`;
* COMPLETE and PRUNED trials, and FAIL trials whose run raised, count towards the
  sweep's number of trials; a killed trial does not (its retry does).
"""

from __future__ import annotations

import contextlib
import os
import socket
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import SweepError

#: seconds between two heartbeats of a running trial
HEARTBEAT_S = 10
#: a RUNNING trial without a heartbeat for this long belongs to a dead worker
GRACE_PERIOD_S = 60
#: how many times a trial whose worker died is queued again
MAX_RETRY = 3
#: user attribute of the study holding the sweep's metric and search space
SWEEP_ATTR = "cadence_sweep"


def default_storage(sweep_dir: str) -> str:
    """The SQLite URL of the study file in ``sweep_dir``."""
    return "sqlite:///" + os.path.join(os.path.abspath(sweep_dir), "study.db")


@contextlib.contextmanager
def creation_lock(url: str) -> Iterator[None]:
    """Hold a lock file beside an SQLite study file while its tables and study are made:
    two workers started together would otherwise both create them. Other URLs: no lock."""
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.startswith(prefix) else ""
    try:
        import fcntl
    except ImportError:  # not POSIX
        path = ""
    if not path or path == ":memory:":
        yield
        return
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def retry_callback() -> Any:
    """Optuna's callback that queues a failed trial again with the same parameters
    (``RetryHeartbeatStaleTrialCallback``, ``RetryFailedTrialCallback`` before Optuna 4.9)."""
    import optuna

    with warnings.catch_warnings():  # "experimental" since 2.8
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        new = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None)
        return (new or optuna.storages.RetryFailedTrialCallback)(MAX_RETRY)


def _callback_argument() -> str:
    import optuna

    if hasattr(optuna.storages, "RetryHeartbeatStaleTrialCallback"):
        return "heartbeat_stale_trial_callback"
    return "failed_trial_callback"


def open_storage(url: str) -> Any:
    """An Optuna ``RDBStorage`` at ``url`` with heartbeats and retry of dead workers' trials."""
    import optuna

    argument = _callback_argument()
    engine_kwargs: dict[str, Any] = {}
    if url.startswith("sqlite"):  # several worker processes write to one file: wait for locks
        engine_kwargs["connect_args"] = {"timeout": 60}
    try:
        with warnings.catch_warnings():  # heartbeats are "experimental" since Optuna 2.9
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
                url, engine_kwargs=engine_kwargs, heartbeat_interval=HEARTBEAT_S,
                grace_period=GRACE_PERIOD_S, **{argument: retry_callback()},
            )  # fmt: skip
    except Exception as exc:  # a bad URL, a missing driver, an unreachable server
        raise SweepError(f"cannot open the study storage {url!r}: {exc}") from exc


def open_study(
    storage: Any,
    name: str,
    direction: str,
    sweep: Mapping[str, Any],
    resume: bool,
    sampler: Any = None,
    pruner: Any = None,
) -> Any:
    """Create the study ``name`` in ``storage``, or load it when it exists.

    ``sweep`` (metric and search space) is stored with a new study and must
    match the stored one when joining. An existing study with trials is joined
    only with ``resume``.
    """
    import optuna

    goal: Any = direction  # 'maximize' or 'minimize'
    study = optuna.create_study(
        storage=storage, study_name=name, direction=goal, sampler=sampler, pruner=pruner,
        load_if_exists=True,
    )  # fmt: skip
    stored = study.user_attrs.get(SWEEP_ATTR)
    if stored is None:
        study.set_user_attr(SWEEP_ATTR, dict(sweep))
    elif dict(stored) != dict(sweep):
        raise SweepError(
            f"the study '{name}' was started with a different sweep: {dict(stored)}, "
            f"not {dict(sweep)}; use the same --metric/--param/--direction, or another "
            "--study-name or --work-dir"
        )
    count = len(study.get_trials(deepcopy=False))
    if count and not resume:
        raise SweepError(
            f"the study '{name}' already has {count} trial(s); pass --resume to continue it "
            "(or to join its other workers), or choose another --study-name or --work-dir"
        )
    return study


def worker_id() -> dict[str, Any]:
    """This process, as recorded on the trials it runs."""
    return {"host": socket.gethostname(), "pid": os.getpid()}


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child not yet waited for is a zombie: dead
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def fail_dead_trials(study: Any) -> list[int]:
    """Mark FAIL (and queue again) the RUNNING trials whose worker is dead; return their numbers.

    Trials of this host whose process is gone are caught at once; trials of
    other hosts through Optuna's heartbeat once it is :data:`GRACE_PERIOD_S` old.
    """
    import optuna
    from optuna.trial import TrialState

    storage = study._storage
    host, failed = socket.gethostname(), []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = trial.user_attrs.get("worker") or {}
        if worker.get("host") != host or _process_alive(int(worker.get("pid", -1))):
            continue
        try:
            storage.set_trial_user_attr(
                trial._trial_id, "failed_because", f"its worker (pid {worker['pid']}) died"
            )
            if not storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL):
                continue
        except optuna.exceptions.UpdateFinishedTrialError:
            continue  # another worker got there first
        failed.append(trial.number)
        retry_callback()(study, storage.get_trial(trial._trial_id))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)
    return failed


def counted(trial: Any) -> bool:
    """Whether ``trial`` uses up one of the sweep's trials (finished, or failed by itself)."""
    from optuna.trial import TrialState

    if trial.state in (TrialState.COMPLETE, TrialState.PRUNED):
        return True
    return trial.state == TrialState.FAIL and "error" in trial.user_attrs


def budget_left(study: Any, n_trials: int) -> int:
    """How many more trials this worker may start: ``n_trials`` less the counted and
    the running ones (the latter may be other workers' trials)."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    used = sum(1 for t in trials if counted(t) or t.state == TrialState.RUNNING)
    return max(0, n_trials - used)

"""One worker's turn: claim a trial, run it with a heartbeat, and tell the study.

Optuna's own ``ask`` creates a trial and only then lets the objective record who
runs it: a worker killed in between leaves a RUNNING trial that nothing can tie
to a dead process (and that has no heartbeat either), so it would stay RUNNING
for ever. Here a new trial is created with its worker already recorded (one
database transaction), and a queued retry is recorded before it is taken.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .study import HEARTBEAT_S, retry_callback, worker_id


def claim_trial(study: Any) -> Any:
    """A RUNNING ``optuna.Trial`` for this worker: a queued (WAITING) one if any, else a new one."""
    import optuna
    from optuna.trial import TrialState

    storage, me = study._storage, worker_id()
    for waiting in study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
        try:
            storage.set_trial_user_attr(waiting._trial_id, "worker", me)
            if not storage.set_trial_state_values(waiting._trial_id, state=TrialState.RUNNING):
                continue  # another worker took it
        except optuna.exceptions.UpdateFinishedTrialError:
            continue
        storage.set_trial_user_attr(waiting._trial_id, "worker", me)  # in case a loser wrote last
        return optuna.Trial(study, waiting._trial_id)
    template = optuna.trial.create_trial(state=TrialState.RUNNING, user_attrs={"worker": me})
    trial_id = storage.create_new_trial(study._study_id, template_trial=template)
    return optuna.Trial(study, trial_id)


@contextlib.contextmanager
def heartbeat(storage: Any, trial_id: int) -> Iterator[None]:
    """Record the trial's heartbeat every :data:`HEARTBEAT_S` seconds while the block runs."""
    stop = threading.Event()

    def beat() -> None:
        while True:
            storage.record_heartbeat(trial_id)
            if stop.wait(HEARTBEAT_S):
                return

    thread = threading.Thread(target=beat, name="sweep-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run_one(study: Any, objective: Callable[[Any], float]) -> Any:
    """Claim a trial, run ``objective`` on it and record the outcome; return the finished
    trial (an ``optuna.trial.FrozenTrial``). A trial that raised is recorded FAIL and its exception
    re-raised (an interrupt queues the trial again first)."""
    import optuna
    from optuna.trial import TrialState

    trial = claim_trial(study)
    with heartbeat(study._storage, trial._trial_id):
        try:
            value = objective(trial)
        except optuna.TrialPruned:
            return study.tell(trial, state=TrialState.PRUNED)
        except (Exception, KeyboardInterrupt) as exc:
            study.tell(trial, state=TrialState.FAIL)
            if isinstance(exc, KeyboardInterrupt):
                retry_callback()(study, study._storage.get_trial(trial._trial_id))
            raise
    return study.tell(trial, value)  # a NaN value makes it FAIL

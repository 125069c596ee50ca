"""Save and stop cleanly when the cluster asks a job to leave (SIGTERM, SIGUSR1)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..optim import accumulation_pending
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from ..resilience.preempted import TrainingPreempted
from ..resilience.signal_watch import SignalWatch
from ..resilience.slurm_requeue import SlurmRequeue
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


@HOOKS.register_module()
class PreemptionHook(Hook):
    """On SIGTERM/SIGUSR1, checkpoint at the next iteration boundary and end training.

    The signal handler only records the signal; the checkpoint is written by this
    hook after the running iteration (after any gradient accumulation window
    closes), never inside the handler. With several processes the ranks agree
    through one all-reduce every ``sync_interval`` iterations, so every rank
    stops at the same iteration even if only some got the signal. The handlers
    are installed for the duration of training and the previous ones restored.

    The run does not outlive the request by much (see :mod:`.signal_watch`): if
    an iteration does not finish within ``grace_period`` seconds after the
    signal (a peer is gone, a collective blocks), or if one of the signals
    comes again (more than ``duplicate_window`` seconds after the first, e.g.
    during the save), the process exits at once with ``128 + signum`` and a
    message naming the signal and the iteration, without a checkpoint.

    Args:
        signals: signal names to catch.
        sync_interval: iterations between the ranks' agreement (distributed only).
        grace_period: seconds each iteration may take after the signal before
            the process gives up and exits; ``None`` waits however long it takes.
        duplicate_window: a repeat of a signal within this many seconds of the
            first is the same request (relayed twice by launchers), not a second.
        requeue: under SLURM, put the job back in the queue (``scontrol requeue``,
            by rank 0) once the checkpoint is written: ``'auto'`` after SIGUSR1
            (``sbatch --signal=USR1@90``), ``True`` after any caught signal,
            ``False`` never (see :class:`~cadence.resilience.slurm_requeue.SlurmRequeue`).
    """

    priority = "LOWEST"

    def __init__(
        self,
        signals: Sequence[str] = ("SIGTERM", "SIGUSR1"),
        sync_interval: int = 10,
        grace_period: float | None = 30.0,
        duplicate_window: float = 1.0,
        requeue: bool | str = "auto",
    ) -> None:
        self.signals = []
        for name in signals:
            if not hasattr(signal, name):
                raise ValueError(f"PreemptionHook: unknown signal '{name}' on this platform")
            self.signals.append(getattr(signal, name))
        if not isinstance(sync_interval, int) or sync_interval < 1:
            raise ValueError(
                f"PreemptionHook.sync_interval must be an int >= 1, got {sync_interval!r}"
            )
        self.sync_interval = sync_interval
        if grace_period is not None and not grace_period > 0:
            raise ValueError(
                f"PreemptionHook.grace_period must be > 0 seconds or None, got {grace_period!r}"
            )
        if not duplicate_window >= 0:
            raise ValueError(
                f"PreemptionHook.duplicate_window must be >= 0 seconds, got {duplicate_window!r}"
            )
        self.grace_period = grace_period
        self.duplicate_window = duplicate_window
        self.requeue = SlurmRequeue(requeue)
        self._agreed = 0  # the signal number the ranks agreed on (0: none)
        self._watch: SignalWatch | None = None
        self.received: tuple[str, float] | None = None
        self._previous: dict[int, Any] = {}
        self._active = False
        self._world_size = 1

    # ------------------------------------------------------------ handlers
    def _handle(self, signum: int, frame: Any) -> None:
        if not self._active:  # training is over: behave as before this hook
            signal.signal(signum, self._previous.get(signum, signal.SIG_DFL))
            os.kill(os.getpid(), signum)
            return
        if self.received is None:
            self.received = (signal.Signals(signum).name, time.monotonic())

    def before_train(self, runner: RunnerProtocol) -> None:
        self._restore()  # a previous train() that raised left them installed
        self.received = None
        self._agreed = 0
        self._world_size = runner.world_size
        if threading.current_thread() is not threading.main_thread():
            runner.logger.warning("PreemptionHook: not on the main thread; signals not caught")
            return
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._handle)
        self._active = True
        self._watch = SignalWatch(
            self.signals, self.grace_period, self.duplicate_window,
            iteration=lambda: runner.iter + 1, logger=runner.logger,
            label=f"rank {runner.rank}" if runner.world_size > 1 else "",
        )  # fmt: skip
        self._watch.start()

    def after_train(self, runner: RunnerProtocol) -> None:
        self._restore()

    def _restore(self) -> None:
        if not self._active:
            return
        self._active = False
        if self._watch is not None:
            self._watch.stop()
            self._watch = None
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    # -------------------------------------------------------------- stages
    def _should_stop(self, runner: RunnerProtocol) -> bool:
        if (runner.iter + 1) % self.sync_interval:
            return False
        import torch
        import torch.distributed as dist

        mine = getattr(signal, self.received[0]) if self.received is not None else 0
        flag = torch.tensor([float(mine)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)  # which signal: SLURM requeues on SIGUSR1
        self._agreed = int(flag.item())
        return bool(self._agreed)

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if self.received is None:
            if self._world_size <= 1:  # one process and no signal: two comparisons
                return
        elif self._watch is not None:
            self._watch.progress()  # this iteration finished: the grace period starts over
        if self._world_size > 1 and not self._should_stop(runner):  # agreed by every rank
            return
        if accumulation_pending(runner.optim_wrapper):
            return
        if self._watch is not None:
            self._watch.saving()
        name, at = self.received or ("a signal on another rank", time.monotonic())
        path = runner.save_checkpoint(
            runner.work_dir, f"preempted_iter_{runner.iter + 1}.pth", by_epoch=False
        )
        runner.wait_for_checkpoint()
        self._restore()
        requeued = refused = None
        if runner.rank == 0:  # one process asks for the job's requeue
            signal_name = self.received[0] if self.received else signal.Signals(self._agreed).name
            requeued = self.requeue.after_save(signal_name, runner.logger)
            refused = self.requeue.refused
        if self._world_size > 1:  # every rank waits for the requeue and exits with one code
            refused = self._shared_refusal(refused)
        raise TrainingPreempted(path, name, time.monotonic() - at, requeued, refused)

    @staticmethod
    def _shared_refusal(refused: str | None) -> str | None:
        """Rank 0's refusal (or none) on every rank. Ranks leaving with a non-zero code
        before rank 0 has requeued would have the launcher (torchrun, ``srun
        --kill-on-bad-exit``) kill rank 0 in the middle of ``scontrol requeue``."""
        import torch
        import torch.distributed as dist

        flag = torch.tensor([1.0 if refused is not None else 0.0])
        dist.broadcast(flag, src=0)
        if refused is None and flag.item():
            return "the SLURM requeue was refused on rank 0"
        return refused


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(PreemptionHook)

"""The exit codes of cadence's commands: one table, for schedulers and scripts to act on.

Chosen not to collide with what shells and launchers already mean: 1 is Python's own
code for an uncaught exception, 126/127 are the shell's "cannot execute"/"not found",
and ``128 + N`` is "ended by signal N" (cadence uses it only when it ends the process
because of signal N without a checkpoint). 75 is ``EX_TEMPFAIL`` of ``sysexits.h``,
"try again later": the run stopped early, saved, and continues when started again.

Where several processes run one job, the job's code is the highest of theirs (SLURM's
rule for the tasks of a step, and what ``--nproc`` reports): a refused requeue on rank 0
outranks the other ranks' "preempted and saved".

Processes started by ``--nproc`` write their code to a file of the folder named by
:data:`REPORT_DIR_ENV` (:func:`report`), since torchrun itself exits 1 whatever its
ranks' codes were; the ``--nproc`` parent exits with :func:`job_code` of them.
"""

from __future__ import annotations

import enum
import os


class ExitCode(enum.IntEnum):
    """What a run's exit code says (see :data:`MEANINGS` and the cluster guide)."""

    FINISHED = 0
    FAILED = 1
    CONFIG_ERROR = 2
    HANG = 3
    CHECKPOINT_UNVERIFIABLE = 4
    PREEMPTED = 75
    REQUEUE_REFUSED = 76


#: one sentence per code, for the documentation and ``--help``
MEANINGS: dict[ExitCode, str] = {
    ExitCode.FINISHED: "finished: training/evaluation ran to its end",
    ExitCode.FAILED: "an unexpected error (a traceback was printed)",
    ExitCode.CONFIG_ERROR: "a config or command-line mistake, or a busy work dir; nothing was run",
    ExitCode.HANG: "the hang watchdog ended a run whose ranks stopped making progress",
    ExitCode.CHECKPOINT_UNVERIFIABLE: "a checkpoint to resume or load failed verification "
    "(missing, truncated, checksum mismatch) or was refused by the safe loader",
    ExitCode.PREEMPTED: "stopped by a signal after saving a checkpoint; the same command "
    "with --resume continues (or the job was requeued and resumes by itself)",
    ExitCode.REQUEUE_REFUSED: "stopped by a signal after saving a checkpoint, but the SLURM "
    "requeue asked for was refused: submit the job again with --resume",
}


def signal_code(signum: int) -> int:
    """``128 + signum``: the code of a process ended by ``signum`` without a checkpoint."""
    return 128 + signum


#: the folder the processes of a ``--nproc`` launch report their exit codes into
REPORT_DIR_ENV = "CADENCE_EXIT_CODE_DIR"


def report(code: int, env: dict[str, str] | None = None) -> None:
    """Leave ``code`` for the ``--nproc`` parent when it asked for it (no-op otherwise);
    never raises, as it runs while the process ends."""
    folder = (os.environ if env is None else env).get(REPORT_DIR_ENV)
    if not folder:
        return
    rank = os.environ.get("RANK", str(os.getpid()))
    try:
        with open(os.path.join(folder, f"rank{rank}.code"), "w") as out:
            out.write(f"{int(code)}\n")
    except (OSError, ValueError):
        pass


def reported(folder: str) -> list[int]:
    """The codes the processes wrote into ``folder`` (see :func:`report`)."""
    codes = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        try:
            with open(os.path.join(folder, name)) as text:
                codes.append(int(text.read().strip()))
        except (OSError, ValueError):
            continue
    return codes


def job_code(codes: list[int], launcher_code: int) -> int:
    """The code of a job whose processes ended with ``codes`` under a launcher that ended
    with ``launcher_code``: the highest of theirs, or the launcher's when none reported
    (or when it failed although they all finished)."""
    if not codes:
        return launcher_code
    worst = max(codes)
    return launcher_code if worst == 0 else worst


__all__ = ["ExitCode", "MEANINGS", "REPORT_DIR_ENV", "job_code", "report", "reported",
           "signal_code"]  # fmt: skip

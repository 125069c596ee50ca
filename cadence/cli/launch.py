"""``--nproc N`` / ``--num-gpus N``: re-run the same command under torchrun with N processes.

For users who do not want to type ``torchrun`` (detectron2's ``launch`` does the
same). The child command is this one without ``--nproc`` and with
``--launcher pytorch``; inside a launched process (``RANK``/``LOCAL_RANK`` set)
nothing is re-launched. This process stays until torchrun ends and relays
SIGTERM, SIGINT, SIGHUP and SIGUSR1 to the ranks (:mod:`.supervise`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence

from .supervise import launch_and_supervise

NPROC_FLAGS = ("--nproc", "--num-gpus")
_LAUNCHER_FLAG = "--launcher"


def add_nproc_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--nproc``/``--num-gpus`` to a run command."""
    parser.add_argument(
        *NPROC_FLAGS,
        dest="nproc",
        type=_positive_int,
        default=None,
        metavar="N",
        help="start N local processes under torchrun (one per GPU when there are GPUs)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"the number of processes must be >= 1, got {value}")
    return value


def inside_launched_process(env: dict[str, str] | None = None) -> bool:
    """Whether this process was started by a launcher (torchrun sets ``RANK``/``LOCAL_RANK``)."""
    env = dict(os.environ) if env is None else env
    return "RANK" in env or "LOCAL_RANK" in env


def child_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``--nproc N``/``--num-gpus N`` and ``--launcher X``, plus
    ``--launcher pytorch`` (inserted before any trailing overrides)."""
    out: list[str] = []
    skip_next = False
    for word in argv:
        if skip_next:
            skip_next = False
            continue
        flag = word.split("=", 1)[0]
        if flag in (*NPROC_FLAGS, _LAUNCHER_FLAG):
            skip_next = "=" not in word
            continue
        out.append(word)
    return [*out, _LAUNCHER_FLAG, "pytorch"]


def torchrun_command(nproc: int, argv: Sequence[str]) -> list[str]:
    """The ``python -m torch.distributed.run ... -m cadence ...`` command line."""
    return [
        sys.executable, "-m", "torch.distributed.run", "--standalone",
        "--nproc_per_node", str(nproc), "-m", "cadence", *child_argv(argv),
    ]  # fmt: skip


def relaunch(nproc: int, argv: Sequence[str]) -> int:
    """Run ``cadence argv`` under torchrun with ``nproc`` processes; its exit code.

    Stop signals to this process go to the ranks; it returns only once torchrun
    has ended (see :mod:`.supervise`), with the highest of the ranks' codes
    (:mod:`cadence.utils.exit_codes`), torchrun's own when none reported one."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default, without its warning
    here = os.getcwd()  # so the children import the project's modules as this process does
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    print(f"cadence: starting {nproc} processes with torchrun", file=sys.stderr, flush=True)
    return run_job(torchrun_command(nproc, argv), env)


def run_job(command: list[str], env: dict[str, str]) -> int:
    """Run the launcher ``command`` (see :mod:`.supervise`); the job's exit code: the
    highest its processes reported (torchrun exits 1 whatever theirs were), else its own."""
    from ..utils.exit_codes import REPORT_DIR_ENV, job_code, reported

    with tempfile.TemporaryDirectory(prefix="cadence-exit-") as codes:
        launcher_code = launch_and_supervise(command, {**env, REPORT_DIR_ENV: codes})
        return job_code(reported(codes), launcher_code)

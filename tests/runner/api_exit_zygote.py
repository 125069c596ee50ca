"""One rank of many consecutive Python-API DDP runs, each in a process that exits normally.

``python api_exit_zygote.py RANK PORTS ROOT`` imports torch and cadence once, then for
each port forks a child that sets the environment torchrun would (``RANK``,
``WORLD_SIZE``, ``MASTER_PORT``...), runs ``torchrun_api_case.main('ok', ...)`` (train,
test, val), and leaves with ``sys.exit(0)``: the child's interpreter finalises as any
script's does (atexit, module teardown, C++ static destructors), which is where an
unreleased process group aborted. Its stdout and stderr go to ``ROOT/runI.rankR.out``
and ``.err``; the zygote prints ``RUN I STATUS`` after each child.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch._dynamo  # noqa: E402, F401  (what DDP imports on first use: 3 s, paid once here)
import torchrun_api_case  # noqa: E402  (imports torch and cadence before any fork)

#: Seconds one run may take (1-2 s on 2 idle cores, ~5 s under load).
RUN_LIMIT = 60


def child(rank: int, port: str, run_dir: str, log_stem: str) -> None:
    """Run one rank of one run, then exit through the normal interpreter shutdown."""
    for fd, suffix in ((1, "out"), (2, "err")):
        target = os.open(f"{log_stem}.{suffix}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
                      GROUP_RANK="0", OMP_NUM_THREADS="1")  # fmt: skip
    torchrun_api_case.main("ok", run_dir)
    sys.exit(0)


def main(rank: int, ports: list[str], root: str) -> None:
    # What was imported before the forks is never garbage: leave it out of the collections
    # (the children's shutdown took 1.1 s, mostly the final collection walking torch's
    # objects; the objects a run creates are collected as usual).
    gc.freeze()
    for i, port in enumerate(ports):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            stem = os.path.join(root, f"run{i}.rank{rank}")
            child(rank, port, os.path.join(root, f"run{i}"), stem)
        print(f"RUN {i} {wait_or_kill(pid)} {time.monotonic():.2f}", flush=True)


def wait_or_kill(pid: int) -> str:
    """The child's exit code, or ``HUNG`` (and the child killed) after :data:`RUN_LIMIT` s:
    a hang fails the test in a minute and names its run instead of taking the suite's."""
    deadline = time.monotonic() + RUN_LIMIT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return str(os.waitstatus_to_exitcode(status))
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "HUNG"


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3])

"""Start a real ``cadence train`` process, signal it and see what is left of it.

The run uses the toys of ``signal_toys`` and writes markers into ``marks/``
(pids and finished iterations), so tests wait for a file rather than sleep.
Every process the run started is recorded by pid, so a test can assert that
none survives, and :meth:`Job.cleanup` kills leftovers whatever the test's
outcome, so that a failing test leaves nothing running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


def write_config(
    tmp_path: Path, *, hooks: Sequence[dict[str, Any]] = (), name: str = "run.py", **overrides: Any
) -> Path:
    """A config of the tiny run in ``tmp_path/name``; ``overrides`` replace top-level keys.

    It trains without end (100,000 iterations of ``Pace``'s ``delay``), so a test
    signals it while it runs; ``hooks`` are added to ``custom_hooks``."""
    marks = str(tmp_path / "marks")
    cfg: dict[str, Any] = dict(
        custom_imports=dict(imports=["signal_toys"]),
        model=dict(type="TinyLine"),
        work_dir=str(tmp_path / "work"),
        train_dataloader=dict(
            batch_size=2, num_workers=0, dataset=dict(type="MarkedRamp", marks=marks, n=64),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=False, max_iters=100_000),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", progress="off", interval=1000),
            checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=100_000),
        ),
        custom_hooks=[dict(type="Pace", marks=marks, delay=0.05), *hooks],
        randomness=dict(seed=0),
    )  # fmt: skip
    cfg.update(overrides)
    path = tmp_path / name
    path.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    return path


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def cadence(*args: str) -> list[str]:
    """The arguments of ``python`` that run ``cadence args``."""
    return ["-m", "cadence", *args]


class Job:
    """``python argv`` started in its own session (so that its group can be signalled)."""

    def __init__(self, tmp_path: Path, argv: Sequence[str], name: str = "job") -> None:
        self.tmp_path, self.marks = tmp_path, tmp_path / "marks"
        self.marks.mkdir(exist_ok=True)
        self.stdout = tmp_path / f"{name}.out"
        self.stderr = tmp_path / f"{name}.err"
        env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS)])
        env.setdefault("OMP_NUM_THREADS", "1")
        with open(self.stdout, "w") as out, open(self.stderr, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, *argv], cwd=tmp_path, env=env,
                stdout=out, stderr=err, start_new_session=True,
            )  # fmt: skip
        self.started = time.monotonic()

    def wait_for(self, name: str, timeout: float = 120.0) -> float:
        """Wait until marker ``name`` exists; the seconds since the job started."""
        return self.wait_until(lambda: (self.marks / name).exists(), name, timeout)

    def wait_until(self, done: Callable[[], bool], what: str, timeout: float = 120.0) -> float:
        """Wait until ``done()`` (while the job runs); the seconds since the job started."""
        deadline = time.monotonic() + timeout
        while not done():
            if self.proc.poll() is not None:
                raise AssertionError(f"the job ended ({self.proc.returncode}) before {what}:\n"
                                     + self.err_tail())  # fmt: skip
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout} s:\n" + self.err_tail())
            time.sleep(0.05)
        return time.monotonic() - self.started

    def send(self, signum: int, group: bool = False) -> float:
        """Send ``signum`` to the command (or its whole process group); the time it was sent."""
        if group:
            os.killpg(self.proc.pid, signum)
        else:
            os.kill(self.proc.pid, signum)
        return time.monotonic()

    def finish(self, timeout: float = 120.0) -> int:
        """The command's exit code (``-N`` for killed by signal ``N``)."""
        return self.proc.wait(timeout=timeout)

    def pids(self, role: str = "") -> list[int]:
        """Pids the run's processes marked (``rank0``, ``loader``... or all)."""
        prefix = f"pid.{role}" if role else "pid."
        return sorted({int(p.name.rsplit(".", 1)[1]) for p in self.marks.glob(prefix + "*")})

    def survivors(self, within: float = 10.0) -> list[int]:
        """The marked processes still running ``within`` seconds from now (waits for them)."""
        deadline = time.monotonic() + within
        while True:
            left = [pid for pid in [self.proc.pid, *self.pids()] if alive(pid)]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.1)

    def err_tail(self, chars: int = 4000) -> str:
        """The end of the job's stderr."""
        return self.stderr.read_text()[-chars:]

    def err(self) -> str:
        """The job's whole stderr."""
        return self.stderr.read_text()

    def cleanup(self) -> None:
        """Kill whatever of the run is left (after a failed assertion)."""
        for pid in [self.proc.pid, *self.pids()]:
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def record(name: str, **seconds: float) -> None:
    """Print measured seconds (``pytest -s`` shows them) and add them to ``$CADENCE_TIMINGS``."""
    line = json.dumps({"test": name, **{k: round(v, 2) for k, v in seconds.items()}})
    print(line)
    target = os.environ.get("CADENCE_TIMINGS")
    if target:
        with open(target, "a") as out:
            out.write(line + "\n")

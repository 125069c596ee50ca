"""Kill trials (issue #27): SIGKILL one rank of a ``torchrun --max-restarts 3`` job at a
planned point (between iterations, between two micro-batches of an accumulated step,
inside a checkpoint save); the restarted job resumes by itself and must end bit for bit
where an uninterrupted job ends.

Used by the suite's short version (tests/cli/test_kill_trials.py) and by the soak
(tests/soak/kill_resume_soak.py, run by ``.ci/run``), which draws 20 trials from a
printed seed. The run: 2 ranks (gloo on CPU), DDP, SGD with momentum, gradient
accumulation over 2 iterations, a shuffled sampler, a step scheduler, a checkpoint every
4 of 12 iterations (16 iterations make an epoch).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from signal_runs import Job, cadence, write_config

from cadence.checkpoint.files import read_checkpoint

ITERS, EVERY, ACCUM, RANKS = 12, 4, 2, 2
SAVES = list(range(EVERY, ITERS + 1, EVERY))


@dataclass(frozen=True)
class Trial:
    """Kill rank ``rank`` at ``where`` of iteration (or save) ``at`` (see kill_toys)."""

    rank: int
    at: int
    where: str

    def __str__(self) -> str:
        if self.where == "iter":
            kind = "mid-accumulation" if self.at % ACCUM else "after a step"
            return f"rank {self.rank} after iteration {self.at} ({kind})"
        return f"rank {self.rank} inside the save of iter_{self.at}.pth ({self.where})"

    def hook(self, marks: Path) -> dict[str, Any]:
        return dict(type="KillAt", marks=str(marks), rank=self.rank, at=self.at,
                    where=self.where)  # fmt: skip


def draw(seed: int, count: int) -> list[Trial]:
    """``count`` trials from ``seed``: half between iterations (any of 1..ITERS-1, so
    mid-accumulation and after-a-step both come), half inside a save."""
    rng = random.Random(seed)
    trials = []
    for i in range(count):
        if i % 2 == 0:
            trials.append(Trial(rng.randrange(RANKS), rng.randrange(1, ITERS), "iter"))
            continue
        where = rng.choice(["collect", "manifest", "pointer"])
        rank = rng.randrange(RANKS) if where == "collect" else 0
        trials.append(Trial(rank, rng.choice(SAVES), where))
    return trials


def config(tmp_path: Path, *hooks: dict[str, Any]) -> Path:
    """The trial run's config in ``tmp_path`` (its work dir ``tmp_path/work``)."""
    marks = str(tmp_path / "marks")
    return write_config(
        tmp_path,
        custom_imports=dict(imports=["signal_toys", "kill_toys"]),
        custom_hooks=[dict(type="Pace", marks=marks, delay=0.0), *hooks],
        train_dataloader=dict(
            batch_size=2, num_workers=0, dataset=dict(type="MarkedRamp", marks=marks, n=64),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=False, max_iters=ITERS),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01, momentum=0.9),
                           accumulative_counts=ACCUM),
        param_scheduler=[dict(type="MultiStepLR", by_epoch=False, milestones=[6, 10],
                              gamma=0.5)],
        default_hooks=dict(
            logger=dict(type="LoggerHook", progress="off", interval=1000),
            checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=EVERY),
        ),
        randomness=dict(seed=0),
    )  # fmt: skip


def job_argv(cfg: Path) -> list[str]:
    """``torchrun --standalone --nproc-per-node 2 --max-restarts 3 cadence train CFG``."""
    return ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(RANKS),
            "--max-restarts", "3",
            *cadence("train", str(cfg), "--launcher", "pytorch")]  # fmt: skip


def log_of(work: Path) -> str:
    return "".join(p.read_text() for p in sorted(work.glob("*/*.log")))


def final_state(work: Path) -> dict[str, Any]:
    """What must match bit for bit: the last checkpoint's weights, optimizer (momentum and
    accumulation counts), schedulers and position."""
    ckpt = read_checkpoint(str(work / f"iter_{ITERS}.pth"), "cpu")
    keep = ("state_dict", "optimizer", "param_schedulers")
    return {**{k: ckpt[k] for k in keep}, "iter": ckpt["meta"]["iter"]}


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ (tensors compared with ``torch.equal``)."""
    if isinstance(a, torch.Tensor):
        same = isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
        return [] if same else [where]
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return [f"{where} (keys)"]
        return [d for key in a for d in differences(a[key], b[key], f"{where}.{key}")]
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return [f"{where} (length)"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def run_job(tmp_path: Path, *hooks: dict[str, Any], timeout: float = 300.0) -> tuple[Job, float]:
    """Run one torchrun job to its end; the job and its seconds."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    job = Job(tmp_path, job_argv(config(tmp_path, *hooks)))
    try:
        code = job.finish(timeout=timeout)
    finally:
        job.cleanup()
    assert code == 0, f"the job exited {code}:\n{job.err_tail()}"
    return job, time.monotonic() - job.started


def run_trial(tmp_path: Path, trial: Trial, reference: dict[str, Any],
              timeout: float = 300.0) -> float:  # fmt: skip
    """Run ``trial`` in ``tmp_path``; raise AssertionError unless the killed rank died, the
    job restarted, resumed by itself and ended with ``reference``'s state. The seconds."""
    marks = tmp_path / "marks"
    job, took = run_job(tmp_path, trial.hook(marks), timeout=timeout)
    assert (marks / f"killed.rank{trial.rank}").exists(), f"{trial}: nobody was killed"
    assert len(job.pids("rank0")) == 2, f"{trial}: not restarted exactly once"
    diff = differences(final_state(tmp_path / "work"), reference)
    assert not diff, f"{trial}: the final state differs from the uninterrupted run's: {diff}"
    return took

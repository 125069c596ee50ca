"""Per-iteration time of cadence's Runner against a hand-written loop, same process.

Workload (issue 9): MLP 32->64->10, batch 32, SGD, an in-memory TensorDataset
through a DataLoader; ``--medium``: MLP 512->2048->10, batch 256.

What makes the comparison fair:

* Same data, model shape, optimizer, shuffling ``DataLoader`` and collate
  function (batches are ``dict(inputs=..., data_samples=...)`` in both).
* Both log a line every 50 iterations (``--log-interval``) at INFO level, to a console stream and to
  a log file. The console of both is the same sink (``--sink``: ``null``, the
  default, is ``os.devnull``; ``stdout`` is this process's stdout), and each
  writes its own log file in a temporary folder.
* The runner runs its default hooks (runtime info, timer, sampler seed,
  logger, parameter scheduler; no checkpoints) and its visualizer writes
  ``scalars.json`` at each log line, as in any cadence run. Its time is taken
  from ``before_train`` to ``after_train``, so building the runner is not
  counted; the hand-written loop's time starts at its first batch.
* ``--threads`` torch threads for both (1 by default: a tiny model gains
  nothing from more, and one thread keeps timings steady on a busy machine).
* A warm-up pair runs first; then ``--rounds`` pairs alternate hand-written and
  runner. Reported: the median time per iteration of each, and the median of
  the per-pair ratios runner/hand-written (pairs run back to back, so they see
  the same machine load).

When mmengine's runner imports in this interpreter (``mmengine`` or
``mmengine-lite``), the same workload also runs through it, with its default
hooks, a logger every 50 iterations and no checkpoints, and is reported with
the same ratio. mmengine's runner imports ``cv2`` for a visualisation hook this
benchmark never uses; without OpenCV an empty stand-in module is inserted.

    python benchmarks/iteration_overhead.py [--iters 2000] [--rounds 5] [--medium]
        [--threads 1] [--log-interval 50] [--sink null|stdout] [--progress off|auto|bar]
        [--no-others] [--without HOOK ...]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import tempfile
import time
from typing import IO, Any, NamedTuple

import torch
import torch.nn.functional as F
from bench_results import figure, write
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import MODELS
from cadence.runner import Runner

LOG_INTERVAL = 50


class Timing(NamedTuple):
    """Seconds per iteration: wall-clock, and CPU time of the process."""

    wall: float
    cpu: float


def make_data(n: int, dim: int, classes: int) -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    return TensorDataset(
        torch.randn(n, dim, generator=g), torch.randint(0, classes, (n,), generator=g)
    )


def collate(batch: list[tuple[torch.Tensor, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The one collate function both loops use."""
    xs, ys = zip(*batch)
    return {"inputs": torch.stack(xs), "data_samples": torch.stack(ys)}


def make_loader(data: TensorDataset, args: argparse.Namespace) -> DataLoader:
    return DataLoader(data, batch_size=args.batch, shuffle=True, drop_last=True, collate_fn=collate)


def make_net(args: argparse.Namespace) -> nn.Sequential:
    return nn.Sequential(nn.Linear(args.dim, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10))


@MODELS.register_module()
class BenchMLP(BaseModel):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.net = make_net(argparse.Namespace(dim=dim, hidden=hidden))

    def forward(self, inputs, data_samples=None, mode="tensor"):  # type: ignore[no-untyped-def]
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return logits


def close_handlers(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def hand_logger(sink: IO[str], work: str) -> logging.Logger:
    """A logger like the runner's: INFO level, one console stream and one file."""
    logger = logging.getLogger("bench.hand_written")
    close_handlers(logger)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    fmt = logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s")
    for handler in (logging.StreamHandler(sink), logging.FileHandler(os.path.join(work, "h.log"))):
        handler.setFormatter(fmt)
        logger.addHandler(handler)
    return logger


def _now() -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds of this process)."""
    return time.perf_counter(), time.process_time()


def _per_iter(start: tuple[float, float], end: tuple[float, float], iters: int) -> Timing:
    return Timing((end[0] - start[0]) / iters, (end[1] - start[1]) / iters)


def hand_written(
    data: TensorDataset, args: argparse.Namespace, iters: int, sink: IO[str]
) -> Timing:
    """Seconds per iteration of a plain PyTorch loop."""
    torch.manual_seed(0)
    model = make_net(args)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = make_loader(data, args)
    with tempfile.TemporaryDirectory() as work:
        logger = hand_logger(sink, work)
        it = 0
        start = _now()
        while it < iters:
            for batch in loader:
                loss = F.cross_entropy(model(batch["inputs"]), batch["data_samples"])
                opt.zero_grad()
                loss.backward()
                opt.step()
                it += 1
                if it % args.log_interval == 0:
                    logger.info("Iter [%d/%d] lr: %.4e loss: %.4f", it, iters, 0.01, loss.item())
                if it == iters:
                    break
        end = _now()
        close_handlers(logger)
    return _per_iter(start, end, iters)


class _Clock(Hook):
    """Stamps the start and the end of training."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.stamps: list[tuple[float, float]] = []

    def before_train(self, runner: Any) -> None:
        self.stamps.append(_now())

    def after_train(self, runner: Any) -> None:
        self.stamps.append(_now())


def _default_hooks(args: argparse.Namespace, progress: dict[str, Any]) -> dict[str, Any]:
    """The runner's default hooks (checkpoint off), less those named by ``--without``
    (``--without all`` measures the model contract, loop and optimizer wrapper alone)."""
    from cadence.runner.runner import DEFAULT_HOOKS

    hooks: dict[str, Any] = dict(
        logger=dict(type="LoggerHook", interval=args.log_interval, **progress), checkpoint=None
    )
    dropped = DEFAULT_HOOKS if "all" in args.without else args.without
    for name in dropped:
        if name not in DEFAULT_HOOKS:
            raise SystemExit(
                f"--without: no default hook '{name}'; choose from {list(DEFAULT_HOOKS)}"
            )
        hooks[name] = None
    return hooks


def with_runner(
    data: TensorDataset,
    args: argparse.Namespace,
    iters: int,
    sink: IO[str],
    custom_hooks: list[Hook] | None = None,
) -> Timing:
    """Seconds per iteration of the same training through cadence's Runner
    (``custom_hooks`` are registered beside the default ones)."""
    progress = {} if args.progress is None else {"progress": args.progress}
    with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(sink):
        runner = Runner(
            model=dict(type="BenchMLP", dim=args.dim, hidden=args.hidden),
            work_dir=work,
            train_dataloader=make_loader(data, args),
            train_cfg=dict(by_epoch=False, max_iters=iters),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
            default_hooks=_default_hooks(args, progress),
            log_processor=dict(by_epoch=False),
            log_level="INFO",
            randomness=dict(seed=0),
            custom_hooks=custom_hooks,
        )
        clock = _Clock()
        runner.register_hook(clock)
        runner.train()
        close_handlers(logging.getLogger(runner.experiment_name))
    start, end = clock.stamps
    return _per_iter(start, end, iters)


def mmengine_available() -> bool:
    """Whether mmengine's runner imports (with a stand-in ``cv2``: no hook used here needs it)."""
    try:
        import cv2  # noqa: F401
    except ImportError:
        import types

        stand_in = types.ModuleType("cv2")
        stand_in.setNumThreads = lambda n: None  # type: ignore[attr-defined]
        stand_in.__version__ = "not installed (stand-in)"  # type: ignore[attr-defined]
        sys.modules["cv2"] = stand_in
    try:
        import mmengine.runner  # noqa: F401
    except Exception:  # noqa: BLE001 - any failure means: skip it
        sys.modules.pop("cv2", None)
        return False
    return True


_mm_runs = 0


def with_mmengine(
    data: TensorDataset, args: argparse.Namespace, iters: int, sink: IO[str]
) -> Timing:
    """Seconds per iteration of the same training through mmengine's Runner."""
    global _mm_runs
    from mmengine.hooks import Hook as MMHook
    from mmengine.model import BaseModel as MMBaseModel
    from mmengine.runner import Runner as MMRunner

    class MMMLP(MMBaseModel):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.net = make_net(args)

        def forward(self, inputs, data_samples=None, mode="tensor"):  # type: ignore[no-untyped-def]
            logits = self.net(inputs)
            if mode == "loss":
                return {"loss": F.cross_entropy(logits, data_samples)}
            return logits

    stamps: list[tuple[float, float]] = []

    class MMClock(MMHook):  # type: ignore[misc]
        priority = "LOWEST"

        def before_train(self, runner: Any) -> None:
            stamps.append(_now())

        def after_train(self, runner: Any) -> None:
            stamps.append(_now())

    _mm_runs += 1
    with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(sink):
        runner = MMRunner(
            model=MMMLP(),
            work_dir=work,
            train_dataloader=make_loader(data, args),
            train_cfg=dict(by_epoch=False, max_iters=iters),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=args.log_interval), checkpoint=None
            ),  # fmt: skip
            log_processor=dict(by_epoch=False),
            log_level="INFO",
            randomness=dict(seed=0),
            experiment_name=f"bench_mmengine_{os.getpid()}_{_mm_runs}",
        )
        runner.register_hook(MMClock())
        runner.train()
        close_handlers(logging.getLogger("mmengine"))
        close_handlers(runner.logger)
    start, end = stamps
    return _per_iter(start, end, iters)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--medium", action="store_true", help="MLP 512->2048->10, batch 256")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--log-interval", type=int, default=LOG_INTERVAL,
                        help="iterations between log lines, every loop (default 50)")  # fmt: skip
    parser.add_argument("--sink", choices=("null", "stdout"), default="null",
                        help="where both loops' console lines go")  # fmt: skip
    parser.add_argument("--progress", choices=("off", "auto", "bar"), default=None,
                        help="the runner's LoggerHook progress (default: the hook's)")  # fmt: skip
    parser.add_argument("--without", nargs="*", default=[], metavar="HOOK",
                        help="default hooks to leave out (or 'all')")  # fmt: skip
    parser.add_argument("--no-others", action="store_true",
                        help="skip mmengine even when it is installed")  # fmt: skip
    args = parser.parse_args()
    args.dim, args.hidden, args.batch = (512, 2048, 256) if args.medium else (32, 64, 32)
    torch.set_num_threads(args.threads)
    data = make_data(args.batch * 64, args.dim, 10)
    sink_cm = open(os.devnull, "w") if args.sink == "null" else contextlib.nullcontext(sys.stdout)
    contenders = {"hand-written": hand_written, "cadence": with_runner}
    if not args.no_others:
        if mmengine_available():
            contenders["mmengine"] = with_mmengine
        else:
            print("mmengine: not installed, skipped")
    times: dict[str, list[Timing]] = {name: [] for name in contenders}
    with sink_cm as sink:
        warm = min(args.iters, 200)
        for fn in contenders.values():
            fn(data, args, warm, sink)
        for _ in range(args.rounds):
            for name, fn in contenders.items():
                times[name].append(fn(data, args, args.iters, sink))
    figures: dict[str, dict[str, Any]] = {}
    for name in list(contenders)[1:]:
        for clock in Timing._fields:
            ratios = [getattr(b, clock) / getattr(a, clock)
                      for a, b in zip(times["hand-written"], times[name])]  # fmt: skip
            figures[f"{name}_ratio_{clock}"] = figure(ratios, "x")
    figures["hand_written_us_per_iter_cpu"] = figure(
        [t.cpu * 1e6 for t in times["hand-written"]], "us"
    )
    kind = "medium" if args.medium else "tiny"
    without = ("_without_" + "_".join(args.without)) if args.without else ""
    print(f"workload: MLP {args.dim}->{args.hidden}->10, batch {args.batch}, "
          f"{args.iters} iters x {args.rounds} rounds, {args.threads} thread(s)")  # fmt: skip
    for clock in Timing._fields:
        base = [getattr(t, clock) for t in times["hand-written"]]
        print(f"{clock}: hand-written {statistics.median(base) * 1e6:8.1f} us/iter "
              f"(min {min(base) * 1e6:.1f}, max {max(base) * 1e6:.1f})")  # fmt: skip
        for name in list(contenders)[1:]:
            other = [getattr(t, clock) for t in times[name]]
            ratios = [b / a for a, b in zip(base, other)]
            rounds = " ".join(f"{x:.3f}" for x in ratios)
            print(f"  {name:9s} {statistics.median(other) * 1e6:8.1f} us/iter, ratio "
                  f"{statistics.median(ratios):.3f} (median of rounds; min ratio "
                  f"{min(ratios):.3f}; per round: {rounds})")  # fmt: skip
    write(f"iteration_overhead_{kind}{without}" if kind != "tiny" or without
          else "iteration_overhead", figures)  # fmt: skip


if __name__ == "__main__":
    main()

"""``cadence check CONFIG --dry-run``: build a run for real and take a few steps.

:func:`dry_run` builds the datasets, dataloaders, model, optimizer wrapper,
schedulers, hooks and strategy on one process (the configured strategy, with
a world of one), in a temporary work dir, so the configured ``work_dir`` is
never created or touched. It then runs two training steps and two validation
(and test) steps and reports the first batch's shapes, the parameter counts
and the time per step. Items are fetched one index at a time, so a broken
dataset is reported with the index that failed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runner import Runner

from .common import CliError

#: Batches each stage of a dry run takes.
DRY_RUN_BATCHES = 2


class DryRunError(CliError):
    """A dry run failed: which stage, the error, and the user's frame when there is one."""


@dataclass
class DryRunReport:
    """What a dry run found, one line per fact (see :meth:`lines`)."""

    facts: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.facts.append(line)

    def lines(self) -> list[str]:
        return [line for fact in self.facts for line in fact.split("\n")]


def describe(value: Any, depth: int = 0) -> str:
    """A short description of a batch: tensor shapes and dtypes, containers and lengths."""
    import torch

    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        return f"Tensor[{', '.join(map(str, value.shape))}] {dtype}"
    if isinstance(value, Mapping):
        if depth >= 2:
            return f"dict({len(value)} keys)"
        inner = ", ".join(f"{k}: {describe(v, depth + 1)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        kind = type(value).__name__
        if not value:
            return f"{kind}[0]"
        first = describe(value[0], depth + 1)
        same = all(describe(v, depth + 1) == first for v in value[1:8])
        return f"{kind}[{len(value)}] of {first}" if same else f"{kind}[{len(value)}]"
    return type(value).__name__


def _user_frame(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame outside cadence and torch, or ''."""
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        name = frame.filename.replace("\\", "/")
        if "/cadence/" not in name and "/torch/" not in name and "/site-packages/" not in name:
            return f" (at {frame.filename}:{frame.lineno} in {frame.name})"
    return ""


def _failed(stage: str, exc: BaseException) -> DryRunError:
    return DryRunError(
        f"dry run failed while {stage}: {type(exc).__name__}: {exc}{_user_frame(exc)}"
    )


def _stage(stage: str, fn: Callable[[], Any], debug: bool) -> Any:
    if debug:
        return fn()
    try:
        return fn()
    except CliError:
        raise
    except Exception as exc:
        raise _failed(stage, exc) from exc


def first_batches(loader: Any, path: str, count: int = DRY_RUN_BATCHES) -> list[Any]:
    """The first ``count`` batches of ``loader``, each item fetched by its index so that a
    failing item is named ``{path}.dataset[index]``; iterable datasets are iterated."""
    from torch.utils.data import IterableDataset

    dataset = loader.dataset
    if isinstance(dataset, IterableDataset) or getattr(loader, "batch_sampler", None) is None:
        return list(itertools.islice(iter(loader), count))
    batches = []
    for indices in itertools.islice(iter(loader.batch_sampler), count):
        items = []
        for index in indices:
            try:
                items.append(dataset[index])
            except Exception as exc:
                raise DryRunError(
                    f"{path}.dataset[{index}] ({type(dataset).__name__}) failed: "
                    f"{type(exc).__name__}: {exc}{_user_frame(exc)}"
                ) from exc
        try:
            batches.append(loader.collate_fn(items))
        except Exception as exc:
            raise DryRunError(
                f"{path}: collating the items at indices {list(indices)} failed: "
                f"{type(exc).__name__}: {exc}{_user_frame(exc)}"
            ) from exc
    return batches


def _sync(model: Any) -> None:
    import torch

    param = next(iter(model.parameters()), None)
    if param is not None and param.device.type == "cuda":
        torch.cuda.synchronize(param.device)


def _timed(steps: Iterator[Callable[[], Any]], model: Any) -> tuple[list[float], list[Any]]:
    times, results = [], []
    for step in steps:
        start = time.perf_counter()
        results.append(step())
        _sync(model)
        times.append(time.perf_counter() - start)
    return times, results


def _format_times(times: Sequence[float]) -> str:
    text = ", ".join(f"{t * 1000:.1f} ms" for t in times)
    return f"{text} per step (the first warms up)" if len(times) > 1 else f"{text} per step"


def _dataset_line(mode: str, loader: Any, batches: Sequence[Any]) -> str:
    size = _len_or(loader.dataset)
    per_epoch = _len_or(loader)
    first = describe(batches[0]) if batches else "(no batch)"
    return f"{mode} data: {size} samples, {per_epoch} batches per epoch\n  first batch: {first}"


def _len_or(obj: Any) -> str:
    try:
        return f"{len(obj):,}"
    except TypeError:
        return "?"


def _losses(results: Sequence[Any]) -> str:
    parts = []
    for log_vars in results:
        if isinstance(log_vars, Mapping) and "loss" in log_vars:
            parts.append(f"{float(log_vars['loss']):.4g}")
    return f"; loss {', '.join(parts)}" if parts else ""


def _quiet_copy(cfg: Any, work_dir: str) -> Any:
    """``cfg`` for a dry run: a temporary work dir, one process, nothing loaded or logged
    below warnings, no experiment trackers."""
    import copy as copying

    copy = copying.deepcopy(cfg)
    copy.work_dir = work_dir
    copy.launcher = "none"
    copy.load_from = None
    copy.resume = False
    copy.log_level = "WARNING"
    visualizer = copy.get("visualizer")
    if isinstance(visualizer, Mapping) and visualizer.get("vis_backends"):
        copy.visualizer = {**visualizer, "vis_backends": []}  # no TensorBoard/W&B/MLflow run
    return copy


def dry_run(cfg: Any, debug: bool = False) -> DryRunReport:
    """Build everything ``cfg`` describes and take :data:`DRY_RUN_BATCHES` steps per stage.

    Raises :class:`DryRunError` naming the stage (or dataset index) that failed;
    with ``debug`` the original exception propagates instead.
    """
    report = DryRunReport()
    configured = cfg.get("work_dir")
    with tempfile.TemporaryDirectory(prefix="cadence-dry-run-") as tmp:
        runner = _stage("building the runner", lambda: _build_runner(cfg, tmp), debug)
        with _world_of_one(runner, tmp):
            try:
                _run_stages(runner, report, debug)
            finally:
                runner.close(barrier=False)
                _close_log_files(runner)
    load_from = cfg.get("load_from")
    if load_from:
        found = "found" if "://" in str(load_from) or os.path.exists(load_from) else "NOT FOUND"
        report.add(f"load_from {load_from} ({found}) is not loaded by a dry run")
    report.add(f"nothing was written to the work_dir ({configured})")
    return report


def _close_log_files(runner: Runner) -> None:
    """Close the runner's log file handlers: their files are in the deleted temporary
    folder and would stay open (a file descriptor each) until the process ends."""
    import logging

    for handler in list(runner.logger.handlers):
        if isinstance(handler, logging.FileHandler):
            runner.logger.removeHandler(handler)
            handler.close()


@contextlib.contextmanager
def _world_of_one(runner: Runner, tmp: str) -> Iterator[None]:
    """For a distributed strategy, a process group of one process (file store in ``tmp``)
    that the strategy joins, destroyed afterwards; nothing for other strategies."""
    import torch.distributed as torch_dist

    from ..strategies.distributed import DistributedStrategy
    from ..strategies.launch import default_backend

    if not isinstance(runner.strategy, DistributedStrategy) or torch_dist.is_initialized():
        yield
        return
    dist_cfg = dict(dict(runner.cfg.get("env_cfg") or {}).get("dist_cfg") or {})
    env = dict(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))  # fmt: skip
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    store = torch_dist.FileStore(os.path.join(tmp, "dist_store"), 1)
    torch_dist.init_process_group(default_backend(dist_cfg.get("backend")), store=store,
                                  rank=0, world_size=1)  # fmt: skip
    try:
        yield
    finally:
        if torch_dist.is_initialized():
            torch_dist.destroy_process_group()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _build_runner(cfg: Any, tmp: str) -> Any:
    from ..registry import RUNNERS
    from ..runner import Runner

    copy = _quiet_copy(cfg, tmp)
    return RUNNERS.build(copy) if copy.get("runner_type") else Runner.from_cfg(copy)


def _run_stages(runner: Runner, report: DryRunReport, debug: bool) -> None:
    _stage("setting up the strategy, logger and hooks", runner.setup_env, debug)
    strategy = runner.strategy
    has_train = runner.cfg.get("train_cfg") is not None
    if has_train:
        loop = _stage("building train_dataloader and train_cfg", lambda: runner.train_loop, debug)
        batches = first_batches(loop.dataloader, "train_dataloader")
        _stage("building the model, optimizer and schedulers", runner.prepare, debug)
    else:
        batches = []
        _stage("building the model", lambda: runner.model, debug)
    model = runner.model
    device = next(iter(model.parameters()), None)
    where = device.device if device is not None else "cpu"
    report.add(f"strategy: {type(strategy).__name__} on {where}, world size {runner.world_size}")
    plain = strategy.unwrap(model)
    total = sum(p.numel() for p in plain.parameters())
    trainable = sum(p.numel() for p in plain.parameters() if p.requires_grad)
    report.add(f"model: {type(plain).__name__}, {total:,} parameters ({trainable:,} trainable)")
    if has_train:
        report.add(_dataset_line("train", loop.dataloader, batches))
        optim_wrapper = runner.optim_wrapper
        optim_wrapper.initialize_count_status(model, 0, loop.max_iters)
        model.train()
        trained: Any = model  # a BaseModel (as the strategy prepared it)
        train_step = trained.train_step
        steps = (lambda b=b: train_step(b, optim_wrapper=optim_wrapper) for b in batches)
        times, results = _stage("taking a training step", lambda: _timed(steps, model), debug)
        report.add(f"train step: {_format_times(times)}{_losses(results)}")
    for mode in ("val", "test"):
        if runner.cfg.get(f"{mode}_cfg") is not None:
            _evaluate(runner, mode, report, debug)


def _evaluate(runner: Runner, mode: str, report: DryRunReport, debug: bool) -> None:
    import torch

    build = (lambda: runner.val_loop) if mode == "val" else (lambda: runner.test_loop)
    loop = _stage(f"building {mode}_dataloader and {mode}_evaluator", build, debug)
    batches = first_batches(loop.dataloader, f"{mode}_dataloader")
    report.add(_dataset_line(mode, loop.dataloader, batches))
    model = runner.model
    model.eval()
    step = getattr(model, f"{mode}_step")

    def run() -> tuple[list[float], list[Any]]:
        with torch.no_grad():
            steps = (lambda b=b: step(b) for b in batches)
            return _timed(steps, model)

    times, outputs = _stage(f"taking a {mode} step", run, debug)
    count = 0
    for batch, out in zip(batches, outputs):
        loop.evaluator.process(data_samples=out, data_batch=batch)
        count += len(out) if isinstance(out, Sequence) else 0
    metrics = _stage(f"computing the {mode} metrics on {len(batches)} batches",
                     lambda: loop.evaluator.evaluate(count), debug)  # fmt: skip
    shown = ", ".join(f"{k}={_short(v)}" for k, v in list(metrics.items())[:4])
    report.add(f"{mode} step: {_format_times(times)}; metrics on {count} samples: {shown}")


def _short(value: Any) -> str:
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return type(value).__name__

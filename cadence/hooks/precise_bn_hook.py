"""Recompute BatchNorm statistics over many training samples before validating."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.utils.data import DataLoader, IterableDataset

from ..dist import all_reduce, get_world_size
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from ..utils.rng import preserved_rng
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def bn_modules(model: nn.Module) -> list[_BatchNorm]:
    """BatchNorm layers that are in training mode and track running statistics."""
    return [
        m
        for m in model.modules()
        if isinstance(m, _BatchNorm) and m.training and m.track_running_stats
    ]


def _forward(model: nn.Module, data_batch: Any) -> None:
    preprocess = getattr(model, "data_preprocessor", None)
    data = preprocess(data_batch, True) if preprocess is not None else data_batch
    if isinstance(data, dict):
        model(**data, mode="tensor")
    elif isinstance(data, (list, tuple)):
        model(*data, mode="tensor")
    else:
        model(data)


@torch.no_grad()
def update_bn_stats(model: nn.Module, batches: Iterable[Any], num_batches: int) -> int:
    """Set the running statistics of ``model``'s BatchNorm layers from ``num_batches`` batches.

    The statistics are reset and each layer's momentum is set to ``None``
    (cumulative average), so afterwards ``running_mean`` is the average of the
    batch means and ``running_var`` the average of the (unbiased) batch
    variances, as detectron2's precise BN computes them. Momentum and the batch
    counter are restored. Returns the number of batches used.
    """
    was_training = model.training
    model.train()
    layers = bn_modules(model)
    if not layers:
        model.train(was_training)
        return 0
    saved = [(m.momentum, m.num_batches_tracked.clone()) for m in layers]  # type: ignore[union-attr]
    for m in layers:
        m.reset_running_stats()
        m.momentum = None
    used = 0
    try:
        for data_batch in itertools.islice(batches, num_batches):
            _forward(model, data_batch)
            used += 1
    finally:
        for m, (momentum, count) in zip(layers, saved):
            m.momentum = momentum
            m.num_batches_tracked.copy_(count)  # type: ignore[union-attr]
        model.train(was_training)
    return used


def _fresh_loader(loader: Any) -> Any:
    """A loader over the same batches that shares no iterator (or workers) with ``loader``."""
    if not isinstance(loader, DataLoader) or isinstance(loader.dataset, IterableDataset):
        return loader
    return DataLoader(
        loader.dataset,
        batch_sampler=loader.batch_sampler,
        collate_fn=loader.collate_fn,
        num_workers=loader.num_workers,
        pin_memory=loader.pin_memory,
        worker_init_fn=loader.worker_init_fn,
        timeout=loader.timeout,
    )


def _batch_size(loader: Any) -> int:
    size = getattr(loader, "batch_size", None)
    if size is None:
        size = getattr(getattr(loader, "batch_sampler", None), "batch_size", None)
    return int(size or 1)


@HOOKS.register_module()
class PreciseBNHook(Hook):
    """Recompute BatchNorm running statistics before validations during training.

    Running statistics accumulated with a momentum lag behind the weights;
    this hook recomputes them over ``num_samples`` training samples (split over
    the processes; the result is averaged across them) with the current
    weights, in training mode and without gradients. See
    :func:`update_bn_stats` for what is computed. Training's random streams are
    left untouched.

    Args:
        num_samples: training samples to use (rounded up to whole batches).
        interval: run before a validation only when the number of finished
            epochs (iterations, for iteration-based training) is a multiple of
            ``interval``.
    """

    priority = "ABOVE_NORMAL"

    def __init__(self, num_samples: int = 8192, interval: int = 1) -> None:
        if not isinstance(num_samples, int) or num_samples < 1:
            raise ValueError(f"PreciseBNHook.num_samples must be >= 1, got {num_samples!r}")
        if not isinstance(interval, int) or interval < 1:
            raise ValueError(f"PreciseBNHook.interval must be >= 1, got {interval!r}")
        self.num_samples = num_samples
        self.interval = interval
        self._training = False

    def before_train(self, runner: RunnerProtocol) -> None:
        self._training = True

    def after_train(self, runner: RunnerProtocol) -> None:
        self._training = False

    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        """Recompute the statistics (only while training, every ``interval``)."""
        if not self._training:
            return
        position = runner.epoch if runner.train_loop_by_epoch else runner.iter
        if position % self.interval:
            return
        self.run(runner)

    def run(self, runner: RunnerProtocol) -> None:
        """Recompute the statistics of ``runner.model`` now."""
        model = runner.strategy.unwrap(runner.model)
        loader = runner.train_dataloader
        world_size = get_world_size()
        num_batches = max(1, math.ceil(self.num_samples / (_batch_size(loader) * world_size)))
        try:
            num_batches = min(num_batches, len(loader))
        except TypeError:
            pass
        with preserved_rng():
            used = update_bn_stats(model, iter(_fresh_loader(loader)), num_batches)
        if world_size > 1:
            for m in model.modules():
                if isinstance(m, _BatchNorm) and m.running_mean is not None:
                    all_reduce(m.running_mean, op="mean")
                    all_reduce(m.running_var, op="mean")  # type: ignore[arg-type]
        runner.logger.info(f"PreciseBNHook: BatchNorm statistics recomputed over {used} batches")


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(PreciseBNHook)

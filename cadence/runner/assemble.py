"""Build the model, optimizer wrapper and schedulers, and hand them to the strategy.

Building stays with the builders (``MODELS``, the optimizer wrapper constructor,
the scheduler builder); the strategy only places, wraps and (for engines such as
DeepSpeed) takes over the built objects::

    module = strategy.setup_module(build_model(cfg.model), compile=...)   # place, wrap, shard
    optim_wrapper = build_optim_wrapper(strategy.unwrap(module), cfg.optim_wrapper)
    model, optim_wrapper = strategy.setup(module, optim_wrapper, batch_size=...)
    schedulers = build_param_schedulers(optim_wrapper, cfg.param_scheduler, ...)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from torch import nn

from ..contracts import Schedulers, Trained

if TYPE_CHECKING:
    import logging

    from ..contracts import OptimWrapperView
    from ..strategies import BaseStrategy


@dataclass(frozen=True)
class TrainFacts:
    """What building for training needs to know about the training loop."""

    epoch_length: int | None = None
    max_epochs: int | None = None
    max_iters: int | None = None
    batch_size: int | None = None
    lr_scale: float | None = None


def build_model(model: nn.Module | Mapping[str, Any]) -> nn.Module:
    """``model`` as a cadence model: built from ``MODELS`` unless it is a module already."""
    from ..model import as_cadence_model
    from ..registry import MODELS

    if isinstance(model, Mapping):
        return as_cadence_model(MODELS.build(model, key_path="model"))
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"model should be an nn.Module or a config dict, got {type(model).__name__}"
        )
    return as_cadence_model(model)


def assemble(
    strategy: BaseStrategy,
    model: nn.Module | None,
    model_cfg: nn.Module | Mapping[str, Any],
    *,
    compile: bool | Mapping[str, Any] = False,
    optim_cfg: Any = None,
    scheduler_cfg: Any = None,
    facts: TrainFacts | None = None,
) -> tuple[nn.Module, Any, Any]:
    """The model ready to run (and, given ``optim_cfg``, its optimizer wrapper and
    schedulers): ``model`` is the one set up before, or None to build ``model_cfg``.

    The learning rates are scaled by ``facts.lr_scale`` (auto-scale-lr) before the
    strategy takes the optimizer and before the schedulers record their initial values.
    """
    from ..optim import build_optim_wrapper, build_param_schedulers
    from ..strategies import scale_lr

    if model is None:
        model = strategy.setup_module(build_model(model_cfg), compile=compile)
    facts = facts or TrainFacts()
    optim_wrapper = None
    if optim_cfg is not None:
        optim_cfg = strategy.optim_wrapper_config(optim_cfg)
        optim_wrapper = build_optim_wrapper(strategy.unwrap(model), optim_cfg)
        if facts.lr_scale is not None and facts.lr_scale != 1:
            scale_lr(optim_wrapper, facts.lr_scale)
    model, optim_wrapper = strategy.setup(model, optim_wrapper, batch_size=facts.batch_size)
    schedulers = None
    if optim_wrapper is not None and scheduler_cfg is not None:
        schedulers = build_param_schedulers(
            optim_wrapper, scheduler_cfg, epoch_length=facts.epoch_length,
            max_epochs=facts.max_epochs, max_iters=facts.max_iters,
        )  # fmt: skip
    return model, optim_wrapper, schedulers


def model_name(model: nn.Module | None, model_cfg: Any, strategy: BaseStrategy) -> str:
    """The class name of the built ``model`` (unwrapped), else of its config's ``type``."""
    if model is not None:
        return type(strategy.unwrap(model)).__name__
    if not isinstance(model_cfg, Mapping):
        return type(model_cfg).__name__
    kind = model_cfg.get("type")
    if isinstance(kind, str):
        return kind.rsplit(".", 1)[-1]
    return str(getattr(kind, "__name__", kind))


def wrap_model(
    strategy: BaseStrategy, model: nn.Module, model_wrapper_cfg: Mapping[str, Any] | None
) -> nn.Module:
    """``model`` on the strategy's device, wrapped by it (DDP, FSDP...) or, with a
    ``model_wrapper_cfg``, by that ``MODEL_WRAPPERS`` config."""
    model = model.to(strategy.device)
    if model_wrapper_cfg is None:
        wrapped: nn.Module = strategy.wrap_model(model)
        return wrapped
    from ..registry import MODEL_WRAPPERS

    built: nn.Module = MODEL_WRAPPERS.build(
        dict(model_wrapper_cfg), default_args={"module": model}, key_path="model_wrapper_cfg"
    )
    return built


def build_schedulers_for(
    optim_wrapper: OptimWrapperView | None, scheduler: Any, loop: Any
) -> Schedulers:
    """The schedulers of ``scheduler`` for ``optim_wrapper``; a built training ``loop``'s
    length is their default ``end`` and converts ``convert_to_iter_based`` ones."""
    if optim_wrapper is None:
        from .errors import RunnerOrderError

        raise RunnerOrderError(
            "build_param_scheduler needs runner.optim_wrapper: set it (e.g. to "
            "runner.build_optim_wrapper(cfg)) first"
        )
    from ..optim import build_param_schedulers

    lengths: dict[str, Any] = {}
    if loop is not None:
        try:
            lengths["epoch_length"] = len(loop.dataloader)
        except TypeError:
            pass
        lengths.update(max_epochs=loop.max_epochs, max_iters=loop.max_iters)
    built: Schedulers = build_param_schedulers(optim_wrapper, scheduler, **lengths)
    return built


def scale_lr_for(
    optim_wrapper: Any,
    auto_scale_lr: Mapping[str, Any] | None,
    *,
    schedulers: Schedulers | None,
    world_size: int,
    loader: Any,
    logger: logging.Logger,
) -> None:
    """Scale ``optim_wrapper``'s learning rates by the total batch size of ``loader`` over
    ``auto_scale_lr.base_batch_size`` when ``auto_scale_lr.enable`` is set; refused once
    ``schedulers`` are built (they record the initial rates)."""
    if not auto_scale_lr or not auto_scale_lr.get("enable", False):
        return
    if schedulers is not None:
        from .errors import RunnerOrderError

        raise RunnerOrderError(
            "scale_lr must be called before the parameter schedulers are built: they "
            "record the initial learning rates"
        )
    from ..strategies import scale_lr
    from .auto_scale import auto_scale_lr_ratio

    scale_lr(optim_wrapper, auto_scale_lr_ratio(auto_scale_lr, world_size, loader, logger))


def train_facts(
    loop: Any, auto_scale_lr: Mapping[str, Any], world_size: int, logger: Any
) -> TrainFacts:
    """:class:`TrainFacts` of a built training loop (its dataloader is built here)."""
    from .auto_scale import auto_scale_lr_ratio

    loader = loop.dataloader
    try:
        epoch_length: int | None = len(loader)
    except TypeError:
        epoch_length = None
    return TrainFacts(
        epoch_length=epoch_length,
        max_epochs=loop.max_epochs,
        max_iters=loop.max_iters,
        batch_size=getattr(loader, "batch_size", None),
        lr_scale=auto_scale_lr_ratio(auto_scale_lr, world_size, loader, logger),
    )


__all__ = [
    "Schedulers", "TrainFacts", "Trained", "assemble", "build_model", "build_schedulers_for",
    "model_name", "scale_lr_for", "train_facts", "wrap_model",
]  # fmt: skip

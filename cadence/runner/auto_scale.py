"""Rescale a config written for one world size to the world size a run really has.

detectron2 calls this ``auto_scale_workers`` (``SOLVER.REFERENCE_WORLD_SIZE``).
Here the config key is::

    auto_scale_workers = dict(enable=True, reference_world_size=8)

meaning "these hyper-parameters were tuned on 8 processes". On ``N`` processes
the run is rescaled by ``scale = N / reference_world_size`` so that it sees the
same number of samples with the linear scaling rule:

* the **per-process** batch size (``train_dataloader.batch_size``) stays, so
  the total batch size ``batch_size * N`` scales with ``scale`` (detectron2
  keeps its per-GPU batch the same way when it scales ``IMS_PER_BATCH``);
* learning rates are multiplied by ``scale``: every ``optimizer.lr`` of
  ``optim_wrapper`` (also each wrapper of a multi-optimizer config) and the
  absolute LR values of LR schedulers (``eta_min``, ``eta_max``);
* quantities counted in **iterations** are divided by ``scale`` (rounded):
  ``train_cfg.max_iters``, ``val_interval``, ``val_begin`` and
  ``dynamic_intervals`` of an iteration-based loop; ``begin``, ``end``,
  ``milestones``, ``step_size``, ``T_max``, ``periods``, ``total_steps`` of
  iteration-based parameter schedulers (``by_epoch=False``; e.g. a LinearLR
  warm-up and MultiStepLR steps); ``default_hooks.checkpoint.interval`` when
  the checkpoint hook counts iterations (``by_epoch=False``);
* quantities counted in **epochs** stay: an epoch already has ``1 / scale``
  times as many iterations on ``N`` processes.

``reference_world_size`` is set to ``N`` afterwards, so the config saved into
the work dir describes the run as it was trained. Using it together with
``auto_scale_lr`` (which scales only the LR) is refused.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..config.errors import ConfigAssertionError
from ..utils import did_you_mean

if TYPE_CHECKING:
    import logging

    from ..config import Config
    from .settings import RunSettings


_KEYS = ("enable", "reference_world_size")
#: Iteration-valued arguments of parameter schedulers (besides begin/end).
_STEP_ARGS = ("milestones", "step_size", "T_max", "periods", "total_steps")
#: Absolute learning-rate values of LR schedulers.
_LR_ARGS = ("eta_min", "eta_max")
_INF = int(1e9)


def auto_scale_lr_ratio(
    cfg: Mapping[str, Any], world_size: int, dataloader: Any, logger: Any
) -> float:
    """mmengine's ``auto_scale_lr``: the factor that scales the learning rates from the
    config's ``base_batch_size`` to the run's total batch size (1 when not enabled)."""
    if not cfg or not cfg.get("enable", False):
        return 1.0
    batch_size = _batch_size(dataloader)
    if batch_size is None:
        raise ValueError(
            "auto_scale_lr needs the train dataloader's batch_size (it has a batch_sampler "
            "without one)"
        )
    total_batch_size = world_size * batch_size
    if "base_batch_size" not in cfg:
        raise ConfigAssertionError(
            "auto_scale_lr.base_batch_size is missing: give the total batch size the learning "
            "rates were tuned for, e.g. auto_scale_lr=dict(enable=True, base_batch_size=256)"
        )
    ratio = total_batch_size / cfg["base_batch_size"]
    logger.info(
        f"auto_scale_lr: total batch size {total_batch_size} vs base {cfg['base_batch_size']}: "
        f"learning rates x {ratio:g}"
    )
    return ratio


def check_auto_scale_workers(cfg: Mapping[str, Any] | None) -> int | None:
    """Validate an ``auto_scale_workers`` dict; its reference world size, or None when off."""
    if not cfg:
        return None
    if not isinstance(cfg, Mapping):
        raise TypeError(
            "auto_scale_workers must be a dict such as "
            f"dict(enable=True, reference_world_size=8), got {type(cfg).__name__}"
        )
    for key in cfg:
        if key not in _KEYS:
            raise ValueError(
                f"auto_scale_workers: unknown key {key!r}; expected {', '.join(_KEYS)}."
                f"{did_you_mean(str(key), _KEYS)}"
            )
    if not cfg.get("enable", False):
        return None
    reference = cfg.get("reference_world_size")
    if isinstance(reference, bool) or not isinstance(reference, int) or reference < 1:
        raise ValueError(
            "auto_scale_workers.reference_world_size must be an int >= 1 (the number of "
            f"processes the config was tuned for), got {reference!r}"
        )
    return reference


class _Changes:
    """Records ``old -> new`` per key path for the log line."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.lines: list[str] = []

    def iters(self, owner: dict[str, Any], key: str, path: str, minimum: int = 1) -> None:
        """Divide the iteration count ``owner[key]`` (number or list) by the scale."""
        old = owner.get(key)
        if old is None or isinstance(old, bool):
            return
        new = _map(old, lambda v: v if v >= _INF else max(minimum, int(round(v / self.scale))))
        self._set(owner, key, path, old, new)

    def lr(self, owner: dict[str, Any], key: str, path: str) -> None:
        """Multiply the learning-rate value ``owner[key]`` (number or list) by the scale."""
        old = owner.get(key)
        if old is None or isinstance(old, bool):
            return
        self._set(owner, key, path, old, _map(old, lambda v: v * self.scale))

    def _set(self, owner: dict[str, Any], key: str, path: str, old: Any, new: Any) -> None:
        owner[key] = new
        if new != old:
            self.lines.append(f"{path}: {old} -> {new}")


def _map(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fn(value)
    return value


def _require_dict(value: Any, key: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(
            f"auto_scale_workers rescales configs, but {key} is an already built "
            f"{type(value).__name__}; give {key} as a dict or turn auto_scale_workers off"
        )
    return copy.deepcopy(dict(value))


def _is_iter_based(train_cfg: Mapping[str, Any]) -> bool:
    loop_type = str(train_cfg.get("type", ""))
    if loop_type:
        return "Iter" in loop_type
    by_epoch = train_cfg.get("by_epoch")
    return not by_epoch if by_epoch is not None else "max_iters" in train_cfg


def _scale_train_cfg(train_cfg: dict[str, Any], changes: _Changes) -> None:
    if not _is_iter_based(train_cfg):
        return
    for key in ("max_iters", "val_interval"):
        changes.iters(train_cfg, key, f"train_cfg.{key}")
    changes.iters(train_cfg, "val_begin", "train_cfg.val_begin", minimum=0)
    intervals = train_cfg.get("dynamic_intervals")
    if intervals:
        old = [tuple(pair) for pair in intervals]
        scaled = [
            (max(0, int(round(m / changes.scale))), max(1, int(round(i / changes.scale))))
            for m, i in old
        ]
        train_cfg["dynamic_intervals"] = scaled
        changes.lines.append(f"train_cfg.dynamic_intervals: {old} -> {scaled}")


def _scale_optim_wrapper(optim_wrapper: dict[str, Any], changes: _Changes) -> None:
    optimizer = optim_wrapper.get("optimizer")
    if isinstance(optimizer, dict):
        changes.lr(optimizer, "lr", "optim_wrapper.optimizer.lr")
        return
    for name, sub in optim_wrapper.items():  # one wrapper per sub-model (OptimWrapperDict)
        if isinstance(sub, dict) and isinstance(sub.get("optimizer"), dict):
            changes.lr(sub["optimizer"], "lr", f"optim_wrapper.{name}.optimizer.lr")


def _scale_schedulers(schedulers: Any, changes: _Changes) -> Any:
    if schedulers is None:
        return None
    items = schedulers if isinstance(schedulers, list) else [schedulers]
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        path = f"param_scheduler[{index}]" if isinstance(schedulers, list) else "param_scheduler"
        name = str(item.get("type", ""))
        if name.endswith("LR"):
            for key in _LR_ARGS:
                changes.lr(item, key, f"{path}.{key} ({name})")
        if item.get("by_epoch", True):
            continue
        changes.iters(item, "begin", f"{path}.begin ({name})", minimum=0)
        for key in ("end", *_STEP_ARGS):
            changes.iters(item, key, f"{path}.{key} ({name})")
    return schedulers


def _scale_hooks(default_hooks: dict[str, Any], changes: _Changes) -> None:
    checkpoint = default_hooks.get("checkpoint")
    if isinstance(checkpoint, dict) and checkpoint.get("by_epoch", True) is False:
        changes.iters(checkpoint, "interval", "default_hooks.checkpoint.interval")


def scale_to_world_size(
    parts: Mapping[str, Any], world_size: int, reference_world_size: int
) -> tuple[dict[str, Any], list[str]]:
    """Rescale config ``parts`` from ``reference_world_size`` to ``world_size`` processes.

    ``parts`` holds some of the top-level keys ``train_cfg``, ``optim_wrapper``,
    ``param_scheduler``, ``default_hooks`` (dicts; not modified). Returns the
    rescaled parts and one ``'key.path: old -> new'`` line per changed value.
    """
    if world_size == reference_world_size:
        return {k: copy.deepcopy(v) for k, v in parts.items()}, []
    changes = _Changes(world_size / reference_world_size)
    out: dict[str, Any] = {}
    for key, value in parts.items():
        if key == "param_scheduler":
            out[key] = _scale_schedulers(copy.deepcopy(value), changes)
            continue
        part = _require_dict(value, key)
        out[key] = part
        if part is None:
            continue
        if key == "train_cfg":
            _scale_train_cfg(part, changes)
        elif key == "optim_wrapper":
            _scale_optim_wrapper(part, changes)
        elif key == "default_hooks":
            _scale_hooks(part, changes)
    return out, changes.lines


def apply_auto_scale_workers(
    settings: RunSettings, world_size: int, cfg: Config | None, logger: logging.Logger | None
) -> list[str]:
    """Rescale the run's ``settings`` to ``world_size`` per their ``auto_scale_workers``,
    and write the rescaled parts into ``cfg`` (what is saved into the work dir).

    Called once at setup, after the process group exists and before anything
    is built; logs one line listing every ``old -> new`` change and returns them.
    """
    reference = check_auto_scale_workers(settings.auto_scale_workers)
    if reference is None:
        return []
    auto_scale_lr = settings.auto_scale_lr
    if auto_scale_lr.get("enable", False):
        raise ValueError(
            "auto_scale_workers and auto_scale_lr are both enabled; they would scale the "
            "learning rate twice. Keep auto_scale_workers (it scales the learning rate too) "
            "and set auto_scale_lr=dict(enable=False), or turn auto_scale_workers off"
        )
    given = settings.loop_parts
    parts = dict(
        train_cfg=given["train_cfg"], optim_wrapper=given["optim_wrapper"],
        param_scheduler=settings.param_scheduler, default_hooks=settings.default_hooks,
    )  # fmt: skip
    scaled, lines = scale_to_world_size(parts, world_size, reference)
    given["train_cfg"] = scaled["train_cfg"]
    given["optim_wrapper"] = scaled["optim_wrapper"]
    settings.param_scheduler = scaled["param_scheduler"]
    settings.default_hooks = scaled["default_hooks"]
    _update_config(cfg, scaled, world_size)
    batch = _batch_size(given.get("train_dataloader"))
    head = f"auto_scale_workers: reference world size {reference} -> {world_size}"
    if batch is not None:
        head += (
            f"; batch size per process {batch} (kept), total "
            f"{batch * reference} -> {batch * world_size}"
        )
    body = "; ".join(lines) if lines else "nothing else to change"
    if logger is not None:
        logger.info(f"{head}; {body}")
    return lines


def _batch_size(dataloader: Any) -> int | None:
    if isinstance(dataloader, Mapping):
        size = dataloader.get("batch_size")
        return size if isinstance(size, int) else None
    size = getattr(dataloader, "batch_size", None)
    return size if isinstance(size, int) else None


def _update_config(cfg: Any, scaled: Mapping[str, Any], world_size: int) -> None:
    """Write the rescaled parts into the run's Config (what is saved into the work dir)."""
    if cfg is None or "auto_scale_workers" not in cfg:
        return
    for key, value in scaled.items():
        if key in cfg and value is not None:
            cfg[key] = value
    cfg["auto_scale_workers"] = dict(cfg["auto_scale_workers"], reference_world_size=world_size)


__all__ = ["apply_auto_scale_workers", "check_auto_scale_workers", "scale_to_world_size"]

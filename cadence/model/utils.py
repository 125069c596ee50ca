"""Model helpers from ``mmengine.model.utils``: batch stacking, dict merging, SyncBN conversion."""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from ..logging import print_log


def stack_batch(
    tensors: Sequence[torch.Tensor], pad_size_divisor: int = 1, pad_value: float = 0
) -> torch.Tensor:
    """Stack same-rank tensors, padding every dim but the first at its end.

    Each padded dim is the batch maximum rounded up to a multiple of
    ``pad_size_divisor``; padded entries hold ``pad_value``.
    """
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError("stack_batch expects a non-empty list of tensors")
    ranks = {t.dim() for t in tensors}
    if len(ranks) != 1:
        raise ValueError(
            f"stack_batch expects tensors of one rank, got ranks {[t.dim() for t in tensors]}"
        )
    shapes = [tuple(t.shape) for t in tensors]
    target = [
        max(shape[d] for shape in shapes)
        if d == 0
        else math.ceil(max(shape[d] for shape in shapes) / pad_size_divisor) * pad_size_divisor
        for d in range(len(shapes[0]))
    ]
    padded = []
    for tensor, shape in zip(tensors, shapes):
        if shape[0] != target[0]:
            raise ValueError(
                f"stack_batch pads all dims but the first; first dims differ: "
                f"{[s[0] for s in shapes]}"
            )
        pad: list[int] = []
        for d in reversed(range(1, len(shape))):
            pad += [0, target[d] - shape[d]]
        padded.append(F.pad(tensor, pad, value=pad_value) if any(pad) else tensor)
    return torch.stack(padded)


def merge_dict(*args: dict[Any, Any]) -> dict[Any, Any]:
    """One dict with the items of all arguments, later ones winning.

    ``torch.fx`` does not trace into it (``dict.update`` is not traceable), so a
    model that merges its heads' loss dicts with it stays symbolically traceable.
    """
    merged: dict[Any, Any] = {}
    for item in args:
        if not isinstance(item, dict):
            raise AssertionError(
                f"all arguments of merge_dict should be a dict, but got {type(item)}"
            )
        merged.update(item)
    return merged


torch.fx.wrap("merge_dict")


def detect_anomalous_params(loss: torch.Tensor, model: nn.Module) -> None:
    """Log (ERROR) every trainable parameter of ``model`` that ``loss`` does not depend on."""
    reached: set[torch.Tensor] = set()
    seen: set[Any] = set()
    pending = [loss.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(variable)
        pending.extend(parent for parent, _ in node.next_functions)
    for name, param in model.named_parameters():
        if param.requires_grad and param not in reached:
            print_log(
                f"{name} with shape {param.size()} is not in the computational graph \n",
                logger="current",
                level=logging.ERROR,
            )


class _BatchNormXd(_BatchNorm):
    """BatchNorm for inputs of any rank (what :func:`revert_sync_batchnorm` produces)."""

    def _check_input_dim(self, input: torch.Tensor) -> None:
        return None


BatchNormXd = _BatchNormXd


def _sync_bn_types() -> tuple[type[nn.Module], ...]:
    """torch's SyncBatchNorm, and mmcv's when ``mmcv.ops`` is already imported."""
    types: list[type[nn.Module]] = [nn.SyncBatchNorm]
    mmcv_ops = sys.modules.get("mmcv.ops")
    mmcv_sync_bn = getattr(mmcv_ops, "SyncBatchNorm", None)
    if isinstance(mmcv_sync_bn, type):
        types.append(mmcv_sync_bn)
    return tuple(types)


def _copy_norm_state(source: nn.Module, target: nn.Module) -> None:
    """Share ``source``'s affine parameters and running statistics with ``target``."""
    if source.affine:
        with torch.no_grad():
            target.weight = source.weight
            target.bias = source.bias
    target.running_mean = source.running_mean
    target.running_var = source.running_var
    target.num_batches_tracked = source.num_batches_tracked
    if hasattr(source, "qconfig"):
        target.qconfig = source.qconfig


def _replace_children(module: nn.Module, output: nn.Module, convert: Any, what: str) -> None:
    for name, child in module.named_children():
        try:
            output.add_module(name, convert(child))
        except Exception:
            print_log(
                f"Failed to convert {child} from {what}!", logger="current", level=logging.ERROR
            )


def revert_sync_batchnorm(module: nn.Module) -> nn.Module:
    """Replace every SyncBatchNorm in ``module`` by a BatchNorm that accepts any input rank.

    The new layers share the old ones' parameters and running statistics and keep
    their train/eval mode. Returns the converted module (``module`` itself unless
    it is a SyncBatchNorm). A child that fails to convert is logged and kept.
    """
    output = module
    if isinstance(module, _sync_bn_types()):
        norm: Any = module
        output = _BatchNormXd(
            norm.num_features, norm.eps, norm.momentum, norm.affine, norm.track_running_stats
        )
        _copy_norm_state(norm, output)
        output.training = norm.training
    _replace_children(module, output, revert_sync_batchnorm, "SyncBN to BN")
    return output


def convert_sync_batchnorm(module: nn.Module, implementation: str = "torch") -> nn.Module:
    """Replace every BatchNorm in ``module`` by a SyncBatchNorm sharing its state.

    ``implementation``: ``'torch'`` (``torch.nn.SyncBatchNorm``) or ``'mmcv'``
    (``mmcv.ops.SyncBatchNorm``, needs mmcv). Returns the converted module. A child
    that fails to convert is logged and kept.
    """
    if implementation == "torch":
        sync_bn: type[nn.Module] = nn.SyncBatchNorm
    elif implementation == "mmcv":
        from mmcv.ops import SyncBatchNorm  # optional; present only with mmcv installed

        sync_bn = SyncBatchNorm
    else:
        raise ValueError(f'sync_bn should be "torch" or "mmcv", but got {implementation}')
    return _to_sync(module, sync_bn)


def _to_sync(module: nn.Module, sync_bn: type[nn.Module]) -> nn.Module:
    output = module
    if isinstance(module, _BatchNorm):
        output = sync_bn(
            module.num_features,
            module.eps,
            module.momentum,
            module.affine,
            module.track_running_stats,
        )
        _copy_norm_state(module, output)
    _replace_children(module, output, lambda child: _to_sync(child, sync_bn), "BN to SyncBN")
    return output

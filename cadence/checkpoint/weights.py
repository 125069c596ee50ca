"""Model weights out of a checkpoint: key rewriting and loading into a module."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from .files import read_checkpoint


def model_weights(
    checkpoint: Mapping[str, Any], revise_keys: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """The model weights of a checkpoint (``state_dict``, or the checkpoint itself),
    with keys rewritten by ``revise_keys`` (regex, replacement) pairs."""
    state = dict(checkpoint.get("state_dict", checkpoint))
    for pattern, replacement in revise_keys:
        state = {re.sub(pattern, replacement, k): v for k, v in state.items()}
    return state


def load_state_dict_into(
    model: nn.Module,
    checkpoint: Mapping[str, Any],
    strict: bool,
    revise_keys: Sequence[tuple[str, str]],
    source: str | None = None,
) -> None:
    """Load ``checkpoint['state_dict']`` (or the checkpoint itself) into ``model``.

    Keys are rewritten with ``revise_keys`` (regex, replacement) pairs first;
    by default a DDP ``module.`` prefix is stripped. Without ``strict``, keys that
    do not match are named in a warning (about ``source``, the file, when given).
    """
    state = model_weights(checkpoint, revise_keys)
    result = model.load_state_dict(state, strict=strict)
    if not strict and (result.missing_keys or result.unexpected_keys):
        import warnings

        warnings.warn(
            f"{source or 'checkpoint'} loaded with missing keys {result.missing_keys[:10]} "
            f"and unexpected keys {result.unexpected_keys[:10]}",
            stacklevel=3,
        )


def load_checkpoint(
    model: nn.Module,
    filename: str,
    map_location: str | torch.device = "cpu",
    strict: bool = False,
    revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    logger: Any = None,
) -> dict[str, Any]:
    """Load the weights of ``filename`` into ``model``; return the whole checkpoint.

    ``logger`` is accepted for mmengine's signature; mismatched keys are reported in a
    warning whichever logger is named.

    The file is checked against its manifest and read with
    ``torch.load(weights_only=True)``; keys are rewritten with ``revise_keys``
    (regex, replacement) pairs (by default a DDP ``module.`` prefix is dropped).
    """
    checkpoint = read_checkpoint(filename, map_location)
    from ..model.wrappers.utils import unwrap_model

    target = unwrap_model(model)  # not a model's own .module
    load_state_dict_into(target, checkpoint, strict, revise_keys)
    return checkpoint

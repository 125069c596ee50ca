"""Reading and writing checkpoint files safely."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn


def atomic_torch_save(obj: Any, filename: str) -> None:
    """``torch.save`` to a temporary file, fsync, then rename over ``filename``."""
    directory = os.path.dirname(os.path.abspath(filename))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".ckpt-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


BeforeLoad = Callable[[dict[str, Any]], None]


def read_checkpoint(
    filename: str,
    map_location: str | torch.device = "cpu",
    before_load: BeforeLoad | None = None,
) -> dict[str, Any]:
    """Load a checkpoint without executing code from it (``weights_only=True``).

    ``before_load(checkpoint)`` may inspect or edit it before anything is restored
    (the runner calls its ``after_load_checkpoint`` hooks here, as mmengine does).
    """
    if not os.path.isfile(filename):
        raise FileNotFoundError(f"checkpoint '{filename}' does not exist")
    checkpoint = torch.load(filename, map_location=map_location, weights_only=True)
    if not isinstance(checkpoint, dict):
        raise ValueError(f"checkpoint '{filename}' holds a {type(checkpoint).__name__}, not a dict")
    if before_load is not None:
        before_load(checkpoint)
    return checkpoint


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
) -> None:
    """Load ``checkpoint['state_dict']`` (or the checkpoint itself) into ``model``.

    Keys are rewritten with ``revise_keys`` (regex, replacement) pairs first;
    by default a DDP ``module.`` prefix is stripped.
    """
    state = model_weights(checkpoint, revise_keys)
    result = model.load_state_dict(state, strict=strict)
    if not strict and (result.missing_keys or result.unexpected_keys):
        import warnings

        warnings.warn(
            f"checkpoint loaded with missing keys {result.missing_keys[:10]} and unexpected "
            f"keys {result.unexpected_keys[:10]}",
            stacklevel=3,
        )

"""``turn_on_activation_checkpointing``: recompute chosen submodules' activations in backward.

mmengine's path ``mmengine.runner.activation_checkpointing``. Each named submodule's
``forward`` is wrapped in :func:`torch.utils.checkpoint.checkpoint` (non-reentrant, so
keyword arguments and inputs that need no grad work), trading compute for memory: the
outputs and gradients are those of the unwrapped model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint


def _checkpointed(forward: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(forward)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)

    return wrapper


def turn_on_activation_checkpointing(model: torch.nn.Module, modules: str | Sequence[str]) -> None:
    """Checkpoint the activations of ``model``'s submodules named in ``modules`` (dotted
    paths such as ``'backbone.layer1'``)."""
    names = [modules] if isinstance(modules, str) else list(modules)
    for name in names:
        try:
            module = attrgetter(name)(model)
        except AttributeError:
            children = [n for n, _ in model.named_modules() if n]
            from ..utils import did_you_mean

            raise AttributeError(
                f"turn_on_activation_checkpointing: the model has no submodule {name!r}."
                + did_you_mean(name, children)
            ) from None
        module.forward = _checkpointed(module.forward)


__all__ = ["turn_on_activation_checkpointing"]

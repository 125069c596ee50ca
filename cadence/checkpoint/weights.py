"""Model weights out of a checkpoint: key rewriting and loading into a module."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch
from torch import nn

from .files import read_checkpoint


def model_weights(
    checkpoint: Mapping[str, Any], revise_keys: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """The model weights of a checkpoint (``state_dict``, or the checkpoint itself),
    with keys rewritten by ``revise_keys`` (regex, replacement) pairs. The modules'
    versions that torch saves with a state dict (``_metadata``) are kept."""
    source = checkpoint.get("state_dict", checkpoint)
    metadata = getattr(source, "_metadata", None)
    state: dict[str, Any] = OrderedDict(source)
    for pattern, replacement in revise_keys:
        state = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state.items())
    if metadata is not None:
        state._metadata = metadata  # type: ignore[attr-defined]
    return state


class Mismatch(NamedTuple):
    """What did not fit when weights were loaded (torch's ``_IncompatibleKeys`` fields,
    plus the shape errors torch would raise)."""

    missing_keys: list[str]
    unexpected_keys: list[str]
    errors: list[str]

    def report(self) -> str | None:
        """One message naming every key that did not fit, or None when all did
        (``num_batches_tracked`` counters missing from older files are not named)."""
        missing = [k for k in self.missing_keys if "num_batches_tracked" not in k]
        lines = list(self.errors)
        if self.unexpected_keys:
            lines.append(f"unexpected key in source state_dict: {', '.join(self.unexpected_keys)}")
        if missing:
            lines.append(f"missing keys in source state_dict: {', '.join(missing)}")
        if not lines:
            return None
        return "\n".join(["The model and loaded state dict do not match exactly", *lines])


def load_matching(module: nn.Module, state_dict: Mapping[str, Any]) -> Mismatch:
    """Load every tensor of ``state_dict`` whose key and shape fit ``module`` and return
    what did not (as mmengine's ``load_state_dict``: a shape that differs is reported,
    not raised, so a model with a new head loads the rest).

    Model wrappers anywhere in the tree are looked through (their ``module.`` is not part
    of the keys), the modules' saved versions reach their ``_load_from_state_dict`` and
    the load-state-dict post hooks run, as in ``nn.Module.load_state_dict``.
    """
    from ..model.wrappers.utils import is_model_wrapper

    metadata = getattr(state_dict, "_metadata", None)
    state = OrderedDict(state_dict)
    result = Mismatch([], [], [])
    incompatible = torch.nn.modules.module._IncompatibleKeys(
        result.missing_keys, result.unexpected_keys
    )

    def load(mod: nn.Module, prefix: str) -> None:
        while is_model_wrapper(mod):
            mod = mod.module  # type: ignore[assignment]  # a wrapper holds a module
        local = {} if metadata is None else metadata.get(prefix[:-1], {})
        mod._load_from_state_dict(
            state, prefix, local, True, result.missing_keys, result.unexpected_keys,
            result.errors,
        )  # fmt: skip
        for name, child in mod._modules.items():
            if child is not None:
                load(child, f"{prefix}{name}.")
        for hook in mod._load_state_dict_post_hooks.values():
            hook(mod, incompatible)

    load(module, "")
    return result


def load_state_dict_into(
    model: nn.Module,
    checkpoint: Mapping[str, Any],
    strict: bool,
    revise_keys: Sequence[tuple[str, str]],
    source: str | None = None,
) -> None:
    """Load ``checkpoint['state_dict']`` (or the checkpoint itself) into ``model``.

    Keys are rewritten with ``revise_keys`` (regex, replacement) pairs first;
    by default a DDP ``module.`` prefix is stripped. Keys and shapes that do not fit
    are named in a warning (about ``source``, the file, when given) and left as they
    are, as mmengine does; with ``strict`` they are a ``RuntimeError``.
    """
    state = model_weights(checkpoint, revise_keys)
    result = load_matching(model, state)
    report = result.report()
    if report is None:
        return
    if strict:
        raise RuntimeError(f"{source or 'checkpoint'}: {report}")
    import warnings

    warnings.warn(f"{source or 'checkpoint'} loaded with mismatches. {report}", stacklevel=3)


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

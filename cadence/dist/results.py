"""Bring per-rank evaluation results back together in dataset order."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping
from typing import Any

import torch

from .collectives import all_gather_object
from .utils import ProcessGroup, get_rank, get_world_size

_DEVICES = ("cpu", "gpu", "cuda", "npu")
_MISSING = object()


def to_cpu(data: Any) -> Any:
    """Return ``data`` with every tensor (in lists, tuples and dicts) moved to the CPU."""
    if isinstance(data, torch.Tensor):
        return data.cpu()
    if isinstance(data, list):
        return [to_cpu(item) for item in data]
    if isinstance(data, tuple) and not hasattr(data, "_fields"):
        return tuple(to_cpu(item) for item in data)
    if isinstance(data, Mapping):
        return type(data)({key: to_cpu(value) for key, value in data.items()})  # type: ignore[call-arg]
    move = getattr(data, "cpu", None)
    if callable(move) and hasattr(data, "to_dict"):  # a data element with its own .cpu()
        return move()
    return data


def interleave(parts: list[list[Any]]) -> list[Any]:
    """Merge per-rank lists taken round-robin: item ``i`` of rank ``r`` was sample ``i*W + r``.

    Ranks may hold different counts (a sampler without round-up gives the first
    ``len % W`` ranks one more item); shorter lists simply end earlier.
    """
    merged = itertools.chain.from_iterable(itertools.zip_longest(*parts, fillvalue=_MISSING))
    return [item for item in merged if item is not _MISSING]


def _check_counts(counts: list[int]) -> None:
    ordered = all(a >= b for a, b in itertools.pairwise(counts))
    if not ordered or counts[0] - counts[-1] > 1:
        warnings.warn(
            f"ranks hold {counts} results: a round-robin sampler gives each rank the same "
            "count (or the first ranks one more), so the merged results may not follow the "
            "dataset order",
            stacklevel=3,
        )


def collect_results(
    results: list[Any],
    size: int,
    device: str = "cpu",
    group: ProcessGroup | None = None,
) -> list[Any] | None:
    """Gather every rank's ``results`` on rank 0 in dataset order, cut to ``size`` items.

    Rank ``r`` is expected to hold samples ``r, r+W, r+2W, ...`` of the (padded)
    sampling order, one result per sample, as :class:`~cadence.dataset.DefaultSampler`
    deals them; the lists are zipped back together and the padding duplicates at
    the end are dropped. Results travel pickled through the process group (no
    shared file system); with ``device='cpu'`` tensors are moved to the CPU first.
    Returns the list on rank 0 and ``None`` on the other ranks.
    """
    if not isinstance(results, list):
        raise TypeError(f"results must be a list, got {type(results).__name__}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"size must be a non-negative int (the dataset length), got {size!r}")
    if device not in _DEVICES:
        raise ValueError(f"device must be one of {', '.join(map(repr, _DEVICES))}, got {device!r}")
    payload = to_cpu(results) if device == "cpu" else results
    if get_world_size(group) == 1:
        merged = list(payload)
    else:
        parts = all_gather_object(payload, group)
        if get_rank(group) != 0:
            return None
        _check_counts([len(part) for part in parts])
        merged = interleave(parts)
    if len(merged) < size:
        warnings.warn(
            f"collected {len(merged)} results for a dataset of {size} samples; a metric "
            "should add one result per sample in process()",
            stacklevel=2,
        )
    return merged[:size]

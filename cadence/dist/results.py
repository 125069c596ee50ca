"""Bring per-rank evaluation results back together in dataset order."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import warnings
from collections.abc import Mapping
from typing import Any

import torch

from .collectives import all_gather_object
from .utils import ProcessGroup, barrier, get_rank, get_world_size

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


def _check_arguments(results: Any, size: Any, device: str) -> None:
    if not isinstance(results, list):
        raise TypeError(f"results must be a list, got {type(results).__name__}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"size must be a non-negative int (the dataset length), got {size!r}")
    if device not in _DEVICES:
        raise ValueError(f"device must be one of {', '.join(map(repr, _DEVICES))}, got {device!r}")


def _merge(parts: list[list[Any]], size: int) -> list[Any]:
    _check_counts([len(part) for part in parts])
    merged = interleave(parts)
    if len(merged) < size:
        warnings.warn(
            f"collected {len(merged)} results for a dataset of {size} samples; a metric "
            "should add one result per sample in process()",
            stacklevel=3,
        )
    return merged[:size]


def _parts_through_files(
    results: list[Any], tmpdir: str | os.PathLike[str], group: ProcessGroup | None
) -> list[list[Any]] | None:
    """Each rank pickles its part into ``tmpdir`` (shared by all ranks); rank 0 reads them
    all and removes the files (and ``tmpdir`` when that leaves it empty)."""
    rank, world_size = get_rank(group), get_world_size(group)
    folder = os.fspath(tmpdir)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"part_{rank}.pkl"), "wb") as file:
        pickle.dump(results, file, protocol=pickle.HIGHEST_PROTOCOL)
    barrier(group)
    parts: list[list[Any]] | None = None
    if rank == 0:
        parts = []
        for other in range(world_size):
            path = os.path.join(folder, f"part_{other}.pkl")
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"{path} is missing: collect_results needs a tmpdir that every rank "
                    f"can see (a shared file system), and {folder} is not shared"
                )
            with open(path, "rb") as file:
                parts.append(pickle.load(file))
            os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    barrier(group)  # the next call's files must not overwrite this call's before they are read
    return parts


def collect_results(
    results: list[Any],
    size: int,
    device: str = "cpu",
    tmpdir: str | os.PathLike[str] | None = None,
    group: ProcessGroup | None = None,
) -> list[Any] | None:
    """Gather every rank's ``results`` on rank 0 in dataset order, cut to ``size`` items.

    Rank ``r`` is expected to hold samples ``r, r+W, r+2W, ...`` of the (padded)
    sampling order, one result per sample, as :class:`~cadence.dataset.DefaultSampler`
    deals them; the lists are zipped back together and the padding duplicates at
    the end are dropped. With ``device='cpu'`` tensors are moved to the CPU first,
    and the parts travel through ``tmpdir`` when it is given (a folder every rank
    can see; each rank writes ``part_<rank>.pkl``), else pickled through the
    process group (no shared file system needed). ``device='gpu'`` sends them as
    they are through the process group and takes no ``tmpdir``.
    Returns the list on rank 0 and ``None`` on the other ranks.
    """
    _check_arguments(results, size, device)
    if tmpdir is not None and device != "cpu":
        raise ValueError(f"tmpdir can only be used with device='cpu', got device={device!r}")
    payload = to_cpu(results) if device == "cpu" else results
    if get_world_size(group) == 1:
        return _merge([list(payload)], size)
    if tmpdir is not None:
        parts = _parts_through_files(payload, tmpdir, group)
    else:
        parts = all_gather_object(payload, group)
    if get_rank(group) != 0 or parts is None:
        return None
    return _merge(parts, size)


def collect_results_cpu(
    result_part: list[Any], size: int, tmpdir: str | os.PathLike[str] | None = None
) -> list[Any] | None:
    """:func:`collect_results` with ``device='cpu'`` (mmengine's name)."""
    return collect_results(result_part, size, "cpu", tmpdir)


def collect_results_gpu(result_part: list[Any], size: int) -> list[Any] | None:
    """:func:`collect_results` with ``device='gpu'`` (mmengine's name)."""
    return collect_results(result_part, size, "gpu")

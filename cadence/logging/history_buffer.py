"""A bounded history of logged values with windowed statistics.

Values may be Python numbers or one-element tensors. Accelerator tensors are
kept as they are (detached) and turned into Python numbers only when a
statistic is read, all pending tensors of one device at once, so logging a
loss every iteration costs no host synchronisation. CPU tensors are read when
logged (no synchronisation involved, and cheaper than keeping them).

Counts are stored only from the first entry whose count is not 1: entries past the
end of the count list were seen once. A writer of Python numbers known to be
``int``/``float`` can take :meth:`HistoryBuffer.number_appender`, the value list's
own ``append`` (no Python frame per value); the buffer then trims on read and on
:meth:`HistoryBuffer.trim`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

from ..utils.suggest import did_you_mean

#: Extra entries kept past ``max_length`` before trimming, so trimming is amortised.
_TRIM_SLACK = 1024
#: Pending tensors are converted once this many accumulate, even if nobody reads.
_MAX_PENDING = 1024
_BUILTIN_STATISTICS = ("mean", "max", "min", "current")


#: ``torch.Tensor`` once a tensor has been logged (for an exact-type fast path).
_tensor_type: Any = None


def _is_tensor(value: Any) -> bool:
    global _tensor_type
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        _tensor_type = torch.Tensor
        return True
    return False


class LoggedValueError(TypeError, ValueError, AssertionError):
    """A value or count given to a :class:`HistoryBuffer` is not one number (mmengine
    raises TypeError or asserts; cadence's message said ValueError for shapes)."""


def _shape_error(value: Any) -> ValueError:
    return LoggedValueError(
        f"a logged tensor must hold exactly one element, got shape {tuple(value.shape)}"
    )


def _coerce_value(value: Any) -> Any:
    """Return a Python number or a detached one-element accelerator tensor, or raise.

    CPU tensors are read at once: that needs no device synchronisation and is
    cheaper than keeping them.
    """
    if _is_tensor(value):
        if value.is_cpu:
            try:
                return value.item()
            except RuntimeError:  # more than one element
                raise _shape_error(value) from None
        if value.numel() != 1:
            raise _shape_error(value)
        return value.detach() if value.requires_grad else value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if hasattr(value, "item") and getattr(value, "size", None) == 1:  # numpy scalar / array
        return value.item()
    raise LoggedValueError(
        f"a logged value must be an int, float or one-element tensor/array, "
        f"got {type(value).__name__}"
    )


def resolve_tensors(buffers: Iterable[HistoryBuffer]) -> None:
    """Turn the tensors waiting in ``buffers`` into Python numbers.

    Tensors are grouped by device and dtype and copied to the host with one
    transfer per group, so a whole logging step costs one synchronisation.
    """
    groups: dict[tuple[Any, Any], list[tuple[list[Any], int]]] = {}
    for buffer in buffers:
        start = buffer._pending_from
        if start is None:
            continue
        values = buffer._values
        for index in range(start, len(values)):
            value = values[index]
            if type(value) is not float and type(value) is not int:
                groups.setdefault((value.device, value.dtype), []).append((values, index))
        buffer._pending_from = None
    if not groups:
        return
    import torch

    for slots in groups.values():
        tensors = [values[index] for values, index in slots]
        stacked = torch.stack([t if t.dim() == 0 else t.reshape(()) for t in tensors])
        for (values, index), number in zip(slots, stacked.tolist()):
            values[index] = number


def _plain_count(count: Any) -> int | float:
    """``count`` as a Python int or float: numbers, numpy scalars, one-element tensors/arrays."""
    if isinstance(count, bool):
        raise LoggedValueError("count must be a number, got bool")
    if isinstance(count, Integral):
        return int(count)
    if isinstance(count, Real):
        return float(count)
    if _is_tensor(count) or (hasattr(count, "item") and getattr(count, "size", None) == 1):
        if _is_tensor(count) and count.numel() != 1:
            raise LoggedValueError(
                f"a count tensor must hold one element, got shape {tuple(count.shape)}"
            )
        return _plain_count(count.item())
    raise LoggedValueError(f"count must be a number, got {type(count).__name__}")


def _flat(history: Any) -> list[Any]:
    """``history`` as a flat list: arrays and tensors of any shape (mmengine flattens them
    on the first update) and nested lists become their elements in order."""
    if hasattr(history, "tolist") and not isinstance(history, (list, tuple)):
        history = history.tolist()
    if not isinstance(history, (list, tuple)):
        history = list(history)
    if not any(isinstance(item, (list, tuple)) for item in history):
        return list(history)
    flat: list[Any] = []
    for item in history:
        flat.extend(_flat(item) if isinstance(item, (list, tuple)) else [item])
    return flat


def _check_max_length(max_length: Any) -> None:
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        raise ValueError(f"max_length must be a positive int, got {max_length!r}")


class HistoryBuffer:
    """Stores the last ``max_length`` (value, count) pairs and computes statistics.

    Args:
        log_history: initial values.
        count_history: initial counts, one per value.
        max_length: how many entries are kept; older ones are dropped.
    """

    _statistics_methods: ClassVar[dict[str, Callable[..., Any]]] = {}

    def __init__(
        self,
        log_history: Sequence[Any] = (),
        count_history: Sequence[int | float] = (),
        max_length: int = 1_000_000,
    ) -> None:
        _check_max_length(max_length)
        values, counts = _flat(log_history), _flat(count_history)
        if len(values) != len(counts):
            raise LoggedValueError(
                f"log_history and count_history must have the same length, got "
                f"{len(values)} and {len(counts)}"
            )
        self._max_length = max_length
        self._limit = max_length + _TRIM_SLACK
        self._values: list[Any] = []
        #: counts of the first ``len(_counts)`` values; the values after them were seen once
        self._counts: list[int | float] = []
        self._pending_from: int | None = None
        for value, count in zip(values[-max_length:], counts[-max_length:]):
            self.update(value, count)

    @property
    def max_length(self) -> int:
        """How many entries are kept; older ones are dropped."""
        return self._max_length

    @max_length.setter
    def max_length(self, value: int) -> None:
        _check_max_length(value)
        self._max_length = value
        self._limit = value + _TRIM_SLACK

    # ----------------------------------------------------------------- writing
    def update(self, value: Any, count: int | float = 1) -> None:
        """Append ``value`` (number or one-element tensor) seen ``count`` times.

        O(1): two list appends for a Python number (amortised trimming).
        """
        if type(count) is not int:
            count = _plain_count(count)
        self.append(value)
        if count != 1:
            counts = self._counts
            counts.extend([1] * (len(self._values) - len(counts)))
            counts[-1] = count

    def append(self, value: Any) -> None:
        """``update(value)``: one value seen once (the per-iteration writers' path)."""
        if type(value) is not float:
            if type(value) is _tensor_type and value.is_cpu:  # a CPU loss: read it now
                try:
                    value = value.item()
                except RuntimeError:
                    raise _shape_error(value) from None
            elif type(value) is not int:
                value = self._take(value)
        values = self._values
        values.append(value)
        if len(values) > self._limit:
            self._trim()

    def number_appender(self) -> Callable[[int | float], None]:
        """``append`` for values the caller guarantees are Python ``int``/``float``: the
        value list's own method, so no Python frame runs per value.

        The buffer may then hold more than ``max_length`` entries until the next read
        or :meth:`trim`; a writer appending every step calls :meth:`trim` now and then
        (every few thousand appends) to bound the memory. It stays valid for the life
        of this buffer (loading a state keeps the list object).
        """
        return self._values.append

    def trim(self) -> None:
        """Drop the entries beyond ``max_length`` (kept up to 1024 extra to amortise)."""
        if len(self._values) > self._limit:
            self._trim()

    def _take(self, value: Any) -> Any:
        """Coerce a non-float value; note where tensors left unread start."""
        value = _coerce_value(value)
        if type(value) is not float and type(value) is not int:
            if self._pending_from is None:
                self._pending_from = len(self._values)
            elif len(self._values) - self._pending_from >= _MAX_PENDING:
                resolve_tensors([self])
                self._pending_from = len(self._values)
        return value

    def _trim(self) -> None:
        values = self._values
        drop = len(values) - self._max_length
        del values[:drop]
        del self._counts[:drop]
        if self._pending_from is not None:
            self._pending_from = max(0, self._pending_from - drop)

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return min(len(self._values), self.max_length)

    def _counts_of(self, size: int) -> list[int | float]:
        """The counts of the last ``size`` values."""
        counts, total = self._counts, len(self._values)
        if len(counts) <= total - size:  # all seen once
            return [1] * size
        if len(counts) < total:
            counts.extend([1] * (total - len(counts)))
        return counts[-size:]

    def _window(self, window_size: int | None) -> tuple[list[Any], list[int | float]]:
        if self._pending_from is not None:
            resolve_tensors([self])
        if len(self._values) > self._limit:
            self._trim()
        size = len(self)
        if size == 0:
            raise ValueError("the HistoryBuffer is empty; call update() first")
        if window_size is not None:
            if not isinstance(window_size, int) or isinstance(window_size, bool):
                raise TypeError(
                    f"window_size must be an int or None, got {type(window_size).__name__}"
                )
            if window_size < 1:
                raise ValueError(f"window_size must be >= 1, got {window_size}")
            size = min(size, window_size)
        return self._values[-size:], self._counts_of(size)

    def mean(self, window_size: int | None = None) -> float:
        """Sum of the last ``window_size`` values over the sum of their counts (all if None).

        Summed as numpy sums float64 arrays, as mmengine's buffer does, so a logged mean
        is mmengine's to the last bit.
        """
        import numpy as np

        values, counts = self._window(window_size)
        total = float(np.asarray(counts, dtype=np.float64).sum())
        if not total:
            return float("nan")
        return float(np.asarray(values, dtype=np.float64).sum() / total)

    def max(self, window_size: int | None = None) -> Any:
        """The largest of the last ``window_size`` values (all if None)."""
        return max(self._window(window_size)[0])

    def min(self, window_size: int | None = None) -> Any:
        """The smallest of the last ``window_size`` values (all if None)."""
        return min(self._window(window_size)[0])

    def current(self) -> Any:
        """The most recent value."""
        return self._window(1)[0][-1]

    def last_ready(self) -> Any:
        """The most recent value already on the host, or ``None``; never synchronises.

        Accelerator tensors waiting to be read are skipped, so this is the
        cheap read for displays that refresh often.
        """
        end = len(self._values) if self._pending_from is None else self._pending_from
        return self._values[end - 1] if end else None

    @property
    def _log_history(self) -> Any:  # mmengine's field: the kept values (numpy)
        return self.data[0]

    @property
    def _count_history(self) -> Any:  # mmengine's field: the kept counts (numpy)
        return self.data[1]

    @property
    def data(self) -> tuple[Any, Any]:
        """The kept values and counts as two numpy arrays."""
        import numpy as np

        if self._pending_from is not None:
            resolve_tensors([self])
        size = len(self)
        if size == 0:
            return np.array([]), np.array([])
        return np.array(self._values[-size:]), np.array(self._counts_of(size))

    # -------------------------------------------------------------- statistics
    @classmethod
    def register_statistics(cls, method: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``method(buffer, *args, **kwargs)`` for :meth:`statistics` under its name."""
        name = method.__name__
        if name in _BUILTIN_STATISTICS or name in cls._statistics_methods:
            raise ValueError(f"a statistics method named '{name}' is already registered")
        cls._statistics_methods[name] = method
        return method

    def statistics(self, method_name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the statistic ``method_name`` ('mean', 'max', 'min', 'current' or registered)."""
        if method_name in _BUILTIN_STATISTICS:
            return getattr(self, method_name)(*args, **kwargs)
        method = self._statistics_methods.get(method_name)
        if method is None:
            known = [*_BUILTIN_STATISTICS, *self._statistics_methods]
            raise KeyError(
                f"unknown statistics method '{method_name}' (known: {', '.join(known)})."
                f"{did_you_mean(method_name, known)}"
            )
        return method(self, *args, **kwargs)

    # ------------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """The kept values and counts as plain Python lists."""
        if self._pending_from is not None:
            resolve_tensors([self])
        size = len(self)
        return {
            "values": self._values[len(self._values) - size :],
            "counts": self._counts_of(size) if size else [],
            "max_length": self.max_length,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Replace the history with one saved by :meth:`state_dict`."""
        missing = [k for k in ("values", "counts") if k not in state_dict]
        if missing:
            raise KeyError(
                f"HistoryBuffer state is missing {missing}; got keys {sorted(state_dict)}"
            )
        restored = HistoryBuffer(
            state_dict["values"],
            state_dict["counts"],
            state_dict.get("max_length", self.max_length),
        )
        self.adopt(restored)

    def adopt(self, other: HistoryBuffer) -> None:
        """Take ``other``'s entries and settings in place: the list objects stay, so the
        appenders handed out before (:meth:`number_appender`) keep writing here."""
        if other is self:
            return
        self._values[:] = other._values
        self._counts[:] = other._counts
        self._pending_from = other._pending_from
        self.max_length = other.max_length

    def __getstate__(self) -> dict[str, Any]:
        """mmengine's fields (``max_length``, ``_log_history`` and ``_count_history`` as
        numpy arrays): a checkpoint's buffers load in mmengine as its own."""
        values, counts = self.data
        return {"max_length": self.max_length, "_log_history": values, "_count_history": counts}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`__getstate__` wrote, or what mmengine's buffer pickles
        (the same fields, and the ``statistics_methods`` it names, ignored: cadence's own
        statistics are built in)."""
        values = state.get("_log_history", ())
        counts = state.get("_count_history", ())
        restored = HistoryBuffer(
            values.tolist() if hasattr(values, "tolist") else list(values),
            counts.tolist() if hasattr(counts, "tolist") else list(counts),
            int(state.get("max_length", 1_000_000)),
        )
        self.__dict__.update(restored.__dict__)

    @classmethod
    def from_state_dict(cls, state_dict: dict[str, Any]) -> HistoryBuffer:
        """Build a buffer from :meth:`state_dict` output."""
        buffer = cls()
        buffer.load_state_dict(state_dict)
        return buffer

    def __repr__(self) -> str:
        return f"HistoryBuffer(len={len(self)}, max_length={self.max_length})"

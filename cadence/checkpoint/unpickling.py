"""Which classes a weights-only ``torch.load`` may rebuild, forcing weights-only loads,
and saying why a load was refused (:func:`refusal`, in cadence's words, not torch's).

torch's ``safe_globals`` context does not nest: leaving an inner block removes the
classes an enclosing block allowed. :func:`allowed_globals` removes only what it
added. :func:`weights_only_loads` makes every ``torch.load`` in the block weights-only,
also those of third-party code that asks for ``weights_only=False`` (DeepSpeed's
checkpoint conversion), through torch's ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` switch.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

import torch

_FORCE = "TORCH_FORCE_WEIGHTS_ONLY_LOAD"
_FORCE_NOT = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"


@contextlib.contextmanager
def allowed_globals(extra: Sequence[Any]) -> Iterator[None]:
    """Allow the classes ``extra`` in weights-only loads inside the block (nests)."""
    present = set(torch.serialization.get_safe_globals())
    added = [item for item in extra if item not in present]
    torch.serialization.add_safe_globals(added)
    try:
        yield
    finally:
        if added:
            kept = [item for item in torch.serialization.get_safe_globals() if item not in added]
            torch.serialization.clear_safe_globals()
            torch.serialization.add_safe_globals(kept)


@contextlib.contextmanager
def weights_only_loads(extra: Sequence[Any] = ()) -> Iterator[None]:
    """Every ``torch.load`` in the block is weights-only (allowing also ``extra``),
    whatever its caller asks for. The switch is process-wide while the block runs."""
    saved = {name: os.environ.get(name) for name in (_FORCE, _FORCE_NOT)}
    os.environ[_FORCE] = "1"
    os.environ.pop(_FORCE_NOT, None)
    try:
        with allowed_globals(extra):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: The statistics an mmengine ``HistoryBuffer`` pickles by name (``getattr(cls, name)``).
_STATISTICS = ("min", "max", "current", "mean")
#: numpy dtypes whose arrays and scalars checkpoints may hold (no object dtype).
_NUMPY_TYPECODES = "?bBhHiIlLqQefdgFDG"


def _statistic_method(owner: Any, name: Any) -> Any:
    """``getattr`` as an mmengine checkpoint uses it: a builtin statistic of the history
    buffer and nothing else (any other owner or name is refused)."""
    import pickle

    from ..logging.history_buffer import HistoryBuffer

    if owner is HistoryBuffer and name in _STATISTICS:
        return getattr(HistoryBuffer, name)
    raise pickle.UnpicklingError(
        f"refused getattr({getattr(owner, '__name__', type(owner).__name__)}, {name!r}): "
        "a checkpoint may name only the statistics of a HistoryBuffer"
    )


def _numpy_reconstruct(subtype: Any, shape: Any, dtype: Any) -> Any:
    """numpy's array reconstructor, for plain ``ndarray`` s only."""
    import pickle

    import numpy as np

    if subtype is not np.ndarray:
        raise pickle.UnpicklingError(f"refused an array of type {subtype!r}: only ndarray")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _numpy_scalar(dtype: Any, data: Any = None) -> Any:
    """numpy's scalar reconstructor, for numeric and boolean dtypes only."""
    import pickle

    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.char not in _NUMPY_TYPECODES:
        raise pickle.UnpicklingError(f"refused a numpy scalar of dtype {dtype!r}")
    return np.frombuffer(data, dtype=dtype, count=1)[0]


def _numpy_dtype(spec: Any, align: Any = False, copy: Any = False) -> Any:
    """``numpy.dtype`` for numeric and boolean types only."""
    import pickle

    import numpy as np

    dtype = np.dtype(spec, align, copy)
    if dtype.char not in _NUMPY_TYPECODES:
        raise pickle.UnpicklingError(f"refused numpy dtype {spec!r}: only numbers and booleans")
    return dtype


def mmengine_globals() -> list[Any]:
    """What a checkpoint written by mmengine names, mapped to what a weights-only load
    may build: mmengine's ``HistoryBuffer`` and ``MessageHub`` become cadence's, numpy
    arrays, scalars and dtypes of numbers and booleans (under numpy 1's and 2's module
    names) are rebuilt by checked reconstructors, and ``getattr`` reaches only the
    statistics of a history buffer. Entries are ``(object, 'module.name')`` pairs for
    :func:`allowed_globals`."""
    import numpy as np

    from ..logging.history_buffer import HistoryBuffer
    from ..logging.message_hub import MessageHub

    entries: list[Any] = [
        (HistoryBuffer, "mmengine.logging.history_buffer.HistoryBuffer"),
        (MessageHub, "mmengine.logging.message_hub.MessageHub"),
        (_statistic_method, "__builtin__.getattr"),
        (_statistic_method, "builtins.getattr"),
        (np.ndarray, "numpy.ndarray"),
        (_numpy_dtype, "numpy.dtype"),
    ]
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        entries += [(_numpy_reconstruct, f"{module}._reconstruct"),
                    (_numpy_scalar, f"{module}.scalar")]  # fmt: skip
    for code in _NUMPY_TYPECODES:  # a dtype's own class, which BUILD sets the state of
        kind = type(np.dtype(code))
        entries.append((kind, f"{kind.__module__}.{kind.__qualname__}"))
    return entries


_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_GLOBAL = re.compile(r"GLOBAL ([\w.]+)|unrecognized function `?([\w.]+)|got <class '([\w.]+)'>")
_DETAIL = re.compile(r"WeightsUnpickler error: (.*?)(?: Please use|\n|$)", re.S)


def refusal(source: str, error: BaseException) -> str:
    """One paragraph saying that ``source`` was refused by a weights-only load (``error``:
    torch's ``UnpicklingError``), naming the object it asked for and what to do; torch's
    advice (load with ``weights_only=False``, allow the global) and terminal escape codes
    are left out."""
    text = _ESCAPES.sub("", str(error))
    found = _GLOBAL.search(text)
    if found:
        name = next(group for group in found.groups() if group)
        what = f"it asks to rebuild `{name}`, which weights-only loading does not allow"
    else:
        detail = _DETAIL.search(text)
        first = (detail.group(1) if detail else text.strip().splitlines()[0]) if text else ""
        what = f"weights-only loading refused it ({first.strip() or type(error).__name__})"
    return (
        f"{source} was refused: {what}; rebuilding such an object could run code from the "
        "file, and nothing in it was executed. Checkpoints hold tensors, numbers, strings "
        "and lists or dicts of them: store that object's state in that form when saving "
        "(its state_dict(), say); a file from a source you trust can be rewritten once that "
        "way with torch.load(weights_only=False) outside cadence."
    )

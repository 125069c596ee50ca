"""Pickling checkpoints so that mmengine 0.10.7 reads them as its own.

A checkpoint is plain data (tensors, numbers, strings, lists, dicts): ``torch.load(...,
weights_only=True)`` reads it as it is. In a process that runs OpenMMLab code, where
``mmengine`` is cadence's alias (:mod:`cadence.compat`), checkpoints are written for
mmengine too (:func:`wanted`): mmengine's runner restores the message hub only from its
own ``HistoryBuffer`` objects (anything else is dropped with a warning), so there they
hold buffers (:func:`for_mmengine`) and name
cadence's :class:`~cadence.logging.HistoryBuffer` by mmengine's path,
``mmengine.logging.history_buffer.HistoryBuffer``, with mmengine's fields (its
``__getstate__``); cadence's restricted unpickler maps that path back
(:func:`~cadence.checkpoint.unpickling.mmengine_globals`). Every other global a
checkpoint names is torch's, numpy's or a builtin. The standard pickler checks that a
class is importable under the name it writes, which mmengine's path is not without
mmengine, so :data:`pickle_module` (for ``torch.save(..., pickle_module=...)``) writes the
names of :data:`PICKLED_AS` itself and pickles everything else as ``pickle`` does.
"""

from __future__ import annotations

import pickle
import sys
import types
from collections.abc import Mapping
from typing import Any

from ..logging.history_buffer import HistoryBuffer

#: Classes pickled under another module path: the path mmengine has for its own.
PICKLED_AS: dict[type, tuple[str, str]] = {
    HistoryBuffer: ("mmengine.logging.history_buffer", "HistoryBuffer"),
}


_PurePickler: Any = pickle._Pickler


class PortablePickler(_PurePickler):
    """``pickle``'s pickler, writing the classes of :data:`PICKLED_AS` under their
    mmengine names (the pure-Python pickler: the C one cannot be told a name)."""

    def save_global(self, obj: Any, name: str | None = None) -> None:
        alias = PICKLED_AS.get(obj) if isinstance(obj, type) else None
        if alias is None:
            super().save_global(obj, name)
            return
        module, qualname = alias
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)


#: A stand-in for the ``pickle`` module that ``torch.save`` accepts.
pickle_module = types.SimpleNamespace(
    __name__="cadence.checkpoint.portable",
    Pickler=PortablePickler,
    Unpickler=pickle.Unpickler,
    dump=pickle.dump,
    load=pickle.load,
)


def wanted() -> bool:
    """Whether this process's checkpoints are written for mmengine too: its ``mmengine``
    is cadence's alias (a door of :mod:`cadence.compat` imported it)."""
    return bool(getattr(sys.modules.get("mmengine"), "__cadence_alias__", False))


def for_mmengine(state: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` with the message hub's plain scalar histories as ``HistoryBuffer`` s (what
    mmengine's runner restores); the rest is shared, not copied."""
    out = dict(state)
    hub = state.get("message_hub")
    if isinstance(hub, Mapping) and isinstance(hub.get("log_scalars"), Mapping):
        scalars = {
            key: HistoryBuffer.from_state_dict(dict(value)) if isinstance(value, Mapping) else value
            for key, value in hub["log_scalars"].items()
        }
        out["message_hub"] = {**hub, "log_scalars": scalars}
    return out

"""Pickling checkpoints so that mmengine 0.10.7 reads them as its own.

mmengine's runner restores the message hub only from its own ``HistoryBuffer`` objects
(anything else is dropped with a warning). cadence's checkpoints therefore name
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
import types
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

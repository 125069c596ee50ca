"""``ConfigDict``: a dict with attribute access, used for every config node."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

from addict import Dict

from ..utils.suggest import did_you_mean
from .lazy import LazyObject, resolve_lazy

DELETE_KEY = "_delete_"

# Attribute names (stored in the instance __dict__, never as keys) through which
# a node remembers where it sits in a loaded config; read by the registry.
KEY_PATH_ATTR = "_cadence_key_path"
ORIGIN_ATTR = "_cadence_origin"
#: the origin of each value directly under a node, by key (read by the registry's
#: constraint errors, which name the value at fault)
CHILD_ORIGINS_ATTR = "_cadence_child_origins"


class ConfigKeyMissing(KeyError):
    """A missing key, with the closest existing keys in the message."""

    def __init__(self, key: Any, candidates: Any = ()) -> None:
        super().__init__(key)
        self.key = key
        self.hint = did_you_mean(key, candidates) if isinstance(key, str) else ""

    def __str__(self) -> str:
        return f"{self.key!r}{self.hint}"


class ConfigDict(Dict):
    """A dict whose keys are also attributes (``cfg.model.type``).

    Missing keys raise ``KeyError``/``AttributeError`` with did-you-mean
    suggestions instead of silently creating empty children; nested dicts are
    converted on assignment; :meth:`update` merges recursively and honours
    ``_delete_=True``; lazy imports are resolved when read, unless the
    class attribute :attr:`lazy` is set (``ConfigDict.lazy = True``, as in
    mmengine): then reads return the :class:`LazyObject` itself.
    """

    #: Class-wide switch: ``True`` returns lazy imports unresolved (mmengine's ``ConfigDict.lazy``).
    lazy: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: D107
        for arg in args:
            if not arg:
                continue
            items = arg.items() if isinstance(arg, Mapping) else arg
            for key, value in items:
                dict.__setitem__(self, key, self._hook(value))
        for key, value in kwargs.items():
            dict.__setitem__(self, key, self._hook(value))

    @classmethod
    def _hook(cls, item: Any) -> Any:
        if isinstance(item, dict):
            return item if type(item) is cls else cls(item)
        if isinstance(item, list):
            return [cls._hook(elem) for elem in item]
        if isinstance(item, tuple):
            hooked = (cls._hook(elem) for elem in item)
            if hasattr(item, "_fields"):  # namedtuple
                return type(item)(*hooked)
            return type(item)(hooked)
        return item

    # ------------------------------------------------------------- access
    def _read(self, value: Any) -> Any:
        return value if type(self).lazy else resolve_lazy(value)

    def __missing__(self, key: Any) -> Any:
        raise ConfigKeyMissing(key, self.keys())

    def __getitem__(self, key: Any) -> Any:
        return self._read(dict.__getitem__(self, key))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            value: Any = dict.__getitem__(self, name)
        except KeyError:
            hint = did_you_mean(name, self.keys())
            path = self.__dict__.get(KEY_PATH_ATTR)
            where = f" (config key '{path}' has no key '{name}')" if path else ""
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}'{where}.{hint}"
            ) from None
        return self._read(value)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name):
            raise AttributeError(
                f"'{type(self).__name__}' attribute '{name}' is a method or class setting; "
                f"use item access (cfg[{name!r}] = ...)"
            )
        dict.__setitem__(self, name, self._hook(value))

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, key, self._hook(value))

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, key: Any, default: Any = None) -> Any:
        return self._read(dict.get(self, key, default))

    def pop(self, key: Any, *default: Any) -> Any:
        return self._read(dict.pop(self, key, *default))

    def items(self):
        return [(k, self._read(v)) for k, v in dict.items(self)]

    def values(self):
        return [self._read(v) for v in dict.values(self)]

    def raw_items(self) -> list[tuple[Any, Any]]:
        """Items with lazy imports left unresolved."""
        return list(dict.items(self))

    # -------------------------------------------------------------- merge
    def update(self, *args: Any, **kwargs: Any) -> None:
        """Merge recursively: nested dicts update nested dicts.

        A nested dict with ``_delete_=True`` replaces instead of merging.
        """
        other: dict[Any, Any] = {}
        for arg in args:
            other.update(arg)
        other.update(kwargs)
        for key, value in other.items():
            current = dict.get(self, key)
            if isinstance(value, dict) and isinstance(current, ConfigDict):
                value = dict(value)
                if value.pop(DELETE_KEY, False):
                    self[key] = value
                else:
                    current.update(value)
            else:
                if isinstance(value, dict) and DELETE_KEY in value:
                    value = {k: v for k, v in value.items() if k != DELETE_KEY}
                self[key] = value

    def merge(self, other: Mapping[str, Any]) -> None:
        """Merge ``other`` into this dict in place (same rules as :meth:`update`)."""
        self.update(copy.deepcopy(dict(other)))

    # ------------------------------------------------------------ copying
    def __copy__(self) -> ConfigDict:
        new = type(self).__new__(type(self))
        dict.update(new, dict.items(self))
        new.__dict__.update(self.__dict__)
        return new

    def copy(self) -> ConfigDict:
        return self.__copy__()

    def __deepcopy__(self, memo: dict[int, Any]) -> ConfigDict:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in raw_items(self):
            dict.__setitem__(new, copy.deepcopy(key, memo), copy.deepcopy(value, memo))
        new.__dict__.update(self.__dict__)
        return new

    def __reduce__(self) -> tuple[Any, ...]:
        # The instance __dict__ holds the node's key path and origin.
        return (type(self), (dict(dict.items(self)),), dict(self.__dict__))

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # --------------------------------------------------------- conversion
    def to_dict(self) -> dict[Any, Any]:
        """Return plain nested dicts/lists (lazy imports kept as :class:`LazyObject`)."""
        return _to_plain(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


def raw_items(mapping: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """Items of a mapping without resolving lazy imports."""
    if isinstance(mapping, dict):
        return list(dict.items(mapping))
    return list(mapping.items())


def _to_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in raw_items(value)}
    if isinstance(value, list):
        return [_to_plain(v) for v in value]
    if isinstance(value, tuple):
        items = (_to_plain(v) for v in value)
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def annotate(node: Any, path: str, origin_of: Any) -> None:
    """Record each ConfigDict's key path (and origin via ``origin_of(path)``)."""
    if isinstance(node, ConfigDict):
        node.__dict__[KEY_PATH_ATTR] = path or None
        origin = origin_of(path) if path else None
        if origin is not None:
            node.__dict__[ORIGIN_ATTR] = origin
        children = {}
        for key, value in raw_items(node):
            child = f"{path}.{key}" if path else str(key)
            annotate(value, child, origin_of)
            if not isinstance(value, ConfigDict):
                children[key] = origin_of(child)
        node.__dict__[CHILD_ORIGINS_ATTR] = {k: o for k, o in children.items() if o is not None}
    elif isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            annotate(value, f"{path}.{index}", origin_of)


__all__ = ["ConfigDict", "ConfigKeyMissing", "DELETE_KEY", "LazyObject", "annotate", "raw_items"]

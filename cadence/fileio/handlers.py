"""Serialisation handlers for :func:`~cadence.fileio.load`/:func:`~cadence.fileio.dump`,
one per file format, looked up by the file's suffix (``json``, ``yaml``/``yml``,
``pickle``/``pkl``); :func:`register_handler` adds more.

PyYAML is imported when a YAML file is first read or written.
"""

from __future__ import annotations

import functools
import json
import pickle
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import IO, Any, TypeVar


class BaseFileHandler(ABC):
    """Reads and writes one format from/to file objects and strings.

    ``str_like`` says whether the format is text (file objects opened in text mode)
    or bytes.
    """

    str_like = True

    @abstractmethod
    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        """The object stored in ``file``."""

    @abstractmethod
    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        """Write ``obj`` to ``file``."""

    @abstractmethod
    def dump_to_str(self, obj: Any, **kwargs: Any) -> str | bytes:
        """``obj`` serialised (``str`` for text formats, ``bytes`` otherwise)."""

    def load_from_path(self, filepath: str, mode: str = "r", **kwargs: Any) -> Any:
        """The object stored in the local file ``filepath``."""
        if "b" not in mode and not self.str_like:
            mode += "b"
        with open(filepath, mode) as file:
            return self.load_from_fileobj(file, **kwargs)

    def dump_to_path(self, obj: Any, filepath: str, mode: str = "w", **kwargs: Any) -> None:
        """Write ``obj`` to the local file ``filepath``."""
        if "b" not in mode and not self.str_like:
            mode += "b"
        with open(filepath, mode) as file:
            self.dump_to_fileobj(obj, file, **kwargs)


def _json_default(obj: Any) -> Any:
    """JSON form of the types ``json`` rejects but data files often hold."""
    if isinstance(obj, (set, range)):
        return list(obj)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(obj, numpy.ndarray):
            return obj.tolist()
        if isinstance(obj, numpy.generic):
            return obj.item()
    raise TypeError(f"{type(obj)} is unsupported for json dump")


class JsonHandler(BaseFileHandler):
    """JSON; sets, ranges and numpy arrays/scalars are written as lists/numbers."""

    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        return json.load(file, **kwargs)

    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        kwargs.setdefault("default", _json_default)
        json.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        kwargs.setdefault("default", _json_default)
        return json.dumps(obj, **kwargs)


@functools.cache
def _yaml_loader() -> Any:
    """PyYAML's safe loader (the C one when built) that also reads ``!!python/tuple``,
    so that tuples written by :class:`YamlHandler` come back as tuples."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class TupleSafeLoader(base):  # type: ignore[valid-type, misc]
        pass

    def construct_tuple(loader: Any, node: Any) -> tuple[Any, ...]:
        return tuple(loader.construct_sequence(node))

    TupleSafeLoader.add_constructor("tag:yaml.org,2002:python/tuple", construct_tuple)
    return TupleSafeLoader


class YamlHandler(BaseFileHandler):
    """YAML. Reading uses a safe loader (plus tuples) unless ``Loader=`` is given;
    writing uses PyYAML's default ``Dumper`` unless ``Dumper=`` is given."""

    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        import yaml

        kwargs.setdefault("Loader", _yaml_loader())
        return yaml.load(file, **kwargs)  # noqa: S506 - the default loader is a safe one

    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        import yaml

        kwargs.setdefault("Dumper", getattr(yaml, "CDumper", yaml.Dumper))
        yaml.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        import yaml

        kwargs.setdefault("Dumper", getattr(yaml, "CDumper", yaml.Dumper))
        return str(yaml.dump(obj, **kwargs))


class PickleHandler(BaseFileHandler):
    """Pickle (protocol 2 unless ``protocol=`` is given). Reading a pickle runs code
    the file names: load only files you trust."""

    str_like = False

    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        return pickle.load(file, **kwargs)  # noqa: S301 - an explicit user request

    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        kwargs.setdefault("protocol", 2)
        pickle.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs: Any) -> bytes:
        kwargs.setdefault("protocol", 2)
        return pickle.dumps(obj, **kwargs)


#: The handler of each file format (the suffix, without the dot).
file_handlers: dict[str, BaseFileHandler] = {
    "json": JsonHandler(),
    "yaml": YamlHandler(),
    "yml": YamlHandler(),
    "pickle": PickleHandler(),
    "pkl": PickleHandler(),
}

HandlerT = TypeVar("HandlerT", bound=type[BaseFileHandler])


def _register_handler(handler: BaseFileHandler, file_formats: str | Sequence[str]) -> None:
    """Make ``handler`` the one for each of ``file_formats``."""
    if not isinstance(handler, BaseFileHandler):
        raise TypeError(f"handler must be a child of BaseFileHandler, not {type(handler)}")
    formats = [file_formats] if isinstance(file_formats, str) else file_formats
    if not isinstance(formats, (list, tuple)) or not all(isinstance(f, str) for f in formats):
        raise TypeError("file_formats must be a str or a list of str")
    for file_format in formats:
        file_handlers[file_format] = handler


def register_handler(
    file_formats: str | Sequence[str], **kwargs: Any
) -> Callable[[HandlerT], HandlerT]:
    """Class decorator: an instance (built with ``kwargs``) handles ``file_formats``."""

    def wrap(cls: HandlerT) -> HandlerT:
        _register_handler(cls(**kwargs), file_formats)
        return cls

    return wrap

"""Storage backends by name and by path prefix, and ``get_file_backend`` that picks one.

``backends`` and ``prefix_to_backends`` are mmengine's tables (the same names, so code
that registers its own backend works): ``backend_args=dict(backend=NAME)`` picks by name,
otherwise the path's prefix does. cadence registers ``local`` (no prefix), ``petrel``,
``memcached``, ``lmdb`` and ``http``/``https``; any other URL scheme (``s3://``, ``gs://``,
``memory://``...) is reached through fsspec (:class:`FsspecBackend`), where mmengine
sends ``s3://`` to Petrel.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from . import io
from .client_backends import HTTPBackend, LmdbBackend, MemcachedBackend
from .file_backend import BaseStorageBackend, FileBackend, FsspecBackend, LocalBackend
from .io import _parse_uri_prefix
from .petrel_backend import PetrelBackend

B = TypeVar("B", bound=type[BaseStorageBackend])

#: backend classes by name (``backend_args['backend']``)
backends: dict[str, type[BaseStorageBackend]] = {}
#: backend classes by path prefix (``''`` for local paths)
prefix_to_backends: dict[str, type[BaseStorageBackend]] = {}


class _PrefixesError(TypeError, AssertionError):
    """``prefixes`` that are not a str, list or tuple (mmengine asserted)."""


def _register(
    name: str, backend: Any, force: bool, prefixes: str | list[str] | tuple[str, ...] | None
) -> None:
    if not isinstance(name, str):
        raise TypeError(f"the backend name should be a string, but got {type(name).__name__}")
    if not inspect.isclass(backend):
        raise TypeError(f"backend should be a class, but got {type(backend).__name__}")
    if not issubclass(backend, BaseStorageBackend):
        raise TypeError(f"backend {backend} is not a subclass of BaseStorageBackend")
    if name in backends and not force:
        raise ValueError(
            f'{name} is already registered as a storage backend, add "force=True" if you '
            "want to override it"
        )
    if prefixes is None:
        prefixes = []
    elif isinstance(prefixes, str):
        prefixes = [prefixes]
    elif not isinstance(prefixes, list | tuple):
        raise _PrefixesError(f"prefixes must be a str, list or tuple, got {prefixes!r}")
    taken = [p for p in prefixes if p in prefix_to_backends and not force]
    if taken:
        raise ValueError(
            f'{taken[0]} is already registered as a storage backend, add "force=True" if '
            "you want to override it"
        )
    backends[name] = backend
    for prefix in prefixes:
        prefix_to_backends[prefix] = backend


def register_backend(
    name: str,
    backend: type[BaseStorageBackend] | None = None,
    force: bool = False,
    prefixes: str | list[str] | tuple[str, ...] | None = None,
) -> Callable[[B], B] | None:
    """Register storage backend class ``backend`` under ``name`` (and path ``prefixes``).

    Without ``backend`` it is a class decorator. A name or prefix registered already
    raises ``ValueError`` unless ``force``.
    """
    if backend is not None:
        _register(name, backend, force, prefixes)
        return None

    def decorate(cls: B) -> B:
        _register(name, cls, force, prefixes)
        return cls

    return decorate


register_backend("local", LocalBackend, prefixes="")
register_backend("memcached", MemcachedBackend)
register_backend("lmdb", LmdbBackend)
register_backend("petrel", PetrelBackend, prefixes="petrel")
register_backend("http", HTTPBackend, prefixes=["http", "https"])


def _make(prefix: str, backend_args: Mapping[str, Any]) -> BaseStorageBackend:
    options = dict(backend_args)
    name = options.pop("backend", None)
    if name is not None:
        if name not in backends:
            fsspec_names = ("disk", "s3", "fsspec", "gcs", "gs", "azure")
            if name in fsspec_names:  # cadence's fsspec spellings (see backend.storage_options)
                return (LocalBackend if name == "disk" else FsspecBackend)(options)
            from ..utils import did_you_mean

            raise ValueError(
                f"backend_args: backend={name!r} is not a registered storage backend."
                f"{did_you_mean(name, list(backends)) or ''} Registered: {sorted(backends)}"
            )
        cls = backends[name]
    elif prefix in prefix_to_backends:
        cls = prefix_to_backends[prefix]
    else:
        cls = FsspecBackend  # s3://, gs://, memory://...: fsspec reaches them
    if issubclass(cls, FileBackend):
        return cls(options)
    return cls(**options)


def get_file_backend(
    uri: str | os.PathLike[str] | None = None,
    *,
    backend_args: Mapping[str, Any] | None = None,
    enable_singleton: bool = False,
) -> BaseStorageBackend:
    """The storage backend for ``uri`` (or for ``backend_args['backend']``, which wins).

    ``enable_singleton`` returns the same instance for the same prefix and arguments
    (kept in ``cadence.fileio.io.backend_instances``).
    """
    args = dict(backend_args or {})
    if uri is None and "backend" not in args:
        raise ValueError('uri should not be None when "backend" does not exist in backend_args')
    prefix = _parse_uri_prefix(uri) if uri is not None else ""
    if not enable_singleton:
        return _make(prefix, args)
    key = f"{prefix}:{json.dumps(args, default=str)}"
    if key not in io.backend_instances:
        io.backend_instances[key] = _make(prefix, args)
    return io.backend_instances[key]


__all__ = ["backends", "get_file_backend", "prefix_to_backends", "register_backend"]

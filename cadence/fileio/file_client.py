"""mmengine's ``FileClient`` (deprecated there in favour of the file functions): one
storage backend picked by name or path prefix, one instance per set of arguments.

New code should use :func:`cadence.fileio.get_file_backend` or the functions of
:mod:`cadence.fileio`; this class exists so that code written against it runs unchanged.
Its tables are its own, as in mmengine (``s3://`` means Petrel here).
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

from .client_backends import HTTPBackend, LmdbBackend, MemcachedBackend
from .file_backend import BaseStorageBackend, LocalBackend
from .io import PathLike, _NotAPathError
from .petrel_backend import PetrelBackend


class HardDiskBackend(LocalBackend):
    """mmengine's older name of :class:`LocalBackend` (``FileClient('disk')``)."""


class FileClient:
    """Storage access through the backend named ``backend`` or serving ``prefix``.

    ``backend`` wins when both are given; with neither, the local disk is used. The
    same arguments give the same instance, until the backend is registered anew.

    Args:
        backend: ``'disk'``, ``'memcached'``, ``'lmdb'``, ``'petrel'``, ``'http'`` or a
            name given to :meth:`register_backend`.
        prefix: ``'s3'``, ``'petrel'``, ``'http'``, ``'https'`` or a registered prefix.
        **kwargs: the backend's own arguments.
    """

    _backends: ClassVar[dict[str, type[BaseStorageBackend]]] = {
        "disk": HardDiskBackend, "memcached": MemcachedBackend, "lmdb": LmdbBackend,
        "petrel": PetrelBackend, "http": HTTPBackend,
    }  # fmt: skip
    _prefix_to_backends: ClassVar[dict[str, type[BaseStorageBackend]]] = {
        "s3": PetrelBackend, "petrel": PetrelBackend, "http": HTTPBackend, "https": HTTPBackend,
    }  # fmt: skip
    _instances: ClassVar[dict[str, FileClient]] = {}

    client: BaseStorageBackend

    def __new__(cls, backend: str | None = None, prefix: str | None = None, **kwargs: Any):
        warnings.warn(
            "FileClient is deprecated (as in mmengine): use cadence.fileio's functions or "
            "get_file_backend()",
            DeprecationWarning,
            stacklevel=2,
        )
        if backend is None and prefix is None:
            backend = "disk"
        if backend is not None and backend not in cls._backends:
            raise ValueError(
                f"Backend {backend} is not supported. Currently supported ones are "
                f"{list(cls._backends)}"
            )
        if prefix is not None and prefix not in cls._prefix_to_backends:
            raise ValueError(
                f"prefix {prefix} is not supported. Currently supported ones are "
                f"{list(cls._prefix_to_backends)}"
            )
        key = ":".join([str(backend), str(prefix), *(f"{k}:{v}" for k, v in kwargs.items())])
        if key not in cls._instances:
            instance = super().__new__(cls)
            chosen = cls._backends[backend] if backend is not None else \
                cls._prefix_to_backends[prefix]  # type: ignore[index]  # fmt: skip
            instance.client = chosen(**kwargs)
            cls._instances[key] = instance
        return cls._instances[key]

    @property
    def name(self) -> str:
        """The backend's class name."""
        return self.client.name

    @property
    def allow_symlink(self) -> bool:
        """Whether the backend can hold symbolic links."""
        return self.client.allow_symlink

    @staticmethod
    def parse_uri_prefix(uri: PathLike) -> str | None:
        """The scheme of ``uri`` (``'s3'`` for ``cluster:s3://b/k``), None for a local path."""
        if not isinstance(uri, str | os.PathLike):
            raise _NotAPathError(f"uri should be a str or a path, got {type(uri).__name__}")
        text = os.fspath(uri)
        if "://" not in text:
            return None
        return text.split("://", 1)[0].split(":")[-1]

    @classmethod
    def infer_client(
        cls, file_client_args: dict[str, Any] | None = None, uri: PathLike | None = None
    ) -> FileClient:
        """The client for ``file_client_args``, else for ``uri``'s prefix."""
        if file_client_args is None and uri is None:
            raise _NotAPathError("infer_client needs file_client_args or uri")
        if file_client_args is None:
            return cls(prefix=cls.parse_uri_prefix(uri))  # type: ignore[arg-type]
        return cls(**file_client_args)

    @classmethod
    def _drop_instances_of(cls, backend: type[BaseStorageBackend]) -> None:
        for key, instance in list(cls._instances.items()):
            if isinstance(instance.client, backend):
                del cls._instances[key]

    @classmethod
    def _register_backend(
        cls,
        name: str,
        backend: Any,
        force: bool = False,
        prefixes: str | list[str] | tuple[str, ...] | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"the backend name should be a string, but got {type(name).__name__}")
        if not inspect.isclass(backend):
            raise TypeError(f"backend should be a class but got {type(backend).__name__}")
        if not issubclass(backend, BaseStorageBackend):
            raise TypeError(f"backend {backend} is not a subclass of BaseStorageBackend")
        if name in cls._backends and not force:
            raise KeyError(
                f'{name} is already registered as a storage backend, add "force=True" if you '
                "want to override it"
            )
        listed = [prefixes] if isinstance(prefixes, str) else list(prefixes or [])
        taken = [p for p in listed if p in cls._prefix_to_backends and not force]
        if taken:
            raise KeyError(
                f'{taken[0]} is already registered as a storage backend, add "force=True" if '
                "you want to override it"
            )
        if name in cls._backends:
            cls._drop_instances_of(cls._backends[name])
        cls._backends[name] = backend
        for prefix in listed:
            if prefix in cls._prefix_to_backends:
                cls._drop_instances_of(cls._prefix_to_backends[prefix])
            cls._prefix_to_backends[prefix] = backend

    @classmethod
    def register_backend(
        cls,
        name: str,
        backend: type[BaseStorageBackend] | None = None,
        force: bool = False,
        prefixes: str | list[str] | tuple[str, ...] | None = None,
    ) -> Callable[[type[BaseStorageBackend]], type[BaseStorageBackend]] | None:
        """Register ``backend`` under ``name`` (and ``prefixes``); a class decorator
        without ``backend``. A name already taken raises ``KeyError`` unless ``force``."""
        if backend is not None:
            cls._register_backend(name, backend, force=force, prefixes=prefixes)
            return None

        def decorate(backend_cls: type[BaseStorageBackend]) -> type[BaseStorageBackend]:
            cls._register_backend(name, backend_cls, force=force, prefixes=prefixes)
            return backend_cls

        return decorate

    # the backend's methods; those a backend lacks raise AttributeError naming it
    def get(self, filepath: PathLike) -> bytes:
        """The bytes of ``filepath``."""
        return self.client.get(filepath)

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """The text of ``filepath``."""
        return self.client.get_text(filepath, encoding)

    def __getattr__(self, name: str) -> Any:
        if name in _DELEGATED:
            return getattr(self.client, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")


_DELEGATED = frozenset(
    ["put", "put_text", "remove", "exists", "isdir", "isfile", "join_path", "get_local_path",
     "list_dir_or_file"]
)  # fmt: skip

__all__ = ["FileClient", "HardDiskBackend"]

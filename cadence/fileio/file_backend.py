"""``get_file_backend``: the file functions as methods of one object with its
``backend_args`` bound, as downstream datasets use mmengine's backends
(``backend = get_file_backend(data_root); backend.join_path(...)``)."""

from __future__ import annotations

import os
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager

from . import io
from .backend import storage_options, url_scheme
from .serialize import BackendArgs


class BaseStorageBackend(metaclass=ABCMeta):
    """mmengine's abstract storage backend: ``get`` (bytes) and ``get_text`` (str).

    Downstream code subclasses it for its own storage; cadence's :class:`FileBackend`
    is one.
    """

    _allow_symlink = False

    @property
    def name(self) -> str:
        """The class name, as mmengine's backends report it."""
        return type(self).__name__

    @property
    def allow_symlink(self) -> bool:
        """Whether this storage can hold symbolic links."""
        return self._allow_symlink

    @abstractmethod
    def get(self, filepath: str | os.PathLike[str]) -> bytes:
        """The bytes of ``filepath``."""

    @abstractmethod
    def get_text(self, filepath: str | os.PathLike[str], encoding: str = "utf-8") -> str:
        """The text of ``filepath``."""


class FileBackend(BaseStorageBackend):
    """Reads and writes files under one kind of path (local or one URL scheme).

    Every method is the function of the same name in :mod:`cadence.fileio` with this
    backend's ``backend_args``; local paths and URLs both work on any instance.

    Args:
        backend_args: fsspec storage options in mmengine's ``backend_args`` form.
    """

    def __init__(self, backend_args: BackendArgs = None) -> None:
        storage_options(backend_args)  # an mmengine client cadence lacks fails here
        self.backend_args = dict(backend_args or {})

    def get(self, filepath: str | os.PathLike[str]) -> bytes:
        """The bytes of ``filepath``."""
        return io.get(os.fspath(filepath), self.backend_args)

    def get_text(self, filepath: str | os.PathLike[str], encoding: str = "utf-8") -> str:
        """The text of ``filepath``."""
        return io.get_text(os.fspath(filepath), encoding, self.backend_args)

    def put(self, obj: bytes, filepath: str | os.PathLike[str]) -> None:
        """Write bytes ``obj`` to ``filepath``."""
        io.put(obj, os.fspath(filepath), self.backend_args)

    def put_text(self, obj: str, filepath: str | os.PathLike[str], encoding: str = "utf-8") -> None:
        """Write text ``obj`` to ``filepath``."""
        io.put_text(obj, os.fspath(filepath), encoding, self.backend_args)

    def exists(self, filepath: str | os.PathLike[str]) -> bool:
        """Whether ``filepath`` exists."""
        return io.exists(os.fspath(filepath), self.backend_args)

    def isdir(self, filepath: str | os.PathLike[str]) -> bool:
        """Whether ``filepath`` is a folder."""
        return io.isdir(os.fspath(filepath), self.backend_args)

    def isfile(self, filepath: str | os.PathLike[str]) -> bool:
        """Whether ``filepath`` is a file."""
        return io.isfile(os.fspath(filepath), self.backend_args)

    def join_path(self, filepath: str | os.PathLike[str], *filepaths: str) -> str:
        """``filepath`` joined with ``filepaths``."""
        return io.join_path(os.fspath(filepath), *filepaths)

    def get_local_path(self, filepath: str | os.PathLike[str]) -> AbstractContextManager[str]:
        """Context manager: a local path holding ``filepath``'s content."""
        return io.get_local_path(filepath, self.backend_args)

    def copyfile(self, src: str, dst: str) -> str:
        """Copy file ``src`` to ``dst``; return ``dst``."""
        return io.copyfile(src, dst, self.backend_args)

    def copytree(self, src: str, dst: str) -> str:
        """Copy folder ``src`` to ``dst`` (which must not exist); return ``dst``."""
        return io.copytree(src, dst, self.backend_args)

    def remove(self, filepath: str) -> None:
        """Delete file ``filepath``."""
        io.remove(filepath, self.backend_args)

    def rmtree(self, dir_path: str) -> None:
        """Delete folder ``dir_path`` with its content."""
        io.rmtree(dir_path, self.backend_args)

    def list_dir_or_file(
        self,
        dir_path: str,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Paths relative to ``dir_path`` of the folders and/or files under it."""
        return io.list_dir_or_file(dir_path, list_dir, list_file, suffix, recursive,
                                   self.backend_args)  # fmt: skip


class LocalBackend(FileBackend):
    """The backend of local (and mounted) paths."""


class FsspecBackend(FileBackend):
    """The backend of URLs (``s3://``, ``gs://``...), reached through fsspec."""


def get_file_backend(
    uri: str | os.PathLike[str] | None = None,
    *,
    backend_args: BackendArgs = None,
    enable_singleton: bool = False,
) -> FileBackend:
    """The backend for ``uri``: :class:`LocalBackend` for local paths (and None),
    :class:`FsspecBackend` for URLs. ``enable_singleton`` is accepted and ignored
    (a backend holds nothing but its arguments)."""
    del enable_singleton
    scheme = url_scheme(os.fspath(uri)) if uri is not None else None
    if scheme is None or scheme == "file":
        return LocalBackend(backend_args)
    return FsspecBackend(backend_args)


__all__ = ["FileBackend", "FsspecBackend", "LocalBackend", "get_file_backend"]

"""``get_file_backend``: the file functions as methods of one object with its
``backend_args`` bound, as downstream datasets use mmengine's backends
(``backend = get_file_backend(data_root); backend.join_path(...)``)."""

from __future__ import annotations

import os
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from . import io
from .backend import storage_options
from .io import BackendArgs, P, PathLike


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
    backend's ``backend_args``; local paths and URLs both work on any instance, and
    paths may be ``str`` or ``os.PathLike``.

    Args:
        backend_args: fsspec storage options in mmengine's ``backend_args`` form.
        **options: more such options (mmengine builds a backend as ``cls(**backend_args)``).
    """

    _allow_symlink = True

    def __init__(self, backend_args: BackendArgs = None, **options: Any) -> None:
        merged = {**dict(backend_args or {}), **options}
        storage_options(merged)  # an mmengine client cadence lacks fails here
        self.backend_args = merged

    def get(self, filepath: PathLike) -> bytes:
        """The bytes of ``filepath``."""
        return io.get(filepath, self.backend_args)

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """The text of ``filepath``."""
        return io.get_text(filepath, encoding, self.backend_args)

    def put(self, obj: bytes, filepath: PathLike) -> None:
        """Write bytes ``obj`` to ``filepath``."""
        io.put(obj, filepath, self.backend_args)

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        """Write text ``obj`` to ``filepath``."""
        io.put_text(obj, filepath, encoding, self.backend_args)

    def exists(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` exists."""
        return io.exists(filepath, self.backend_args)

    def isdir(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is a folder."""
        return io.isdir(filepath, self.backend_args)

    def isfile(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is a file."""
        return io.isfile(filepath, self.backend_args)

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        """``filepath`` joined with ``filepaths``."""
        return io.join_path(filepath, *filepaths)

    def get_local_path(self, filepath: PathLike) -> AbstractContextManager[str]:
        """Context manager: a local path holding ``filepath``'s content."""
        return io.get_local_path(filepath, self.backend_args)

    def copyfile(self, src: PathLike, dst: P) -> P | str:
        """Copy file ``src`` to ``dst`` (into it, if a folder); return the path written."""
        return io.copyfile(src, dst, self.backend_args)

    def copytree(self, src: PathLike, dst: P) -> P:
        """Copy folder ``src`` to ``dst`` (which must not exist); return ``dst``."""
        return io.copytree(src, dst, self.backend_args)

    # mmengine's names for copies with the local disk; either side may be local here
    copyfile_from_local = copyfile
    copyfile_to_local = copyfile
    copytree_from_local = copytree
    copytree_to_local = copytree

    def copy_if_symlink_fails(self, src: PathLike, dst: PathLike) -> bool:
        """Link ``dst`` to ``src``, or copy it where linking fails; True if linked."""
        return io.copy_if_symlink_fails(src, dst, self.backend_args)

    def remove(self, filepath: PathLike) -> None:
        """Delete file ``filepath``."""
        io.remove(filepath, self.backend_args)

    def rmtree(self, dir_path: PathLike) -> None:
        """Delete folder ``dir_path`` with its content."""
        io.rmtree(dir_path, self.backend_args)

    def list_dir_or_file(
        self,
        dir_path: PathLike,
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

    _allow_symlink = False


__all__ = ["BaseStorageBackend", "FileBackend", "FsspecBackend", "LocalBackend"]

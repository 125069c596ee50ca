"""mmengine's read-only storage backends: memcached, LMDB and plain HTTP(S).

Each optional client package (``mc``, ``lmdb``) is imported when a backend is made and
its absence is an error naming it; HTTP needs only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from typing import Any

from .file_backend import BaseStorageBackend
from .io import PathLike
from .petrel_backend import MissingClientPackage


def _import_client(package: str, backend: str) -> Any:
    try:
        return __import__(package)
    except ImportError as e:
        raise MissingClientPackage(
            f"{backend} needs the {package!r} package, which is not installed"
        ) from e


class MemcachedBackend(BaseStorageBackend):
    """Reads files through a memcached cluster (``mc``'s ``MemcachedClient``).

    Args:
        server_list_cfg: the cluster's server list file.
        client_cfg: the client's config file.
        sys_path: a folder added to ``sys.path`` before ``mc`` is imported.
    """

    def __init__(self, server_list_cfg: str, client_cfg: str, sys_path: str | None = None):
        if sys_path is not None:
            sys.path.append(sys_path)
        mc = _import_client("mc", "MemcachedBackend (backend='memcached')")
        self._client = mc.MemcachedClient.GetInstance(server_list_cfg, client_cfg)
        self._mc_buffer = mc.pyvector()

    def get(self, filepath: PathLike) -> bytes:
        """The bytes stored under ``filepath``."""
        mc = _import_client("mc", "MemcachedBackend")
        self._client.Get(os.fspath(filepath), self._mc_buffer)
        return mc.ConvertBuffer(self._mc_buffer)

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """Not provided: memcached holds bytes (mmengine raises the same)."""
        raise NotImplementedError("MemcachedBackend reads bytes only: use get()")


class LmdbBackend(BaseStorageBackend):
    """Reads values of an LMDB database by key (``get('baboon')``).

    Args:
        db_path: the database folder.
        readonly, lock, readahead, **kwargs: passed to ``lmdb.open``.
    """

    def __init__(
        self,
        db_path: PathLike,
        readonly: bool = True,
        lock: bool = False,
        readahead: bool = False,
        **kwargs: Any,
    ) -> None:
        self._lmdb = _import_client("lmdb", "LmdbBackend (backend='lmdb')")
        self.db_path = os.fspath(db_path)
        self._options = dict(readonly=readonly, lock=lock, readahead=readahead, **kwargs)
        self._client: Any = None

    def get(self, filepath: PathLike) -> bytes:
        """The value stored under key ``filepath``."""
        if self._client is None:  # opened on first use, so a backend can be pickled first
            self._client = self._lmdb.open(self.db_path, **self._options)
        with self._client.begin(write=False) as txn:
            return txn.get(os.fspath(filepath).encode("ascii"))

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """Not provided: LMDB values are bytes (mmengine raises the same)."""
        raise NotImplementedError("LmdbBackend reads bytes only: use get()")


class HTTPBackend(BaseStorageBackend):
    """Reads ``http://`` and ``https://`` URLs with the standard library."""

    def get(self, filepath: PathLike) -> bytes:
        """The body of URL ``filepath``."""
        with urllib.request.urlopen(os.fspath(filepath)) as response:
            return response.read()

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """The body of URL ``filepath`` as text."""
        return self.get(filepath).decode(encoding)

    @contextlib.contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[str]:
        """Context manager: the URL downloaded to a temporary file, removed on exit."""
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(self.get(filepath))
        try:
            yield f.name
        finally:
            os.remove(f.name)


__all__ = ["HTTPBackend", "LmdbBackend", "MemcachedBackend"]

"""``PetrelBackend``: storage behind SenseTime's ``petrel_client`` (``petrel://`` and
``s3://`` paths in OpenMMLab configs), for code written against mmengine's backend.

``petrel_client`` is optional: it is imported when a backend is made, and its absence is
an error naming it. cadence's own remote paths (``work_dir='s3://...'``) go through fsspec
(:class:`~cadence.fileio.FsspecBackend`); this class is for ``backend_args=dict(backend=
'petrel')`` and direct use.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from .backend import StorageUnavailable
from .file_backend import BaseStorageBackend
from .io import PathLike


class MissingClientPackage(StorageUnavailable, ImportError):
    """An mmengine storage backend whose client package is not installed."""


def _has_method(obj: object, name: str) -> bool:
    return callable(getattr(obj, name, None))


class PetrelBackend(BaseStorageBackend):
    """Reads and writes objects through ``petrel_client.client.Client``.

    Args:
        path_mapping: prefix replacements applied to every path first
            (``{'data/': 'petrel://bucket/data/'}``).
        enable_mc: let the client use its memcached cache.
        conf_path: the client's config file (its default when None).
    """

    def __init__(
        self,
        path_mapping: Mapping[str, str] | None = None,
        enable_mc: bool = True,
        conf_path: str | None = None,
    ) -> None:
        try:
            from petrel_client import client
        except ImportError as e:
            raise MissingClientPackage(
                "PetrelBackend (backend='petrel') needs petrel_client, which is not installed; "
                "install it from your cluster's wheel, or reach S3 through fsspec instead "
                "(an s3:// path with backend_args of s3fs options)"
            ) from e
        self._client = client.Client(conf_path=conf_path, enable_mc=enable_mc)
        if path_mapping is not None and not isinstance(path_mapping, Mapping):
            raise TypeError(f"path_mapping must be a dict, got {type(path_mapping).__name__}")
        self.path_mapping = dict(path_mapping or {})

    # path handling: mapping, separators, and the client's own prefix
    def _map_path(self, filepath: PathLike) -> str:
        path = os.fspath(filepath)
        for src, dst in self.path_mapping.items():
            path = path.replace(src, dst, 1)
        return path

    def _format_path(self, filepath: str) -> str:
        return filepath.replace("\\", "/")

    def _replace_prefix(self, filepath: str) -> str:
        return "s3://" + filepath[len("petrel://") :] if filepath.startswith("petrel://") \
            else filepath  # fmt: skip

    def _client_path(self, filepath: PathLike) -> str:
        return self._replace_prefix(self._format_path(self._map_path(filepath)))

    def _require(self, *methods: str) -> None:
        missing = [m for m in methods if not _has_method(self._client, m)]
        if missing:
            raise NotImplementedError(
                f"this version of petrel_client's Client has no {', '.join(missing)}(); "
                "upgrade petrel_client"
            )

    def get(self, filepath: PathLike) -> bytes:
        """The bytes of ``filepath``."""
        return bytes(self._client.Get(self._client_path(filepath)))

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """The text of ``filepath``."""
        return self.get(filepath).decode(encoding)

    def put(self, obj: bytes, filepath: PathLike) -> None:
        """Write bytes ``obj`` to ``filepath``."""
        self._client.put(self._client_path(filepath), obj)

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        """Write text ``obj`` to ``filepath``."""
        self.put(obj.encode(encoding), filepath)

    def exists(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is an object or a prefix with objects under it."""
        self._require("contains", "isdir")
        path = self._client_path(filepath)
        return bool(self._client.contains(path) or self._client.isdir(path))

    def isdir(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is a prefix with objects under it."""
        self._require("isdir")
        return bool(self._client.isdir(self._client_path(filepath)))

    def isfile(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is an object."""
        self._require("contains")
        return bool(self._client.contains(self._client_path(filepath)))

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        """``filepath`` and ``filepaths`` joined by single ``/``."""
        head = self._format_path(self._map_path(filepath)).rstrip("/")
        rest = [self._format_path(self._map_path(p)).lstrip("/") for p in filepaths]
        return "/".join([head, *rest])

    @contextlib.contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[str]:
        """Context manager: ``filepath`` downloaded to a temporary file, removed on exit."""
        if not self.isfile(filepath):
            raise FileNotFoundError(f"{os.fspath(filepath)} is not an object in petrel")
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(self.get(filepath))
        try:
            yield f.name
        finally:
            os.remove(f.name)

    def copyfile(self, src: PathLike, dst: PathLike) -> str:
        """Copy object ``src`` to ``dst`` (into it, if a prefix); return the path written."""
        source, target = (
            self._format_path(self._map_path(src)),
            self._format_path(self._map_path(dst)),
        )
        if self.isdir(target):
            target = self.join_path(target, source.split("/")[-1])
        if source == target:
            raise shutil.SameFileError(f"{source} and {target} are the same object")
        self.put(self.get(source), target)
        return target

    def copytree(self, src: PathLike, dst: PathLike) -> str:
        """Copy every object under ``src`` to ``dst``, which must not exist; return ``dst``."""
        target = self._format_path(self._map_path(dst))
        if self.exists(target):
            raise FileExistsError(f"copytree: {target} already exists")
        for name in self.list_dir_or_file(src, list_dir=False, recursive=True):
            self.put(self.get(self.join_path(src, name)), self.join_path(target, name))
        return target

    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> str:
        """Upload local file ``src`` to ``dst`` (into it, if a prefix); return the path."""
        target = self._format_path(self._map_path(dst))
        if self.isdir(target):
            target = self.join_path(target, os.path.basename(os.fspath(src)))
        with open(src, "rb") as f:
            self.put(f.read(), target)
        return target

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> str:
        """Upload local folder ``src`` to ``dst``, which must not exist; return ``dst``."""
        target = self._format_path(self._map_path(dst))
        if self.exists(target):
            raise FileExistsError(f"copytree_from_local: {target} already exists")
        root = os.fspath(src)
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, root).replace(os.sep, "/")
                self.copyfile_from_local(path, self.join_path(target, relative))
        return target

    def copyfile_to_local(self, src: PathLike, dst: Any) -> Any:
        """Download ``src`` to local ``dst`` (into it, if a folder); return the path written
        (of ``dst``'s type)."""
        if os.path.isdir(dst):
            name = self._format_path(os.fspath(src)).split("/")[-1]
            dst = os.path.join(dst, name) if isinstance(dst, str) else dst / name
        with open(dst, "wb") as f:
            f.write(self.get(src))
        return dst

    def copytree_to_local(self, src: PathLike, dst: PathLike) -> PathLike:
        """Download every object under ``src`` into local folder ``dst``; return ``dst``."""
        for name in self.list_dir_or_file(src, list_dir=False, recursive=True):
            target = os.path.join(dst, *name.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(self.get(self.join_path(src, name)))
        return dst

    def remove(self, filepath: PathLike) -> None:
        """Delete object ``filepath``."""
        self._require("delete")
        if not self.exists(filepath):
            raise FileNotFoundError(f"{os.fspath(filepath)} does not exist in petrel")
        if self.isdir(filepath):
            raise IsADirectoryError(f"{os.fspath(filepath)} is a prefix; use rmtree")
        self._client.delete(self._client_path(filepath))

    def rmtree(self, dir_path: PathLike) -> None:
        """Delete every object under ``dir_path``."""
        for name in self.list_dir_or_file(dir_path, list_dir=False, recursive=True):
            self.remove(self.join_path(dir_path, name))

    def copy_if_symlink_fails(self, src: PathLike, dst: PathLike) -> bool:
        """Copy ``src`` (an object or a prefix) to ``dst``: petrel holds no links, so the
        result is always False (nothing was linked)."""
        if self.isfile(src):
            self.copyfile(src, dst)
        else:
            self.copytree(src, dst)
        return False

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Paths relative to ``dir_path`` of the prefixes and/or objects under it."""
        if list_dir and suffix is not None:
            raise TypeError("`list_dir` should be False when `suffix` is not None")
        if suffix is not None and not isinstance(suffix, str | tuple):
            raise TypeError("`suffix` must be a string or tuple of strings")
        return self._list(self._client_path(dir_path), list_dir, list_file, suffix, recursive)

    def _list(
        self,
        root: str,
        list_dir: bool,
        list_file: bool,
        suffix: str | tuple[str, ...] | None,
        recursive: bool,
    ) -> Iterator[str]:
        self._require("list")
        root = root if root.endswith("/") else root + "/"
        pending = [""]
        while pending:
            relative = pending.pop()
            for entry in self._client.list(root + relative):
                if entry.endswith("/"):
                    name = relative + entry.rstrip("/")
                    if list_dir:
                        yield name
                    if recursive:
                        pending.append(name + "/")
                elif list_file and (suffix is None or entry.endswith(suffix)):
                    yield relative + entry

    def generate_presigned_url(
        self, url: str, client_method: str = "get_object", expires_in: int = 3600
    ) -> str:
        """A URL that grants ``client_method`` on ``url`` for ``expires_in`` seconds."""
        return str(
            self._client.generate_presigned_url(self._client_path(url), client_method, expires_in)
        )


__all__ = ["MissingClientPackage", "PetrelBackend"]

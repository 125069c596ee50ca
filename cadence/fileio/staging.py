"""Remote folders staged locally: each URL folder has a local folder that stands for it.

A run writes everything locally first, in a *staging* folder per remote folder
(``$CADENCE_STAGING_DIR``, default ``~/.cache/cadence/staging``, one subfolder per URL,
named ``<12 hex of the URL>-<last part>``), and uploads from there. This module maps
URLs to staged paths and back, copies single files either way, uploads the files that
changed since their last upload and locks a folder being downloaded into; what a checkpoint
adds (manifests, companion files, pointers, the upload order) is
:class:`cadence.checkpoint.remote.RemoteStorage`, built on :class:`StagingArea`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .backend import filesystem, is_url

STAGING_ENV = "CADENCE_STAGING_DIR"
#: The name of a staging folder: the key of its URL, a dash, the URL's last part.
STAGED_NAME = re.compile(r"^([0-9a-f]{12})-")


def staging_root() -> str:
    """Where remote folders are staged: ``$CADENCE_STAGING_DIR``, else the user's cache."""
    root = os.environ.get(STAGING_ENV)
    if not root:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(cache, "cadence", "staging")
    return os.path.abspath(root)


def url_key(url: str) -> str:
    """The 12 hex digits that name the staging folder of folder ``url``."""
    return hashlib.sha1(url.encode()).hexdigest()[:12]


class StagingArea:
    """Remote folders, each mirrored by a local staging folder.

    Args:
        backend_args: fsspec storage options (mmengine's ``backend_args``).
        root: the staging root (default :func:`staging_root`).
    """

    def __init__(self, backend_args: Mapping[str, Any] | None = None, root: str | None = None):
        self.backend_args = dict(backend_args or {})
        self.root = root or staging_root()
        self._urls: dict[str, str] = {}  # key -> folder URL
        self._pushed: dict[str, tuple[int, int]] = {}  # path -> (size, mtime) last uploaded
        self._lock = threading.Lock()

    # ------------------------------------------------------------ mapping
    def stage(self, url: str) -> str:
        """The local folder that stands for folder ``url``."""
        url = url.rstrip("/")
        key = url_key(url)
        self._urls[key] = url
        name = re.sub(r"[^A-Za-z0-9._-]", "_", url.rsplit("/", 1)[-1]) or "root"
        return os.path.join(self.root, f"{key}-{name}")

    def local(self, url: str) -> str:
        """The local path of ``url`` (its folder is staged; a bucket is staged itself)."""
        scheme, _, rest = url.rstrip("/").partition("://")
        if "/" not in rest:
            return self.stage(url)
        folder, _, name = rest.rpartition("/")
        return os.path.join(self.stage(f"{scheme}://{folder}"), name)

    def remote(self, path: str) -> str | None:
        """The URL that local ``path`` stands for, or None for a plain local path.

        A path staged under another root (another machine's cache, recorded in a
        checkpoint) is recognised by its staging folder's name.
        """
        parts = os.path.abspath(path).split(os.sep)
        for i, part in enumerate(parts):
            match = STAGED_NAME.match(part)
            if match and match.group(1) in self._urls:
                return "/".join([self._urls[match.group(1)], *parts[i + 1 :]])
        return None

    def _fs(self, url: str) -> tuple[Any, str]:
        return filesystem(url, self.backend_args)

    # ------------------------------------------------------------ copies
    def push_file(self, path: str, source: str | None = None) -> None:
        """Upload staged file ``path`` (its bytes read from ``source``, if given; nothing
        for a plain local path)."""
        url = self.remote(path)
        if url is None:
            return
        fs, inner = self._fs(url)
        fs.put_file(source or path, inner)

    def push_changed(self, paths: Sequence[str]) -> list[str]:
        """Upload the staged files among ``paths`` whose size or modification time changed
        since this area last uploaded them; return those uploaded."""
        pushed = []
        with self._lock:
            for path in paths:
                stat = os.stat(path)
                signature = (stat.st_size, stat.st_mtime_ns)
                if self._pushed.get(path) == signature:
                    continue
                self.push_file(path)
                self._pushed[path] = signature
                pushed.append(path)
        return pushed

    def pull_file(self, path: str) -> bool:
        """Replace staged file ``path`` by its remote copy; False when there is none (or
        ``path`` is a plain local path)."""
        url = self.remote(path)
        if url is None:
            return False
        fs, inner = self._fs(url)
        try:
            download(fs, inner, path)
        except FileNotFoundError:
            return False
        return True

    @contextlib.contextmanager
    def exclusive(self, folder: str) -> Iterator[None]:
        """One process of this machine at a time downloads into ``folder``."""
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, ".cadence-fetch.lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def download(fs: Any, inner: str, target: str) -> None:
    """Download ``inner`` of filesystem ``fs`` to ``target`` through a temporary file
    (never half a file)."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.download.tmp"
    try:
        fs.get_file(inner, tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def stage_url(storage: StagingArea | None, value: Any) -> Any:
    """``value`` with a URL replaced by its staged local path (other values unchanged)."""
    if storage is None or not is_url(value):
        return value
    return storage.local(value)


__all__ = [
    "STAGED_NAME",
    "STAGING_ENV",
    "StagingArea",
    "download",
    "stage_url",
    "staging_root",
    "url_key",
]

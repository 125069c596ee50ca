"""Checkpoints and logs in object storage: a local staging folder mirrored to a URL.

Everything is written locally first, in a *staging* folder that stands for the
remote one (``$CADENCE_STAGING_DIR``, default ``~/.cache/cadence/staging``, one
subfolder per URL), verified, then uploaded: a checkpoint's files and companion
files first, its manifest after them and the pointers last, so a reader of the
bucket never takes a half-uploaded checkpoint for the latest. The remote folder
is the truth: before a resume the staging folder's index (manifests, pointers) is
made equal to the remote one, and a checkpoint is downloaded (only what the
cached copy lacks) and verified before it is read.

The generic part (URL <-> staged path, single-file copies, uploads of changed files, the
lock of a folder being downloaded into) is :mod:`cadence.fileio.staging`; this module
adds what knows checkpoints.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from typing import Any

from ..fileio import is_url
from ..fileio.staging import StagingArea
from ..fileio.staging import download as _download
from .after_val import after_val_path
from .companions import companion_files, companion_folders
from .digest import ALGORITHMS, file_digest
from .files import (
    MANIFEST_SUFFIX,
    CheckpointError,
    algorithm_of,
    checkpoint_digest,
    digest_key,
    manifest_path,
    read_manifest,
)
from .removal import remove_checkpoint

#: Files of a work dir that are not uploaded by :meth:`RemoteStorage.push_tree`.
_POINTER = re.compile(r"^(last_checkpoint|best_checkpoint.*)$")


class RemoteStorage(StagingArea):
    """The remote folders of a run, each mirrored by a local staging folder, with the
    checkpoint-aware uploads and downloads.

    Args:
        backend_args: fsspec storage options (mmengine's ``backend_args``).
        root: the staging root (default :func:`~cadence.fileio.staging.staging_root`).
    """

    def __init__(self, backend_args: Mapping[str, Any] | None = None, root: str | None = None):
        super().__init__(backend_args, root)

    # ------------------------------------------------------------ upload
    def push_companions(
        self, path: str, index: int = 0, count: int = 1, source: str | None = None
    ) -> None:
        """Upload share ``index`` of ``count`` of checkpoint ``path``'s companion files
        (read from those of ``source``, where they were written aside, if given)."""
        if self.remote(path) is None:
            return
        directory = os.path.dirname(os.path.abspath(path))
        origin = os.path.dirname(os.path.abspath(source or path))
        for relative in companion_files(source or path)[index::count]:
            self.push_file(os.path.join(directory, relative), os.path.join(origin, relative))

    def withdraw_manifest(self, path: str) -> None:
        """Delete the remote manifest of ``path`` (if any) before its files are uploaded
        anew: a bucket has no rename, so without a manifest the name is an upload cut
        short (never read) until the new manifest is uploaded after its files."""
        url = self.remote(path)
        if url is None:
            return
        fs, inner = self._fs(url)
        with contextlib.suppress(FileNotFoundError):
            fs.rm_file(inner + MANIFEST_SUFFIX)

    def withdraw_after_val(self, path: str) -> None:
        """Delete the remote after-validation file of checkpoint ``path`` (manifest first),
        before ``path`` is saved anew: it belongs to the file being replaced."""
        url = self.remote(path)
        if url is None:
            return
        fs, inner = self._fs(url)
        after = after_val_path(inner)
        for target in (after + MANIFEST_SUFFIX, after):
            with contextlib.suppress(FileNotFoundError):
                fs.rm_file(target)

    def push_pointer(self, work_dir: str, name: str) -> None:
        """Upload the pointer ``work_dir/<name>``."""
        self.push_file(os.path.join(work_dir, name))

    def delete_checkpoint(self, path: str) -> None:
        """Delete the remote copy of ``path`` (and of its after-validation file): the
        manifests first, so that it stops being a candidate before its files go."""
        url = self.remote(path)
        if url is None:
            return
        fs, inner = self._fs(url)
        after = after_val_path(inner)
        for target in (inner + MANIFEST_SUFFIX, after + MANIFEST_SUFFIX, inner, after):
            with contextlib.suppress(FileNotFoundError):
                fs.rm_file(target)
        for folder in self._remote_companions(fs, inner):
            with contextlib.suppress(FileNotFoundError):
                fs.rm(folder, recursive=True)

    @staticmethod
    def _remote_companions(fs: Any, inner: str) -> list[str]:
        parent, _, name = inner.rpartition("/")
        with contextlib.suppress(FileNotFoundError):
            return [
                e["name"] for e in fs.ls(parent, detail=True)
                if e["type"] == "directory" and e["name"].rsplit("/", 1)[-1].startswith(name + ".")
            ]  # fmt: skip
        return []

    def push_tree(self, folder: str) -> list[str]:
        """Upload the files of ``folder`` changed since the last push (logs, the config,
        scalars), leaving out checkpoints, which :meth:`push_checkpoint` uploads."""
        if self.remote(folder) is None:
            return []
        return self.push_changed(_plain_files(folder))

    # ------------------------------------------------------------ download
    def pull_index(self, folder: str) -> list[str]:
        """Make ``folder``'s pointers and manifests those of its remote folder: download
        them, and drop staged checkpoints the remote folder no longer has. Return the
        remote checkpoint files without a manifest (uploads cut short)."""
        url = self.remote(folder)
        if url is None:
            return []
        fs, inner = self._fs(url)
        fs.invalidate_cache()
        try:
            names = {e["name"].rsplit("/", 1)[-1] for e in fs.ls(inner, detail=True)
                     if e["type"] == "file"}  # fmt: skip
        except FileNotFoundError:
            names = set()
        with self.exclusive(folder):
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if name.endswith(MANIFEST_SUFFIX) and name not in names:
                    remove_checkpoint(path[: -len(MANIFEST_SUFFIX)])
                elif _POINTER.match(name) and name not in names and os.path.isfile(path):
                    os.remove(path)
            for name in sorted(names):
                if name.endswith(MANIFEST_SUFFIX) or _POINTER.match(name):
                    _download(fs, f"{inner}/{name}", os.path.join(folder, name))
        return sorted(
            f"{url}/{n}" for n in names
            if n + MANIFEST_SUFFIX not in names and n.endswith((".pth", ".pt", ".ckpt"))
        )  # fmt: skip

    def fetch(self, path: str) -> None:
        """Download what the staged copy of checkpoint ``path`` lacks (its manifest, file
        and companion files), as the remote manifest lists them."""
        url = self.remote(path)
        if url is None:
            return
        fs, inner = self._fs(url)
        folder = os.path.dirname(os.path.abspath(path))
        with self.exclusive(folder):
            try:
                _download(fs, inner + MANIFEST_SUFFIX, manifest_path(path))
            except FileNotFoundError:  # a plain file: read unverified, with a warning
                if os.path.isfile(manifest_path(path)):
                    os.remove(manifest_path(path))
                try:
                    _download(fs, inner, path)
                except FileNotFoundError as e:
                    raise FileNotFoundError(f"checkpoint {url} does not exist") from e
                return
            info = read_manifest(path) or {}
            key, algorithm = digest_key(info), algorithm_of(info)
            wanted = {os.path.basename(path): checkpoint_digest(info)}
            wanted.update({rel: entry.get(key) if key and isinstance(entry, Mapping) else None
                           for rel, entry in (info.get("files") or {}).items()})  # fmt: skip
            reusable = algorithm in ALGORITHMS  # a cached file of that digest is not fetched
            for extra in set(companion_files(path)) - set(wanted):  # stale cached shards
                os.remove(os.path.join(folder, extra))
            base = inner.rpartition("/")[0]
            for relative, digest in wanted.items():
                target = os.path.join(folder, relative)
                if (reusable and digest is not None and os.path.isfile(target)
                        and file_digest(target, algorithm)[0] == digest):  # fmt: skip
                    continue
                try:
                    _download(fs, f"{base}/{relative}", target)
                except FileNotFoundError as e:
                    raise CheckpointError(f"checkpoint {url}: {relative} is missing") from e


def _plain_files(folder: str) -> list[str]:
    """Files under ``folder`` that are not part of a checkpoint, a pointer or a lock."""
    found = []
    for root, dirs, names in os.walk(folder):
        skipped = {os.path.basename(f) for n in names for f in companion_folders(
            os.path.join(root, n))}  # fmt: skip
        dirs[:] = [d for d in dirs if d not in skipped and not d.startswith(".")]
        for name in names:
            path = os.path.join(root, name)
            if (
                name.startswith(".")
                or name.endswith((".tmp", MANIFEST_SUFFIX))
                or _POINTER.match(name)
                or os.path.isfile(manifest_path(path))
            ):
                continue
            found.append(path)
    return sorted(found)


def fetch_url(url: str, backend_args: Mapping[str, Any] | None = None) -> str:
    """Download checkpoint ``url`` (with its manifest and companion files, if it has
    them) to the staging folder; return the local path. Local paths pass through."""
    if not is_url(url):
        return url
    storage = RemoteStorage(backend_args)
    path = storage.local(url)
    storage.fetch(path)
    return path


__all__ = ["RemoteStorage", "fetch_url"]

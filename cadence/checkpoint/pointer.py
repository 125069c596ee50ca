"""The ``last_checkpoint`` pointer of a work dir and the checkpoints to resume from."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from ..fileio import is_url
from .after_val import is_after_val
from .files import (
    MANIFEST_SUFFIX,
    CheckpointError,
    fsync_dir,
    manifest_path,
    read_manifest,
    temp_file,
)

LAST_CHECKPOINT = "last_checkpoint"
#: File names taken for checkpoints when looking for ones without a manifest.
CHECKPOINT_EXTENSIONS = (".pth", ".pt", ".ckpt")


def write_last_checkpoint(
    work_dir: str, path: str, name: str = LAST_CHECKPOINT, outside: str | None = None
) -> None:
    """Point ``work_dir/<name>`` (``last_checkpoint``) at ``path`` (atomically, durably).

    A checkpoint inside ``work_dir`` is named relative to it, so a copy of the work dir
    (``cp -r``, a synced bucket) points at its own files, not the original's; one
    outside it by ``outside`` (its URL, for a staged remote file) or its path.
    """
    os.makedirs(work_dir, exist_ok=True)
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(work_dir))
    target = (outside or path) if relative.startswith(os.pardir) else relative
    fd, tmp = temp_file(work_dir, ".last-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(target)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(work_dir, name))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(work_dir)


def pointer_target(work_dir: str, name: str = LAST_CHECKPOINT) -> str | None:
    pointer = os.path.join(work_dir, name)
    if not os.path.isfile(pointer):
        return None
    try:
        with open(pointer, encoding="utf-8") as f:
            path = f.read().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise CheckpointError(
            f"the pointer {pointer} is unreadable ({e}); it should hold the path of the "
            "latest checkpoint"
        ) from e
    if "\0" in path or "\n" in path:
        raise CheckpointError(f"the pointer {pointer} does not hold a checkpoint path")
    if path and not os.path.isabs(path) and "://" not in path:
        path = os.path.join(work_dir, path)
    return path or None


def resolve_checkpoint(path: str | os.PathLike[str], work_dir: str | None = None) -> str:
    """The checkpoint file that ``path`` names, for every command and key that takes one.

    ``path`` is a checkpoint file; a work dir (meaning the checkpoint its
    ``last_checkpoint`` pointer names); or, when neither exists as given, a name
    relative to ``work_dir``, as a pointer holds it (``cadence test CFG $(cat
    WORK_DIR/last_checkpoint)``). URLs likewise (a folder URL: its pointer's target).
    A name that matches none of these comes back unchanged, for the caller to report
    missing; a folder without a pointer raises ``FileNotFoundError``.
    """
    text = os.fspath(path)
    if is_url(text):
        return _resolve_url(text)
    candidates = [text]
    if work_dir and not os.path.isabs(text) and not is_url(work_dir):
        candidates.append(os.path.join(work_dir, text))
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
        if os.path.isdir(candidate):
            target = pointer_target(candidate)
            if target is None:
                raise FileNotFoundError(
                    errno.ENOENT, f"a folder without a {LAST_CHECKPOINT} pointer: name a "
                    "checkpoint file in it, or the work dir of a run that saved one", text,
                )  # fmt: skip
            return target
    return text


def _resolve_url(url: str) -> str:
    from ..fileio import get_text, isfile, join_path

    if isfile(url):
        return url
    try:
        target = get_text(join_path(url, LAST_CHECKPOINT)).strip()
    except FileNotFoundError:
        return url  # neither a file nor a work dir: reported missing by the caller
    return target if is_url(target) else join_path(url, target)


def find_latest_checkpoint(work_dir: str, name: str = LAST_CHECKPOINT) -> str | None:
    """The checkpoint ``work_dir/<name>`` (``last_checkpoint``; ``best_checkpoint``...)
    points at, if it still exists (:class:`CheckpointError` if the pointer is garbled)."""
    path = pointer_target(work_dir, name)
    return path if path and os.path.isfile(path) else None


def _folders(work_dir: str, target: str | None) -> list[str]:
    folders = {os.path.abspath(work_dir)}
    if target:
        folders.add(os.path.dirname(os.path.abspath(target)))
    return sorted(f for f in folders if os.path.isdir(f))


def _safe_target(work_dir: str) -> str | None:
    try:
        return pointer_target(work_dir)
    except CheckpointError:  # resume reports it; the other checkpoints still count
        return None


def _progress_key(path: str) -> tuple[int, int, int, str]:
    """Newest first by the progress the manifest records (never by file times)."""
    try:
        info = read_manifest(path) or {}
    except CheckpointError:
        return (-1, 0, 0, "")  # an unreadable manifest: tried last, skipped with its reason
    progress = info.get("progress") or {}
    if "iter" in progress:
        return (1, int(progress["iter"]), int(progress.get("epoch", 0)), info.get("created", ""))
    return (0, 0, 0, str(info.get("created", "")))  # version-1 manifests: when it was saved


def checkpoint_candidates(
    work_dir: str, *, staged: bool = False, resolve: Callable[[str], str] | None = None
) -> list[str]:
    """Checkpoints to resume from, best first: the pointer's target, then the other
    checkpoints with a manifest in its folder and in ``work_dir``, by the training
    progress their manifests record (``best_*`` checkpoints, written without optimizer
    state, after-validation files and files without a manifest, which cannot be verified,
    are left out).
    ``staged``: a staged remote folder, where a manifest stands for its checkpoint
    until the checkpoint is downloaded; ``resolve`` maps a URL in the pointer to its
    staged path."""
    present = (lambda p: os.path.isfile(manifest_path(p))) if staged else os.path.isfile
    target = _safe_target(work_dir)
    if target and resolve is not None and "://" in target:
        target = resolve(target)
    first = target if target and os.path.isfile(manifest_path(target)) else None
    found = []
    for folder in _folders(work_dir, target):
        for name in os.listdir(folder):
            if name.startswith(("best_", ".")) or not name.endswith(MANIFEST_SUFFIX):
                continue
            path = os.path.join(folder, name[: -len(MANIFEST_SUFFIX)])
            if present(path) and path != first and not is_after_val(path):
                found.append(path)
    ordered = sorted(found, key=_progress_key, reverse=True)
    return ([first] if first and present(first) else []) + ordered


def unverified_checkpoints(work_dir: str) -> list[str]:
    """Checkpoint files beside the candidates that have no manifest (cannot be verified)."""
    target = _safe_target(work_dir)
    found = []
    for folder in _folders(work_dir, target):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.startswith((".", "best_")) or not name.endswith(CHECKPOINT_EXTENSIONS):
                continue
            if os.path.isfile(path) and not os.path.isfile(manifest_path(path)):
                found.append(path)
    return found


def held_checkpoints(work_dir: str) -> list[str]:
    """Every checkpoint of ``work_dir`` and of its pointer's folder: files with a checkpoint
    extension (``best_*`` ones included) and files a manifest names (a staged remote folder
    holds the manifests only), sorted."""
    target = _safe_target(work_dir)
    found = set()
    for folder in _folders(work_dir, target):
        for name in os.listdir(folder):
            if name.startswith("."):
                continue
            if name.endswith(MANIFEST_SUFFIX):
                name = name[: -len(MANIFEST_SUFFIX)]
            if name.endswith(CHECKPOINT_EXTENSIONS):
                found.add(os.path.join(folder, name))
    return sorted(found)

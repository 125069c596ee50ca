"""The ``last_checkpoint`` pointer of a work dir and the checkpoints to resume from."""

from __future__ import annotations

import os
import tempfile

from .files import fsync_dir, manifest_path

LAST_CHECKPOINT = "last_checkpoint"


def write_last_checkpoint(work_dir: str, path: str) -> None:
    """Point ``work_dir/last_checkpoint`` at ``path`` (atomically and durably)."""
    os.makedirs(work_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=work_dir, prefix=".last-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(path)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(work_dir, LAST_CHECKPOINT))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(work_dir)


def _pointer_target(work_dir: str) -> str | None:
    pointer = os.path.join(work_dir, LAST_CHECKPOINT)
    if not os.path.isfile(pointer):
        return None
    with open(pointer) as f:
        path = f.read().strip()
    if path and not os.path.isabs(path):
        path = os.path.join(work_dir, path)
    return path or None


def find_latest_checkpoint(work_dir: str) -> str | None:
    """The checkpoint ``work_dir/last_checkpoint`` points at, if it still exists."""
    path = _pointer_target(work_dir)
    return path if path and os.path.isfile(path) else None


def checkpoint_candidates(work_dir: str) -> list[str]:
    """Checkpoints to resume from, best first: the pointer's target, then the other
    checkpoints with a manifest in its folder and in ``work_dir``, newest first
    (``best_*`` checkpoints, written without optimizer state, are left out)."""
    first = find_latest_checkpoint(work_dir)
    folders = {os.path.abspath(work_dir)}
    target = _pointer_target(work_dir)
    if target:
        folders.add(os.path.dirname(os.path.abspath(target)))
    found: list[tuple[int, str]] = []
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if name.startswith(("best_", ".")) or not os.path.isfile(manifest_path(path)):
                continue
            if os.path.isfile(path) and path != first:
                found.append((os.stat(path).st_mtime_ns, path))
    ordered = [path for _, path in sorted(found, reverse=True)]
    return ([first] if first else []) + ordered

"""Companion folders: the files a strategy writes beside a checkpoint file.

FSDP writes ``<file>.dcp/``, DeepSpeed ``<file>.ds/``. A save writes them *aside*,
under ``<folder>/.<file name>.saving/<file name>.<suffix>`` (:func:`staging_path`:
a hidden folder beside the checkpoint, on the same file system), and
:func:`swap_in` moves them into place together with the checkpoint file, after
the checkpoint's old manifest was withdrawn: an earlier checkpoint of the same
name stays whole (and verifies) until the new one is complete, and no manifest
ever describes a mixture of old and new files. Interrupted saves leave only the
hidden staging folder, which the next save of that name (or the deletion of the
checkpoint) removes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any

from .digest import file_digest

#: ``{path relative to the checkpoint's folder: {"size": bytes, "digest": hex}}`` (hashed
#: with :data:`~.digest.DEFAULT`, the algorithm the manifest names)
FileDigests = dict[str, dict[str, Any]]
STAGING_SUFFIX = ".saving"


def companion_folders(filename: str) -> list[str]:
    """The companion folders of checkpoint ``filename``: folders beside it named
    ``<file name>.<suffix>`` (FSDP writes ``.dcp``, DeepSpeed ``.ds``)."""
    directory = os.path.dirname(os.path.abspath(filename))
    prefix = os.path.basename(filename) + "."
    if not os.path.isdir(directory):
        return []
    return sorted(
        os.path.join(directory, name)
        for name in os.listdir(directory)
        if name.startswith(prefix) and os.path.isdir(os.path.join(directory, name))
    )


def companion_files(filename: str) -> list[str]:
    """The files in the companion folders of ``filename``, sorted, by path relative
    to the checkpoint's folder."""
    directory = os.path.dirname(os.path.abspath(filename))
    found: list[str] = []
    for root in companion_folders(filename):
        for folder, _, names in os.walk(root):
            found.extend(os.path.relpath(os.path.join(folder, n), directory) for n in names)
    return sorted(found)


def companion_digests(filename: str, paths: Sequence[str] | None = None) -> FileDigests:
    """Size and digest of the companion files ``paths`` (default: all of them)."""
    directory = os.path.dirname(os.path.abspath(filename))
    digests: FileDigests = {}
    for relative in companion_files(filename) if paths is None else paths:
        digest, size = file_digest(os.path.join(directory, relative))
        digests[relative] = {"size": size, "digest": digest}
    return digests


def staging_folder(filename: str) -> str:
    """The hidden folder beside ``filename`` where a save of it stages its companions."""
    directory = os.path.dirname(os.path.abspath(filename))
    return os.path.join(directory, f".{os.path.basename(filename)}{STAGING_SUFFIX}")


def staging_path(filename: str) -> str:
    """The name a strategy writes the companions of ``filename`` under while it is saved:
    ``<staging folder>/<file name>`` (its companion folders are ``<that>.<suffix>``, and
    paths relative to the staging folder are the final ones)."""
    return os.path.join(staging_folder(filename), os.path.basename(filename))


def discard_staging(filename: str) -> None:
    """Remove what an interrupted save of ``filename`` left in its staging folder."""
    shutil.rmtree(staging_folder(filename), ignore_errors=True)


def swap_in(filename: str, withdraw: str) -> None:
    """Replace the companion folders of ``filename`` by the staged ones: first remove
    ``withdraw`` (the old manifest) if present, then move every current companion folder
    into the staging folder (deleted by :func:`discard_staging` once the new manifest
    stands), then move the staged folders in. Each step is a rename in one folder."""
    staged = staging_folder(filename)
    os.makedirs(staged, exist_ok=True)
    if os.path.exists(withdraw):
        os.remove(withdraw)
    old = os.path.join(staged, "replaced")
    current = companion_folders(filename)
    if current:
        os.makedirs(old, exist_ok=True)
    for folder in current:
        os.replace(folder, os.path.join(old, os.path.basename(folder)))
    for folder in companion_folders(staging_path(filename)):
        os.replace(folder, os.path.join(os.path.dirname(os.path.abspath(filename)),
                                        os.path.basename(folder)))  # fmt: skip

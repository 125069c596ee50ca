"""Deleting a checkpoint: its file, manifest, companion folders and after-validation
file, and what an interrupted save of it left (rotation and replacement call this, only
for files of the run's own folder)."""

from __future__ import annotations

import os
import shutil

from .after_val import after_val_path
from .companions import companion_folders, discard_staging
from .files import manifest_path


def remove_checkpoint(filename: str) -> None:
    """Delete a checkpoint file with its manifest, companion folders and after-validation
    file (if present), and what an interrupted save of it left."""
    discard_staging(filename)
    remove_after_val(filename)
    for folder in companion_folders(filename):
        shutil.rmtree(folder, ignore_errors=True)
    for path in (filename, manifest_path(filename)):
        if os.path.isfile(path):
            os.remove(path)


def remove_after_val(filename: str) -> None:
    """Delete the after-validation file of checkpoint ``filename`` (:mod:`.after_val`) and
    its manifest, the manifest first."""
    after = after_val_path(filename)
    for path in (manifest_path(after), after):
        if os.path.isfile(path):
            os.remove(path)

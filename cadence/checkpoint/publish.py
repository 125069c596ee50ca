"""Turn a training checkpoint into a weights-only file named after its hash."""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Sequence
from typing import Any, BinaryIO

import torch

from ..utils.paths import refuse_url
from .files import (
    CheckpointError,
    fsync_dir,
    manifest_for,
    read_checkpoint,
    temp_file,
    write_manifest,
)

PUBLISH_EXTENSIONS = (".pth", ".pt", ".ckpt")


class _HashingWriter:
    """A file wrapper that hashes (SHA-256) what passes through ``write``."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self.sha = hashlib.sha256()

    def write(self, data: Any) -> int:
        self.sha.update(data)
        written = self._f.write(data)
        return written if written is not None else memoryview(data).nbytes

    def flush(self) -> None:
        self._f.flush()


def publish_checkpoint(
    in_file: str, out_file: str, keys: Sequence[str] = ("meta", "state_dict")
) -> str:
    """Keep only ``keys`` of checkpoint ``in_file`` (dropping optimizer, schedulers,
    RNG, hooks...) and write them to ``<out stem>-<first 8 hex of sha256>.pth``.

    Returns the written path. The input is read with ``weights_only=True``; a
    file that is a bare state dict is published as its ``state_dict``.
    """
    refuse_url(in_file, "in_file")
    refuse_url(out_file, "out_file")
    if isinstance(keys, str):
        keys = (keys,)
    checkpoint: dict[str, Any] = read_checkpoint(in_file)
    if "state_dict" not in checkpoint and all(
        isinstance(v, torch.Tensor) for v in checkpoint.values()
    ):
        checkpoint = {"state_dict": checkpoint}
    missing = [k for k in keys if k not in checkpoint]
    if "state_dict" in missing:
        raise CheckpointError(f"checkpoint '{in_file}' has no 'state_dict' to publish")
    if missing:
        warnings.warn(f"publish_checkpoint: '{in_file}' has no {missing}", stacklevel=2)
    published = {k: checkpoint[k] for k in keys if k in checkpoint}
    stem, ext = os.path.splitext(out_file)
    if ext not in PUBLISH_EXTENSIONS:
        stem += ext
    directory = os.path.dirname(stem) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = temp_file(directory, ".publish-")
    try:
        with os.fdopen(fd, "wb") as f:
            writer = _HashingWriter(f)
            torch.save(published, writer)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
            size = os.fstat(f.fileno()).st_size
        sha256 = writer.sha.hexdigest()
        final = f"{stem}-{sha256[:8]}.pth"
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    write_manifest(manifest_for(final, published, size=size, sha256=sha256), final)
    fsync_dir(directory)
    return final

"""Turn a training checkpoint into a weights-only file named after its hash."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

import torch

from ..fileio import is_url
from .digest import hasher
from .files import (
    CheckpointError,
    fsync_dir,
    manifest_for,
    manifest_path,
    read_checkpoint,
    temp_file,
    write_manifest,
)
from .remote import RemoteStorage, fetch_url

PUBLISH_EXTENSIONS = (".pth", ".pt", ".ckpt")


#: The digest of published files (their names carry its first hex digits): a strong hash,
#: unlike the CRC-32 of training checkpoints, since the name identifies the content.
PUBLISH_ALGORITHM = "sha256"

#: What ``publish_checkpoint(format=...)`` writes.
PUBLISH_FORMATS = ("torch", "safetensors")


def publish_checkpoint(
    in_file: str,
    out_file: str,
    keys: Sequence[str] = ("meta", "state_dict"),
    format: str = "torch",
) -> str:
    """Keep only ``keys`` of checkpoint ``in_file`` (dropping optimizer, schedulers,
    RNG, hooks...) and write them to ``<out stem>-<first 8 hex of sha256>.pth``.

    ``format='safetensors'`` writes the model weights alone as
    ``<out stem>-<sha8>.safetensors`` (``meta``'s epoch, iteration and versions as
    its metadata). Either way the run's config is written beside the file as
    ``<same name>.py`` when the checkpoint holds it, and weights that a sharded
    strategy kept only in its companion folder (FSDP with
    ``save_full_weights=False``) are consolidated first. Returns the written path.
    The input is verified and read with ``weights_only=True``; a file that is a bare
    state dict is published as its ``state_dict``.
    """
    if format not in PUBLISH_FORMATS:
        raise ValueError(f"publish_checkpoint: format must be one of {PUBLISH_FORMATS}, "
                         f"got {format!r}")  # fmt: skip
    if isinstance(keys, str):
        keys = (keys,)
    in_file = fetch_url(in_file)  # a URL is downloaded (and verified) first
    if is_url(out_file):  # written locally, then uploaded with its manifest and config
        storage = RemoteStorage()
        final = publish_checkpoint(in_file, storage.local(out_file), keys, format=format)
        for path in (final, os.path.splitext(final)[0] + ".py", manifest_path(final)):
            if os.path.isfile(path):  # the manifest last, as for every upload
                storage.push_file(path)
        return str(storage.remote(final))
    checkpoint: dict[str, Any] = read_checkpoint(in_file)
    if "state_dict" not in checkpoint and all(
        isinstance(v, torch.Tensor) for v in checkpoint.values()
    ):
        checkpoint = {"state_dict": checkpoint}
    if "state_dict" not in checkpoint and checkpoint.get("sharded"):
        checkpoint["state_dict"] = _consolidated(in_file, str(checkpoint["sharded"]))
    missing = [k for k in keys if k not in checkpoint]
    if "state_dict" in missing or "state_dict" not in checkpoint:
        raise CheckpointError(f"checkpoint '{in_file}' has no 'state_dict' to publish")
    if missing:
        warnings.warn(f"publish_checkpoint: '{in_file}' has no {missing}", stacklevel=2)
    published = {k: checkpoint[k] for k in keys if k in checkpoint}
    stem, ext = os.path.splitext(out_file)
    if ext not in PUBLISH_EXTENSIONS + (".safetensors",):
        stem += ext
    directory = os.path.dirname(stem) or "."
    os.makedirs(directory, exist_ok=True)
    if format == "safetensors":
        data = _safetensors_bytes(checkpoint)
        final = _write_hashed(stem, ".safetensors", lambda f: f.write(data), published)
    else:
        final = _write_hashed(stem, ".pth", lambda f: torch.save(published, f), published)
    meta = checkpoint.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("cfg"), str):
        _write_text(os.path.splitext(final)[0] + ".py", meta["cfg"])
    fsync_dir(directory)
    return final


def _consolidated(in_file: str, sharded: str) -> dict[str, torch.Tensor]:
    from .dcp import consolidated_model

    folder = (
        in_file + sharded
        if sharded.startswith(".")
        else os.path.join(os.path.dirname(in_file), sharded)
    )  # older checkpoints name the folder, newer ones its suffix
    return consolidated_model(folder)


def _safetensors_bytes(checkpoint: dict[str, Any]) -> bytes:
    try:
        from safetensors.torch import save
    except ImportError as e:
        raise ImportError(
            "publishing safetensors needs the safetensors package: pip install safetensors "
            "(or cadence[safetensors])"
        ) from e
    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in
               checkpoint["state_dict"].items() if isinstance(v, torch.Tensor)}  # fmt: skip
    meta: dict[str, Any] = checkpoint["meta"] if isinstance(checkpoint.get("meta"), dict) else {}
    keys = ("epoch", "iter", "cadence_version", "torch_version")
    info: dict[str, str] = {k: str(meta[k]) for k in keys if k in meta}
    return bytes(save(tensors, metadata={"format": "pt", **info}))


class _HashingWriter:
    """A file wrapper that hashes (:data:`PUBLISH_ALGORITHM`) what passes through ``write``."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self.sha = hasher(PUBLISH_ALGORITHM)
        self.size = 0

    def write(self, data: Any) -> int:
        self.sha.update(data)
        self.size += memoryview(data).nbytes
        written = self._f.write(data)
        return written if written is not None else memoryview(data).nbytes

    def flush(self) -> None:
        self._f.flush()


def _write_hashed(
    stem: str, ext: str, write: Callable[[Any], Any], published: dict[str, Any]
) -> str:
    """Stream ``write(file)`` to ``<stem>-<sha8><ext>`` crash-safely, with its manifest."""
    final, writer = _stream(os.path.dirname(stem), write, lambda sha: f"{stem}-{sha[:8]}{ext}")
    info = manifest_for(final, published, size=writer.size, digest=writer.sha.hexdigest(),
                        algorithm=PUBLISH_ALGORITHM)  # fmt: skip
    write_manifest(info, final)
    return final


def _write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` crash-safely."""
    _stream(os.path.dirname(path), lambda f: f.write(text.encode()), lambda sha: path)


def _stream(
    directory: str, write: Callable[[Any], Any], name: Callable[[str], str]
) -> tuple[str, _HashingWriter]:
    """``write`` into a temporary file, fsync, rename it to ``name(sha256)``."""
    fd, tmp = temp_file(directory or ".", ".publish-")
    try:
        with os.fdopen(fd, "wb") as f:
            writer = _HashingWriter(f)
            write(writer)
            f.flush()
            os.fsync(f.fileno())
        final = name(writer.sha.hexdigest())
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return final, writer

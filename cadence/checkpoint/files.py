"""Reading and writing checkpoint files safely.

A checkpoint file is written under a temporary name, fsynced, renamed into
place, and described by a small JSON manifest beside it
(``<file>.manifest.json``: the digest algorithm, size and digest of the file and of
every file in its companion folders, bytes per top-level key).

The file's digest is computed while it is written, from the CRC-32s ``torch.save``
computes of its records and of the bytes between them (:mod:`.save_writer`). Companion
folders are written aside and swapped in with the file (:mod:`.companions`).
Reading verifies the size and digest of every file of the checkpoint before
any byte of it is deserialised, then loads with
``torch.load(weights_only=True)``; anything wrong raises :class:`CheckpointError`.
Manifests of version 2 (SHA-256 under the key ``sha256``, no algorithm named) still
verify; those of version 1 (CRC-32 of the zip records, companion sizes only) as far
as they go.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, cast

import torch

from . import portable
from .companions import (
    FileDigests,
    companion_digests,
    companion_files,
    discard_staging,
    staging_path,
    swap_in,
)
from .digest import DEFAULT, UNNAMED, HashingWriter, file_crc32, file_digest
from .save_writer import RecordCrcWriter
from .unpickling import allowed_globals, mmengine_globals, refusal

MANIFEST_SUFFIX = ".manifest.json"
MANIFEST_FORMAT = "cadence-checkpoint"
MANIFEST_VERSION = 3
#: The key of a file's digest in a manifest (version 3; version 2 used ``"sha256"``).
DIGEST_KEY = "digest"


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be used: truncated, corrupted, or refused by the loader."""


def manifest_path(filename: str) -> str:
    """Where the manifest of checkpoint ``filename`` lives."""
    return filename + MANIFEST_SUFFIX


def fsync_dir(directory: str) -> None:
    """Make a rename inside ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tensor_bytes(obj: Any) -> int:
    """Bytes held by the tensors inside ``obj`` (nested dicts, lists, tuples)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, Mapping):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def current_umask() -> int:
    """This process's umask (read without changing it where /proc tells it)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: read it by setting it, and put it back at once
    os.umask(mask)
    return mask


def temp_file(directory: str, prefix: str) -> tuple[int, str]:
    """A new ``<prefix>*.tmp`` in ``directory`` (open descriptor, path) with the mode
    a plain ``open`` would give it (0666 less the umask), not ``mkstemp``'s 0600."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    os.fchmod(fd, 0o666 & ~current_umask())
    return fd, tmp


def _write_json_atomic(data: Mapping[str, Any], filename: str) -> None:
    directory = os.path.dirname(os.path.abspath(filename))
    fd, tmp = temp_file(directory, ".manifest-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _records_digest(archive: zipfile.ZipFile) -> str:
    """CRC-32 over the (name, size, CRC-32) entries of a zip archive's directory."""
    crc = 0
    for entry in archive.infolist():
        crc = zlib.crc32(f"{entry.filename}\0{entry.file_size}\0{entry.CRC:08x}\n".encode(), crc)
    return f"{crc:08x}"


def _write_hashed(
    obj: Any, f: Any, tmp: str, durable: bool, upload: Callable[[str], Any] | None
) -> tuple[str, int]:
    """``torch.save(obj)`` into the unbuffered file ``f`` (path ``tmp``), hashed while it
    is written (:mod:`.save_writer`); then fsync (``durable``) while ``upload(tmp)`` runs.
    Returns the digest (:data:`~.digest.DEFAULT`) and the size."""
    if DEFAULT == "crc32":
        writer: RecordCrcWriter | HashingWriter = RecordCrcWriter(f, tmp, writeback=durable)
    else:
        writer = HashingWriter(f, tmp)
    try:
        if portable.wanted():  # OpenMMLab code runs here: mmengine reads it too
            obj = portable.for_mmengine(obj)
            torch.save(obj, cast(IO[bytes], writer), pickle_module=portable.pickle_module)
        else:
            torch.save(obj, cast(IO[bytes], writer))  # a write-only file object
        digest = writer.hexdigest()
        if upload is None:
            if durable:
                os.fsync(f.fileno())
            return digest, writer.size
        with ThreadPoolExecutor(1) as pool:
            sent = pool.submit(upload, tmp)
            if durable:
                os.fsync(f.fileno())
            sent.result()
    except BaseException:
        writer.abort()
        raise
    return digest, writer.size


def hashed_torch_save(obj: Any, filename: str) -> dict[str, Any]:
    """``torch.save(obj, filename)`` (in place, no fsync: for an engine's companion files),
    hashed while written; returns its manifest entry ``{"size": bytes, "digest": hex}``."""
    with open(filename, "wb", buffering=0) as f:
        digest, size = _write_hashed(obj, f, filename, durable=False, upload=None)
    return {"size": size, DIGEST_KEY: digest}


def atomic_torch_save(
    obj: Any,
    filename: str,
    manifest: bool = True,
    files: FileDigests | None = None,
    durable: bool = True,
    upload: Callable[[str], Any] | None = None,
    staged: bool = False,
) -> dict[str, Any]:
    """``torch.save`` to a temporary file, fsync, rename over ``filename``, write its manifest.

    Returns the manifest (size, digest, bytes per top-level key, and the size
    and digest of every file in the companion folders). ``files`` gives those
    companion digests when the caller computed them already (ranks share the
    hashing in distributed strategies); otherwise they are computed here. A
    crash at any point leaves any earlier ``filename`` intact or replaced whole; its
    manifest is removed before any of its files is replaced and the new one written
    after them, so no manifest ever describes a mixture of old and new files.

    ``durable=False`` skips the fsyncs: for a staged copy whose durable copy is the
    upload; ``upload(tmp)`` runs while the file is hashed (before the rename and the
    manifest). ``staged``: the companion folders were written under
    :func:`~.companions.staging_path` and replace the current ones just before the
    file does (:func:`~.companions.swap_in`); ``files`` then describes them.
    """
    directory = os.path.dirname(os.path.abspath(filename))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = temp_file(directory, ".ckpt-")
    try:
        with os.fdopen(fd, "wb", buffering=0) as f:
            digest, size = _write_hashed(obj, f, tmp, durable, upload)
        if staged and files is None:
            files = companion_digests(staging_path(filename))
        if staged:
            swap_in(filename, manifest_path(filename))
        elif manifest and os.path.exists(manifest_path(filename)):
            os.remove(manifest_path(filename))  # no manifest ever describes the old file
        os.replace(tmp, filename)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            raise _disk_full(filename, obj) from e
        raise
    companion = companion_digests(filename) if files is None else dict(files)
    info = manifest_for(filename, obj, size=size, digest=digest, files=companion)
    if manifest:
        write_manifest(info, filename)
    if durable:
        fsync_dir(directory)
    if staged:
        discard_staging(filename)  # the replaced companion folders
    return info


def _progress(meta: Any) -> dict[str, int] | None:
    """The training position a checkpoint's ``meta`` records (epoch, iteration)."""
    if not isinstance(meta, Mapping):
        return None
    try:
        return {"epoch": int(meta["epoch"]), "iter": int(meta["iter"])}
    except (KeyError, TypeError, ValueError):
        return None


def _disk_full(filename: str, obj: Any) -> CheckpointError:
    directory = os.path.dirname(os.path.abspath(filename))
    free = shutil.disk_usage(directory).free
    return CheckpointError(
        f"checkpoint '{filename}': no space left on device: the checkpoint needs about "
        f"{tensor_bytes(obj) / 2**20:.1f} MiB and {free / 2**20:.1f} MiB are free in "
        f"{directory}; free some space or save elsewhere (CheckpointHook out_dir, --work-dir)"
    )


def manifest_for(
    filename: str,
    obj: Any,
    *,
    size: int,
    digest: str,
    algorithm: str = DEFAULT,
    files: FileDigests | None = None,
) -> dict[str, Any]:
    """The manifest of checkpoint ``filename`` holding ``obj`` (written as ``size`` bytes
    with ``digest`` by ``algorithm``; ``files``: its companion files, hashed alike)."""
    info: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "file": os.path.basename(filename),
        "size": size,
        "algorithm": algorithm,
        DIGEST_KEY: digest,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    if isinstance(obj, Mapping):
        info["keys"] = {str(k): tensor_bytes(v) for k, v in obj.items()}
        meta = obj.get("meta")
        progress = _progress(meta)
        if progress is not None:
            info["progress"] = progress
        if isinstance(meta, Mapping) and isinstance(meta.get("metrics"), Mapping):
            info["metrics"] = {str(k): float(v) for k, v in meta["metrics"].items()}
    if files:
        info["files"] = dict(files)
    return info


def write_manifest(info: Mapping[str, Any], filename: str) -> None:
    """Write ``info`` as the manifest of ``filename`` (atomically)."""
    _write_json_atomic(info, manifest_path(filename))


def digest_key(info: Mapping[str, Any]) -> str | None:
    """Under which key manifest ``info`` records each file's digest: ``"digest"`` (it names
    its ``algorithm``), ``"sha256"`` (version 2), or ``None`` (version 1: no digests)."""
    if "algorithm" in info:
        return DIGEST_KEY
    return UNNAMED if UNNAMED in info else None


def algorithm_of(info: Mapping[str, Any]) -> str:
    """The digest algorithm of manifest ``info`` (version 2 names none: SHA-256)."""
    return str(info.get("algorithm", UNNAMED))


def checkpoint_digest(info: Mapping[str, Any] | None) -> str | None:
    """The digest manifest ``info`` records for its checkpoint file (``None``: none)."""
    key = digest_key(info or {})
    return None if info is None or key is None else str(info[key])


def _check_companion(filename: str, info: Mapping[str, Any], share: tuple[int, int]) -> None:
    """Every companion file is listed, present, of its size and (v2 on) its digest; with
    ``share=(i, n)`` only the digests of the files :func:`_hashed_here` picks."""
    directory = os.path.dirname(os.path.abspath(filename))
    expected: Mapping[str, Any] = info.get("files") or info.get("companion") or {}
    unlisted = sorted(set(companion_files(filename)) - set(expected))
    if unlisted:
        raise CheckpointError(
            f"checkpoint '{filename}': its companion folder holds {unlisted[0]}, which the "
            "manifest does not list (a file added after the save is never read)"
        )
    for position, relative in enumerate(sorted(expected), start=1):
        entry = expected[relative]
        path = os.path.join(directory, relative)
        size = entry["size"] if isinstance(entry, Mapping) else entry  # v1: the size alone
        if not os.path.isfile(path):
            raise CheckpointError(f"checkpoint '{filename}': its shard file {relative} is missing")
        if os.path.getsize(path) != size:
            raise CheckpointError(
                f"checkpoint '{filename}': its shard file {relative} has "
                f"{os.path.getsize(path)} bytes, the manifest says {size}"
            )
        key = digest_key(info)
        if isinstance(entry, Mapping) and key is not None and _hashed_here(position, share):
            _check_digest(filename, path, relative, algorithm_of(info), entry.get(key))


def _hashed_here(position: int, share: tuple[int, int]) -> bool:
    """Whether this share hashes the file at ``position`` (0: the checkpoint file, then its
    companion files sorted by path): every ``n``-th file from ``i``."""
    index, count = share
    return position % count == index


def _check_digest(filename: str, path: str, relative: str, algorithm: str, expected: Any) -> None:
    try:
        digest, _ = file_digest(path, algorithm)
    except ValueError as e:  # an algorithm this version does not know
        raise CheckpointError(f"checkpoint '{filename}': its manifest: {e}") from None
    if digest != expected:
        what = "" if path == filename else f"its file {relative} "
        raise CheckpointError(
            f"checkpoint '{filename}' is corrupted: {what}has {algorithm} {digest[:16]}, "
            f"the manifest says {str(expected)[:16]}"
        )


def read_manifest(filename: str) -> dict[str, Any] | None:
    """The manifest of ``filename``, or ``None`` when it has none (older or foreign files)."""
    path = manifest_path(filename)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(
            f"checkpoint '{filename}': its manifest {path} is unreadable: {e}"
        ) from e
    if not isinstance(info, dict) or info.get("format") != MANIFEST_FORMAT:
        raise CheckpointError(f"checkpoint '{filename}': {path} is not a cadence manifest")
    return info


def verify_checkpoint(filename: str, share: tuple[int, int] = (0, 1)) -> dict[str, Any] | None:
    """Check every file of ``filename`` against its manifest; return the manifest.

    The size and digest (the manifest's algorithm) of the file and of each companion
    file are compared (version-1 manifests: the zip records' CRC-32 and the companions'
    sizes).
    Raises :class:`CheckpointError` naming the file and what differs. A file
    without a manifest passes unchecked (``None``).

    ``share=(i, n)``: one of ``n`` processes that split the hashing (version-2
    manifests): this one hashes every ``n``-th file from ``i`` (the checkpoint file
    first, then the companion files by path); presence, sizes and unlisted files are
    checked by all. Together the ``n`` shares hash every file once.
    """
    index, count = share
    if not 0 <= index < count:
        raise ValueError(f"verify_checkpoint: share must be (index, count) with "
                         f"0 <= index < count, got {share}")  # fmt: skip
    if not os.path.isfile(filename):
        raise FileNotFoundError(f"checkpoint '{filename}' does not exist")
    info = read_manifest(filename)
    if info is None:
        return None
    size = os.path.getsize(filename)
    if size != info.get("size"):
        what = "truncated" if size < int(info.get("size", 0)) else "longer than written"
        raise CheckpointError(
            f"checkpoint '{filename}' is {what}: {size} bytes on disk, the manifest says "
            f"{info.get('size')}"
        )
    key = digest_key(info)
    if key is None:
        share = (0, 1)  # version 1: no digests to split
    _check_companion(filename, info, share)
    if key is not None:
        if _hashed_here(0, share):
            _check_digest(filename, filename, info["file"], algorithm_of(info), info[key])
    elif "records_crc32" in info:
        _check_records(filename, info)
    else:
        crc, _ = file_crc32(filename)
        if f"{crc:08x}" != info.get("crc32"):
            raise CheckpointError(
                f"checkpoint '{filename}' is corrupted: CRC-32 {crc:08x} of its bytes differs "
                f"from {info.get('crc32')} in its manifest"
            )
    return info


def _check_records(filename: str, info: Mapping[str, Any]) -> None:
    """The archive's directory matches the manifest and every record matches its CRC-32."""
    try:
        with zipfile.ZipFile(filename) as archive:
            digest = _records_digest(archive)
            if digest != info["records_crc32"]:
                raise CheckpointError(
                    f"checkpoint '{filename}' is corrupted: its record directory (digest "
                    f"{digest}) differs from the manifest's {info['records_crc32']}"
                )
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise CheckpointError(f"checkpoint '{filename}' is corrupted: {e}") from e
    if bad is not None:
        raise CheckpointError(
            f"checkpoint '{filename}' is corrupted: the CRC-32 of its record '{bad}' differs "
            "from the one written"
        )


BeforeLoad = Callable[[dict[str, Any]], None]


def safe_torch_load(
    filename: Any,
    map_location: Any = "cpu",
    safe_globals: Sequence[Any] = (),
    source: str | None = None,
) -> Any:
    """``torch.load(weights_only=True)``, allowing also what mmengine's checkpoints name
    (:func:`~.unpickling.mmengine_globals`) and ``safe_globals`` (classes whose
    unpickling runs no code beyond setting their fields); refusals and damage
    become :class:`CheckpointError` naming ``source`` (default: ``filename``)."""
    import pickle

    name = source or str(filename)
    try:
        with allowed_globals([*mmengine_globals(), *safe_globals]):
            return torch.load(filename, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        raise CheckpointError(refusal(f"checkpoint '{name}'", e)) from None
    except (RuntimeError, EOFError, OSError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(
            f"checkpoint '{name}' cannot be read (truncated, corrupted or not a torch "
            f"checkpoint): {first}"
        ) from e


def read_checkpoint(
    filename: str,
    map_location: str | torch.device = "cpu",
    before_load: BeforeLoad | None = None,
    verify: bool = True,
) -> dict[str, Any]:
    """Load a checkpoint without executing code from it (``weights_only=True``).

    The file is first checked against its manifest (``verify``). ``before_load``
    may inspect or edit the checkpoint before anything is restored (the runner
    calls its ``after_load_checkpoint`` hooks here, as mmengine does).
    """
    if not os.path.isfile(filename):
        raise FileNotFoundError(f"checkpoint '{filename}' does not exist")
    if verify and verify_checkpoint(filename) is None:
        warn_unverified(filename, stacklevel=3)
    checkpoint = safe_torch_load(filename, map_location)
    if not isinstance(checkpoint, dict):
        raise CheckpointError(
            f"checkpoint '{filename}' holds a {type(checkpoint).__name__}, not a dict"
        )
    if before_load is not None:
        before_load(checkpoint)
    return checkpoint


def warn_unverified(filename: str, stacklevel: int = 2) -> None:
    """Warn that ``filename`` has no manifest and is read unverified."""
    import warnings

    warnings.warn(
        f"checkpoint '{filename}' has no manifest: it could not be verified (it is read "
        "weights-only, so nothing in it runs, but damage would go unnoticed)",
        stacklevel=stacklevel,
    )

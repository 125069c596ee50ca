"""Digests of checkpoint files: of a file on disk, or of a file while it is written.

A manifest names the algorithm of its digests once (``"algorithm"``); :data:`ALGORITHMS`
maps each name to its implementation and :data:`DEFAULT` is what a save uses: CRC-32
(zlib), which with the size the manifest also records detects corruption and truncation
at several GB/s. A digest beside the file it describes never protected against a
deliberate rewrite (whoever can rewrite the file can rewrite the manifest): that safety
comes from reading weights-only. SHA-256 is kept where a strong hash is the point
(published files named by it) and for manifests of version 2, which name no algorithm.

:class:`HashingWriter` is the file object an engine's files (DCP shards) are written
into (a ``torch.save`` checkpoint takes its CRC-32 from torch's own: :mod:`.save_writer`):
the bytes go straight to the file, and a second thread reads them back from the
page cache a little behind the writer and hashes them (zlib, hashlib and file reads
release the GIL), so the digest costs no pass of its own after the write: it
overlaps the writer's own work and the fsync that follows. Reading back what
landed in the file (rather than hashing the buffers handed to ``write``) keeps
no reference to torch's buffers, which may be freed when ``write`` returns.
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from collections.abc import Callable
from typing import Any, Protocol


class Hasher(Protocol):
    """A running digest: ``update`` with bytes, ``hexdigest`` of all of them."""

    def update(self, data: Any, /) -> None: ...

    def hexdigest(self) -> str: ...


class Crc32:
    """CRC-32 (zlib's, which releases the GIL on large buffers) as a :class:`Hasher`."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Any, /) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


#: Digest algorithms by the name a manifest records.
ALGORITHMS: dict[str, Callable[[], Hasher]] = {"crc32": Crc32, "sha256": hashlib.sha256}
#: The algorithm new checkpoints' manifests use.
DEFAULT = "crc32"
#: The algorithm of manifests that name none (version 2: every digest was SHA-256).
UNNAMED = "sha256"
READ_CHUNK = 16 << 20
#: Bytes written before the hashing thread is woken (fewer wake-ups for small writes).
_WAKE_EVERY = 4 << 20


def hasher(algorithm: str) -> Hasher:
    """A new running digest of ``algorithm`` (a name in :data:`ALGORITHMS`)."""
    try:
        return ALGORITHMS[algorithm]()
    except KeyError:
        raise ValueError(
            f"unknown digest algorithm {algorithm!r} (known: {', '.join(sorted(ALGORITHMS))})"
        ) from None


def file_digest(filename: str, algorithm: str = DEFAULT) -> tuple[str, int]:
    """The digest (hex) of a file's bytes with ``algorithm``, and its size."""
    digest = hasher(algorithm)
    size = 0
    buffer = bytearray(READ_CHUNK)
    view = memoryview(buffer)
    with open(filename, "rb", buffering=0) as f:
        while count := f.readinto(buffer):
            digest.update(view[:count])
            size += count
    return digest.hexdigest(), size


def file_crc32(filename: str) -> tuple[int, int]:
    """CRC-32 and size of a file's bytes."""
    crc, size = file_digest(filename, "crc32")
    return int(crc, 16), size


class HashingWriter:
    """A write-only binary file over the unbuffered file ``raw`` (open on ``path``) whose
    digest (``algorithm``) is computed on a second thread as the bytes land (see the
    module docstring).

    :meth:`hexdigest` waits for the hash of everything written; :meth:`abort` stops the
    thread without a digest (a failed write). One writer, one thread, one file.
    """

    def __init__(self, raw: Any, path: str, algorithm: str = DEFAULT) -> None:
        self.raw = raw
        self.size = 0
        self._hashed = 0
        self._pending = 0
        self._closed = False
        self._error: BaseException | None = None
        self.algorithm = algorithm
        self._digest = hasher(algorithm)
        self._ready = threading.Condition()
        self._reader = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by the thread
        self._thread = threading.Thread(target=self._hash, name="cadence-hash", daemon=True)
        self._thread.start()

    def write(self, data: Any) -> int:
        """Write all of ``data`` to the file; return its length."""
        view = memoryview(data).cast("B")
        done, total = 0, view.nbytes
        while done < total:
            done += self.raw.write(view[done:])
        self._pending += total
        if self._pending >= _WAKE_EVERY:
            self._publish()
        return total

    def flush(self) -> None:
        """Nothing is buffered here (the file is unbuffered)."""

    def tell(self) -> int:
        """Bytes written so far (the position: writes only append)."""
        return self.size + self._pending

    def fileno(self) -> int:
        """The file's descriptor (for fsync)."""
        return int(self.raw.fileno())

    def writable(self) -> bool:
        return True

    def close(self) -> None:
        """The owner of ``raw`` closes it (after :meth:`hexdigest`)."""

    def _publish(self, closing: bool = False) -> None:
        with self._ready:
            self.size += self._pending
            self._pending = 0
            self._closed = self._closed or closing
            self._ready.notify()

    def _hash(self) -> None:
        buffer = bytearray(READ_CHUNK)
        view = memoryview(buffer)
        try:
            while True:
                with self._ready:
                    while self._hashed >= self.size and not self._closed:
                        self._ready.wait()
                    target, closed = self.size, self._closed
                while self._hashed < target:
                    count = self._reader.readinto(view[: min(READ_CHUNK, target - self._hashed)])
                    if not count:
                        raise OSError(f"{self._reader.name}: shorter than the bytes written")
                    self._digest.update(view[:count])
                    self._hashed += count
                if closed and self._hashed >= target:
                    return
        except BaseException as e:  # noqa: BLE001 - raised by hexdigest in the writer's thread
            self._error = e
        finally:
            self._reader.close()

    def hexdigest(self) -> str:
        """The digest (hex) of every byte written (waits for the hashing thread)."""
        self._publish(closing=True)
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._digest.hexdigest()

    def abort(self) -> None:
        """Stop the hashing thread (the write failed; no digest is wanted)."""
        with self._ready:
            self.size = self._hashed  # nothing more to hash
            self._closed = True
            self._ready.notify()
        self._thread.join()

"""Digests of checkpoint files: of a file on disk, or of a file while it is written.

:class:`HashingWriter` is the file object ``torch.save`` writes a checkpoint into:
the bytes go straight to the file, and a second thread reads them back from the
page cache a little behind the writer and hashes them (hashlib and file reads
release the GIL), so the SHA-256 costs no pass of its own after the write: it
overlaps ``torch.save``'s own work and the fsync that follows. Reading back what
landed in the file (rather than hashing the buffers handed to ``write``) keeps
no reference to torch's buffers, which may be freed when ``write`` returns.
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from typing import Any

#: The digest every manifest (version 2) records per file, under this key.
DIGEST = "sha256"
READ_CHUNK = 16 << 20
#: Bytes written before the hashing thread is woken (fewer wake-ups for small writes).
_WAKE_EVERY = 4 << 20


def file_sha256(filename: str) -> tuple[str, int]:
    """SHA-256 (hex) and size of a file's bytes."""
    digest = hashlib.sha256()
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
    crc = size = 0
    with open(filename, "rb") as f:
        while chunk := f.read(READ_CHUNK):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
    return crc, size


class HashingWriter:
    """A write-only binary file over the unbuffered file ``raw`` (open on ``path``) whose
    SHA-256 is computed on a second thread as the bytes land (see the module docstring).

    :meth:`hexdigest` waits for the hash of everything written; :meth:`abort` stops the
    thread without a digest (a failed write). One writer, one thread, one file.
    """

    def __init__(self, raw: Any, path: str) -> None:
        self.raw = raw
        self.size = 0
        self._hashed = 0
        self._pending = 0
        self._closed = False
        self._error: BaseException | None = None
        self._digest = hashlib.sha256()
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
        """The SHA-256 of every byte written (waits for the hashing thread)."""
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

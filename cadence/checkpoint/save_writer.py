"""The file object ``torch.save`` writes a checkpoint into: its CRC-32, taken while it
is written mostly from the CRC-32s ``torch.save`` computes anyway, and early writeback.

A ``torch.save`` file is a zip archive: per record a local header, the record's bytes
(one ``write`` each) and a data descriptor (``PK\\x07\\x08``, the CRC-32 of those
bytes, their sizes) written right after them; then the central directory. Hashing the
tensors' bytes a second time costs as much CPU as writing them (~2 GB/s), so
:class:`RecordCrcWriter` hashes only the small writes (headers, descriptors, the
pickle, the directory) and combines, in file order, the CRC-32 that the descriptor
following a large write records for it (:func:`crc32_combine`, zlib's algorithm). The
result is the CRC-32 of every byte of the file, exactly as :func:`~.digest.file_digest`
computes it. A large write that is not followed by its descriptor (another format, a
record that torch split) is read back from the file and hashed; where ``torch.save``
skips its CRC-32s (``torch.serialization.set_crc32_options(False)``) every write is hashed.

With ``writeback`` (a save that fsyncs the file next) every few MB written are handed to
the disk at once (Linux ``sync_file_range(SYNC_FILE_RANGE_WRITE)``, which starts the
writeback without waiting for it to finish), so the disk writes while ``torch.save`` serialises and
the fsync that follows finds little left to write. It is a hint: the fsync is what makes
the file durable, and where the call is missing or refused it is skipped.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import zlib
from collections.abc import Callable
from typing import Any

#: CRC-32's polynomial, bit-reflected (as zlib computes it).
_POLY = 0xEDB88320
#: Writes at least this long take their CRC-32 from the descriptor that follows them.
LARGE_WRITE = 256 << 10
_READ_CHUNK = 16 << 20
_DESCRIPTOR = b"PK\x07\x08"
#: Bytes written before they are handed to the disk (``writeback``).
WRITEBACK_EVERY = 4 << 20
_SYNC_FILE_RANGE_WRITE = 2


def _multmodp(a: int, b: int) -> int:
    """``a(x) * b(x)`` modulo CRC-32's polynomial (bit-reflected, as zlib's multmodp)."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if (a & (m - 1)) == 0:
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _powers() -> list[int]:
    table = [1 << 30]  # x^1
    for _ in range(31):
        table.append(_multmodp(table[-1], table[-1]))
    return table


_X2N = _powers()  # x^(2^n) modulo the polynomial


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of ``A + B`` from ``crc1`` (of ``A``), ``crc2`` (of ``B``) and ``B``'s
    length in bytes (zlib's ``crc32_combine``, which Python's zlib does not expose)."""
    p, k, n = 1 << 31, 3, length2  # x^(8 * length2): bits, not bytes (k = 3)
    while n:
        if n & 1:
            p = _multmodp(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return _multmodp(p, crc1) ^ crc2


def _descriptor_crc(data: memoryview, length: int) -> int | None:
    """The CRC-32 that ``data``, if it is the zip data descriptor of a stored record of
    ``length`` bytes (32-bit sizes, or zip64's 64-bit ones), records."""
    if data.nbytes not in (16, 24) or data[:4] != _DESCRIPTOR:
        return None
    width = (data.nbytes - 8) // 2
    compressed = int.from_bytes(data[8 : 8 + width], "little")
    size = int.from_bytes(data[8 + width :], "little")
    if compressed != length or size != length:
        return None
    return int.from_bytes(data[4:8], "little")


def torch_computes_crc32() -> bool:
    """Whether ``torch.save`` writes each record's CRC-32 (its default)."""
    import torch.serialization

    options = getattr(torch.serialization, "get_crc32_options", None)
    return True if options is None else bool(options())


@functools.cache
def _sync_file_range() -> Callable[[int, int, int, int], int] | None:
    """libc's ``sync_file_range`` (Linux), or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def start_writeback(fd: int, offset: int, length: int) -> bool:
    """Start writing ``length`` bytes of ``fd`` from ``offset`` to the disk without waiting
    for it to finish (no durability: a hint before an fsync); whether the system took it."""
    function = _sync_file_range()
    return function is not None and function(fd, offset, length, _SYNC_FILE_RANGE_WRITE) == 0


class RecordCrcWriter:
    """A write-only binary file over the unbuffered file ``raw`` (open on ``path``) for
    ``torch.save``, whose CRC-32 (:meth:`hexdigest`) is taken as described in the module
    docstring; ``writeback``: hand what is written to the disk as it comes (the caller
    fsyncs next). No thread, and no reference to the buffers handed to :meth:`write`."""

    algorithm = "crc32"

    def __init__(self, raw: Any, path: str, writeback: bool = False) -> None:
        self.raw = raw
        self.path = path
        self.size = 0
        self._written_back = 0 if writeback else -1  # -1: no writeback
        self._crc = 0
        self._deferred: tuple[int, int] | None = None  # (offset, length) not hashed yet
        self._defer = torch_computes_crc32()
        #: large writes read back because no descriptor followed them
        self.read_back = 0

    def write(self, data: Any) -> int:
        """Write all of ``data`` to the file; return its length."""
        view = memoryview(data).cast("B")
        total = view.nbytes
        if self._deferred is not None:
            self._settle(view)
        done = 0
        while done < total:
            done += self.raw.write(view[done:])
        if total >= LARGE_WRITE and self._defer:
            self._deferred = (self.size, total)
        else:
            self._crc = zlib.crc32(view, self._crc)
        self.size += total
        if self._written_back >= 0 and self.size - self._written_back >= WRITEBACK_EVERY:
            start = self._written_back
            self._written_back = self.size
            if not start_writeback(self.raw.fileno(), start, self.size - start):
                self._written_back = -1  # not supported here: stop asking
        return total

    def _settle(self, following: memoryview) -> None:
        """Combine the deferred large write's CRC-32 from ``following`` (its descriptor),
        or from its bytes read back."""
        assert self._deferred is not None
        offset, length = self._deferred
        self._deferred = None
        crc = _descriptor_crc(following, length)
        if crc is None:
            crc = self._hash_back(offset, length)
        self._crc = crc32_combine(self._crc, crc, length)

    def _hash_back(self, offset: int, length: int) -> int:
        self.read_back += 1
        crc = 0
        with open(self.path, "rb", buffering=0) as f:
            f.seek(offset)
            while length:
                chunk = f.read(min(length, _READ_CHUNK))
                if not chunk:
                    raise OSError(f"{self.path}: shorter than the bytes written")
                crc = zlib.crc32(chunk, crc)
                length -= len(chunk)
        return crc

    def flush(self) -> None:
        """Nothing is buffered here (the file is unbuffered)."""

    def tell(self) -> int:
        """Bytes written so far (the position: writes only append)."""
        return self.size

    def fileno(self) -> int:
        """The file's descriptor (for fsync)."""
        return int(self.raw.fileno())

    def writable(self) -> bool:
        return True

    def close(self) -> None:
        """The owner of ``raw`` closes it."""

    def hexdigest(self) -> str:
        """The CRC-32 (hex) of every byte written."""
        if self._deferred is not None:
            self._settle(memoryview(b""))
        return f"{self._crc:08x}"

    def abort(self) -> None:
        """The write failed: nothing to stop (no thread)."""
        self._deferred = None

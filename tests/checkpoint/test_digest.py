"""The digest of a checkpoint is computed while it is written, and equals the digest of
the bytes that landed in the file, with each algorithm; a ``torch.save`` file's CRC-32
takes its records' CRC-32s from torch."""

from __future__ import annotations

import hashlib
import io
import os
import sys
import zlib

import pytest
import torch

from cadence.checkpoint.digest import HashingWriter
from cadence.checkpoint.files import atomic_torch_save, hashed_torch_save
from cadence.checkpoint.save_writer import RecordCrcWriter, crc32_combine, start_writeback


def _sha256(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _crc32(path) -> str:
    with open(path, "rb") as f:
        return f"{zlib.crc32(f.read()):08x}"


def test_the_digest_written_is_the_digest_of_the_file(tmp_path):
    state = {f"w{i}": torch.randn(300_000 + i) for i in range(8)}  # ~10 MB, many writes
    state["meta"] = {"epoch": 1, "iter": 3}
    path = tmp_path / "epoch_1.pth"
    info = atomic_torch_save(state, str(path))
    assert info["algorithm"] == "crc32" and info["digest"] == _crc32(path)
    assert info["size"] == path.stat().st_size
    companion = tmp_path / "part.pt"
    assert hashed_torch_save(state, str(companion)) == {
        "size": companion.stat().st_size, "digest": _crc32(companion)}  # fmt: skip


@pytest.mark.parametrize(("algorithm", "expected"), [("crc32", _crc32), ("sha256", _sha256)])
def test_a_writer_counts_its_position_and_hashes_small_and_large_writes(
    tmp_path, algorithm, expected
):
    path = tmp_path / "f.bin"
    chunks = [b"a" * 10, bytes(range(256)) * 40_000, b"", memoryview(b"tail")]
    with open(path, "wb", buffering=0) as raw:
        writer = HashingWriter(raw, str(path), algorithm)
        for chunk in chunks:
            writer.write(chunk)
        assert writer.tell() == sum(len(c) for c in chunks)
        digest = writer.hexdigest()
    assert digest == expected(path)


@pytest.mark.parametrize(("first", "second"), [(0, 0), (1, 0), (0, 7), (1000, 1), (3, 70_001)])
def test_crc32_combine_is_the_crc32_of_the_concatenation(first, second):
    a, b = bytes(range(7, 250)) * (first // 243 + 1), bytes(range(3, 251)) * (second // 248 + 1)
    a, b = a[:first], b[:second]
    assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


def _torch_save_through(writer_path, state, **options) -> RecordCrcWriter:
    with open(writer_path, "wb", buffering=0) as raw:
        writer = RecordCrcWriter(raw, str(writer_path), **options)
        torch.save(state, writer)
        writer.hexdigest()
    return writer


@pytest.mark.parametrize("writeback", [False, True])
def test_a_torch_save_digest_takes_the_records_crc32_from_torch(tmp_path, writeback):
    state = {"big": torch.randn(400_000), "small": torch.arange(10), "more": [torch.ones(90_000)]}
    path = tmp_path / "s.pth"
    writer = _torch_save_through(path, state, writeback=writeback)
    assert writer.hexdigest() == _crc32(path) and writer.size == path.stat().st_size
    assert writer.read_back == 0  # both large records came with their descriptors
    plain = io.BytesIO()  # a file object: the same archive name as the writer's
    torch.save(state, plain)
    assert plain.getvalue() == path.read_bytes()


def test_a_torch_save_without_record_crc32s_is_hashed_whole(tmp_path):
    state = {"big": torch.randn(400_000)}
    path = tmp_path / "s.pth"
    torch.serialization.set_crc32_options(False)
    try:
        writer = _torch_save_through(path, state)
    finally:
        torch.serialization.set_crc32_options(True)
    assert writer.hexdigest() == _crc32(path) and writer.read_back == 0


def test_a_large_write_without_its_descriptor_is_read_back_and_hashed(tmp_path):
    path = tmp_path / "f.bin"
    large = bytes(range(256)) * 4096  # 1 MiB
    wrong = b"PK\x07\x08" + (123).to_bytes(4, "little") + (5).to_bytes(4, "little") * 2
    with open(path, "wb", buffering=0) as raw:
        writer = RecordCrcWriter(raw, str(path), writeback=True)
        for chunk in [b"head", large, wrong, large, b"x" * 16, large]:
            writer.write(chunk)
        assert writer.tell() == 4 + 3 * len(large) + 32
        digest = writer.hexdigest()
    assert digest == _crc32(path) and writer.read_back == 3


def test_writeback_is_started_on_a_linux_file_and_declined_elsewhere(tmp_path):
    """``sync_file_range`` exists on Linux only: there a file takes the hint; on other
    systems (and on a pipe everywhere) the hint is declined and nothing fails."""
    path = tmp_path / "f.bin"
    with open(path, "wb", buffering=0) as raw:
        raw.write(b"x" * 8192)
        assert start_writeback(raw.fileno(), 0, 8192) is sys.platform.startswith("linux")
    read, write = os.pipe()
    try:
        assert start_writeback(write, 0, 1) is False
    finally:
        os.close(read)
        os.close(write)

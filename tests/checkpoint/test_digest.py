"""The digest of a checkpoint is computed while it is written, and equals the digest of
the bytes that landed in the file, with each algorithm."""

from __future__ import annotations

import hashlib
import zlib

import pytest
import torch

from cadence.checkpoint.digest import HashingWriter
from cadence.checkpoint.files import atomic_torch_save, hashed_torch_save


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

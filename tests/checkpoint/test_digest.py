"""The SHA-256 of a checkpoint is computed while it is written, and equals the digest of
the bytes that landed in the file."""

from __future__ import annotations

import hashlib

import torch

from cadence.checkpoint.digest import HashingWriter
from cadence.checkpoint.files import atomic_torch_save, hashed_torch_save


def _sha256(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_the_digest_written_is_the_digest_of_the_file(tmp_path):
    state = {f"w{i}": torch.randn(300_000 + i) for i in range(8)}  # ~10 MB, many writes
    state["meta"] = {"epoch": 1, "iter": 3}
    path = tmp_path / "epoch_1.pth"
    info = atomic_torch_save(state, str(path))
    assert info["sha256"] == _sha256(path)
    assert info["size"] == path.stat().st_size
    companion = tmp_path / "part.pt"
    assert hashed_torch_save(state, str(companion)) == {
        "size": companion.stat().st_size, "sha256": _sha256(companion)}  # fmt: skip


def test_a_writer_counts_its_position_and_hashes_small_and_large_writes(tmp_path):
    path = tmp_path / "f.bin"
    chunks = [b"a" * 10, bytes(range(256)) * 40_000, b"", memoryview(b"tail")]
    with open(path, "wb", buffering=0) as raw:
        writer = HashingWriter(raw, str(path))
        for chunk in chunks:
            writer.write(chunk)
        assert writer.tell() == sum(len(c) for c in chunks)
        digest = writer.hexdigest()
    assert digest == _sha256(path)

"""Verification split between ranks: ``verify_checkpoint(share=(i, n))`` hashes every
``n``-th file, the shares together hash each file once; ranks agree on the outcome."""

from __future__ import annotations

import os

import pytest
import torch
from damage import flip_a_byte

from cadence.checkpoint import CheckpointError
from cadence.checkpoint.files import atomic_torch_save, verify_checkpoint

#: The companion files of the checkpoint below, in the order the shares count them.
COMPANIONS = ["ck.pth.dcp/.metadata", "ck.pth.dcp/__0_0.distcp", "ck.pth.dcp/__1_0.distcp",
              "ck.pth.dcp/sub/extra.bin"]  # fmt: skip


def sharded_checkpoint(root: str) -> str:
    """A checkpoint file with a companion folder of four files and a manifest."""
    for i, relative in enumerate(COMPANIONS):
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(bytes([i]) * (1000 + i))
    filename = os.path.join(root, "ck.pth")
    atomic_torch_save({"meta": {"epoch": 1}, "state_dict": {"w": torch.ones(3)}}, filename)
    return filename


@pytest.mark.parametrize("count", [2, 3])
def test_the_shares_hash_every_file_once(tmp_path, count):
    files = ["ck.pth", *COMPANIONS]  # position 0 is the checkpoint file
    for position, relative in enumerate(files):
        root = tmp_path / f"{count}_{position}"
        root.mkdir()
        filename = sharded_checkpoint(str(root))
        flip_a_byte(os.path.join(root, relative))  # same size: only the hash sees it
        caught = []
        for index in range(count):
            try:
                verify_checkpoint(filename, (index, count))
            except CheckpointError as exc:
                assert "corrupted" in str(exc) and "crc32" in str(exc)
                caught.append(index)
        assert caught == [position % count], (relative, caught)
        with pytest.raises(CheckpointError):
            verify_checkpoint(filename)  # unsplit: every file


def test_every_share_checks_presence_sizes_and_unlisted_files(tmp_path):
    filename = sharded_checkpoint(str(tmp_path))
    with open(tmp_path / COMPANIONS[1], "ab") as f:
        f.write(b"x")
    for index in (0, 1):
        with pytest.raises(CheckpointError, match="has 1002 bytes, the manifest says 1001"):
            verify_checkpoint(filename, (index, 2))
    os.remove(tmp_path / COMPANIONS[1])
    for index in (0, 1):
        with pytest.raises(CheckpointError, match="__0_0.distcp is missing"):
            verify_checkpoint(filename, (index, 2))


def test_a_share_must_be_one_of_count():
    with pytest.raises(ValueError, match="0 <= index < count"):
        verify_checkpoint(__file__, (2, 2))


def _verify_on_every_rank(filename: str) -> str | None:
    from cadence.strategies import DDPStrategy

    try:
        DDPStrategy().verify_checkpoint(filename)
    except CheckpointError as exc:
        return str(exc)
    return None


@pytest.mark.dist
def test_ranks_agree_when_only_one_of_them_hashed_the_damaged_file(tmp_path):
    from cadence.dist.testing import run_distributed

    filename = sharded_checkpoint(str(tmp_path))
    assert run_distributed(_verify_on_every_rank, filename) == [None, None]
    for relative in (COMPANIONS[0], COMPANIONS[1]):  # positions 1 and 2: rank 1, then rank 0
        pristine = open(tmp_path / relative, "rb").read()
        flip_a_byte(str(tmp_path / relative))
        messages = run_distributed(_verify_on_every_rank, filename)
        assert messages[0] == messages[1] and relative in str(messages[0]), messages
        with open(tmp_path / relative, "wb") as f:
            f.write(pristine)

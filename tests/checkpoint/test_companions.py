"""Companion folders are written aside and swapped in with the checkpoint file: saving a
name again never leaves its manifest describing files that were partly replaced."""

from __future__ import annotations

import os
import sys

import pytest
import torch

from cadence.checkpoint.companions import companion_files, staging_folder, staging_path
from cadence.checkpoint.files import atomic_torch_save, verify_checkpoint
from cadence.checkpoint.removal import remove_checkpoint
from cadence.dist.testing import run_distributed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "strategies"))
import dist_cases  # noqa: E402


def _write(folder: str, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def test_a_staged_save_replaces_the_whole_companion_folder(tmp_path):
    path = str(tmp_path / "epoch_2.pth")
    _write(str(tmp_path), {"epoch_2.pth.dcp/__0_0.distcp": b"old0", "epoch_2.pth.dcp/__1_0.distcp":
                           b"old1", "epoch_2.pth.dcp/.metadata": b"m"})  # fmt: skip
    atomic_torch_save({"meta": {"epoch": 2, "iter": 8}}, path)
    assert len(verify_checkpoint(path)["files"]) == 3

    # a save by one rank fewer: one shard file less
    _write(staging_folder(path), {"epoch_2.pth.dcp/__0_0.distcp": b"new0",
                                  "epoch_2.pth.dcp/.metadata": b"n"})  # fmt: skip
    atomic_torch_save({"meta": {"epoch": 2, "iter": 8}}, path, staged=True)
    assert companion_files(path) == ["epoch_2.pth.dcp/.metadata", "epoch_2.pth.dcp/__0_0.distcp"]
    assert sorted(verify_checkpoint(path)["files"]) == companion_files(path)
    with open(os.path.join(str(tmp_path), "epoch_2.pth.dcp/__0_0.distcp"), "rb") as f:
        assert f.read() == b"new0"
    assert not os.path.exists(staging_folder(path))


def test_removing_a_checkpoint_removes_what_an_interrupted_save_of_it_left(tmp_path):
    path = str(tmp_path / "iter_4.pth")
    atomic_torch_save({"w": torch.ones(2)}, path)
    _write(staging_folder(path), {"iter_4.pth.ds/state/x.pt": b"half"})
    assert staging_path(path).startswith(staging_folder(path))
    remove_checkpoint(path)
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.dist
@pytest.mark.parametrize("strategy", [
    pytest.param(dict(type="FSDPStrategy", wrap_policy=["Linear"]), id="FSDP"),
    pytest.param(dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2)),
                 marks=pytest.mark.slow, id="DeepSpeed"),
])  # fmt: skip
def test_a_failed_resave_leaves_the_old_checkpoint_whole_and_a_clean_one_replaces_it(
    tmp_path, strategy
):
    report = run_distributed(dist_cases.resave_interrupted, str(tmp_path), strategy,
                             timeout=300)[0]  # fmt: skip
    assert report["failed"]
    assert report["old_verifies"] is True, report["old_verifies"]
    assert report["old_resumes"]
    assert report["new_verifies"] is True, report["new_verifies"]
    assert report["new_resumes"]
    assert report["left"] == []  # no staging folder stays behind

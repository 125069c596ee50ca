"""The manifest names its digest algorithm: new checkpoints use CRC-32 (with the size),
manifests of version 2 (SHA-256, no algorithm named) still verify, and companion files
(DCP shards and metadata) are hashed with the algorithm their manifest names."""

from __future__ import annotations

import hashlib
import json
import os
import zlib

import pytest
import torch
from damage import flip_a_byte

from cadence.checkpoint.dcp import HashingFileSystemWriter
from cadence.checkpoint.files import (
    CheckpointError,
    atomic_torch_save,
    manifest_path,
    read_checkpoint,
    verify_checkpoint,
)


def state():
    g = torch.Generator().manual_seed(1)
    return {"state_dict": {"w": torch.randn(200, 200, generator=g)}, "meta": {"epoch": 2}}


def crc32_of(path):
    with open(path, "rb") as f:
        return f"{zlib.crc32(f.read()):08x}"


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def rewrite_as_version_2(path):
    """Replace the manifest of ``path`` by one in the format of version 2, as cadence wrote
    it before manifests named their algorithm: ``sha256`` of the file and of each companion
    file, no ``algorithm``."""
    with open(manifest_path(path)) as f:
        new = json.load(f)
    folder = os.path.dirname(path)
    old = {"format": "cadence-checkpoint", "version": 2, "file": os.path.basename(path),
           "size": os.path.getsize(path), "sha256": sha256_of(path),
           "created": "2026-11-26T16:00:00", "keys": new["keys"]}  # fmt: skip
    if "files" in new:
        old["files"] = {rel: {"size": os.path.getsize(os.path.join(folder, rel)),
                              "sha256": sha256_of(os.path.join(folder, rel))}
                        for rel in new["files"]}  # fmt: skip
    with open(manifest_path(path), "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)


def test_a_new_manifest_names_crc32_and_records_the_files_crc32(tmp_path):
    path = str(tmp_path / "epoch_2.pth")
    info = atomic_torch_save(state(), path)
    with open(manifest_path(path)) as f:
        manifest = json.load(f)
    assert manifest == info
    assert manifest["version"] == 3
    assert manifest["algorithm"] == "crc32"
    assert manifest["digest"] == crc32_of(path)
    assert manifest["size"] == os.path.getsize(path)
    assert "sha256" not in manifest
    assert verify_checkpoint(path) == manifest
    assert torch.equal(read_checkpoint(path)["state_dict"]["w"], state()["state_dict"]["w"])


def test_a_version_2_manifest_still_verifies(tmp_path):
    path = str(tmp_path / "epoch_2.pth")
    atomic_torch_save(state(), path)
    rewrite_as_version_2(path)
    assert verify_checkpoint(path)["sha256"] == sha256_of(path)
    assert torch.equal(read_checkpoint(path)["state_dict"]["w"], state()["state_dict"]["w"])


@pytest.mark.parametrize("version", [3, 2])
@pytest.mark.parametrize("where", [0.3, 0.999])
def test_a_flipped_byte_is_refused_with_either_algorithm(tmp_path, version, where):
    path = str(tmp_path / "iter_5.pth")
    atomic_torch_save(state(), path)
    if version == 2:
        rewrite_as_version_2(path)
    flip_a_byte(path, where)
    algorithm = "sha256" if version == 2 else "crc32"
    with pytest.raises(CheckpointError, match=f"iter_5.pth' is corrupted: has {algorithm} "):
        read_checkpoint(path)


@pytest.mark.parametrize("version", [3, 2])
def test_a_truncated_file_is_refused_with_either_algorithm(tmp_path, version):
    path = str(tmp_path / "iter_5.pth")
    atomic_torch_save(state(), path)
    if version == 2:
        rewrite_as_version_2(path)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 1)
    with pytest.raises(CheckpointError, match=r"iter_5.pth' is truncated: \d+ bytes on disk"):
        read_checkpoint(path)


def test_an_unknown_algorithm_is_refused(tmp_path):
    path = str(tmp_path / "iter_5.pth")
    atomic_torch_save(state(), path)
    with open(manifest_path(path)) as f:
        manifest = json.load(f)
    manifest["algorithm"] = "md4"
    with open(manifest_path(path), "w") as f:
        json.dump(manifest, f)
    with pytest.raises(CheckpointError, match="unknown digest algorithm 'md4'"):
        verify_checkpoint(path)


def save_with_dcp_shards(tmp_path):
    """A checkpoint whose companion folder DCP wrote (one process), hashed while written."""
    import torch.distributed.checkpoint as dcp

    path = str(tmp_path / "iter_8.pth")
    writer = HashingFileSystemWriter(path + ".dcp")
    dcp.save({"model": {"w": torch.arange(5000.0), "b": torch.ones(3)}},
             storage_writer=writer, no_dist=True)  # fmt: skip
    files = {os.path.relpath(p, tmp_path): d for p, d in writer.digests.items()}
    return path, files


@pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
def test_dcp_files_are_hashed_with_the_manifests_algorithm_while_written(tmp_path):
    path, files = save_with_dcp_shards(tmp_path)
    atomic_torch_save({"meta": {"iter": 8}, "sharded": ".dcp"}, path, files=files)
    with open(manifest_path(path)) as f:
        manifest = json.load(f)
    assert manifest["algorithm"] == "crc32"
    on_disk = sorted(os.path.relpath(os.path.join(root, n), tmp_path)
                     for root, _, names in os.walk(path + ".dcp") for n in names)  # fmt: skip
    assert sorted(manifest["files"]) == on_disk and any(".metadata" in f for f in on_disk)
    for relative, entry in manifest["files"].items():
        target = str(tmp_path / relative)
        assert entry == {"size": os.path.getsize(target), "digest": crc32_of(target)}
    verify_checkpoint(path)
    shard = next(str(tmp_path / f) for f in on_disk if f.endswith(".distcp"))
    flip_a_byte(shard)
    with pytest.raises(CheckpointError, match=r"iter_8.pth' is corrupted: its file "
                       r"iter_8.pth.dcp/\S+.distcp has crc32"):  # fmt: skip
        verify_checkpoint(path)


@pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
def test_dcp_files_of_a_version_2_manifest_are_checked_by_sha256(tmp_path):
    path, files = save_with_dcp_shards(tmp_path)
    atomic_torch_save({"meta": {"iter": 8}, "sharded": ".dcp"}, path, files=files)
    rewrite_as_version_2(path)
    assert all("sha256" in e for e in verify_checkpoint(path)["files"].values())
    metadata = str(tmp_path / "iter_8.pth.dcp" / ".metadata")
    flip_a_byte(metadata)
    with pytest.raises(CheckpointError, match=r"its file iter_8.pth.dcp/.metadata has sha256"):
        verify_checkpoint(path)

"""Checkpoint files: atomic writes, manifests, corruption detection, refusal of pickles."""

from __future__ import annotations

import json
import os
import zipfile
import zlib

import pytest
import torch
from damage import flip_a_byte

from cadence.checkpoint.files import (
    CheckpointError,
    atomic_torch_save,
    manifest_path,
    read_checkpoint,
    verify_checkpoint,
)
from cadence.checkpoint.removal import remove_checkpoint
from cadence.checkpoint.snapshot import Snapshot


def state():
    g = torch.Generator().manual_seed(0)
    return {
        "state_dict": {"w": torch.randn(300, 300, generator=g), "b": torch.zeros(7)},
        "optimizer": {"state": {0: {"momentum_buffer": torch.ones(5)}}, "param_groups": []},
        "meta": {"cfg": "model = dict(type='X')\n", "epoch": 3},
    }


def crc32_of(path):
    return f"{zlib.crc32(open(path, 'rb').read()):08x}"


def test_manifest_holds_the_size_and_digest_of_the_file(tmp_path):
    path = str(tmp_path / "epoch_1.pth")
    atomic_torch_save(state(), path)
    data = open(path, "rb").read()
    manifest = json.loads(open(manifest_path(path)).read())
    assert manifest["version"] == 3
    assert manifest["size"] == len(data)
    assert manifest["algorithm"] == "crc32"
    assert manifest["digest"] == f"{zlib.crc32(data):08x}"
    assert manifest["file"] == "epoch_1.pth"
    assert manifest["keys"]["state_dict"] == (300 * 300 + 7) * 4
    assert manifest["keys"]["meta"] == 0
    assert "files" not in manifest  # no companion folder
    assert verify_checkpoint(path) == manifest
    loaded = torch.load(path, weights_only=True)  # plain torch reads it too
    assert torch.equal(loaded["state_dict"]["w"], state()["state_dict"]["w"])
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def write_v1_manifest(path, **fields):
    """A manifest as cadence wrote it before SHA-256 (version 1)."""
    info = {"format": "cadence-checkpoint", "version": 1, "file": os.path.basename(path),
            "size": os.path.getsize(path), **fields}  # fmt: skip
    with open(manifest_path(path), "w") as f:
        json.dump(info, f)


def test_version_1_manifests_are_still_verified(tmp_path):
    path = str(tmp_path / "old.pth")
    torch.save(state(), path)
    with zipfile.ZipFile(path) as archive:
        lines = "".join(
            f"{e.filename}\0{e.file_size}\0{e.CRC:08x}\n" for e in archive.infolist()
        ).encode()
    write_v1_manifest(path, records=3, records_crc32=f"{zlib.crc32(lines):08x}")
    assert verify_checkpoint(path)["version"] == 1
    flip_a_byte(path)
    with pytest.raises(CheckpointError, match="old.pth' is corrupted"):
        read_checkpoint(path)
    whole = str(tmp_path / "whole.pth")
    torch.save(state(), whole)
    write_v1_manifest(whole, crc32=f"{zlib.crc32(open(whole, 'rb').read()):08x}")
    assert verify_checkpoint(whole)["crc32"]
    flip_a_byte(whole)
    with pytest.raises(CheckpointError, match="whole.pth' is corrupted: CRC-32"):
        read_checkpoint(whole)


def test_truncated_file_is_detected_with_the_file_named(tmp_path):
    path = str(tmp_path / "iter_4.pth")
    atomic_torch_save(state(), path)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(CheckpointError, match=r"iter_4\.pth' is truncated: \d+ bytes on disk"):
        read_checkpoint(path)


@pytest.mark.parametrize("where", [0.3, 0.5, 0.999])
def test_a_flipped_byte_anywhere_is_detected(tmp_path, where):
    path = str(tmp_path / "iter_4.pth")
    atomic_torch_save(state(), path)
    flip_a_byte(path, where)  # tensor data, or the archive's directory at the end
    with pytest.raises(CheckpointError, match="iter_4.pth' is corrupted"):
        read_checkpoint(path)


def test_truncated_file_without_manifest_is_a_checkpoint_error(tmp_path):
    path = str(tmp_path / "old.pth")
    torch.save(state(), path)
    with open(path, "r+b") as f:
        f.truncate(1000)
    with pytest.raises(CheckpointError, match="old.pth' cannot be read"):
        read_checkpoint(path)


class Payload:
    """Would create a file when unpickled, if unpickling ran code."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_malicious_pickle_is_refused_and_not_executed(tmp_path):
    path = str(tmp_path / "evil.pth")
    target = tmp_path / "pwned"
    torch.save({"state_dict": {}, "meta": Payload(str(target))}, path)
    with pytest.raises(CheckpointError, match="refused"):
        read_checkpoint(path)
    assert not target.exists()


def test_a_crash_during_the_write_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    path = str(tmp_path / "latest.pth")
    first = state()
    atomic_torch_save(first, path)
    before = open(path, "rb").read()

    def dies_midway(obj, f, **kwargs):
        f.write(b"half a checkpoint")
        raise KeyboardInterrupt("killed while writing")

    monkeypatch.setattr(torch, "save", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        atomic_torch_save({"state_dict": {"w": torch.zeros(3)}}, path)
    assert open(path, "rb").read() == before
    assert verify_checkpoint(path) is not None
    assert sorted(os.listdir(tmp_path)) == ["latest.pth", "latest.pth.manifest.json"]


def test_manifest_must_be_a_cadence_manifest(tmp_path):
    path = str(tmp_path / "a.pth")
    atomic_torch_save(state(), path)
    with open(manifest_path(path), "w") as f:
        f.write('{"format": "other"}')
    with pytest.raises(CheckpointError, match="not a cadence manifest"):
        read_checkpoint(path)
    with open(manifest_path(path), "w") as f:
        f.write("{not json")
    with pytest.raises(CheckpointError, match="unreadable"):
        read_checkpoint(path)


def test_missing_file_and_non_dict_contents(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_checkpoint(str(tmp_path / "nope.pth"))
    path = str(tmp_path / "t.pth")
    torch.save(torch.zeros(2), path)
    with pytest.raises(CheckpointError, match="holds a Tensor, not a dict"):
        read_checkpoint(path)


def test_remove_checkpoint_removes_manifest_and_companion_folders(tmp_path):
    path = str(tmp_path / "epoch_2.pth")
    atomic_torch_save(state(), path)
    os.makedirs(path + ".dcp")
    (tmp_path / "epoch_2.pth.dcp" / "shard").write_text("x")
    remove_checkpoint(path)
    assert os.listdir(tmp_path) == []


def test_snapshot_copies_and_reuses_its_buffers():
    live = {"a": torch.arange(6.0), "nested": [torch.ones(2, 2), ("x", 3)], "n": None}
    snap = Snapshot()
    first = snap.take(live)
    live["a"].add_(100)
    assert torch.equal(first["a"], torch.arange(6.0))  # a copy, not the live tensor
    assert first["nested"][1] == ("x", 3) and first["n"] is None
    buffer = first["a"]
    second = snap.take(live)
    assert second["a"] is buffer  # same shapes: the buffer is reused
    assert torch.equal(second["a"], torch.arange(6.0) + 100)
    third = snap.take({"a": torch.zeros(3)})
    assert third["a"] is not buffer and third["a"].shape == (3,)


def test_manifest_checksums_every_shard_file_and_refuses_changed_ones(tmp_path):
    path = str(tmp_path / "iter_8.pth")
    shards = tmp_path / "iter_8.pth.dcp"
    shards.mkdir()
    (shards / "__0_0.distcp").write_bytes(b"x" * 100)
    (shards / ".metadata").write_bytes(b"m" * 10)
    manifest = atomic_torch_save(state(), path)
    shard, metadata = str(shards / "__0_0.distcp"), str(shards / ".metadata")
    assert manifest["files"] == {
        os.path.join("iter_8.pth.dcp", "__0_0.distcp"): {"size": 100, "digest": crc32_of(shard)},
        os.path.join("iter_8.pth.dcp", ".metadata"): {"size": 10, "digest": crc32_of(metadata)},
    }
    verify_checkpoint(path)
    (shards / ".metadata").write_bytes(b"M" * 10)  # same size, other bytes
    with pytest.raises(CheckpointError, match=r"iter_8.pth' is corrupted: its file "
                       r"iter_8.pth.dcp/.metadata has crc32"):  # fmt: skip
        read_checkpoint(path)
    (shards / ".metadata").write_bytes(b"m" * 10)
    (shards / "__0_0.distcp").write_bytes(b"x" * 50)
    with pytest.raises(CheckpointError, match=r"shard file iter_8.pth.dcp/__0_0.distcp has 50"):
        read_checkpoint(path)
    (shards / "__0_0.distcp").unlink()
    with pytest.raises(CheckpointError, match="is missing"):
        read_checkpoint(path)
    (shards / "__0_0.distcp").write_bytes(b"x" * 100)
    verify_checkpoint(path)
    (shards / "__1_0.distcp").write_bytes(b"planted")
    with pytest.raises(CheckpointError, match=r"holds iter_8.pth.dcp/__1_0.distcp, which the "
                       "manifest does not list"):  # fmt: skip
        read_checkpoint(path)


def test_version_1_companion_sizes_are_still_checked(tmp_path):
    path = str(tmp_path / "a.pth")
    torch.save(state(), path)
    (tmp_path / "a.pth.ds").mkdir()
    (tmp_path / "a.pth.ds" / "latest").write_text("state")
    write_v1_manifest(path, crc32=f"{zlib.crc32(open(path, 'rb').read()):08x}",
                      companion={os.path.join("a.pth.ds", "latest"): 5})  # fmt: skip
    verify_checkpoint(path)
    (tmp_path / "a.pth.ds" / "latest").write_text("stat")
    with pytest.raises(CheckpointError, match="has 4 bytes, the manifest says 5"):
        read_checkpoint(path)


def test_forged_checksum_still_cannot_run_a_payload(tmp_path):
    path = str(tmp_path / "evil.pth")
    target = tmp_path / "pwned"
    atomic_torch_save({"state_dict": {}, "meta": Payload(str(target))}, path)
    verify_checkpoint(path)  # the manifest vouches for it: the attacker wrote both
    with pytest.raises(CheckpointError, match="refused"):
        read_checkpoint(path)
    assert not target.exists()


def test_only_strategies_that_write_one_file_save_in_the_background():
    from cadence.checkpoint import CheckpointSteps
    from cadence.strategies import (
        DDPStrategy,
        DeepSpeedStrategy,
        FSDPStrategy,
        SingleDeviceStrategy,
    )

    for cls in (SingleDeviceStrategy, DDPStrategy, FSDPStrategy, DeepSpeedStrategy):
        assert isinstance(cls.__new__(cls), CheckpointSteps), cls  # the declared interface
    assert SingleDeviceStrategy.supports_async_save and DDPStrategy.supports_async_save
    assert not FSDPStrategy.supports_async_save and not DeepSpeedStrategy.supports_async_save


def test_snapshot_copies_large_tensors_on_several_threads():
    live = {"w": [torch.randn(1 << 20) for _ in range(3)], "s": torch.arange(3.0)}  # 4 MiB each
    copy = Snapshot(workers=2).take(live)
    for got, want in zip(copy["w"], live["w"]):
        assert torch.equal(got, want) and got.data_ptr() != want.data_ptr()
    assert torch.equal(copy["s"], live["s"])

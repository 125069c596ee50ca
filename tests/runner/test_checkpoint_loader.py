"""mmengine's runner.checkpoint helpers: loaders by scheme, prefixes, wrapped state dicts,
tolerant loading with one warning, save_checkpoint."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import pytest
import torch
from torch import nn

from cadence.runner import checkpoint as ckpt
from cadence.runner.checkpoint import CheckpointLoader


def test_each_scheme_has_its_loader_and_registration_is_checked():
    names = {
        "https://x/y.pth": "load_from_http", "torchvision://resnet": "load_from_torchvision",
        "open-mmlab://x": "load_from_openmmlab", "pavi://x": "load_from_pavi",
        "s3://b/x.pth": "load_from_ceph", "open-mmlab:s3://b/x": "load_from_ceph",
        "ss3://b/x": "load_from_local", "dir/x.pth": "load_from_local",
    }  # fmt: skip
    for path, name in names.items():
        assert CheckpointLoader._get_checkpoint_loader(path).__name__ == name, path

    def load_from_mine(filename, map_location):
        return {"from": filename}

    CheckpointLoader.register_scheme("mine://", load_from_mine)
    try:
        with pytest.raises(KeyError, match="force=True"):
            CheckpointLoader.register_scheme("mine://", load_from_mine)
        assert CheckpointLoader.load_checkpoint("mine://a") == {"from": "mine://a"}
        with pytest.raises(ckpt.CheckpointError, match="not provided"):
            CheckpointLoader.load_checkpoint("torchvision://resnet50")
    finally:
        del CheckpointLoader._schemes["mine://"]


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.norm = nn.BatchNorm2d(3)


def test_state_dicts_look_through_wrappers_and_loading_warns_once(tmp_path, monkeypatch):
    model = nn.Sequential(Block())
    model._modules["0"] = nn.DataParallel(model[0])
    state = ckpt.get_state_dict(nn.DataParallel(model))
    assert isinstance(state, OrderedDict) and "0.conv.weight" in state
    path = str(tmp_path / "sub" / "w.pth")
    ckpt.save_checkpoint(state, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no manifest
        loaded = ckpt.load_from_local(path, None)
        assert torch.equal(loaded["0.conv.weight"], state["0.conv.weight"])
        assert set(ckpt._load_checkpoint_with_prefix("0.conv", path)) == {"weight", "bias"}
        with pytest.raises(AssertionError):
            ckpt._load_checkpoint_with_prefix("head", path)
    logged = []
    monkeypatch.setattr(ckpt, "print_log", lambda msg, **kw: logged.append(msg))
    partial = {k: v for k, v in state.items() if k != "0.norm.running_var"}
    block = Block()
    ckpt.load_state_dict(block, {k[2:]: v for k, v in partial.items()})
    assert len(logged) == 1 and "norm.running_var" in logged[0]
    block._load_state_dict_post_hooks = {0: lambda m, keys: keys.missing_keys.clear()}
    ckpt.load_state_dict(block, {k[2:]: v for k, v in partial.items()})
    assert len(logged) == 1  # the post hook accepted the missing key

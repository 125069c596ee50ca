"""``load_checkpoint`` unwraps DDP-style wrappers only, never a model's own ``.module``."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from cadence.checkpoint.weights import load_checkpoint


class HasModuleAttribute(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.module = nn.Linear(2, 2)
        self.head = nn.Linear(2, 1)


def test_weights_load_into_a_model_whose_submodule_is_called_module(tmp_path):
    trained = HasModuleAttribute()
    path = tmp_path / "w.pth"
    torch.save({"state_dict": trained.state_dict()}, path)
    fresh = HasModuleAttribute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no manifest: "could not be verified"
        load_checkpoint(fresh, str(path), strict=True, revise_keys=())
    assert torch.equal(fresh.head.weight, trained.head.weight)
    assert torch.equal(fresh.module.weight, trained.module.weight)


def test_weights_load_into_the_model_inside_a_torch_wrapper(tmp_path):
    trained = HasModuleAttribute()
    path = tmp_path / "w.pth"
    torch.save({"state_dict": trained.state_dict()}, path)
    wrapped = nn.DataParallel(HasModuleAttribute())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_checkpoint(wrapped, str(path), strict=True, revise_keys=())
    assert torch.equal(wrapped.module.head.weight, trained.head.weight)


class Net(nn.Module):
    def __init__(self, classes: int = 3) -> None:
        super().__init__()
        self.body = nn.Linear(2, 4)
        self.head = nn.Linear(4, classes)


def test_a_head_of_another_shape_is_reported_and_the_rest_loads(tmp_path):
    trained = Net(classes=3)
    path = tmp_path / "w.pth"
    torch.save(trained.state_dict(), path)
    fresh = Net(classes=5)  # fine-tuning on another number of classes, as mmengine allows
    head = fresh.head.weight.clone()
    with pytest.warns(UserWarning, match="size mismatch for head.weight"):
        load_checkpoint(fresh, str(path), revise_keys=())
    assert torch.equal(fresh.body.weight, trained.body.weight)
    assert torch.equal(fresh.head.weight, head)
    with pytest.raises(RuntimeError, match="do not match exactly"):
        load_checkpoint(Net(classes=5), str(path), strict=True, revise_keys=())


def test_saved_module_versions_reach_load_from_state_dict_after_revising_keys(tmp_path):
    seen = []

    class Versioned(nn.Linear):
        _version = 2

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args):
            seen.append(local_metadata.get("version"))
            super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.backbone = Versioned(2, 2)

    path = tmp_path / "v.pth"
    torch.save(Versioned(2, 2).state_dict(), path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_checkpoint(Outer(), str(path), revise_keys=[(r"^", "backbone.")])
    assert seen == [None]  # the file's metadata names the top module '' only
    torch.save(Outer().state_dict(), path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_checkpoint(Outer(), str(path), revise_keys=())
    assert seen[-1] == 2

"""``load_checkpoint`` unwraps DDP-style wrappers only, never a model's own ``.module``."""

from __future__ import annotations

import warnings

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

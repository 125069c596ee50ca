"""Sequential, ModuleList and ModuleDict: torch containers whose init_cfg wins over the parent's."""

from __future__ import annotations

from collections import OrderedDict

import torch
from torch import nn

from cadence.model import BaseModule, ModuleDict, ModuleList, Sequential


class ConstLinear(BaseModule):
    """A layer with its own init_cfg (lowest level: initialised last, so it wins)."""

    def __init__(self, val: float) -> None:
        super().__init__(init_cfg=dict(type="Constant", layer="Linear", val=val, bias=val + 1))
        self.fc = nn.Linear(2, 2)


def _const(val: float) -> dict:
    return dict(type="Constant", layer="Linear", val=val, bias=0.0)


def test_sequential_keeps_torch_behaviour_and_applies_its_init_cfg():
    seq = Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), init_cfg=_const(2.0))
    assert isinstance(seq, nn.Sequential) and isinstance(seq, BaseModule) and len(seq) == 3
    seq.init_weights()
    assert seq.is_init
    assert torch.all(seq[0].weight == 2) and torch.all(seq[2].bias == 0)
    assert seq(torch.ones(1, 2)).item() == 2 * 3 * 2 * 2
    assert "init_cfg={'type': 'Constant'" in repr(seq)
    named = Sequential(OrderedDict(first=nn.Linear(1, 1), act=nn.ReLU()))
    assert [name for name, _ in named.named_children()] == ["first", "act"]
    assert named.init_cfg is None


def test_the_lowest_init_cfg_wins():
    seq = Sequential(ConstLinear(0.0), ConstLinear(2.0), init_cfg=_const(4.0))
    seq.init_weights()
    assert torch.all(seq[0].fc.weight == 0) and torch.all(seq[0].fc.bias == 1)
    assert torch.all(seq[1].fc.weight == 2) and torch.all(seq[1].fc.bias == 3)


class Parent(BaseModule):
    def __init__(self) -> None:
        super().__init__(init_cfg=_const(1.0))
        self.stem = nn.Linear(2, 2)
        self.blocks = ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)], init_cfg=_const(5.0))
        self.heads = ModuleDict(dict(cls=nn.Linear(2, 1)), init_cfg=_const(7.0))


def test_module_list_and_dict_initialise_their_modules_apart_from_the_parent():
    parent = Parent()
    parent.init_weights()
    assert torch.all(parent.stem.weight == 1)
    assert all(torch.all(block.weight == 5) for block in parent.blocks)
    assert torch.all(parent.heads["cls"].weight == 7)
    assert parent.blocks.is_init and parent.heads.is_init


def test_containers_without_modules_behave_like_torch_ones():
    blocks = ModuleList()
    blocks.append(nn.Linear(1, 1))
    heads = ModuleDict()
    heads["a"] = nn.Linear(1, 1)
    assert len(blocks) == 1 and list(heads.keys()) == ["a"]
    assert len(list(ModuleList([nn.Linear(1, 1)]).parameters())) == 2
    assert ModuleDict([("b", nn.ReLU())])["b"].__class__ is nn.ReLU


def test_init_weights_reaches_a_sub_model_inside_a_wrapper() -> None:
    class Inner(BaseModule):
        def __init__(self) -> None:
            super().__init__(init_cfg=dict(type="Constant", layer="Linear", val=1, bias=2))
            self.linear = nn.Linear(2, 2)

    class Outer(BaseModule):
        def __init__(self) -> None:
            super().__init__()
            self.wrapped = nn.DataParallel(Inner())  # a wrapper has no init_weights itself

    outer = Outer()
    outer.init_weights()
    inner = outer.wrapped.module.linear
    assert bool((inner.weight == 1).all()) and bool((inner.bias == 2).all())

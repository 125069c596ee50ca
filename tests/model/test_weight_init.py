"""init_cfg initialisers, compared with torch.nn.init under the same seed."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from cadence.model import BaseModule, bias_init_with_prob, initialize
from cadence.registry import RegistryError


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)
        self.head = nn.Linear(2, 1)


def test_constant_on_named_layers_only():
    net = Net()
    conv_before = net.conv.weight.clone()
    initialize(net, dict(type="Constant", layer="Linear", val=1.0, bias=2.0))
    assert torch.all(net.fc.weight == 1) and torch.all(net.fc.bias == 2)
    assert torch.all(net.head.weight == 1)
    assert torch.equal(net.conv.weight, conv_before)


def test_layer_matches_direct_base_class_names():
    net = Net()
    initialize(net, dict(type="Constant", layer="_ConvNd", val=0.5))
    assert torch.all(net.conv.weight == 0.5) and torch.all(net.conv.bias == 0)


@pytest.mark.parametrize(
    ("cfg", "reference"),
    [
        (dict(type="Normal", std=0.02), lambda w: nn.init.normal_(w, 0, 0.02)),
        (dict(type="Uniform", a=-1, b=2), lambda w: nn.init.uniform_(w, -1, 2)),
        (dict(type="Xavier", gain=2.0), lambda w: nn.init.xavier_normal_(w, gain=2.0)),
        (
            dict(type="Xavier", distribution="uniform"),
            lambda w: nn.init.xavier_uniform_(w, gain=1),
        ),
        (
            dict(type="Kaiming"),
            lambda w: nn.init.kaiming_normal_(w, a=0, mode="fan_out", nonlinearity="relu"),
        ),
        (
            dict(type="Kaiming", mode="fan_in", distribution="uniform"),
            lambda w: nn.init.kaiming_uniform_(w, a=0, mode="fan_in", nonlinearity="relu"),
        ),
        (
            dict(type="Caffe2Xavier"),
            lambda w: nn.init.kaiming_uniform_(w, a=1, mode="fan_in", nonlinearity="leaky_relu"),
        ),
        (
            dict(type="TruncNormal", std=0.5, a=-0.2, b=0.2),
            # mmengine's own trunc_normal_ (inverse CDF), not torch's: written out here
            lambda w: _inverse_cdf_trunc_normal(w, 0, 0.5, -0.2, 0.2),
        ),
    ],
)
def test_random_initialisers_match_torch(cfg, reference):
    layer = nn.Linear(16, 8)
    torch.manual_seed(123)
    initialize(layer, dict(cfg, layer="Linear", bias=0.25))
    expected = torch.empty(8, 16)
    torch.manual_seed(123)
    reference(expected)
    assert torch.equal(layer.weight.data, expected)
    assert torch.all(layer.bias == 0.25)


def test_bias_prob():
    layer = nn.Linear(2, 2)
    initialize(layer, dict(type="Constant", val=0, bias_prob=0.01, layer="Linear"))
    expected = -math.log(0.99 / 0.01)
    assert bias_init_with_prob(0.01) == pytest.approx(expected)
    assert torch.allclose(layer.bias, torch.full((2,), expected))


def test_override_initialises_a_named_child_entirely():
    net = Net()
    initialize(
        net,
        dict(
            type="Constant", layer="Linear", val=1.0,
            override=dict(type="Constant", name="head", val=3.0, bias=4.0),
        ),
    )  # fmt: skip
    assert torch.all(net.fc.weight == 1)
    assert torch.all(net.head.weight == 3) and torch.all(net.head.bias == 4)
    bare = Net()
    initialize(bare, dict(type="Constant", layer="Conv2d", val=2.0, override=dict(name="head")))
    assert torch.all(bare.head.weight == 2)  # name only: the parent's arguments, whole child
    with pytest.raises(AttributeError, match="no such child module .*'fc'"):
        initialize(bare, dict(type="Constant", val=1, override=dict(name="missing")))
    with pytest.raises(KeyError, match="'name'"):
        initialize(bare, dict(type="Constant", val=1, override=dict(type="Constant", val=1)))


def test_unknown_initialiser_names_the_registry():
    with pytest.raises(RegistryError, match="Normal"):
        initialize(Net(), dict(type="Normall"))
    with pytest.raises(TypeError, match="dict or a list"):
        initialize(Net(), "Normal")  # type: ignore[arg-type]


class Child(BaseModule):
    def __init__(self) -> None:
        super().__init__(init_cfg=dict(type="Constant", layer="Linear", val=7.0))
        self.fc = nn.Linear(2, 2)


class Parent(BaseModule):
    def __init__(self, init_cfg) -> None:
        super().__init__(init_cfg=init_cfg)
        self.child = Child()
        self.own = nn.Linear(2, 2)


def test_children_init_after_parent_and_pretrained_last(tmp_path):
    checkpoint = tmp_path / "weights.pth"
    torch.save({"state_dict": {"module.own.weight": torch.full((2, 2), 9.0)}}, checkpoint)
    parent = Parent(
        init_cfg=[
            dict(type="Pretrained", checkpoint=str(checkpoint)),
            dict(type="Constant", layer="Linear", val=1.0),
        ]
    )
    parent.init_weights()
    assert torch.all(parent.child.fc.weight == 7)  # the child's own cfg wins
    assert torch.all(parent.own.weight == 9)  # pretrained is applied last
    assert torch.all(parent.own.bias == 0)  # from the Constant cfg; not in the checkpoint
    assert parent.is_init and parent.child.is_init
    nn.init.zeros_(parent.own.weight)
    parent.init_weights()  # a second call changes nothing
    assert torch.all(parent.own.weight == 0)


def test_pretrained_with_prefix_and_bad_paths(tmp_path):
    checkpoint = tmp_path / "detector.pth"
    torch.save({"backbone.weight": torch.ones(2, 2), "backbone.bias": torch.zeros(2)}, checkpoint)
    layer = nn.Linear(2, 2)
    initialize(layer, dict(type="Pretrained", checkpoint=str(checkpoint), prefix="backbone."))
    assert torch.all(layer.weight == 1) and torch.all(layer.bias == 0)
    with pytest.raises(KeyError, match="head."):
        initialize(layer, dict(type="Pretrained", checkpoint=str(checkpoint), prefix="head."))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        initialize(layer, dict(type="Pretrained", checkpoint=str(tmp_path / "nope.pth")))
    with pytest.raises(ValueError, match="local files"):
        initialize(layer, dict(type="Pretrained", checkpoint="torchvision://resnet50"))


def _inverse_cdf_trunc_normal(w: torch.Tensor, mean: float, std: float, a: float, b: float) -> None:
    cdf = [(1 + math.erf((x - mean) / std / math.sqrt(2))) / 2 for x in (a, b)]
    with torch.no_grad():
        w.uniform_(2 * cdf[0] - 1, 2 * cdf[1] - 1).erfinv_().mul_(std * math.sqrt(2)).add_(mean)
        w.clamp_(min=a, max=b)

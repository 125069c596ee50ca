"""State dicts: save mid-run, rebuild, load, continue == an uninterrupted run, bit for bit."""

from __future__ import annotations

import io
from typing import Any

import pytest
import torch

from cadence.optim.scheduler import (
    CosineAnnealingLR,
    MultiStepLR,
    OneCycleLR,
    StepLR,
    build_param_schedulers,
)

TOTAL, SPLIT = 14, 6
METRICS = [3.0, 2.0, 2.5, 2.5, 1.0, 1.5, 1.6, 1.7, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


class StandInWrapper:
    """Optimizer wrapper stand-in with mmengine's extra base-settings group, saved in its state."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer
        self.base_param_settings = dict(optimizer.defaults, params=[])

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self.optimizer.param_groups + [self.base_param_settings]

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "base": dict(self.base_param_settings)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.base_param_settings = dict(state["base"])


CASES: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "warmup+cosine": (
        "sgd",
        [
            dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=4),
            dict(type="CosineAnnealingLR", by_epoch=False, begin=4, end=14, eta_min=1e-3),
        ],
    ),
    "multistep+step-momentum": (
        "sgd",
        [
            dict(type="MultiStepLR", milestones=[3, 6], by_epoch=False),
            dict(type="StepMomentum", step_size=2, gamma=0.9, by_epoch=False),
        ],
    ),
    "one-cycle": ("sgd", [dict(type="OneCycleLR", eta_max=0.5, total_steps=TOTAL + 1)]),
    "cosine-restart": (
        "sgd",
        [
            dict(
                type="CosineRestartLR",
                periods=[4, 5, 5],
                restart_weights=[1, 0.5, 0.25],
                eta_min=1e-4,
            )
        ],
    ),  # fmt: skip
    "poly+exp-momentum(adam)": (
        "adam",
        [
            dict(type="PolyLR", eta_min=1e-4, power=2.0, end=TOTAL),
            dict(type="ExponentialMomentum", gamma=0.95),
        ],
    ),
    "constant+exponential": (
        "sgd",
        [
            dict(type="ConstantLR", factor=0.5, begin=2, end=8),
            dict(type="ExponentialLR", gamma=0.9),
        ],
    ),
    "cosine-momentum(adam)": ("adam", [dict(type="CosineAnnealingMomentum", T_max=5)]),
    "generic-weight-decay": (
        "sgd",
        [dict(type="StepParamScheduler", param_name="weight_decay", step_size=2, gamma=0.5)],
    ),
    "plateau-lr": ("sgd", [dict(type="ReduceOnPlateauLR", patience=1, cooldown=1, factor=0.5)]),
    "plateau-momentum(adam)": ("adam", [dict(type="ReduceOnPlateauMomentum", patience=0)]),
    "wrapped-linear+multistep": (
        "wrapped",
        [
            dict(type="LinearLR", start_factor=0.2, end=5),
            dict(type="MultiStepLR", milestones=[7, 9], gamma=0.5),
        ],
    ),
}


def build(kind: str, cfg: list[dict[str, Any]]) -> tuple[torch.nn.Module, Any, Any, list[Any]]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
    if kind == "adam":
        optimizer: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    else:
        groups = [
            {"params": model[0].parameters()},
            {"params": model[1].parameters(), "lr": 0.05},
        ]
        optimizer = torch.optim.SGD(groups, lr=0.1, momentum=0.9, weight_decay=1e-2)
    target = StandInWrapper(optimizer) if kind == "wrapped" else optimizer
    schedulers = build_param_schedulers(target, cfg)
    assert isinstance(schedulers, list)
    return model, optimizer, target, schedulers


def train(model: Any, optimizer: Any, target: Any, schedulers: list[Any], steps: range) -> list:
    """Run the given steps; record every scheduled hyper-parameter before each step."""
    data = torch.linspace(-1, 1, 24).reshape(8, 3)
    record = []
    for step in steps:
        record.append(
            [dict((k, v) for k, v in g.items() if k != "params") for g in target.param_groups]
        )
        optimizer.zero_grad()
        (model(data) ** 2).mean().backward()
        optimizer.step()
        for scheduler in schedulers:
            scheduler.step()
            if scheduler.need_val_args:
                scheduler.step({"loss": METRICS[step]})
    return record


def roundtrip(obj: Any) -> Any:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


@pytest.mark.parametrize("name", list(CASES))
def test_resume_is_bit_identical(name: str) -> None:
    kind, cfg = CASES[name]
    model, optimizer, target, schedulers = build(kind, cfg)
    straight = train(model, optimizer, target, schedulers, range(TOTAL))
    straight_params = [p.detach().clone() for p in model.parameters()]

    model, optimizer, target, schedulers = build(kind, cfg)
    first = train(model, optimizer, target, schedulers, range(SPLIT))
    checkpoint = roundtrip(
        {
            "model": model.state_dict(),
            "optim": target.state_dict(),
            "schedulers": [s.state_dict() for s in schedulers],
        }
    )
    model, optimizer, target, schedulers = build(kind, cfg)
    model.load_state_dict(checkpoint["model"])
    target.load_state_dict(checkpoint["optim"])
    for scheduler, state in zip(schedulers, checkpoint["schedulers"]):
        scheduler.load_state_dict(state)
    second = train(model, optimizer, target, schedulers, range(SPLIT, TOTAL))

    assert first + second == straight
    for resumed, expected in zip(model.parameters(), straight_params):
        assert torch.equal(resumed, expected)


def test_schedule_actually_changes_values_in_every_case() -> None:
    for name, (kind, cfg) in CASES.items():
        model, optimizer, target, schedulers = build(kind, cfg)
        record = train(model, optimizer, target, schedulers, range(TOTAL))
        assert record[0] != record[-1], name


def make_sgd() -> torch.optim.SGD:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)


def test_state_dict_excludes_optimizer_and_is_a_copy() -> None:
    scheduler = MultiStepLR(make_sgd(), milestones=[2, 4])
    state = scheduler.state_dict()
    assert "optimizer" not in state and "_owner" not in state
    assert state["milestones"] == {2: 1, 4: 1}
    assert {"last_step", "_global_step", "base_values", "begin", "end"} <= set(state)
    state["milestones"][9] = 1
    state["base_values"].append(1.0)
    assert scheduler.milestones == {2: 1, 4: 1}
    assert scheduler.base_values == [0.1]


def test_state_dict_survives_weights_only_load_for_one_cycle() -> None:
    scheduler = OneCycleLR(make_sgd(), eta_max=1.0, total_steps=10)
    state = roundtrip(scheduler.state_dict())
    assert state == scheduler.state_dict()


def test_load_state_dict_rejects_another_schedulers_state() -> None:
    state = StepLR(make_sgd(), step_size=2).state_dict()
    with pytest.raises(KeyError, match="unexpected key.*'step_size'"):
        CosineAnnealingLR(make_sgd(), T_max=5).load_state_dict(state)


def test_load_state_dict_suggests_close_key() -> None:
    scheduler = StepLR(make_sgd(), step_size=2)
    with pytest.raises(KeyError, match="Did you mean.*'last_step'"):
        scheduler.load_state_dict({"last_stepp": 3})


def test_load_state_dict_needs_a_mapping() -> None:
    with pytest.raises(TypeError, match="expects a dict"):
        StepLR(make_sgd(), step_size=2).load_state_dict([1, 2])  # type: ignore[arg-type]


def test_load_accepts_mmengine_one_cycle_extra_key() -> None:
    """mmengine's OneCycle state carries its bound anneal function; it is ignored."""
    scheduler = OneCycleLR(make_sgd(), eta_max=1.0, total_steps=10)
    state = scheduler.state_dict()
    state["anneal_func"] = object()
    state.pop("anneal_strategy")
    scheduler.load_state_dict(state)
    assert scheduler.anneal_strategy == "cos"

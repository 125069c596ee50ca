"""OptimWrapperDict: a named set of wrappers (GAN style)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from cadence import registry
from cadence.optim import (
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIMIZERS,
    AmpOptimWrapper,
    OptimWrapper,
    OptimWrapperDict,
    build_optim_wrapper,
)
from cadence.optim.optimizer.builder import TORCH_OPTIMIZERS
from cadence.registry import OPTIM_WRAPPERS


class _Gan(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.gen = nn.Linear(3, 3)
        self.disc = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))


def _wrappers(model: _Gan) -> OptimWrapperDict:
    return OptimWrapperDict(
        gen=OptimWrapper(
            torch.optim.SGD(model.gen.parameters(), lr=0.1, momentum=0.5),
            clip_grad=dict(max_norm=1e-3),
        ),
        disc=OptimWrapper(torch.optim.Adam(model.disc.parameters(), lr=0.01, betas=(0.3, 0.9))),
    )


def _backward_both(model: _Gan) -> None:
    x = torch.randn(6, 3)
    (model.gen(x).sum() + model.disc(x).pow(2).sum()).backward()


def test_container_protocol():
    model = _Gan()
    wrappers = _wrappers(model)
    assert list(wrappers.keys()) == ["gen", "disc"] and list(wrappers) == ["gen", "disc"]
    assert len(wrappers) == 2 and "gen" in wrappers and "g" not in wrappers
    assert [n for n, _ in wrappers.items()] == ["gen", "disc"]
    assert list(wrappers.values()) == [wrappers["gen"], wrappers["disc"]]
    assert isinstance(wrappers, OptimWrapper)
    with pytest.raises(KeyError, match="no wrapper named 'gne'.*Did you mean 'gen'"):
        wrappers["gne"]


def test_only_wrappers_are_accepted():
    with pytest.raises(TypeError, match="gen=SGD"):
        OptimWrapperDict(gen=torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1))


@pytest.mark.parametrize("method", ["update_params", "backward", "step", "optim_context"])
def test_updating_the_whole_dict_is_refused(method):
    wrappers = _wrappers(_Gan())
    call = {
        "update_params": lambda: wrappers.update_params(torch.tensor(1.0)),
        "backward": lambda: wrappers.backward(torch.tensor(1.0)),
        "step": wrappers.step,
        "optim_context": lambda: wrappers.optim_context(nn.Linear(1, 1)).__enter__(),
    }[method]
    with pytest.raises(NotImplementedError, match=f"optim_wrapper\\['generator'\\].{method}"):
        call()


def test_each_wrapper_updates_its_own_part():
    model = _Gan()
    wrappers = _wrappers(model)
    gen_before = model.gen.weight.detach().clone()
    disc_before = model.disc[0].weight.detach().clone()
    x = torch.randn(6, 3)
    wrappers["disc"].update_params(model.disc(x).pow(2).sum())
    assert torch.equal(model.gen.weight, gen_before)
    assert not torch.equal(model.disc[0].weight, disc_before)


def test_zero_grad_clears_every_wrapper():
    model = _Gan()
    wrappers = _wrappers(model)
    _backward_both(model)
    wrappers.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_lr_momentum_and_log_vars_are_prefixed_by_name():
    model = _Gan()
    wrappers = _wrappers(model)
    assert wrappers.get_lr() == {"gen.lr": [0.1], "disc.lr": [0.01]}
    assert wrappers.get_momentum() == {"gen.momentum": [0.5], "disc.momentum": [0.3]}
    assert set(wrappers.param_groups) == {"gen", "disc"}
    assert wrappers.defaults["disc"]["lr"] == 0.01
    assert wrappers.pop_log_vars() == {}
    x = torch.randn(6, 3)
    wrappers["gen"].update_params(model.gen(x).sum())
    logged = wrappers.pop_log_vars()
    assert set(logged) == {"gen.grad_norm"} and logged["gen.grad_norm"] > 1e-3
    assert wrappers.pop_log_vars() == {}


def test_base_lr_of_a_multi_group_wrapper_is_prefixed():
    lin = nn.Linear(2, 2)
    groups = [{"params": [lin.weight]}, {"params": [lin.bias], "lr": 0.5}]
    wrappers = OptimWrapperDict(a=OptimWrapper(torch.optim.SGD(groups, lr=0.1)))
    assert wrappers.get_lr() == {"a.base_lr": [0.1], "a.lr": [0.1, 0.5]}


def test_state_dict_is_keyed_by_name_and_loads_back():
    model = _Gan()
    wrappers = _wrappers(model)
    for name in ("gen", "disc"):
        _backward_both(model)
        wrappers[name].step()
    state = copy.deepcopy(wrappers.state_dict())
    assert set(state) == {"gen", "disc"}
    assert state["disc"]["param_groups"] == wrappers["disc"].optimizer.state_dict()["param_groups"]
    fresh_model = _Gan()
    fresh = _wrappers(fresh_model)
    fresh.load_state_dict(state)
    assert fresh["disc"].optimizer.state_dict()["state"][0]["step"] == 1
    torch.testing.assert_close(
        fresh["gen"].optimizer.state_dict()["state"][0]["momentum_buffer"],
        state["gen"]["state"][0]["momentum_buffer"],
    )
    with pytest.raises(KeyError, match="'dsc'.*Did you mean 'disc'"):
        fresh.load_state_dict({"dsc": state["disc"]})


def test_initialize_count_status_reaches_every_wrapper():
    model = _Gan()
    lin = nn.Linear(2, 2)
    wrappers = OptimWrapperDict(
        gen=OptimWrapper(torch.optim.SGD(model.gen.parameters(), lr=0.1), accumulative_counts=2),
        other=OptimWrapper(torch.optim.SGD(lin.parameters(), lr=0.1)),
    )
    wrappers.initialize_count_status(model, 4, 9)
    assert [(w.inner_count, w.max_counts) for w in wrappers.values()] == [(4, 9), (4, 9)]


def test_counters_are_per_wrapper():
    wrappers = _wrappers(_Gan())
    with pytest.raises(AttributeError, match=r"no single inner_count.*\['generator'\]"):
        wrappers.inner_count  # noqa: B018
    assert not hasattr(wrappers, "max_counts")
    with pytest.raises(NotImplementedError, match="should_update"):
        wrappers.should_update()


def test_mixed_wrapper_types_and_repr():
    model = _Gan()
    wrappers = OptimWrapperDict(
        gen=AmpOptimWrapper(optimizer=torch.optim.SGD(model.gen.parameters(), lr=0.1)),
        disc=OptimWrapper(torch.optim.SGD(model.disc.parameters(), lr=0.2)),
    )
    text = repr(wrappers)
    assert "name: gen" in text and "name: disc" in text and "AmpOptimWrapper" in text
    assert wrappers.state_dict()["gen"]["loss_scaler"] == {}


def test_registered_for_configs():
    assert OPTIM_WRAPPERS.get("OptimWrapperDict") is OptimWrapperDict


def test_mmengine_phrases_and_types_of_the_dict_errors() -> None:
    sgd = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    with pytest.raises(TypeError, match="`OptimWrapperDict` only accept") as caught:
        OptimWrapperDict(a=sgd)  # type: ignore[arg-type]
    assert isinstance(caught.value, AssertionError)
    with pytest.raises(NotImplementedError, match="`step` should be called"):
        OptimWrapperDict().step()


def test_an_empty_optim_wrapper_config_is_an_assertion_error() -> None:
    with pytest.raises(ValueError, match="`optim_wrapper_cfg` must contain") as caught:
        build_optim_wrapper(torch.nn.Linear(1, 1), {})
    assert isinstance(caught.value, AssertionError)


def test_the_registries_and_torch_optimizer_names_are_offered() -> None:
    assert (
        OPTIM_WRAPPER_CONSTRUCTORS is registry.OPTIM_WRAPPER_CONSTRUCTORS
        and OPTIMIZERS.get("SGD") is torch.optim.SGD
    )
    assert {"SGD", "Adam", "AdamW", "Optimizer"} <= set(TORCH_OPTIMIZERS)

"""SingleDeviceStrategy: the model is placed as it is, SyncBatchNorm reverted (one process)."""

import torch
from torch import nn

from cadence.strategies import SingleDeviceStrategy


def test_syncbn_layers_become_batchnorm_with_the_same_parameters():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.SyncBatchNorm(4))
    weight = model[1].weight
    placed = SingleDeviceStrategy(device="cpu").setup_module(model)
    assert not isinstance(placed[1], nn.SyncBatchNorm)
    assert isinstance(placed[1], nn.modules.batchnorm._BatchNorm)
    assert placed[1].weight is weight
    placed(torch.randn(2, 3, 4, 4)).sum().backward()  # trains in one process


def test_the_strategy_keeps_none_of_the_objects_it_is_handed():
    """setup_module/setup return the wrapped objects and store nothing; the checkpoint
    steps act on what they are handed: once the caller drops the objects, they are gone."""
    import gc
    import weakref

    from cadence.contracts import Trained
    from cadence.optim import build_optim_wrapper, build_param_schedulers

    strategy = SingleDeviceStrategy(device="cpu")
    model = strategy.setup_module(nn.Linear(3, 2))
    wrapper = build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)))
    model, wrapper = strategy.setup(model, wrapper)
    schedulers = build_param_schedulers(wrapper, [dict(type="MultiStepLR", milestones=[1])])
    trained = Trained(model, wrapper, schedulers)
    model(torch.randn(4, 3)).sum().backward()
    wrapper.step()
    schedulers[0].step()
    state = strategy.checkpoint_state(trained)
    assert sorted(state) == ["optimizer", "param_schedulers", "state_dict"]
    assert torch.equal(state["state_dict"]["weight"], model.weight)
    assert state["param_schedulers"] == [schedulers[0].state_dict()]
    copied = {
        "state_dict": {k: v.clone() for k, v in state["state_dict"].items()},
        "optimizer": state["optimizer"],
        "param_schedulers": state["param_schedulers"],
    }
    with torch.no_grad():
        model.weight.add_(1.0)
    strategy.restore(trained, "unused.pth", copied)
    assert torch.equal(model.weight, copied["state_dict"]["weight"])
    assert strategy.checkpoint_state(trained, save_optimizer=False, save_param_scheduler=False
                                     ).keys() == {"state_dict"}  # fmt: skip
    assert not any(isinstance(v, (nn.Module, type(wrapper))) for v in vars(strategy).values())
    gone = weakref.ref(model)
    strategy.teardown(trained)  # one device: nothing tied to a process group, kept
    assert trained.model is model
    del model, wrapper, schedulers, trained, state, copied
    gc.collect()
    assert gone() is None


def test_checkpoint_state_without_a_model_says_so():
    import pytest

    from cadence.contracts import Trained

    with pytest.raises(RuntimeError, match="no model yet"):
        SingleDeviceStrategy(device="cpu").checkpoint_state(Trained())

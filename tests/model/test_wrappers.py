"""is_model_wrapper: torch's wrappers, cadence's and anything registered in MODEL_WRAPPERS."""

from __future__ import annotations

from torch import nn

import cadence.model as model_pkg
from cadence.model import ExponentialMovingAverage, is_model_wrapper
from cadence.model.wrappers import is_model_wrapper as from_wrappers
from cadence.registry import MODEL_WRAPPERS, Registry, isolated_registries


class Wrapped(nn.Module):
    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module


def test_plain_and_averaged_models_are_not_wrappers():
    assert from_wrappers is is_model_wrapper is model_pkg.is_model_wrapper
    assert not is_model_wrapper(nn.Linear(1, 1))
    assert not is_model_wrapper(ExponentialMovingAverage(nn.Linear(1, 1)))
    assert not is_model_wrapper(Wrapped(nn.Linear(1, 1)))


def test_torch_data_parallel_and_subclasses_are_wrappers():
    class MyDataParallel(nn.DataParallel):
        pass

    assert is_model_wrapper(nn.DataParallel(nn.Linear(1, 1)))
    assert is_model_wrapper(MyDataParallel(nn.Linear(1, 1)))


def test_cadence_wrappers_are_registered():
    from cadence.strategies.ddp import CadenceDistributedDataParallel
    from cadence.strategies.deepspeed import DeepSpeedEngineWrapper

    assert MODEL_WRAPPERS.get("MMDistributedDataParallel") is CadenceDistributedDataParallel
    assert MODEL_WRAPPERS.get("DeepSpeedEngineWrapper") is DeepSpeedEngineWrapper
    engine = Wrapped(nn.Linear(1, 1))  # stands in for a deepspeed engine: only .module is read
    assert is_model_wrapper(DeepSpeedEngineWrapper(engine))


def test_classes_registered_in_the_registry_or_its_children_are_wrappers():
    with isolated_registries(MODEL_WRAPPERS):
        child = Registry("model_wrapper", parent=MODEL_WRAPPERS, scope="downstream")

        @child.register_module()
        class DownstreamWrapper(Wrapped):
            pass

        assert is_model_wrapper(DownstreamWrapper(nn.Linear(1, 1)))
        assert not is_model_wrapper(DownstreamWrapper(nn.Linear(1, 1)), registry=Registry("x"))
        MODEL_WRAPPERS.register_module(module=Wrapped)
        assert is_model_wrapper(Wrapped(nn.Linear(1, 1)))
    assert not is_model_wrapper(Wrapped(nn.Linear(1, 1)))

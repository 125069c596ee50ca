"""cadence's root registries: what they are, and what they register lazily."""

from __future__ import annotations

import inspect

import pytest
import torch

import cadence.registry as registry_pkg
from cadence.registry import FUNCTIONS, OPTIMIZERS, PARAM_SCHEDULERS, Registry

ROOT_NAMES = (
    "MODELS", "DATASETS", "DATA_SAMPLERS", "TRANSFORMS", "FUNCTIONS", "HOOKS", "LOOPS",
    "OPTIMIZERS", "OPTIM_WRAPPERS", "OPTIM_WRAPPER_CONSTRUCTORS", "PARAM_SCHEDULERS",
    "METRICS", "EVALUATOR", "STRATEGIES", "VISBACKENDS", "VISUALIZERS", "LOG_PROCESSORS",
    "RUNNERS", "MODEL_WRAPPERS", "WEIGHT_INITIALIZERS",
)  # fmt: skip

# Scheduler names that cadence implements itself (mmengine's semantics), so
# torch's classes of the same name must not be registered under them.
CADENCE_OWN_SCHEDULERS = (
    "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
    "CosineAnnealingLR", "OneCycleLR",
)  # fmt: skip


@pytest.mark.parametrize("name", ROOT_NAMES)
def test_root_registry_is_importable_and_in_the_cadence_scope(name: str) -> None:
    reg = getattr(registry_pkg, name)
    assert isinstance(reg, Registry)
    assert reg.scope == "cadence"
    assert reg.parent is None
    assert name in registry_pkg.__all__
    assert reg in registry_pkg.ROOT_REGISTRIES


def test_root_registries_are_distinct_objects_with_distinct_names() -> None:
    regs = [getattr(registry_pkg, name) for name in ROOT_NAMES]
    assert len({id(r) for r in regs}) == len(ROOT_NAMES)
    assert len({r.name for r in regs}) == len(ROOT_NAMES)


def test_root_registry_locations_are_cadence_modules_that_import() -> None:
    import importlib

    for reg in registry_pkg.ROOT_REGISTRIES:
        for location in reg.locations:
            assert location.startswith("cadence.")
            importlib.import_module(location)


# ------------------------------------------------------------------ optimizers
def _torch_optimizer_classes() -> dict[str, type]:
    return {
        name: obj
        for name, obj in vars(torch.optim).items()
        if inspect.isclass(obj)
        and issubclass(obj, torch.optim.Optimizer)
        and obj is not torch.optim.Optimizer
    }


def test_every_torch_optimizer_is_registered_under_its_class_name() -> None:
    expected = _torch_optimizer_classes()
    assert {"SGD", "AdamW", "Adam"} <= set(expected)
    for name, cls in expected.items():
        assert OPTIMIZERS.get(name) is cls, name


@pytest.mark.parametrize(
    ("cfg", "cls"),
    [
        (dict(type="SGD", lr=0.1, momentum=0.9), torch.optim.SGD),
        (dict(type="AdamW", lr=0.001, weight_decay=0.05), torch.optim.AdamW),
    ],
)
def test_torch_optimizers_build_on_a_models_parameters(cfg: dict, cls: type) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    optimizer = OPTIMIZERS.build(cfg, default_args=dict(params=model.parameters()))
    assert type(optimizer) is cls
    group = optimizer.param_groups[0]
    assert group["lr"] == cfg["lr"]
    assert [id(p) for p in group["params"]] == [id(p) for p in model.parameters()]
    for key, value in cfg.items():
        if key != "type":
            assert group[key] == value

    loss = model(torch.ones(2, 3)).sum()
    loss.backward()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.step()
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


# ------------------------------------------------------------------ schedulers
def _optimizer(lr: float = 0.1) -> torch.optim.Optimizer:
    return torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=lr, momentum=0.9)


@pytest.mark.parametrize(
    "name", ["LambdaLR", "CyclicLR", "MultiplicativeLR", "CosineAnnealingWarmRestarts"]
)
def test_torch_schedulers_cadence_does_not_reimplement_are_registered(name: str) -> None:
    assert PARAM_SCHEDULERS.get(name) is getattr(torch.optim.lr_scheduler, name)


@pytest.mark.parametrize("name", CADENCE_OWN_SCHEDULERS)
def test_torch_schedulers_with_cadence_names_are_not_registered(name: str) -> None:
    torch_cls = getattr(torch.optim.lr_scheduler, name)
    assert PARAM_SCHEDULERS.get(name) is not torch_cls
    # still reachable by full import path
    assert PARAM_SCHEDULERS.get(f"torch.optim.lr_scheduler.{name}") is torch_cls


def test_lambda_lr_builds_and_scales_the_learning_rate() -> None:
    base_lr, factor = 0.1, 0.5
    optimizer = _optimizer(base_lr)
    scheduler = PARAM_SCHEDULERS.build(
        dict(type="LambdaLR", lr_lambda=lambda epoch: factor),
        default_args=dict(optimizer=optimizer),
    )
    assert isinstance(scheduler, torch.optim.lr_scheduler.LambdaLR)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(base_lr * factor)


def test_cyclic_lr_builds_and_starts_at_base_lr() -> None:
    optimizer = _optimizer(0.5)
    scheduler = PARAM_SCHEDULERS.build(
        dict(type="CyclicLR", optimizer=optimizer, base_lr=0.01, max_lr=0.1, step_size_up=2)
    )
    assert isinstance(scheduler, torch.optim.lr_scheduler.CyclicLR)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.01)


# ----------------------------------------------------------- collate functions
def test_collate_functions_are_registered_in_functions() -> None:
    from cadence.dataset import default_collate, pseudo_collate

    assert FUNCTIONS.get("pseudo_collate") is pseudo_collate
    assert FUNCTIONS.get("default_collate") is default_collate


# ------------------------------------------------------------- lazy importing
def test_import_is_lazy_until_a_lookup_happens(lazy_import_probe) -> None:
    """``import cadence.registry`` in a fresh process imports no registering module."""
    state = lazy_import_probe()
    assert state["after_import"] == {"cadence.optim": False, "cadence.dataset": False}
    assert state["after_optimizer_lookup"]["cadence.optim"] is True
    assert state["after_function_lookup"]["cadence.dataset"] is True


def test_a_runner_type_is_built_through_its_from_cfg_and_one_without_it_is_refused() -> None:
    from cadence.registry import RUNNERS

    @RUNNERS.register_module()
    class RecordingRunner:
        @classmethod
        def from_cfg(cls, cfg: dict) -> tuple[str, dict]:
            return "built", dict(cfg)

    @RUNNERS.register_module()
    class NoFactory:
        pass

    built = RUNNERS.build(dict(runner_type="RecordingRunner", work_dir="w"))
    assert built == ("built", {"runner_type": "RecordingRunner", "work_dir": "w"})
    with pytest.raises(TypeError, match="has no from_cfg"):
        RUNNERS.build(dict(runner_type="NoFactory"))

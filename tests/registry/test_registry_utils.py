"""mmengine's registry helpers at cadence.registry: build functions, tree statistics,
init_default_scope, Config accepted by build (#21 item 2)."""

from __future__ import annotations

import json
import warnings

import pytest
from torch import nn

from cadence.config import Config
from cadence.registry import (
    HOOKS,
    MODELS,
    PARAM_SCHEDULERS,
    RUNNERS,
    DefaultScope,
    Registry,
    RegistryError,
    build_model_from_cfg,
    build_runner_from_cfg,
    build_scheduler_from_cfg,
    count_registered_modules,
    get_default_scope,
    init_default_scope,
    traverse_registry_tree,
)


class Point:
    def __init__(self, x: int, y: int = 0) -> None:
        self.x, self.y = x, y


def test_build_accepts_a_config_as_cfg_and_default_args():
    things = Registry("thing", scope="cadence_test_cfg")
    things.register_module(module=Point)
    built = things.build(Config(dict(type="Point", x=1)), default_args=Config(dict(y=5)))
    assert (built.x, built.y) == (1, 5)


def test_build_model_from_cfg_makes_a_sequential_of_a_list():
    assert MODELS.build_func is build_model_from_cfg
    model = build_model_from_cfg(
        [dict(type="torch.nn.Linear", in_features=2, out_features=3),
         dict(type="torch.nn.ReLU")], MODELS)  # fmt: skip
    assert isinstance(model, nn.Sequential) and isinstance(model[1], nn.ReLU)


def test_scheduler_and_runner_build_functions_are_the_roots_builders():
    assert PARAM_SCHEDULERS.build_func is build_scheduler_from_cfg
    assert RUNNERS.build_func is build_runner_from_cfg


def test_build_runner_from_cfg_picks_runner_type_and_rejects_unknown_ones():
    built = []

    class Recorder:
        @classmethod
        def from_cfg(cls, cfg):
            built.append(cfg)
            return cls()

    runners = Registry("runner", scope="cadence_test_runner", build_func=build_runner_from_cfg)
    runners.register_module(module=Recorder)
    cfg = Config(dict(runner_type="Recorder", _scope_="cadence_test_runner", model=1))
    assert isinstance(runners.build(cfg), Recorder)
    # _scope_ is consumed; the rest (a Config still) reaches from_cfg; the input is kept
    assert isinstance(built[0], Config) and "_scope_" not in built[0] and built[0].model == 1
    assert "_scope_" in cfg
    with pytest.raises(RegistryError, match="Recordr") as info:
        runners.build(dict(runner_type="Recordr"))
    assert isinstance(info.value, KeyError) and "Recorder" in str(info.value)
    with pytest.raises(TypeError, match="runner_type"):
        runners.build(dict(runner_type=3))
    with pytest.raises(AssertionError, match="dict or Config"):  # mmengine asserts the type
        runners.build([1])


def test_traverse_registry_tree_counts_each_node_from_the_root(capsys):
    root = Registry("widget", scope="cadence_test_root")
    child = Registry("widget", parent=root, scope="cadence_test_child")
    root.register_module(module=Point)
    child.register_module(name="A", module=nn.Linear)
    child.register_module(name="B", module=nn.ReLU)
    info = traverse_registry_tree(child, verbose=True)
    assert [(i["scope"], i["num_modules"]) for i in info] == [
        ("cadence_test_root", 1), ("cadence_test_child", 2)]  # fmt: skip
    assert info[1]["torch/nn/modules"] == ["A", "B"]  # names by their module's folder
    assert "Find 2 modules in cadence_test_child's 'widget' registry" in capsys.readouterr().out


def test_count_registered_modules_scans_every_root_and_saves_json(tmp_path):
    scan = count_registered_modules(save_path=str(tmp_path), verbose=False)
    hooks = scan["registries"]["HOOKS"][0]
    assert hooks["scope"] == "cadence" and hooks["num_modules"] == len(HOOKS.module_dict)
    assert "CheckpointHook" in hooks["cadence/hooks"]
    assert {"MODELS", "RUNNERS", "OPTIMIZERS"} <= set(scan["registries"])
    saved = json.loads((tmp_path / "modules_statistic_results.json").read_text())
    assert saved == json.loads(json.dumps(scan))


def test_init_default_scope_sets_it_and_warns_when_another_took_over():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init_default_scope("cadence_test_scope")
    assert get_default_scope() == "cadence_test_scope"
    assert DefaultScope.get_current_instance().scope_name == "cadence_test_scope"
    DefaultScope.get_instance("other", scope_name="cadence_test_other")
    with pytest.warns(UserWarning, match='"cadence_test_other" is not "cadence_test_scope"'):
        init_default_scope("cadence_test_scope")
    assert get_default_scope() == "cadence_test_scope"


def test_type_checks_that_mmengine_asserts_are_assertion_errors_too():
    with pytest.raises(AssertionError, match="parent"):
        Registry("x", parent=object())
    with pytest.raises(TypeError, match="scope"):
        Registry("x", scope=3)
    with pytest.raises(AssertionError, match="scope_name"):
        DefaultScope("x", scope_name=3)

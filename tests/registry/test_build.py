"""Building objects from config dicts, and the errors that name the config."""

from __future__ import annotations

import copy
import inspect
import re

import pytest
import torch

from cadence.config import Config
from cadence.registry import (
    HOOKS,
    MODELS,
    BuildError,
    Registry,
    RegistryError,
    build_from_cfg,
)


class Point:
    def __init__(self, x: int, y: int = 0, *, label: str = "p") -> None:
        self.x, self.y, self.label = x, y, label


class Holder:
    def __init__(self, child=None, items=None) -> None:
        self.child, self.items = child, items


def make_pair(left, right=None):
    return (left, right)


@pytest.fixture
def reg() -> Registry:
    registry = Registry("shape", scope="buildscope")
    registry.register_module(module=Point)
    registry.register_module(module=Holder)
    registry.register_module(module=make_pair)
    return registry


# -------------------------------------------------------------------- building
def test_build_by_registered_name_passes_other_keys_as_kwargs(reg) -> None:
    point = reg.build(dict(type="Point", x=3, y=4, label="q"))
    assert isinstance(point, Point)
    assert (point.x, point.y, point.label) == (3, 4, "q")


def test_build_with_a_registered_function_returns_its_result(reg) -> None:
    assert reg.build(dict(type="make_pair", left=1, right=2)) == (1, 2)


def test_type_may_be_a_class_or_function_that_is_not_registered(reg) -> None:
    class Unregistered:
        def __init__(self, value):
            self.value = value

    obj = reg.build(dict(type=Unregistered, value=7))
    assert isinstance(obj, Unregistered) and obj.value == 7
    assert reg.build(dict(type=make_pair, left="a")) == ("a", None)


def test_type_may_be_a_dotted_import_path_that_no_registry_has() -> None:
    assert MODELS.get("torch.nn.Linear") is torch.nn.Linear
    layer = MODELS.build(dict(type="torch.nn.Linear", in_features=2, out_features=3))
    assert isinstance(layer, torch.nn.Linear)
    assert tuple(layer.weight.shape) == (3, 2)


def test_type_of_another_kind_is_a_type_error(reg) -> None:
    with pytest.raises(TypeError, match="type"):
        reg.build(dict(type=42))


def test_nested_dicts_are_passed_through_unbuilt(reg) -> None:
    child_cfg = dict(type="Point", x=1)
    items_cfg = [dict(type="Point", x=2)]
    holder = reg.build(dict(type="Holder", child=child_cfg, items=items_cfg))
    assert isinstance(holder.child, dict)
    assert holder.child == dict(type="Point", x=1)
    assert holder.items == [dict(type="Point", x=2)]
    assert not isinstance(holder.items[0], Point)


def test_default_args_fill_only_missing_keys(reg) -> None:
    point = reg.build(dict(type="Point", x=1), default_args=dict(x=100, y=5))
    assert (point.x, point.y) == (1, 5)


def test_default_args_may_supply_the_type(reg) -> None:
    point = reg.build(dict(x=9), default_args=dict(type="Point"))
    assert isinstance(point, Point) and point.x == 9


def test_default_args_can_be_passed_positionally(reg) -> None:
    """The spec's signature is ``build(cfg, default_args=None)``."""
    point = reg.build(dict(type="Point", x=1), dict(y=5))
    assert (point.x, point.y) == (1, 5)


def test_build_does_not_mutate_cfg_or_default_args(reg) -> None:
    cfg = dict(type="Point", x=1, _scope_="buildscope")
    defaults = dict(y=2, label="d")
    cfg_before, defaults_before = copy.deepcopy(cfg), copy.deepcopy(defaults)
    reg.build(cfg, default_args=defaults)
    reg.build(cfg, default_args=defaults)
    assert cfg == cfg_before
    assert defaults == defaults_before


def test_build_from_cfg_function_matches_registry_build(reg) -> None:
    point = build_from_cfg(dict(type="Point", x=2), reg, dict(y=3))
    assert isinstance(point, Point) and (point.x, point.y) == (2, 3)


def test_non_mapping_cfg_and_default_args_are_type_errors(reg) -> None:
    with pytest.raises(TypeError):
        reg.build(["type", "Point"])
    with pytest.raises(TypeError):
        reg.build(dict(type="Point", x=1), default_args=[("y", 2)])


def test_custom_build_func_is_used_and_inherited_by_children() -> None:
    calls = []

    def build_func(cfg, *args, registry, **kwargs):
        calls.append((dict(cfg), args, registry, kwargs))
        return "built"

    parent = Registry("thing", scope="bfparent", build_func=build_func)
    child = Registry("thing", parent=parent, scope="bfchild")
    assert parent.build(dict(type="X"), default_args=dict(a=1)) == "built"
    assert child.build(dict(type="Y")) == "built"
    assert calls[0] == (dict(type="X"), (), parent, {"default_args": dict(a=1)})
    assert calls[1][2] is child


def test_registry_from_a_dict_subclass_config(reg) -> None:
    from cadence.config import ConfigDict

    point = reg.build(ConfigDict(type="Point", x=4))
    assert isinstance(point, Point) and point.x == 4


# ------------------------------------------------------------ unknown names
def test_unknown_type_raises_registry_error_with_did_you_mean() -> None:
    # cadence's own CheckpointHook and LoggerHook are registered in HOOKS
    with pytest.raises(RegistryError) as info:
        HOOKS.build(dict(type="CheckpointHok"))
    err = info.value
    assert isinstance(err, KeyError)
    message = str(err)
    assert "CheckpointHok" in message
    assert f"'{HOOKS.name}'" in message
    assert HOOKS.scope in message
    assert "Did you mean" in message and "'CheckpointHook'" in message.split("Did you mean")[1]
    assert "LoggerHook" not in message


def test_unknown_type_suggests_a_case_insensitive_match(reg) -> None:
    with pytest.raises(RegistryError, match="Did you mean 'Point'"):
        reg.build(dict(type="point", x=1))


def test_registry_error_is_catchable_as_key_error_and_prints_without_quotes(reg) -> None:
    with pytest.raises(KeyError) as info:
        reg.build(dict(type="Nothing"))
    # KeyError's own str() would be the repr of the message, in extra quotes
    assert str(info.value) == info.value.args[0]
    assert str(RegistryError("plain message")) == "plain message"


def test_unknown_type_with_nothing_close_has_no_suggestion(reg) -> None:
    with pytest.raises(RegistryError) as info:
        reg.build(dict(type="Zzzzzzzzzz"))
    assert "Did you mean" not in str(info.value)


def test_unknown_type_error_names_the_key_path(reg) -> None:
    with pytest.raises(RegistryError) as info:
        build_from_cfg(dict(type="Pont", x=1), reg, key_path="model.backbone")
    message = str(info.value)
    assert "model.backbone" in message
    assert "Did you mean 'Point'?" in message


def test_lookup_error_suggests_names_from_the_parent_registry() -> None:
    @MODELS.register_module()
    class ResidualNet:
        pass

    child = Registry("model", parent=MODELS, scope="suggestchild")
    with pytest.raises(RegistryError, match="Did you mean 'ResidualNet'"):
        child.build(dict(type="ResidualNt"))


def test_cfg_without_type_names_the_keys_it_has(reg) -> None:
    with pytest.raises(RegistryError) as info:
        reg.build(dict(depth=3, channels=8))
    message = str(info.value)
    assert "type" in message
    assert "depth" in message and "channels" in message
    assert reg.name in message


def test_cfg_without_type_mentions_the_key_path(reg) -> None:
    with pytest.raises(RegistryError, match=re.escape("model.neck")):
        build_from_cfg(dict(depth=3), reg, key_path="model.neck")


# ------------------------------------------------------------ bad arguments
def test_misspelled_argument_raises_build_error_with_details(reg) -> None:
    with pytest.raises(BuildError) as info:
        build_from_cfg(dict(type="Point", x=1, lable="q"), reg, key_path="model.head")
    err = info.value
    assert isinstance(err, TypeError)
    message = str(err)
    assert "Point" in message
    assert "lable" in message
    assert "Did you mean 'label'?" in message
    assert str(inspect.signature(Point)) in message
    assert "model.head" in message
    assert isinstance(err.__cause__, TypeError)
    assert not isinstance(err.__cause__, BuildError)


def test_missing_argument_raises_build_error_naming_it(reg) -> None:
    with pytest.raises(BuildError) as info:
        reg.build(dict(type="Point", y=2))
    message = str(info.value)
    assert "Point" in message
    assert "'x'" in message
    assert "missing" in message.lower()
    assert str(inspect.signature(Point)) in message
    assert info.value.__cause__ is not None


def test_build_error_for_a_function(reg) -> None:
    with pytest.raises(BuildError) as info:
        reg.build(dict(type="make_pair", left=1, rigth=2))
    message = str(info.value)
    assert "make_pair" in message
    assert "rigth" in message
    assert "Did you mean 'right'?" in message


def test_build_error_is_catchable_as_type_error(reg) -> None:
    with pytest.raises(TypeError):
        reg.build(dict(type="Point", x=1, z=3))


class Exploding:
    def __init__(self, kind: str = "value") -> None:
        if kind == "value":
            raise ValueError("inner value problem")
        if kind == "type":
            raise TypeError("inner type problem")
        raise RegistryError("inner registry problem")


def _notes(exc: BaseException) -> str:
    return "\n".join(getattr(exc, "__notes__", []))


@pytest.mark.parametrize(
    ("kind", "exc_type"),
    [("value", ValueError), ("type", TypeError), ("registry", RegistryError)],
)
def test_exception_inside_constructor_keeps_its_type_and_gets_a_note(reg, kind, exc_type) -> None:
    reg.register_module(module=Exploding)
    with pytest.raises(exc_type) as info:
        build_from_cfg(dict(type="Exploding", kind=kind), reg, key_path="model.head")
    err = info.value
    assert type(err) is exc_type  # not wrapped into a BuildError
    assert "inner" in str(err)
    notes = _notes(err)
    assert "Exploding" in notes
    assert "model.head" in notes


def test_build_error_raised_by_a_nested_build_is_not_rewrapped(reg) -> None:
    class Outer:
        def __init__(self, inner) -> None:
            self.inner = reg.build(inner)

    reg.register_module(module=Outer)
    with pytest.raises(BuildError) as info:
        reg.build(dict(type="Outer", inner=dict(type="Point", x=1, yy=2)))
    message = str(info.value)
    assert "Point" in message and "yy" in message
    assert "Outer" in _notes(info.value)


# ---------------------------------------------------------- config integration
CONFIG_SOURCE = """\
model = dict(
    type='ToyNet',
    backbone=dict(type='ToyBackbone', depht=3),
    head=dict(type='ToyHed'),
)
"""


class ToyBackbone:
    def __init__(self, depth: int = 1) -> None:
        self.depth = depth


class ToyNet:
    def __init__(self, backbone, head=None) -> None:
        self.backbone = MODELS.build(backbone)


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "toy_config.py"
    path.write_text(CONFIG_SOURCE)
    MODELS.register_module(module=ToyBackbone)
    MODELS.register_module(module=ToyNet)
    return path


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_config_node_from_file_names_key_path_file_and_line(config_file) -> None:
    cfg = Config.fromfile(str(config_file))
    with pytest.raises(BuildError) as info:
        MODELS.build(cfg.model.backbone)
    message = str(info.value)
    assert "model.backbone" in message
    assert f"{config_file}:{_line_of(CONFIG_SOURCE, 'depht')}" in message
    assert "Did you mean 'depth'?" in message


def test_config_node_error_from_a_nested_build_inside_a_constructor(config_file) -> None:
    cfg = Config.fromfile(str(config_file))
    with pytest.raises(BuildError) as info:
        MODELS.build(cfg["model"])
    message = str(info.value)
    assert "model.backbone" in message
    assert str(config_file) in message


def test_unknown_type_in_config_from_file_names_key_path_and_file(config_file) -> None:
    cfg = Config.fromfile(str(config_file))
    with pytest.raises(RegistryError) as info:
        MODELS.build(cfg.model.head)
    message = str(info.value)
    assert "ToyHed" in message
    assert "model.head" in message
    assert str(config_file) in message


def test_explicit_key_path_takes_precedence_over_the_remembered_one(config_file) -> None:
    cfg = Config.fromfile(str(config_file))
    with pytest.raises(BuildError) as info:
        build_from_cfg(cfg.model.backbone, MODELS, key_path="renamed.path")
    assert "renamed.path" in str(info.value)

"""DefaultOptimWrapperConstructor, paramwise rules and build_optim_wrapper."""

from __future__ import annotations

import inspect
import logging
import warnings

import pytest
import torch
from torch import nn

from cadence.config import Config
from cadence.optim import (
    AmpOptimWrapper,
    DefaultOptimWrapperConstructor,
    OptimWrapper,
    OptimWrapperDict,
    build_optim_wrapper,
)
from cadence.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS, RegistryError

BASE_LR, BASE_WD = 0.01, 1e-4


class _Net(nn.Module):
    """A module with every kind of parameter the paramwise rules tell apart."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
        self.backbone_neck = nn.Linear(4, 4)
        self.dwconv = nn.Conv2d(4, 4, 3, groups=4, bias=False)
        self.gn = nn.GroupNorm(2, 4)
        self.ln = nn.LayerNorm(4)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.head = nn.Linear(4, 2)
        self.scale = nn.Parameter(torch.ones(4))


def _groups_by_name(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, dict]:
    names = {id(p): n for n, p in model.named_parameters()}
    out = {}
    for group in optimizer.param_groups:
        assert len(group["params"]) == 1
        out[names[id(group["params"][0])]] = group
    return out


def _build(paramwise_cfg=None, optimizer=None, model=None, **wrapper):
    model = model or _Net()
    optimizer = optimizer or dict(type="SGD", lr=BASE_LR, momentum=0.9, weight_decay=BASE_WD)
    constructor = DefaultOptimWrapperConstructor(
        dict(optimizer=optimizer, **wrapper), paramwise_cfg
    )
    return model, constructor(model)


# ---------------------------------------------------------------- plain
def test_without_paramwise_cfg_one_group_holds_every_parameter():
    model = _Net()
    model.head.weight.requires_grad_(False)
    _, wrapper = _build(model=model)
    assert isinstance(wrapper, OptimWrapper) and type(wrapper) is OptimWrapper
    assert isinstance(wrapper.optimizer, torch.optim.SGD)
    (group,) = wrapper.optimizer.param_groups
    assert [id(p) for p in group["params"]] == [id(p) for p in model.parameters()]  # frozen too
    assert group["lr"] == BASE_LR and group["weight_decay"] == BASE_WD


def test_wrapper_arguments_and_type_come_from_the_config():
    _, wrapper = _build(
        type="AmpOptimWrapper", accumulative_counts=3, clip_grad=dict(max_norm=1.0), dtype="float16"
    )
    assert isinstance(wrapper, AmpOptimWrapper) and wrapper.accumulative_counts == 3
    assert wrapper.clip_grad_kwargs == {"max_norm": 1.0} and wrapper.cast_dtype == torch.float16


def test_config_dicts_are_not_modified():
    optim_cfg = dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.1, weight_decay=0.1))
    paramwise = dict(custom_keys={"head": dict(lr_mult=2.0)})
    constructor = DefaultOptimWrapperConstructor(optim_cfg, paramwise)
    constructor(_Net())
    constructor(_Net())  # reusable
    assert optim_cfg == dict(
        type="OptimWrapper", optimizer=dict(type="SGD", lr=0.1, weight_decay=0.1)
    )
    assert paramwise == dict(custom_keys={"head": dict(lr_mult=2.0)})


def test_a_wrapped_model_is_unwrapped():
    class Wrapped(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    inner = nn.Linear(2, 2)
    constructor = DefaultOptimWrapperConstructor(dict(optimizer=dict(type="SGD", lr=0.1)))
    wrapper = constructor(Wrapped(inner))
    assert wrapper.optimizer.param_groups[0]["params"] == list(inner.parameters())


def test_optimizer_class_instead_of_a_name():
    _, wrapper = _build(optimizer=dict(type=torch.optim.AdamW, lr=1e-3))
    assert isinstance(wrapper.optimizer, torch.optim.AdamW)


# ---------------------------------------------------------------- paramwise
def test_custom_keys_longest_match_wins_and_options_are_copied():
    paramwise = dict(
        custom_keys={
            "backbone": dict(lr_mult=0.1, decay_mult=0.5),
            "backbone_neck": dict(lr_mult=0.3),
            "head.bias": dict(decay_mult=0.0, lr_mult=2.0, momentum=0.5),
        }
    )
    model, wrapper = _build(paramwise)
    groups = _groups_by_name(model, wrapper.optimizer)
    assert groups["backbone.0.weight"]["lr"] == pytest.approx(BASE_LR * 0.1)
    assert groups["backbone.0.weight"]["weight_decay"] == pytest.approx(BASE_WD * 0.5)
    assert groups["backbone.1.bias"]["lr"] == pytest.approx(BASE_LR * 0.1)
    assert groups["backbone_neck.weight"]["lr"] == pytest.approx(BASE_LR * 0.3)
    assert groups["backbone_neck.weight"]["weight_decay"] == pytest.approx(BASE_WD)
    assert groups["head.bias"]["lr"] == pytest.approx(BASE_LR * 2.0)
    assert groups["head.bias"]["weight_decay"] == 0.0
    assert groups["head.bias"]["momentum"] == 0.5 and groups["head.bias"]["lr_mult"] == 2.0
    assert groups["head.weight"]["lr"] == BASE_LR and groups["head.weight"]["momentum"] == 0.9
    assert len(groups) == len(list(model.parameters()))


def test_equal_length_keys_are_tried_in_alphabetical_order():
    model = nn.Sequential()
    model.add_module("ab", nn.Linear(1, 1))
    cfg = dict(custom_keys={"b.": dict(lr_mult=3.0), "ab": dict(lr_mult=2.0)})
    with pytest.warns(UserWarning, match="'b.' matched no"):  # 'ab' took both parameters
        _, wrapper = _build(cfg, model=model)
    assert [g["lr"] for g in wrapper.optimizer.param_groups] == [pytest.approx(BASE_LR * 2.0)] * 2


def test_builtin_multipliers_follow_the_mmengine_rules():
    paramwise = dict(
        bias_lr_mult=2.0,
        bias_decay_mult=0.5,
        norm_decay_mult=0.0,
        dwconv_decay_mult=0.1,
        flat_decay_mult=0.3,
    )
    model, wrapper = _build(paramwise)
    groups = _groups_by_name(model, wrapper.optimizer)
    lr, wd = BASE_LR, BASE_WD
    expected = {
        # name: (lr, weight_decay); worked out from the rules by hand
        "backbone.0.weight": (lr, wd),
        "backbone.0.bias": (lr * 2.0, wd * 0.5),
        "backbone.1.weight": (lr, 0.0),  # BatchNorm: norm_decay_mult
        "backbone.1.bias": (lr, 0.0),  # norm biases get no bias_lr_mult
        "backbone_neck.weight": (lr, wd),
        "backbone_neck.bias": (lr * 2.0, wd * 0.5),
        "dwconv.weight": (lr, wd * 0.1),
        "gn.weight": (lr, 0.0),
        "gn.bias": (lr, 0.0),
        "ln.weight": (lr, 0.0),
        "ln.bias": (lr, 0.0),
        "inorm.weight": (lr, 0.0),
        "inorm.bias": (lr, 0.0),
        "head.weight": (lr, wd),
        "head.bias": (lr * 2.0, wd * 0.5),
        "scale": (lr, wd * 0.3),  # 1-D, not a bias or norm: flat_decay_mult
    }
    assert set(groups) == set(expected)
    for name, (want_lr, want_wd) in expected.items():
        assert groups[name]["lr"] == pytest.approx(want_lr), name
        assert groups[name]["weight_decay"] == pytest.approx(want_wd), name


def test_paramwise_skips_frozen_parameters_like_mmengine():
    model = _Net()
    model.backbone.requires_grad_(False)
    _, wrapper = _build(dict(norm_decay_mult=0.0), model=model)
    grouped = {id(g["params"][0]) for g in wrapper.optimizer.param_groups}
    assert not grouped & {id(p) for p in model.backbone.parameters()}
    assert grouped == {id(p) for p in model.parameters() if p.requires_grad}


def _tied() -> nn.Module:
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    model[1].weight = model[0].weight
    return model


def test_a_shared_parameter_is_an_error_unless_bypassed(current_log):
    with pytest.raises(ValueError, match=r"1\.weight is shared.*bypass_duplicate=True"):
        _build(dict(bias_lr_mult=2.0), model=_tied())
    model, wrapper = _build(dict(bypass_duplicate=True), model=_tied())
    # a WARNING of the current logger, as mmengine logs it (not a Python warning)
    assert [r.levelno for r in current_log] == [logging.WARNING]
    assert "bypass_duplicate=True" in current_log[0].getMessage()
    params = [g["params"][0] for g in wrapper.optimizer.param_groups]
    assert len(params) == 3 and len({id(p) for p in params}) == 3


def test_unknown_paramwise_key_suggests_the_right_one():
    with pytest.raises(ValueError, match="unknown key 'bias_lr_mul'.*Did you mean.*'bias_lr_mult'"):
        _build(dict(bias_lr_mul=2.0))


@pytest.mark.parametrize(
    ("paramwise", "match"),
    [
        (dict(norm_decay_mult=0.0), "norm_decay_mult multiplies the optimizer's weight_decay"),
        (dict(custom_keys={"a": dict(decay_mult=0.0)}), r"custom_keys\.a\.decay_mult"),
    ],
)
def test_decay_multipliers_need_a_weight_decay(paramwise, match):
    with pytest.raises(ValueError, match=match):
        _build(paramwise, optimizer=dict(type="SGD", lr=0.1))


def test_bad_paramwise_values():
    with pytest.raises(TypeError, match="custom_keys must be a dict"):
        _build(dict(custom_keys=["backbone"]))
    with pytest.raises(TypeError, match="bias_lr_mult must be a number"):
        _build(dict(bias_lr_mult="2"))
    with pytest.raises(TypeError, match="paramwise_cfg must be None or a dict"):
        _build([("bias_lr_mult", 2.0)])


def test_custom_key_that_matches_nothing_warns():
    with pytest.warns(UserWarning, match="'backbon' matched no trainable parameter"):
        _build(dict(custom_keys={"backbon": dict(lr_mult=0.1), "backbone": dict(lr_mult=0.1)}))


def test_a_subclass_with_its_own_grouping_may_use_its_own_keys():
    class LayerDecay(DefaultOptimWrapperConstructor):
        def add_params(self, params, module, prefix="", **kwargs):
            rate = self.paramwise_cfg["decay_rate"]
            for depth, child in enumerate(module.children()):
                for p in child.parameters():
                    params.append({"params": [p], "lr": self.base_lr * rate**depth})

    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    wrapper = LayerDecay(dict(optimizer=dict(type="SGD", lr=1.0)), dict(decay_rate=0.5))(model)
    assert [g["lr"] for g in wrapper.optimizer.param_groups] == [1.0, 1.0, 0.5, 0.5]


def test_a_subclass_keeping_the_default_grouping_may_add_keys():
    class WithFrozenPrefix(DefaultOptimWrapperConstructor):
        def __call__(self, model):
            prefix = self.paramwise_cfg["frozen_prefix"]
            for name, param in model.named_parameters():
                param.requires_grad_(not name.startswith(prefix))
            return super().__call__(model)

    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    constructor = WithFrozenPrefix(
        dict(optimizer=dict(type="SGD", lr=1.0)), dict(frozen_prefix="0.", bias_lr_mult=2.0)
    )
    wrapper = constructor(model)
    # the default grouping still applies its own keys and skips the frozen parameters
    assert [g["lr"] for g in wrapper.optimizer.param_groups] == [1.0, 2.0]


# ---------------------------------------------------------------- constructor errors
def test_missing_optimizer_and_unknown_type_name_the_config_key():
    with pytest.raises(KeyError, match="optim_wrapper needs an 'optimizer' key"):
        DefaultOptimWrapperConstructor(dict(type="OptimWrapper"))
    constructor = DefaultOptimWrapperConstructor(dict(optimizer=dict(type="AdamWW", lr=0.1)))
    with pytest.raises(RegistryError, match=r"'optim_wrapper\.optimizer'.*Did you mean.*'AdamW'"):
        constructor(nn.Linear(1, 1))


def test_wrong_optimizer_argument_is_a_build_error_naming_the_key():
    constructor = DefaultOptimWrapperConstructor(
        dict(optimizer=dict(type="SGD", lr=0.1, momentm=0.9))
    )
    with pytest.raises(
        TypeError, match=r"optim_wrapper\.optimizer.*'momentm'.*Did you mean 'momentum'"
    ):
        constructor(nn.Linear(1, 1))


# ---------------------------------------------------------------- build_optim_wrapper
def test_build_optim_wrapper_uses_default_constructor_and_paramwise_cfg():
    model = _Net()
    cfg = dict(
        type="OptimWrapper",
        optimizer=dict(type="SGD", lr=BASE_LR, weight_decay=BASE_WD),
        paramwise_cfg=dict(norm_decay_mult=0.0),
        accumulative_counts=2,
    )
    wrapper = build_optim_wrapper(model, cfg)
    groups = _groups_by_name(model, wrapper.optimizer)
    assert groups["gn.weight"]["weight_decay"] == 0.0 and groups["head.weight"]["weight_decay"] > 0
    assert wrapper.accumulative_counts == 2
    assert "paramwise_cfg" in cfg  # not modified


def test_build_optim_wrapper_with_a_registered_custom_constructor():
    seen = {}

    @OPTIM_WRAPPER_CONSTRUCTORS.register_module()
    class MyConstructor:
        def __init__(self, optim_wrapper_cfg, paramwise_cfg=None):
            seen["cfg"], seen["paramwise"] = optim_wrapper_cfg, paramwise_cfg

        def __call__(self, model):
            return OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.5))

    wrapper = build_optim_wrapper(
        nn.Linear(2, 2),
        dict(
            optimizer=dict(type="SGD", lr=0.1), constructor="MyConstructor", paramwise_cfg={"a": 1}
        ),
    )
    assert wrapper.get_lr() == {"lr": [0.5]}
    assert seen == {"cfg": {"optimizer": {"type": "SGD", "lr": 0.1}}, "paramwise": {"a": 1}}


def test_build_optim_wrapper_reports_an_unknown_constructor():
    with pytest.raises(RegistryError, match=r"'optim_wrapper\.constructor'.*Did you mean"):
        build_optim_wrapper(
            nn.Linear(1, 1),
            dict(optimizer=dict(type="SGD", lr=0.1), constructor="DefaultOptimWrapperConstructer"),
        )


def test_build_optim_wrapper_returns_built_wrappers_and_wraps_built_optimizers():
    model = nn.Linear(2, 2)
    built = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    assert build_optim_wrapper(model, built) is built
    gan = OptimWrapperDict(a=built)
    assert build_optim_wrapper(model, gan) is gan
    sgd = torch.optim.SGD(model.parameters(), lr=0.2)
    wrapped = build_optim_wrapper(model, dict(optimizer=sgd, clip_grad=dict(max_norm=1.0)))
    assert wrapped.optimizer is sgd and wrapped.clip_grad_kwargs == {"max_norm": 1.0}
    with pytest.raises(TypeError, match="optim_wrapper: an optimizer wrapper should be a dict"):
        build_optim_wrapper(model, [sgd])  # type: ignore[arg-type]


class _Gan(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.generator = nn.Linear(2, 2)
        self.discriminator = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))


def test_one_config_per_sub_model_builds_an_optim_wrapper_dict():
    model = _Gan()
    cfg = dict(
        generator=dict(optimizer=dict(type="Adam", lr=1e-3)),
        discriminator=dict(
            type="OptimWrapper",
            optimizer=dict(type="SGD", lr=0.1, weight_decay=0.1),
            paramwise_cfg=dict(norm_decay_mult=0.0),
        ),
    )
    wrappers = build_optim_wrapper(model, cfg)
    assert isinstance(wrappers, OptimWrapperDict) and list(wrappers.keys()) == list(cfg)
    gen_params = wrappers["generator"].optimizer.param_groups[0]["params"]
    assert gen_params == list(model.generator.parameters())
    disc = _groups_by_name(model.discriminator, wrappers["discriminator"].optimizer)
    assert disc["1.weight"]["weight_decay"] == 0.0 and disc["0.weight"]["weight_decay"] == 0.1
    assert wrappers.get_lr() == {"generator.lr": [1e-3], "discriminator.base_lr": [0.1],
                                 "discriminator.lr": [0.1] * 4}  # fmt: skip


def test_sub_model_errors_name_the_config_key():
    with pytest.raises(AttributeError, match=r"optim_wrapper\.gen .*sub-modules are generator"):
        build_optim_wrapper(_Gan(), dict(gen=dict(optimizer=dict(type="SGD", lr=0.1))))
    with pytest.raises(ValueError, match=r"optim_wrapper\.generator is 0\.1"):
        build_optim_wrapper(_Gan(), dict(generator=0.1))
    with pytest.raises(RegistryError, match=r"optim_wrapper\.discriminator\.optimizer"):
        build_optim_wrapper(_Gan(), dict(discriminator=dict(optimizer=dict(type="SGDD", lr=1))))


def test_errors_from_a_loaded_config_name_its_key(tmp_path):
    path = tmp_path / "cfg.py"
    path.write_text(
        "optim_wrapper = dict(\n"
        "    type='OptimWrapper',\n"
        "    optimizer=dict(type='AdamX', lr=0.1),\n"
        "    paramwise_cfg=dict(custom_keys={'0': dict(lr_mult=0.1)}),\n"
        ")\n"
    )
    cfg = Config.fromfile(str(path))
    with pytest.raises(RegistryError, match=r"'optim_wrapper\.optimizer'.*cfg\.py"):
        build_optim_wrapper(nn.Sequential(nn.Linear(1, 1)), cfg.optim_wrapper)
    cfg.optim_wrapper.optimizer.type = "Adamax"
    wrapper = build_optim_wrapper(nn.Sequential(nn.Linear(1, 1)), cfg.optim_wrapper)
    assert [g["lr"] for g in wrapper.optimizer.param_groups] == [pytest.approx(0.01)] * 2


# ---------------------------------------------------------------- torch optimizers
def _torch_optimizer_names() -> list[str]:
    return sorted(
        name
        for name, obj in vars(torch.optim).items()
        if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer)
        and obj is not torch.optim.Optimizer
    )  # fmt: skip


@pytest.mark.parametrize("name", _torch_optimizer_names())
def test_every_torch_optimizer_builds_by_name(name):
    weight = nn.Parameter(torch.randn(3, 3))  # 2-D: Muon accepts only matrices
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimizer = OPTIMIZERS.build(dict(type=name, lr=0.01), default_args=dict(params=[weight]))
    assert type(optimizer) is getattr(torch.optim, name)
    assert optimizer.param_groups[0]["params"] == [weight]
    assert optimizer.param_groups[0]["lr"] == 0.01


def test_mmengine_alias_for_torch_adafactor():
    assert OPTIMIZERS.get("TorchAdafactor") is torch.optim.Adafactor


class HasModuleAttribute(nn.Module):
    """A model whose own submodule is called ``module`` (as a TTA model's is): not a wrapper."""

    def __init__(self) -> None:
        super().__init__()
        self.module = nn.Linear(2, 2)
        self.head = nn.Linear(2, 1)


def test_a_model_with_a_module_attribute_is_not_unwrapped():
    model = HasModuleAttribute()
    wrapper = build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.1)))
    optimized = {id(p) for group in wrapper.param_groups for p in group["params"]}
    assert optimized == {id(p) for p in model.parameters()}  # the head too


def test_a_ddp_style_wrapper_is_unwrapped():
    inner = HasModuleAttribute()
    wrapped = nn.DataParallel(inner)  # a torch wrapper: the optimizer sees inner's parameters
    wrapper = build_optim_wrapper(wrapped, dict(optimizer=dict(type="SGD", lr=0.1)))
    assert {id(p) for g in wrapper.param_groups for p in g["params"]} == {
        id(p) for p in inner.parameters()}  # fmt: skip

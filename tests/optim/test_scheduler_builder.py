"""build_param_schedulers: configs, conversion, default end, named wrappers, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import cadence.optim.scheduler as scheduler_pkg
from cadence.config import Config
from cadence.optim.scheduler import (
    INF,
    CosineAnnealingLR,
    LinearLR,
    MultiStepLR,
    StepLR,
    _ParamScheduler,
    build_param_schedulers,
    build_scheduler_from_cfg,
)
from cadence.registry import PARAM_SCHEDULERS, BuildError, RegistryError


class StandInWrapper:
    """Just what a scheduler needs from an optimizer wrapper: ``.optimizer``."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer


def make_sgd(lr: float = 0.1) -> torch.optim.SGD:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr, momentum=0.9)


def test_every_exported_scheduler_is_registered() -> None:
    classes = [
        getattr(scheduler_pkg, name)
        for name in scheduler_pkg.__all__
        if isinstance(getattr(scheduler_pkg, name), type)
        and issubclass(getattr(scheduler_pkg, name), _ParamScheduler)
        and not name.startswith("_")
        and not name.endswith("Mixin")
    ]
    assert len(classes) == 29
    for cls in classes:
        assert PARAM_SCHEDULERS.get(cls.__name__) is cls


def test_registry_build_of_a_plain_config() -> None:
    optimizer = make_sgd()
    scheduler = PARAM_SCHEDULERS.build(
        dict(type="LinearLR", start_factor=0.5, by_epoch=False, begin=0, end=3),
        default_args=dict(optimizer=optimizer),
    )
    assert isinstance(scheduler, LinearLR)
    assert optimizer.param_groups[0]["lr"] == 0.05


def test_mmengine_warmup_multistep_config() -> None:
    optimizer = make_sgd()
    cfg = [
        dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=500),
        dict(type="MultiStepLR", by_epoch=True, milestones=[8, 11], gamma=0.1),
    ]
    warmup, multistep = build_param_schedulers(optimizer, cfg, epoch_length=100, max_epochs=12)
    assert isinstance(warmup, LinearLR) and isinstance(multistep, MultiStepLR)
    assert (warmup.by_epoch, warmup.begin, warmup.end) == (False, 0, 500)
    assert (multistep.by_epoch, multistep.end, multistep.milestones) == (True, 12, {8: 1, 11: 1})
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1e-4)
    assert cfg[1] == dict(type="MultiStepLR", by_epoch=True, milestones=[8, 11], gamma=0.1)


def test_mmengine_converted_warmup_cosine_config() -> None:
    cfg = [
        dict(type="LinearLR", start_factor=0.1, by_epoch=True, begin=0, end=5,
             convert_to_iter_based=True),
        dict(type="CosineAnnealingLR", T_max=95, by_epoch=True, begin=5, end=100,
             convert_to_iter_based=True),
    ]  # fmt: skip
    warmup, cosine = build_param_schedulers(make_sgd(), cfg, epoch_length=10)
    assert (warmup.by_epoch, warmup.begin, warmup.end, warmup.total_iters) == (False, 0, 50, 49)
    assert (cosine.by_epoch, cosine.begin, cosine.end, cosine.T_max) == (False, 50, 1000, 950)


def test_convert_without_epoch_length_names_the_key() -> None:
    cfg = [
        dict(type="LinearLR", by_epoch=False, end=5),
        dict(type="CosineAnnealingLR", T_max=5, convert_to_iter_based=True),
    ]
    with pytest.raises(ValueError, match=r"param_scheduler\.1.*needs epoch_length"):
        build_param_schedulers(make_sgd(), cfg)


def test_convert_with_by_epoch_false_is_an_error() -> None:
    cfg = dict(type="StepLR", step_size=2, by_epoch=False, convert_to_iter_based=True)
    with pytest.raises(ValueError, match="by_epoch=False"):
        build_param_schedulers(make_sgd(), cfg, epoch_length=4)


def test_epoch_length_in_config_takes_precedence() -> None:
    cfg = dict(type="StepLR", step_size=2, convert_to_iter_based=True, epoch_length=3)
    (scheduler,) = build_param_schedulers(make_sgd(), cfg, epoch_length=10)
    assert scheduler.step_size == 6


def test_unknown_argument_gets_did_you_mean_and_key_path() -> None:
    cfg = [dict(type="MultiStepLR", milestones=[1]), dict(type="LinearLR", start_factr=0.1)]
    with pytest.raises(BuildError, match=r"param_scheduler\.1.*'start_factr'.*'start_factor'"):
        build_param_schedulers(make_sgd(), cfg)


def test_typo_in_convert_key_is_suggested() -> None:
    cfg = dict(type="LinearLR", convert_to_iter_base=True)
    with pytest.raises(BuildError, match="Did you mean.*'convert_to_iter_based'"):
        build_param_schedulers(make_sgd(), cfg)


def test_missing_required_argument_is_reported() -> None:
    with pytest.raises(BuildError, match="missing required argument.*'step_size'"):
        build_param_schedulers(make_sgd(), [dict(type="StepLR")])


def test_unknown_type_suggests_registered_name() -> None:
    with pytest.raises(
        RegistryError, match=r"param_scheduler\.0.*Did you mean.*'CosineAnnealingLR'"
    ):
        build_param_schedulers(make_sgd(), [dict(type="CosineAnealingLR")])


def test_config_without_type() -> None:
    with pytest.raises(RegistryError, match=r"param_scheduler\.0.*no 'type'"):
        build_param_schedulers(make_sgd(), [dict(begin=0)])


def test_constructor_errors_carry_the_key_path() -> None:
    with pytest.raises(ValueError, match="start_factor must be") as info:
        build_param_schedulers(make_sgd(), [dict(type="LinearLR", start_factor=2.0)])
    assert "config key 'param_scheduler.0.start_factor'" in str(info.value)


def test_errors_name_the_config_file_line(tmp_path: Path) -> None:
    path = tmp_path / "exp.py"
    path.write_text(
        "param_scheduler = [\n"
        "    dict(type='LinearLR', start_factor=0.1, by_epoch=False, end=5),\n"
        "    dict(type='MultiStepLR', milestones=[8, 11], gama=0.1),\n"
        "]\n"
    )
    cfg = Config.fromfile(str(path))
    with pytest.raises(BuildError, match=r"param_scheduler\.1.*exp\.py:3.*'gamma'"):
        build_param_schedulers(make_sgd(), cfg.param_scheduler)


def test_single_dict_none_and_built_schedulers() -> None:
    optimizer = make_sgd()
    (single,) = build_param_schedulers(optimizer, dict(type="StepLR", step_size=2))
    assert isinstance(single, StepLR)
    assert build_param_schedulers(optimizer, None) == []
    built = CosineAnnealingLR(optimizer, T_max=3)
    assert build_param_schedulers(optimizer, built) == [built]
    mixed = build_param_schedulers(optimizer, [built, dict(type="StepLR", step_size=1)])
    assert mixed[0] is built and isinstance(mixed[1], StepLR)


def test_bad_entries_are_type_errors() -> None:
    with pytest.raises(TypeError, match=r"param_scheduler\.1' must be a scheduler config"):
        build_param_schedulers(make_sgd(), [dict(type="StepLR", step_size=1), "StepLR"])
    with pytest.raises(TypeError, match="param_scheduler' must be"):
        build_param_schedulers(make_sgd(), 3)
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        build_param_schedulers(object(), [])


@pytest.mark.parametrize(
    ("cfg", "expected_end"),
    [
        (dict(type="StepLR", step_size=2), 12),
        (dict(type="StepLR", step_size=2, by_epoch=False), 1200),
        (dict(type="StepLR", step_size=2, end=7), 7),
        (dict(type="StepLR", step_size=2, convert_to_iter_based=True), 1200),
    ],
)
def test_default_end_from_max_epochs_and_iters(cfg: dict[str, Any], expected_end: int) -> None:
    (scheduler,) = build_param_schedulers(
        make_sgd(), cfg, epoch_length=100, max_epochs=12, max_iters=1200
    )
    assert scheduler.end == expected_end


def test_default_end_stays_infinite_without_limits() -> None:
    (scheduler,) = build_param_schedulers(make_sgd(), dict(type="StepLR", step_size=2))
    assert scheduler.end == INF


def test_cosine_t_max_follows_default_end() -> None:
    (scheduler,) = build_param_schedulers(
        make_sgd(), dict(type="CosineAnnealingLR", by_epoch=False, begin=10), max_iters=110
    )
    assert (scheduler.end, scheduler.T_max) == (110, 100)


def test_stand_in_wrapper_is_accepted() -> None:
    optimizer = make_sgd()
    (scheduler,) = build_param_schedulers(StandInWrapper(optimizer), dict(type="LinearLR"))
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1 / 3)
    assert scheduler.optimizer.optimizer is optimizer


def test_foreign_scheduler_class_gets_the_bare_optimizer() -> None:
    optimizer = make_sgd()
    (scheduler,) = build_param_schedulers(
        StandInWrapper(optimizer),
        dict(type=torch.optim.lr_scheduler.PolynomialLR, total_iters=4),
        epoch_length=10,
    )
    assert isinstance(scheduler, torch.optim.lr_scheduler.PolynomialLR)
    assert scheduler.optimizer is optimizer


# ------------------------------------------------------------ named wrappers
def named() -> dict[str, Any]:
    return {"generator": StandInWrapper(make_sgd(0.1)), "critic": make_sgd(0.2)}


def test_named_wrappers_with_one_list_each() -> None:
    wrappers = named()
    result = build_param_schedulers(
        wrappers,
        dict(
            generator=[dict(type="StepLR", step_size=2)],
            critic=dict(type="LinearLR", start_factor=0.5),
        ),
    )
    assert isinstance(result, dict) and list(result) == ["generator", "critic"]
    assert isinstance(result["generator"][0], StepLR)
    assert isinstance(result["critic"][0], LinearLR)
    assert wrappers["critic"].param_groups[0]["lr"] == pytest.approx(0.1)


def test_named_wrappers_share_one_config() -> None:
    wrappers = named()
    result = build_param_schedulers(wrappers, [dict(type="LinearLR", start_factor=0.5)])
    assert isinstance(result, dict)
    first, second = result["generator"][0], result["critic"][0]
    assert first is not second
    assert first.base_values == [0.1] and second.base_values == [0.2]


def test_named_wrappers_missing_and_unknown_names() -> None:
    with pytest.raises(KeyError, match="no entry for.*critic"):
        build_param_schedulers(named(), dict(generator=[]))
    with pytest.raises(KeyError, match="Did you mean 'critic'"):
        build_param_schedulers(named(), dict(generator=[], critic=[], critc=[]))


def test_per_name_config_for_a_single_wrapper_is_an_error() -> None:
    with pytest.raises(ValueError, match="per optimizer wrapper"):
        build_param_schedulers(make_sgd(), dict(generator=[dict(type="StepLR", step_size=1)]))


def test_named_error_paths_include_the_name() -> None:
    with pytest.raises(BuildError, match=r"param_scheduler\.critic\.0"):
        build_param_schedulers(named(), dict(generator=[], critic=[dict(type="StepLR", sz=1)]))


def test_named_wrapper_object_with_keys_and_getitem() -> None:
    class WrapperDict:
        def __init__(self, **wrappers: Any) -> None:
            self._wrappers = wrappers

        def keys(self) -> Any:
            return self._wrappers.keys()

        def __getitem__(self, name: str) -> Any:
            return self._wrappers[name]

    result = build_param_schedulers(
        WrapperDict(a=make_sgd(), b=make_sgd()), dict(type="StepLR", step_size=1)
    )
    assert isinstance(result, dict) and sorted(result) == ["a", "b"]


def test_build_scheduler_from_cfg_as_a_build_function() -> None:
    optimizer = make_sgd()
    scheduler = build_scheduler_from_cfg(
        dict(type="StepLR", step_size=1, convert_to_iter_based=True),
        default_args=dict(optimizer=optimizer, epoch_length=5),
    )
    assert (scheduler.step_size, scheduler.by_epoch) == (5, False)
    with pytest.raises(TypeError, match="must be a dict"):
        build_scheduler_from_cfg(["StepLR"])  # type: ignore[arg-type]

"""ReduceOnPlateau: rules, patience, cooldown, min_value, window; against torch too."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.optim import lr_scheduler as torch_sched

from cadence.optim.scheduler import (
    ReduceOnPlateauLR,
    ReduceOnPlateauMomentum,
    ReduceOnPlateauParamScheduler,
)


def make_sgd(lrs: tuple[float, ...] = (1.0,)) -> torch.optim.SGD:
    groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0], momentum=0.9)


def run_epochs(scheduler: Any, optimizer: Any, metrics: list[float], key: str = "loss") -> list:
    """Per epoch: count the epoch, then validate; return the lr after each validation."""
    values = []
    for value in metrics:
        scheduler.step()
        scheduler.step({key: value})
        values.append(optimizer.param_groups[0]["lr"])
    return values


def test_need_val_args_flag() -> None:
    assert ReduceOnPlateauLR.need_val_args is True
    assert ReduceOnPlateauMomentum.need_val_args is True


def test_less_rule_with_patience() -> None:
    optimizer = make_sgd()
    scheduler = ReduceOnPlateauLR(optimizer, monitor="loss", patience=2, factor=0.5)
    # improve, improve, then 3 bad epochs: the third exceeds patience=2 -> reduce
    got = run_epochs(scheduler, optimizer, [5.0, 4.0, 4.0, 4.5, 4.2, 3.0, 3.0, 3.0, 3.0])
    assert got == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25]


def test_greater_rule_with_cooldown_and_min_value() -> None:
    optimizer = make_sgd()
    scheduler = ReduceOnPlateauLR(
        optimizer, monitor="acc", rule="greater", patience=0, cooldown=2, factor=0.1,
        min_value=0.005,
    )  # fmt: skip
    metrics = [0.5, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4]
    got = run_epochs(scheduler, optimizer, metrics, key="acc")
    # epoch 1 bad -> 0.1; two cooldown epochs ignore bad ones; epoch 4 -> 0.01;
    # cooldown; epoch 7 would give 0.001 but min_value clamps to 0.005
    assert got == pytest.approx([1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.005])


def test_threshold_rel_and_abs() -> None:
    rel_opt = make_sgd()
    rel = ReduceOnPlateauLR(rel_opt, patience=0, threshold=0.1, factor=0.5)
    # 0.95 is not 10% better than 1.0 -> bad epoch
    assert run_epochs(rel, rel_opt, [1.0, 0.95]) == [1.0, 0.5]
    abs_opt = make_sgd()
    absolute = ReduceOnPlateauLR(abs_opt, patience=0, threshold=0.01, threshold_rule="abs")
    assert run_epochs(absolute, abs_opt, [1.0, 0.985]) == [1.0, 1.0]


def test_min_value_per_group_and_eps() -> None:
    optimizer = make_sgd((1.0, 1e-8))
    scheduler = ReduceOnPlateauLR(optimizer, patience=0, factor=0.5, min_value=[0.3, 0.0])
    for value in (1.0, 2.0, 2.0, 2.0):
        scheduler.step({"loss": value})
    lrs = [group["lr"] for group in optimizer.param_groups]
    # the second group's reduction (5e-9) is below eps=1e-8, so it is skipped
    assert lrs == [0.3, 1e-8]


def test_window_counts_training_epochs() -> None:
    optimizer = make_sgd()
    scheduler = ReduceOnPlateauLR(optimizer, patience=0, factor=0.5, begin=2, end=4)
    got = run_epochs(scheduler, optimizer, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    # after training epoch e the counter is e + 1, so only the validations after
    # epochs 1 and 2 (counter 2 and 3) are inside [2, 4)
    assert got == [1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
    assert scheduler.last_step == 1


def test_matches_torch_reduce_lr_on_plateau() -> None:
    metrics = [3.0, 2.5, 2.6, 2.6, 2.4, 2.45, 2.5, 2.5, 2.5, 1.0, 1.1, 1.2, 1.3, 1.4]
    ours_opt, theirs_opt = make_sgd(), make_sgd()
    ours = ReduceOnPlateauLR(ours_opt, patience=1, cooldown=1, factor=0.3, min_value=0.02)
    theirs = torch_sched.ReduceLROnPlateau(
        theirs_opt, mode="min", patience=1, cooldown=1, factor=0.3, min_lr=0.02
    )
    expected = []
    for value in metrics:
        theirs.step(value)
        expected.append(theirs_opt.param_groups[0]["lr"])
    assert run_epochs(ours, ours_opt, metrics) == expected


def test_momentum_variant_on_adam() -> None:
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], betas=(0.9, 0.999))
    scheduler = ReduceOnPlateauMomentum(optimizer, patience=0, factor=0.5)
    scheduler.step({"loss": 1.0})
    scheduler.step({"loss": 2.0})
    assert optimizer.param_groups[0]["betas"] == (0.45, 0.999)


def test_tensor_metrics_are_accepted() -> None:
    optimizer = make_sgd()
    scheduler = ReduceOnPlateauLR(optimizer, patience=0, factor=0.5)
    scheduler.step({"loss": torch.tensor(1.0)})
    scheduler.step({"loss": torch.tensor(1.5)})
    assert optimizer.param_groups[0]["lr"] == 0.5


def test_missing_monitor_key_suggests_close_name() -> None:
    scheduler = ReduceOnPlateauLR(make_sgd(), monitor="los")
    with pytest.raises(KeyError, match="Did you mean 'loss'"):
        scheduler.step({"loss": 1.0, "acc": 0.5})


def test_metrics_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="expects the metrics dict"):
        ReduceOnPlateauLR(make_sgd()).step([1.0])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(factor=1.0), "factor must be < 1.0"),
        (dict(rule="min"), "rule must be 'less' or 'greater'"),
        (dict(threshold_rule="relative"), "threshold_rule must be"),
        (dict(threshold=-1.0), "threshold must be >= 0"),
        (dict(by_epoch=False), "only supports by_epoch=True"),
        (dict(min_value=[0.1, 0.2]), "expected 1 min_value entries"),
    ],
)
def test_rejects_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ReduceOnPlateauLR(make_sgd(), **kwargs)


def test_cannot_convert_to_iteration_based() -> None:
    with pytest.raises(ValueError, match="cannot be converted"):
        ReduceOnPlateauParamScheduler.build_iter_from_epoch(make_sgd(), "lr", epoch_length=3)

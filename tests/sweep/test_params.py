"""``--param KEY=KIND:ARGS`` specs: what each kind samples and how a bad spec is reported."""

from __future__ import annotations

import optuna
import pytest

from cadence.config import Config
from cadence.sweep import SweepError, infer_direction, parse_param, parse_params
from cadence.sweep.params import check_keys


def test_each_kind_parses_to_its_bounds_or_choices():
    assert parse_param("optim_wrapper.optimizer.lr=loguniform:1e-4:1e-1").key == (
        "optim_wrapper.optimizer.lr"
    )
    lr = parse_param("a.lr=loguniform:1e-4:1e-1")
    assert (lr.kind, lr.low, lr.high) == ("loguniform", 1e-4, 0.1)
    wd = parse_param("wd=uniform:0:0.5")
    assert (wd.kind, wd.low, wd.high) == ("uniform", 0.0, 0.5)
    depth = parse_param("model.depth=int:2:8")
    assert (depth.kind, depth.low, depth.high) == ("int", 2, 8)
    opt = parse_param("opt=choice:SGD,AdamW")
    assert (opt.kind, opt.choices) == ("choice", ("SGD", "AdamW"))
    # choice values read as --cfg-options reads scalars
    assert parse_param("bs=choice:16,32,true,None,0.5").choices == (16, 32, True, None, 0.5)


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("lr", "expected KEY=KIND:ARGS"),
        ("=uniform:0:1", "expected KEY=KIND:ARGS"),
        ("a..b=uniform:0:1", "expected KEY=KIND:ARGS"),
        ("lr=logunif:1e-4:1", "unknown kind 'logunif'"),
        ("lr=loguniform:1e-4", "loguniform needs two bounds"),
        ("lr=uniform:0:1:2", "uniform needs two bounds"),
        ("lr=uniform:zero:1", "'zero' is not a number"),
        ("n=int:1.5:4", "'1.5' is not an integer"),
        ("lr=uniform:1:1", "LOW must be smaller than HIGH"),
        ("lr=loguniform:0:1", "loguniform needs LOW > 0"),
        ("opt=choice:", "choice needs values"),
        ("opt=choice:a,,b", "choice needs values"),
        ("opt=choice:a,a", "lists a value twice"),
    ],
)
def test_a_bad_spec_is_named_with_the_valid_kinds(spec, why):
    with pytest.raises(SweepError) as info:
        parse_param(spec)
    message = str(info.value)
    assert f"--param {spec!r}" in message and why in message
    assert "loguniform:LOW:HIGH, uniform:LOW:HIGH, int:LOW:HIGH, choice:A,B,..." in message
    assert info.value.exit_code == 2


def test_no_param_or_a_key_given_twice_is_refused():
    with pytest.raises(SweepError, match="at least one --param"):
        parse_params([])
    with pytest.raises(SweepError, match="'lr' is given twice"):
        parse_params(["lr=uniform:0:1", "lr=uniform:1:2"])


def test_swept_keys_must_exist_in_the_config():
    cfg = Config(dict(optim_wrapper=dict(optimizer=dict(lr=0.1)), pipeline=[dict(size=3)]))
    check_keys(parse_params(["optim_wrapper.optimizer.lr=uniform:0:1",
                             "pipeline.0.size=int:1:4"]), cfg)  # fmt: skip
    with pytest.raises(SweepError) as info:
        check_keys([parse_param("optim_wrapper.optimiser.lr=uniform:0:1")], cfg)
    assert str(info.value) == (
        "--param optim_wrapper.optimiser.lr: the config has no key 'optimiser' under "
        "optim_wrapper; keys there: optimizer"
    )


def test_suggested_values_stay_in_their_ranges_and_kinds():
    specs = parse_params(["lr=loguniform:1e-4:1e-1", "wd=uniform:0:0.5", "depth=int:2:4",
                          "opt=choice:SGD,AdamW"])  # fmt: skip
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(20):
        trial = study.ask()
        lr, wd, depth, opt = (spec.suggest(trial) for spec in specs)
        assert 1e-4 <= lr <= 0.1 and 0 <= wd <= 0.5 and opt in ("SGD", "AdamW")
        assert isinstance(depth, int) and 2 <= depth <= 4
        study.tell(trial, 0.0)
    lrs = [t.params["lr"] for t in study.trials]
    # log-uniform: two draws in three fall below 1e-2 (of uniform draws, one in ten)
    assert sum(lr < 1e-2 for lr in lrs) >= 8
    assert trial.distributions["lr"].log and not trial.distributions["wd"].log


def test_the_direction_follows_the_metric_name():
    assert infer_direction("val/accuracy/top1") == "maximize"
    assert infer_direction("val/acc") == "maximize"
    assert infer_direction("val/loss") == "minimize"
    assert infer_direction("mse") == "minimize"
    with pytest.raises(SweepError, match="pass --direction maximize or --direction minimize"):
        infer_direction("val/score")

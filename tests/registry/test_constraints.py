"""The constraints declared beside each built-in component: ``cadence check`` reports a value
they reject and the component's builder refuses it, both with the full config key and where
it was set. One case per kind of component (hooks, optimizers, schedulers, loops, samplers,
data loaders), each through the builder the runner uses."""

from __future__ import annotations

import os

import pytest
import torch

from cadence.cli.config_check import check_config
from cadence.config import Config
from cadence.dataset import build_dataloader
from cadence.loops.builder import build_loop
from cadence.optim import build_optim_wrapper
from cadence.optim.scheduler import build_param_schedulers
from cadence.registry import DATA_SAMPLERS, HOOKS
from cadence.registry.constraints import ConstraintError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")


def _hook(name):
    return lambda cfg: HOOKS.build(cfg.default_hooks[name], key_path=f"default_hooks.{name}")


def _custom_hook(cfg):
    return HOOKS.build(cfg.custom_hooks[0])


def _optimizer(cfg):
    return build_optim_wrapper(torch.nn.Linear(2, 2), cfg.optim_wrapper)


def _schedulers(cfg):
    optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    return build_param_schedulers(optimizer, cfg.param_scheduler, epoch_length=10)


def _train_loop(cfg):
    return build_loop("train", cfg.train_cfg, runner=None, dataloader=None)


def _val_loop(cfg):
    return build_loop("val", cfg.val_cfg, runner=None, dataloader=None)


def _sampler(cfg):
    return DATA_SAMPLERS.build(cfg.train_dataloader.sampler, default_args={"dataset": [0, 1]})


def _dataloader(cfg):
    return build_dataloader(cfg.train_dataloader)


# (override, the key at fault, words of the problem, the builder that must refuse it)
CASES = [
    ({"default_hooks.logger.interval": 0}, "default_hooks.logger.interval",
     "LoggerHook.interval must be a positive int, got 0", _hook("logger")),
    ({"default_hooks.checkpoint.save_begin": -1}, "default_hooks.checkpoint.save_begin",
     "save_begin must be an int >= 0", _hook("checkpoint")),
    ({"custom_hooks": [{"type": "EarlyStoppingHook", "monitor": "accuracy/top1",
                        "patience": -1}]}, "custom_hooks.0.patience",
     "must be an int >= 0, got -1", _custom_hook),
    ({"optim_wrapper.optimizer.lr": -1.0}, "optim_wrapper.optimizer.lr",
     "rejected by AdamW: Invalid learning rate: -1.0", _optimizer),
    ({"optim_wrapper.optimizer.betas": (1.5, 0.9)}, "optim_wrapper.optimizer.betas",
     "Invalid beta parameter at index 0: 1.5", _optimizer),
    ({"optim_wrapper.optimizer.lr": "fast"}, "optim_wrapper.optimizer.lr",
     "must be a number, got 'fast'", _optimizer),
    ({"param_scheduler.0.start_factor": 2.0}, "param_scheduler.0.start_factor",
     "start_factor must be", _schedulers),
    ({"train_cfg.max_epochs": 0}, "train_cfg.max_epochs", "must be an int > 0, got 0",
     _train_loop),
    ({"val_cfg.fp16": "yes"}, "val_cfg.fp16", "must be True or False, got 'yes'", _val_loop),
    ({"train_dataloader.sampler.seed": "x"}, "train_dataloader.sampler.seed",
     "must be int or None, got 'x'", _sampler),
    ({"train_dataloader.sampler.round_up": "no"}, "train_dataloader.sampler.round_up",
     "must be bool, got 'no'", _sampler),
    ({"train_dataloader.batch_size": 0}, "train_dataloader.batch_size",
     "must be an int > 0 (samples per process and step), got 0", _dataloader),
    ({"train_dataloader.num_workers": -2}, "train_dataloader.num_workers",
     "must be an int >= 0, got -2", _dataloader),
]  # fmt: skip


@pytest.mark.parametrize(("override", "key", "words", "build"), CASES,
                         ids=[next(iter(case[0])) for case in CASES])  # fmt: skip
def test_check_and_the_builder_name_the_key_and_where_it_was_set(override, key, words, build,
                                                                 blobs):  # fmt: skip
    cfg = Config.fromfile(CONFIG)
    cfg.merge_from_dict(override)
    problems = [p for p in check_config(cfg).errors if p.key == key]
    assert len(problems) == 1, check_config(cfg).problems
    assert words in problems[0].message and problems[0].origin == "--cfg-options"
    with pytest.raises(ConstraintError) as refused:
        build(cfg)
    assert f"config key '{key}' (set at --cfg-options)" in str(refused.value)
    assert words in str(refused.value)
    assert isinstance(refused.value, ValueError) and "\n" not in str(refused.value)


def test_a_value_set_in_a_file_is_named_by_file_and_line(tmp_path, blobs):
    child = tmp_path / "child.py"
    child.write_text(f"_base_ = [{CONFIG!r}]\n"
                     "default_hooks = dict(\n    logger=dict(interval=0),\n)\n")  # fmt: skip
    cfg = Config.fromfile(str(child))
    (problem,) = [p for p in check_config(cfg).errors if p.key == "default_hooks.logger.interval"]
    assert problem.origin.endswith("child.py:3")
    with pytest.raises(ConstraintError, match=r"set at .*child\.py:3\)"):
        _hook("logger")(cfg)


def test_the_example_config_builds_and_checks_clean(blobs):
    cfg = Config.fromfile(CONFIG)
    assert check_config(cfg).errors == []
    for build in (_hook("logger"), _hook("checkpoint"), _optimizer, _schedulers, _sampler):
        build(cfg)

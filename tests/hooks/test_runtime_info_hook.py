"""RuntimeInfoHook: what it publishes, and that learning rates are read live and cheaply."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch
from runner_double import StandInRunner
from torch import nn

from cadence.hooks import RuntimeInfoHook
from cadence.hooks.runtime_info_hook import lr_readers
from cadence.logging import MessageHub
from cadence.optim import OptimWrapper, OptimWrapperDict


class Dataset:
    metainfo = {"classes": ("cat", "dog")}


def sgd_wrapper(lr: float = 0.1, groups: int = 1) -> OptimWrapper:
    layers = [nn.Linear(2, 2) for _ in range(groups)]
    params = [{"params": layer.parameters(), "lr": lr / 10**i} for i, layer in enumerate(layers)]
    return OptimWrapper(torch.optim.SGD(params, lr=lr))


def make_runner(wrapper, *, iter: int = 0):
    return StandInRunner(
        message_hub=MessageHub("runtime"), optim_wrapper=wrapper, seed=7,
        experiment_name="exp", epoch=1, iter=iter, max_epochs=3, max_iters=30,
        train_dataloader=types.SimpleNamespace(dataset=Dataset()),
    )  # fmt: skip


def lr_history(hub: MessageHub, key: str = "train/lr") -> list[float]:
    return hub.get_scalar(key).data[0].tolist()


def test_position_and_metadata_are_published():
    runner = make_runner(sgd_wrapper(), iter=12)
    hook = RuntimeInfoHook()
    hook.before_run(runner)
    hook.before_train(runner)
    info = runner.message_hub.runtime_info
    assert info["seed"] == 7 and info["experiment_name"] == "exp"
    assert (info["epoch"], info["iter"], info["max_epochs"], info["max_iters"]) == (1, 12, 3, 30)
    assert info["loop_stage"] == "train"
    assert info["dataset_meta"] == {"classes": ("cat", "dog")}
    runner.iter = 13
    hook.before_train_iter(runner, batch_idx=0)
    assert info["iter"] == 13


def test_learning_rate_is_read_each_iteration_as_schedulers_change_it():
    wrapper = sgd_wrapper(lr=0.1)
    runner = make_runner(wrapper)
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    wrapper.get_lr = lambda: pytest.fail("get_lr() called on the per-iteration path")
    for lr in (0.1, 0.05, 0.025):
        wrapper.optimizer.param_groups[0]["lr"] = lr  # what a scheduler does
        hook.before_train_iter(runner, batch_idx=0)
    assert lr_history(runner.message_hub) == [0.1, 0.05, 0.025]


def test_loaded_optimizer_state_is_seen():
    wrapper = sgd_wrapper(lr=0.1)
    runner = make_runner(wrapper)
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    other = sgd_wrapper(lr=0.3)
    wrapper.load_state_dict(other.state_dict())  # replaces the parameter groups
    hook.before_train_iter(runner, batch_idx=0)
    assert lr_history(runner.message_hub) == [0.3]


def test_several_groups_report_base_lr_and_the_first_group():
    wrapper = sgd_wrapper(lr=0.1, groups=2)  # group lrs 0.1 and 0.01; default 0.1
    wrapper.optimizer.param_groups[0]["lr"] = 0.2
    runner = make_runner(wrapper)
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    hook.before_train_iter(runner, batch_idx=0)
    hub = runner.message_hub
    assert list(hub.log_scalars) == ["train/base_lr", "train/lr"]  # get_lr()'s order
    assert lr_history(hub, "train/base_lr") == [0.1]
    assert lr_history(hub) == [0.2]


def test_optim_wrapper_dict_names_each_optimizer():
    wrapper = OptimWrapperDict(gen=sgd_wrapper(lr=0.1), disc=sgd_wrapper(lr=0.4))
    runner = make_runner(wrapper)
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    hook.before_train_iter(runner, batch_idx=0)
    hub = runner.message_hub
    assert list(hub.log_scalars) == ["train/gen.lr", "train/disc.lr"]
    assert lr_history(hub, "train/gen.lr") == [0.1]
    assert lr_history(hub, "train/disc.lr") == [0.4]


def test_an_optim_wrapper_dict_of_one_reads_its_inner_optimizer():
    inner = sgd_wrapper(lr=0.3)
    runner = make_runner(OptimWrapperDict(only=inner))
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    hook.before_train_iter(runner, batch_idx=0)
    inner.optimizer.param_groups[0]["lr"] = 0.2
    hook.before_train_iter(runner, batch_idx=1)
    assert list(runner.message_hub.log_scalars) == ["train/only.lr"]
    assert lr_history(runner.message_hub, "train/only.lr") == [0.3, 0.2]


def test_custom_get_lr_is_called_every_iteration():
    class Custom(OptimWrapper):
        calls = 0

        def get_lr(self):
            Custom.calls += 1
            return {"lr": [0.5 * Custom.calls], "warmup_lr": [1.0]}

    wrapper = Custom(torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1))
    assert lr_readers(wrapper) is None
    runner = make_runner(wrapper)
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    hook.before_train_iter(runner, batch_idx=0)
    hook.before_train_iter(runner, batch_idx=1)
    assert lr_history(runner.message_hub) == [0.5, 1.0]
    assert lr_history(runner.message_hub, "train/warmup_lr") == [1.0, 1.0]


def test_a_replaced_optim_wrapper_is_followed():
    runner = make_runner(sgd_wrapper(lr=0.1))
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    hook.before_train_iter(runner, batch_idx=0)
    runner.optim_wrapper = sgd_wrapper(lr=0.7)
    hook.before_train_iter(runner, batch_idx=1)
    assert lr_history(runner.message_hub) == [0.1, 0.7]


def test_outputs_become_train_scalars():
    runner = make_runner(sgd_wrapper())
    hook = RuntimeInfoHook()
    for loss in (1.0, 3.0):
        hook.after_train_iter(
            runner, batch_idx=0, outputs={"loss": torch.tensor(loss), "acc": loss / 10}
        )
    hook.after_train_iter(runner, batch_idx=1, outputs={})
    hub = runner.message_hub
    assert hub.get_scalar("train/loss").mean() == 2.0
    assert hub.get_scalar("train/acc").current() == 0.3


def test_cpu_tensor_outputs_are_recorded_as_the_buffer_records_them():
    """The hook reads a CPU tensor's number itself: the same values and types as
    ``update_scalar`` of the tensor, and the buffer's error for a tensor of two elements."""
    runner = make_runner(sgd_wrapper())
    hook = RuntimeInfoHook()
    reference = MessageHub("reference")
    outputs = [{"loss": torch.tensor(0.1), "count": torch.tensor(3), "hit": torch.tensor(True),
                "half": torch.tensor(0.3, dtype=torch.float16), "plain": 2.5},
               {"loss": torch.tensor([0.7]), "count": torch.tensor(4), "hit": torch.tensor(False),
                "half": torch.tensor(0.6, dtype=torch.float16), "plain": 1}]  # fmt: skip
    for step in outputs:
        hook.after_train_iter(runner, batch_idx=0, outputs=step)
        for name, value in step.items():
            reference.update_scalar(f"train/{name}", value)
    hub = runner.message_hub
    for name in outputs[0]:
        got, expected = hub.get_scalar(f"train/{name}"), reference.get_scalar(f"train/{name}")
        assert [(type(v), v) for v in got.data[0].tolist()] == [
            (type(v), v) for v in expected.data[0].tolist()
        ]
        current = got.current()
        assert type(current) is type(expected.current()) and current == expected.current()
    with pytest.raises(ValueError, match=r"exactly one element, got shape \(2,\)"):
        hook.after_train_iter(runner, batch_idx=0, outputs={"loss": torch.ones(2)})


def test_output_buffers_stay_bounded_over_a_long_run():
    """The outputs' numbers are appended without the buffer's own length check: the hook
    trims them with the learning rates' every 1024 iterations."""
    runner = make_runner(sgd_wrapper())
    hook = RuntimeInfoHook()
    hook.before_train(runner)
    for it in range(3000):
        runner.iter = it
        hook.before_train_iter(runner, batch_idx=it)
        hook.after_train_iter(runner, batch_idx=it, outputs={"loss": torch.tensor(float(it))})
        if it == 0:
            for key in ("train/loss", "train/lr"):
                runner.message_hub.get_scalar(key).max_length = 8
    for key in ("train/loss", "train/lr"):
        buffer = runner.message_hub.get_scalar(key)
        assert len(buffer._values) <= 8 + 2048  # the list the number writer appends to
    loss = runner.message_hub.get_scalar("train/loss")
    assert loss.data[0].tolist() == [float(i) for i in range(2992, 3000)]


def test_loop_stage_follows_nested_validation_and_standalone_testing():
    runner = make_runner(sgd_wrapper())
    hub = runner.message_hub
    hook = RuntimeInfoHook()
    hook.before_run(runner)
    hook.before_train(runner)
    hook.before_val(runner)
    assert hub.get_info("loop_stage") == "val"
    assert hook.last_loop_stage == "train"  # mmengine's name of the interrupted stage
    hook.after_val(runner)
    assert hub.get_info("loop_stage") == "train" and hook.last_loop_stage is None
    hook.after_train(runner)
    assert "loop_stage" not in hub.runtime_info
    hook.before_test(runner)
    assert hub.get_info("loop_stage") == "test"
    hook.after_test(runner)
    assert "loop_stage" not in hub.runtime_info


def test_metrics_split_into_scalars_and_information():
    runner = make_runner(sgd_wrapper())
    hook = RuntimeInfoHook()
    metrics = {"acc": 0.9, "f1": np.float64(0.5), "t": torch.tensor([2.0]), "per_class": [1, 2]}
    hook.after_val_epoch(runner, metrics=metrics)
    hub = runner.message_hub
    assert hub.get_scalar("val/acc").current() == 0.9
    assert hub.get_scalar("val/f1").current() == 0.5
    assert hub.get_scalar("val/t").current() == 2.0
    assert hub.get_info("val/per_class") == [1, 2]
    hook.after_test_epoch(runner, metrics={"acc": 0.8})
    assert hub.get_scalar("test/acc").current() == 0.8

"""The runner as parts it owns: each fact in one part, mmengine's names forwarding to it,
checkpoint parts registered once, when made (issue 29, item 1)."""

from __future__ import annotations

import torch
from runner_toys import toy_config

from cadence.logging import MessageHub
from cadence.optim import OptimWrapper
from cadence.runner import Runner
from cadence.runner.mmengine_names import MMEngineNames


def test_runner_is_a_facade_over_one_stateless_layer_of_mmengine_names(tmp_path):
    assert Runner.__mro__ == (Runner, MMEngineNames, object)
    assert "__init__" not in vars(MMEngineNames)  # it makes nothing; the runner makes parts
    runner = Runner.from_cfg(toy_config(tmp_path, n=16))
    assert runner.message_hub is runner.env.message_hub
    assert runner.logger is runner.env.logger
    assert runner.strategy is runner.processes.strategy
    assert runner.work_dir == runner.paths.work_dir == str(tmp_path)
    assert runner.stage_calls is runner.hook_manager.stage_calls


def test_mmengine_names_write_through_to_the_part_that_owns_the_fact(tmp_path):
    runner = Runner.from_cfg(toy_config(tmp_path, n=16))
    runner._resume = True  # mmengine's tests set it so
    assert runner.paths.resume is True and runner.resuming is True
    runner._experiment_name = "renamed"
    assert runner.env.experiment_name == runner.experiment_name == "renamed"
    wrapper = OptimWrapper(torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1))
    runner.optim_wrapper = wrapper
    assert runner.trained.optim_wrapper is wrapper
    runner.set_randomness(3)
    assert (
        runner.randomness_cfg is runner.settings.randomness and runner.randomness_cfg["seed"] == 3
    )


def test_checkpoint_parts_are_registered_once_when_made(tmp_path):
    runner = Runner.from_cfg(toy_config(tmp_path, n=16))
    parts = runner.checkpoints.parts
    # made with the runner: the message hub, the hooks, the RNG streams (read at load)
    assert {"message_hub", "hooks", "rng"} <= set(parts)
    assert "loops" not in parts and "buffers" not in parts  # not made yet
    rng = parts["rng"].part
    assert runner.checkpoints.parts["rng"].part is rng  # reading the manager registers nothing
    loop = runner.train_loop
    assert parts["loops"].part.loop is loop and parts["data_stream"].part.loop is loop
    runner.prepare()
    assert parts["buffers"].part.module is runner.strategy.unwrap(runner.model)


def test_a_replaced_message_hub_is_the_one_a_checkpoint_saves(tmp_path):
    runner = Runner.from_cfg(toy_config(tmp_path, n=16))
    hub = MessageHub.get_instance("test_runner_parts_replaced_hub")
    hub.update_info("marker", 5)
    runner.message_hub = hub
    saved = runner.checkpoints.parts["message_hub"].part.state_dict()
    assert saved["runtime_info"]["marker"] == 5

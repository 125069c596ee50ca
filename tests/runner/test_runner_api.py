"""mmengine's public Runner surface: what exists right after construction, the build_*
methods, hook registration, environment helpers (#21 item 1)."""

from __future__ import annotations

import logging

import pytest
import torch
from runner_toys import Blobs, ToyClassifier
from torch import nn
from torch.utils.data import DataLoader

from cadence import loops
from cadence.config import Config, ConfigAssertionError
from cadence.evaluator import Evaluator
from cadence.hooks import Hook
from cadence.hooks.log_processor import LogProcessor
from cadence.logging import MessageHub
from cadence.loops import EpochBasedTrainLoop, IterBasedTrainLoop, ValLoop
from cadence.optim import OptimWrapper
from cadence.registry import MODEL_WRAPPERS, RUNNERS
from cadence.runner import DEFAULT_HOOKS, FlexibleRunner, Runner, RunnerOrderError
from cadence.visualization import Visualizer

# The public attributes of mmengine v0.10.7's Runner class (its API reference).
MMENGINE_RUNNER_NAMES = """
experiment_name model_name work_dir log_dir max_epochs max_iters epoch iter launcher
distributed rank world_size deterministic seed timestamp hooks train_loop val_loop test_loop
train_dataloader val_dataloader test_dataloader val_evaluator test_evaluator val_interval
val_begin from_cfg setup_env set_randomness build_logger build_message_hub build_visualizer
build_model wrap_model scale_lr build_optim_wrapper build_param_scheduler build_evaluator
build_dataloader build_train_loop build_val_loop build_test_loop build_log_processor
get_hooks_info load_or_resume train val test call_hook register_hook register_default_hooks
register_custom_hooks register_hooks resume load_checkpoint save_checkpoint dump_config
""".split()


def _loader(shuffle: bool = False, n: int = 16) -> dict:
    return dict(
        dataset=dict(type="Blobs", n=n),
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        batch_size=4,
        collate_fn=dict(type="default_collate"),
    )


def _cfg(work_dir, **overrides) -> Config:
    cfg = dict(
        model=dict(type="ToyClassifier"),
        work_dir=str(work_dir),
        train_dataloader=_loader(shuffle=True),
        train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        val_dataloader=_loader(),
        val_cfg=dict(),
        val_evaluator=dict(type="Accuracy"),
        randomness=dict(seed=7, deterministic=False),
    )
    cfg.update(overrides)
    return Config(cfg, filename="configs/toy_exp.py")


def test_every_public_name_of_mmengines_runner_exists():
    missing = [name for name in MMENGINE_RUNNER_NAMES if not hasattr(Runner, name)]
    assert len(MMENGINE_RUNNER_NAMES) == 57 and missing == []
    assert FlexibleRunner is Runner


def test_cheap_parts_exist_right_after_from_cfg(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path))
    assert runner.experiment_name == f"toy_exp_{runner.timestamp}"
    assert isinstance(runner.logger, logging.Logger)
    assert runner.logger.name == runner.experiment_name
    assert not (tmp_path / runner.timestamp).exists()  # written when a run starts
    assert isinstance(runner.message_hub, MessageHub)
    assert MessageHub.get_instance(runner.experiment_name) is runner.message_hub
    assert isinstance(runner.visualizer, Visualizer)
    assert isinstance(runner.log_processor, LogProcessor)
    types = [type(hook).__name__ for hook in runner.hooks]
    for cfg in DEFAULT_HOOKS.values():
        assert cfg["type"] in types
    # ...and nothing heavy: no model, no loop, no process environment
    assert runner.trained.model is None and runner._train_loop is None and runner.seed is None
    assert runner.model_name == "ToyClassifier" and runner.deterministic is False


def test_a_hook_registered_after_construction_runs_after_the_defaults_of_its_priority(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path))

    class Early(Hook):
        pass

    class Normal(Hook):
        pass

    early, normal = Early(), Normal()
    runner.register_hook(normal)
    runner.register_hook(early, priority="VERY_HIGH")
    order = [type(h).__name__ for h in runner.hooks]
    # mmengine's rule: equal priorities keep registration order, so the defaults
    # registered at construction come before later hooks of their priority.
    assert order[:2] == ["RuntimeInfoHook", "Early"]
    assert order.index("IterTimerHook") < order.index("Normal")
    assert order.index("DistSamplerSeedHook") < order.index("Normal") < order.index("LoggerHook")
    info = runner.describe_hooks()
    assert "before_train_iter:" in info and "timer" in info
    # mmengine's listing: priority names, class names padded as its log shows them
    assert (
        "after_train_iter:\n(VERY_HIGH   ) RuntimeInfoHook                    \n"
        "(NORMAL      ) IterTimerHook                      \n"
    ) in runner.get_hooks_info()


def test_register_default_and_custom_hooks(tmp_path):
    runner = Runner(model=ToyClassifier(), work_dir=str(tmp_path), default_hooks=dict.fromkeys(
        DEFAULT_HOOKS))  # fmt: skip
    assert runner.hooks == []
    runner.register_hooks(dict(timer=None, checkpoint=dict(type="CheckpointHook", interval=3)),
                          [dict(type="EMAHook")])  # fmt: skip
    types = [type(h).__name__ for h in runner.hooks]
    assert "IterTimerHook" not in types and "EMAHook" in types
    checkpoint = next(h for h in runner.hooks if type(h).__name__ == "CheckpointHook")
    assert checkpoint.interval == 3


def test_call_hook_runs_custom_hook_methods_and_warns_for_unknown_ones(tmp_path):
    runner = Runner(model=ToyClassifier(), work_dir=str(tmp_path))
    seen = []

    class Custom(Hook):
        def after_my_stage(self, runner, value):
            seen.append(value)

    runner.register_hook(Custom())
    runner.call_hook("after_my_stage", value=3)
    assert seen == [3]
    with pytest.warns(UserWarning, match="before_train_iter"):
        runner.call_hook("before_train_itr")


def test_build_model_and_wrap_model(tmp_path):
    runner = Runner(model=ToyClassifier(), work_dir=str(tmp_path))
    model = runner.build_model(dict(type="ToyClassifier", hidden=5))
    assert isinstance(model, ToyClassifier) and model.head.in_features == 5
    wrapped = runner.wrap_model(None, model)
    assert runner.strategy.unwrap(wrapped) is model

    @MODEL_WRAPPERS.register_module(force=True)
    class Holder(nn.Module):
        def __init__(self, module, tag=""):
            super().__init__()
            self.module, self.tag = module, tag

    held = runner.wrap_model(dict(type="Holder", tag="x"), model)
    assert isinstance(held, Holder) and held.module is model and held.tag == "x"
    with pytest.raises(TypeError, match="model"):
        runner.build_model(3)


def test_build_dataloader_is_callable_on_the_class():
    loader = Runner.build_dataloader(_loader(n=10), seed=1)
    assert isinstance(loader, DataLoader) and isinstance(loader.dataset, Blobs)
    assert len(loader) == 3  # 10 samples, batches of 4
    assert Runner.build_dataloader(loader) is loader


def test_build_loops_and_evaluator(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path))
    assert isinstance(runner.build_train_loop(dict(by_epoch=True, max_epochs=2)),
                      EpochBasedTrainLoop)  # fmt: skip
    assert isinstance(runner.build_train_loop(dict(by_epoch=False, max_iters=5)),
                      IterBasedTrainLoop)  # fmt: skip
    assert isinstance(runner.build_val_loop(dict()), ValLoop)
    with pytest.raises(TypeError, match="train_loop"):
        runner.build_train_loop([1])
    assert isinstance(runner.build_evaluator([dict(type="Accuracy")]), Evaluator)
    assert runner.val_interval == 1 and runner.val_begin == 1
    assert type(runner.val_evaluator).__name__ == "Evaluator" and runner.test_evaluator is None


def test_build_test_loop_uses_the_test_triple(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path, test_dataloader=_loader(), test_cfg=dict(),
                                  test_evaluator=dict(type="Accuracy")))  # fmt: skip
    loop = runner.build_test_loop(dict())
    assert isinstance(loop, loops.TestLoop) and len(loop.dataloader.dataset) == 16


def test_optim_wrapper_then_schedulers_and_scale_lr(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path))
    with pytest.raises(AssertionError, match="optim_wrapper"):  # mmengine asserts the order
        runner.build_param_scheduler(dict(type="MultiStepLR", milestones=[1]))
    wrapper = runner.build_optim_wrapper(dict(optimizer=dict(type="SGD", lr=0.1)))
    assert isinstance(wrapper, OptimWrapper) and runner.build_optim_wrapper(wrapper) is wrapper
    # 4 samples per batch on 1 process against a base of 8: the rates halve
    runner.scale_lr(wrapper, dict(enable=True, base_batch_size=8))
    assert wrapper.param_groups[0]["lr"] == pytest.approx(0.05)
    runner.scale_lr(wrapper, dict(enable=False, base_batch_size=1))  # off: unchanged
    assert wrapper.param_groups[0]["lr"] == pytest.approx(0.05)
    with pytest.raises(AssertionError, match="base_batch_size"):
        runner.scale_lr(wrapper, dict(enable=True))
    runner.optim_wrapper = wrapper
    schedulers = runner.build_param_scheduler([dict(type="MultiStepLR", milestones=[1])])
    assert [type(s).__name__ for s in schedulers] == ["MultiStepLR"]
    runner.param_schedulers = schedulers
    with pytest.raises(RunnerOrderError, match="before the parameter schedulers"):
        runner.scale_lr(wrapper, dict(enable=True, base_batch_size=8))
    assert issubclass(ConfigAssertionError, ValueError)


def test_build_reporting_parts(tmp_path):
    runner = Runner(model=ToyClassifier(), work_dir=str(tmp_path), experiment_name="exp")
    processor = runner.build_log_processor(dict(window_size=5))
    assert isinstance(processor, LogProcessor) and processor.window_size == 5
    assert runner.build_log_processor(processor) is processor
    with pytest.raises(TypeError, match="log_processor"):
        runner.build_log_processor(3)
    assert runner.build_message_hub().instance_name == "exp"
    assert runner.build_message_hub(dict(name="other")).instance_name == "other"
    visualizer = runner.build_visualizer(dict(type="Visualizer", name="vis_b"))
    assert isinstance(visualizer, Visualizer) and visualizer.instance_name == "vis_b"
    log_file = tmp_path / "extra.log"
    logger = runner.build_logger(log_level="DEBUG", log_file=str(log_file), name="extra_logger")
    logger.debug("hello")
    assert logger.name == "extra_logger" and "hello" in log_file.read_text()
    with pytest.raises(TypeError, match="visualizer should be"):  # mmengine's phrase
        runner.build_visualizer("invalid")


def test_a_scheduler_without_an_optimizer_wrapper_is_refused(tmp_path):
    with pytest.raises(ValueError, match="param_scheduler should be None when optim_wrapper"):
        Runner(model=ToyClassifier(), work_dir=str(tmp_path),
               param_scheduler=dict(type="MultiStepLR", milestones=[1]))  # fmt: skip


def test_hooks_list_can_be_replaced_and_a_priority_argument_beats_the_config(tmp_path):
    runner = Runner(model=ToyClassifier(), work_dir=str(tmp_path))
    runner._hooks = []  # mmengine's tests start over this way
    assert runner.hooks == []
    runner.register_hook(dict(type="IterTimerHook", priority="LOW"), priority="VERY_LOW")
    assert [h.priority for h in runner._hooks] == [90]
    with pytest.raises(TypeError, match="hook should be an instance of Hook or dict"):
        runner.register_hook(["string"])


def test_setup_env_and_set_randomness(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path))
    runner.set_randomness(11, deterministic=False)
    assert runner.seed is None  # recorded; applied when the environment is set up
    runner.setup_env()
    assert runner.seed == 11
    first = torch.rand(1)
    runner.set_randomness(11)  # seeds again at once
    assert runner.seed == 11 and torch.equal(torch.rand(1), first)


def test_dump_config_uses_the_config_file_name(tmp_path):
    runner = Runner.from_cfg(_cfg(tmp_path))
    runner.dump_config()
    dumped = Config.fromfile(str(tmp_path / "toy_exp.py"))
    assert dumped.train_cfg.max_epochs == 2
    unnamed = Runner(model=ToyClassifier(), work_dir=str(tmp_path / "b"))
    unnamed.dump_config()
    assert (tmp_path / "b" / f"{unnamed.timestamp}.py").is_file()


def test_runners_build_follows_tools_train_py(tmp_path):
    @RUNNERS.register_module(force=True)
    class MyRunner(Runner):
        pass

    cfg = _cfg(tmp_path, runner_type="MyRunner")
    runner = Runner.from_cfg(cfg) if "runner_type" not in cfg else RUNNERS.build(cfg)
    assert type(runner) is MyRunner and runner.experiment_name.startswith("toy_exp_")
    plain = RUNNERS.build(_cfg(tmp_path / "b"))
    assert type(plain) is Runner


def test_model_name_is_the_model_class_before_and_after_it_is_built(tmp_path):
    runner = Runner(model=nn.Linear(2, 2), work_dir=str(tmp_path))
    assert runner.model_name == "Linear"
    from_cfg = Runner(model=dict(type="ToyClassifier"), work_dir=str(tmp_path / "b"))
    assert from_cfg.model_name == "ToyClassifier"
    assert isinstance(from_cfg.model, ToyClassifier)  # builds it
    assert from_cfg.model_name == "ToyClassifier"


def test_before_the_process_group_rank_and_size_come_from_the_launcher(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    runner = Runner(model=ToyClassifier(), work_dir=str(tmp_path), launcher="pytorch",
                    strategy=dict(type="DDPStrategy"), experiment_name="rank1_run")  # fmt: skip
    assert (runner.rank, runner.world_size, runner.distributed) == (1, 2, True)
    # rank 1 writes nothing until it has rank 0's timestamp (after the group exists)
    assert list(tmp_path.iterdir()) == []
    assert not any(hasattr(h, "baseFilename") for h in runner.logger.handlers)


def test_a_subclass_builds_its_loops_through_build_train_loop(tmp_path):
    class MyRunner(Runner):
        def build_train_loop(self, loop):
            built = super().build_train_loop(loop)
            built.built_by = "MyRunner"
            return built

    runner = MyRunner.from_cfg(_cfg(tmp_path))
    assert runner.train_loop.built_by == "MyRunner"

"""Runner features beyond the basic epoch loop: iteration loops, exact mid-run resume,
auto_scale_lr, AMP, plain modules, randomness, environment logging and compile."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from cadence.config import Config
from cadence.hooks import Hook
from cadence.registry import MODELS
from cadence.runner import Runner
from cadence.strategies import SingleDeviceStrategy


def loader(n=256, seed=0, batch_size=32, sampler="DefaultSampler", shuffle=True):
    return dict(
        batch_size=batch_size,
        dataset=dict(type="Blobs", n=n, seed=seed),
        sampler=dict(type=sampler, shuffle=shuffle),
        collate_fn=dict(type="default_collate"),
    )


def base_cfg(tmp_path, **overrides):
    cfg = dict(
        model=dict(type="ToyClassifier"),
        work_dir=str(tmp_path / "work"),
        train_dataloader=loader(),
        train_cfg=dict(by_epoch=True, max_epochs=2),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9)),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=4)),
        randomness=dict(seed=3),
    )
    cfg.update(overrides)
    return Config(cfg)


class Recorder(Hook):
    """Records lr and loss of every iteration."""

    def __init__(self):
        self.lrs: list[float] = []
        self.losses: list[float] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.lrs.append(runner.optim_wrapper.get_lr()["lr"][0])
        self.losses.append(float(outputs["loss"]))


def run(cfg):
    runner = Runner.from_cfg(cfg)
    recorder = Recorder()
    runner.register_hook(recorder)
    runner.train()
    return runner, recorder


def iter_cfg(tmp_path, max_iters, **overrides):
    return base_cfg(
        tmp_path,
        train_dataloader=loader(sampler="InfiniteSampler"),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=max_iters, val_interval=5),
        val_dataloader=loader(n=64, seed=1, shuffle=False),
        val_cfg=dict(),
        val_evaluator=dict(type="Accuracy"),
        param_scheduler=[dict(type="LinearLR", start_factor=0.2, by_epoch=False, end=6)],
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=4),
            checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False),
        ),
        log_processor=dict(by_epoch=False),
        **overrides,
    )


def test_iteration_loop_validates_and_checkpoints_by_iteration(tmp_path):
    runner, recorder = run(iter_cfg(tmp_path, max_iters=12))
    assert runner.iter == 12 and len(recorder.losses) == 12
    work = tmp_path / "work"
    assert sorted(p.name for p in work.glob("iter_*.pth")) == [
        "iter_12.pth",
        "iter_4.pth",
        "iter_8.pth",
    ]
    assert runner.message_hub.get_scalar("val/accuracy/top1").current() > 50


def test_iteration_loop_resumes_mid_run_bit_for_bit(tmp_path):
    full, full_rec = run(iter_cfg(tmp_path / "full", max_iters=12))
    first, _ = run(iter_cfg(tmp_path / "part", max_iters=8))
    resumed, resumed_rec = run(iter_cfg(tmp_path / "part", max_iters=12, resume=True))
    assert resumed_rec.losses == full_rec.losses[8:]
    assert resumed_rec.lrs == full_rec.lrs[8:]
    for key, value in full.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


def test_epoch_loop_resumes_from_a_mid_epoch_iteration_checkpoint(tmp_path):
    def cfg(path, epochs, **kw):
        return base_cfg(
            path,
            train_cfg=dict(max_epochs=epochs),
            default_hooks=dict(
                checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False, save_last=False)
            ),
            **kw,
        )

    full, full_rec = run(cfg(tmp_path / "full", 2))
    # 8 iterations per epoch; stop after iteration 11 of 16 and resume from iter_9
    part = Runner.from_cfg(cfg(tmp_path / "part", 2))

    class StopAt(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter + 1 == 11:
                runner.train_loop.stop_training = True

    part.register_hook(StopAt())
    part.train()
    assert (tmp_path / "part" / "work" / "iter_9.pth").exists()
    resumed, resumed_rec = run(
        cfg(tmp_path / "part", 2, resume=str(tmp_path / "part" / "work" / "iter_9.pth"))
    )
    assert resumed_rec.losses == full_rec.losses[9:]
    for key, value in full.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


def test_auto_scale_lr_scales_by_total_batch_size(tmp_path):
    runner, recorder = run(base_cfg(tmp_path, auto_scale_lr=dict(base_batch_size=128, enable=True)))
    assert recorder.lrs[0] == 0.05 * 32 / 128
    runner, recorder = run(base_cfg(tmp_path / "off", auto_scale_lr=dict(base_batch_size=128)))
    assert recorder.lrs[0] == 0.05


def test_bf16_amp_on_cpu_trains(tmp_path):
    dtypes: list[torch.dtype] = []

    class DtypeProbe(Hook):
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            handle = runner.model.head.register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))
            runner.message_hub.update_info("probe", handle)

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            runner.message_hub.get_info("probe").remove()

    cfg = base_cfg(
        tmp_path,
        optim_wrapper=dict(
            type="AmpOptimWrapper",
            dtype="bfloat16",
            optimizer=dict(type="SGD", lr=0.05, momentum=0.9),
        ),
    )
    runner = Runner.from_cfg(cfg)
    runner.register_hook(DtypeProbe())
    recorder = Recorder()
    runner.register_hook(recorder)
    runner.train()
    assert dtypes and all(d == torch.bfloat16 for d in dtypes)
    assert recorder.losses[-1] < recorder.losses[0] * 0.5


class PlainNet(nn.Module):
    """Not a BaseModel: forward(inputs, data_samples, mode) returns a loss dict."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return logits


def test_plain_module_trains(tmp_path):
    MODELS.register_module(module=PlainNet, force=True)
    runner, recorder = run(base_cfg(tmp_path, model=dict(type="PlainNet")))
    assert recorder.losses[-1] < recorder.losses[0]
    assert set(runner.model.state_dict()) == {"fc.weight", "fc.bias"}


def test_dynamic_intervals_change_validation_epochs(tmp_path):
    seen: list[int] = []

    class ValEpochs(Hook):
        def after_val_epoch(self, runner, metrics=None):
            seen.append(runner.epoch)

    cfg = base_cfg(
        tmp_path,
        train_dataloader=loader(n=64),
        train_cfg=dict(max_epochs=7, val_interval=3, dynamic_intervals=[(4, 1)]),
        val_dataloader=loader(n=32, seed=1, shuffle=False),
        val_cfg=dict(),
        val_evaluator=dict(type="Accuracy"),
    )
    runner = Runner.from_cfg(cfg)
    runner.register_hook(ValEpochs())
    runner.train()
    assert seen == [3, 4, 5, 6, 7]


def test_seed_is_drawn_logged_and_reproducible(tmp_path):
    runner, first = run(base_cfg(tmp_path, randomness=dict(seed=None)))
    seed = runner.seed
    assert isinstance(seed, int)
    log = next((tmp_path / "work").glob("*/*.log")).read_text()
    assert f"Seed: {seed}" in log
    _, again = run(base_cfg(tmp_path / "again", randomness=dict(seed=seed)))
    assert again.losses == first.losses


def test_environment_and_config_are_logged_and_dumped(tmp_path):
    runner, _ = run(base_cfg(tmp_path, env_cfg=dict(cudnn_benchmark=False)))
    log = next((tmp_path / "work").glob("*/*.log")).read_text()
    assert "PyTorch" in log and "cadence" in log and "Config:" in log
    dumped = tmp_path / "work" / f"{runner.timestamp}.py"  # a config without a file, as mmengine
    assert Config.fromfile(str(dumped)).optim_wrapper.optimizer.lr == 0.05
    assert (tmp_path / "work" / runner.timestamp / "vis_data" / "config.py").exists()


def test_deterministic_flag_is_applied(tmp_path):
    try:
        run(base_cfg(tmp_path, randomness=dict(seed=1, deterministic=True)))
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic
    finally:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False


def test_compile_true_applies_module_compile_with_torchs_defaults():
    module = SingleDeviceStrategy().setup_module(nn.Linear(2, 2), compile=True)
    assert module._compiled_call_impl is not None  # nn.Module.compile() was applied


@pytest.mark.slow
def test_a_compiled_model_trains_the_same_model_shape(tmp_path):
    # Dynamo traces the forward; the eager backend skips inductor's C++ build, which costs
    # ~30 s on a machine whose compile cache is cold and tests torch rather than cadence
    cfg = base_cfg(tmp_path, compile=dict(backend="eager"), train_cfg=dict(max_epochs=1))
    runner, recorder = run(cfg)
    assert recorder.losses[-1] < recorder.losses[0]
    assert runner.model._compiled_call_impl is not None
    plain = MODELS.build(dict(type="ToyClassifier"))  # no compile prefix in the keys
    assert runner.model.state_dict().keys() == plain.state_dict().keys()


def test_train_after_test_reuses_the_placed_model(tmp_path):
    cfg = base_cfg(
        tmp_path,
        test_dataloader=loader(n=64, seed=2, shuffle=False),
        test_cfg=dict(),
        test_evaluator=dict(type="Accuracy"),
    )
    runner = Runner.from_cfg(cfg)
    before = runner.test()["accuracy/top1"]
    placed = runner.model
    runner.train()
    assert runner.model is placed
    assert runner.test()["accuracy/top1"] > before

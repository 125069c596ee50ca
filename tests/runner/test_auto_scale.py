"""auto_scale_workers: a config tuned for N processes is rescaled to the real world size."""

from __future__ import annotations

import os

import pytest
from runner_toys import Blobs, ToyClassifier

from cadence.config import Config
from cadence.dist.testing import run_distributed
from cadence.hooks import Hook
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner
from cadence.runner.auto_scale import check_auto_scale_workers, scale_to_world_size


def _iter_parts() -> dict:
    """An iteration-based detectron2-style schedule tuned for 8 processes."""
    return dict(
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=1000, val_interval=100, val_begin=50),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.02, momentum=0.9)),
        param_scheduler=[
            dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=500),
            dict(type="MultiStepLR", by_epoch=False, milestones=[800, 900], gamma=0.1, end=1000),
            dict(type="CosineAnnealingLR", by_epoch=True, T_max=12, eta_min=0.0004),
        ],
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=200),
            logger=dict(type="LoggerHook", interval=50),
        ),
    )


def test_iteration_quantities_scale_inversely_and_lr_linearly():
    parts = _iter_parts()
    scaled, lines = scale_to_world_size(parts, world_size=2, reference_world_size=8)
    # scale = 2 / 8 = 1 / 4: iterations x 4, learning rates / 4
    assert scaled["train_cfg"]["max_iters"] == 4000
    assert scaled["train_cfg"]["val_interval"] == 400
    assert scaled["train_cfg"]["val_begin"] == 200
    assert scaled["optim_wrapper"]["optimizer"]["lr"] == pytest.approx(0.005)
    assert scaled["optim_wrapper"]["optimizer"]["momentum"] == 0.9
    warmup, steps, cosine = scaled["param_scheduler"]
    assert (warmup["begin"], warmup["end"], warmup["start_factor"]) == (0, 2000, 0.001)
    assert steps["milestones"] == [3200, 3600] and steps["end"] == 4000
    assert cosine["T_max"] == 12  # counted in epochs: unchanged
    assert cosine["eta_min"] == pytest.approx(0.0001)  # an absolute LR: scaled like lr
    assert scaled["default_hooks"]["checkpoint"]["interval"] == 800
    assert scaled["default_hooks"]["logger"]["interval"] == 50  # logging period stays
    assert "train_cfg.max_iters: 1000 -> 4000" in lines
    assert any(line.startswith("param_scheduler[1].milestones (MultiStepLR)") for line in lines)
    assert parts == _iter_parts()  # the input is not modified


def test_more_processes_than_the_reference_shorten_the_schedule():
    scaled, _ = scale_to_world_size(_iter_parts(), world_size=16, reference_world_size=8)
    assert scaled["train_cfg"]["max_iters"] == 500
    assert scaled["param_scheduler"][0]["end"] == 250
    assert scaled["param_scheduler"][1]["milestones"] == [400, 450]
    assert scaled["optim_wrapper"]["optimizer"]["lr"] == pytest.approx(0.04)


def test_same_world_size_changes_nothing():
    scaled, lines = scale_to_world_size(_iter_parts(), world_size=8, reference_world_size=8)
    assert scaled == _iter_parts() and lines == []


def test_epoch_based_runs_keep_epoch_counts():
    parts = dict(
        train_cfg=dict(by_epoch=True, max_epochs=12, val_interval=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        param_scheduler=dict(type="MultiStepLR", milestones=[8, 11], by_epoch=True),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
    )
    scaled, _ = scale_to_world_size(parts, world_size=4, reference_world_size=8)
    assert scaled["train_cfg"] == parts["train_cfg"]
    assert scaled["param_scheduler"]["milestones"] == [8, 11]
    assert scaled["default_hooks"] == parts["default_hooks"]
    assert scaled["optim_wrapper"]["optimizer"]["lr"] == pytest.approx(0.05)


def test_every_optimizer_of_a_multi_optimizer_config_is_scaled():
    parts = dict(
        optim_wrapper=dict(
            constructor="MultiOptimWrapperConstructor",
            generator=dict(optimizer=dict(type="Adam", lr=4e-4)),
            discriminator=dict(optimizer=dict(type="Adam", lr=1e-4)),
        )
    )
    scaled, lines = scale_to_world_size(parts, world_size=4, reference_world_size=2)
    assert scaled["optim_wrapper"]["generator"]["optimizer"]["lr"] == pytest.approx(8e-4)
    assert scaled["optim_wrapper"]["discriminator"]["optimizer"]["lr"] == pytest.approx(2e-4)
    assert len(lines) == 2


@pytest.mark.parametrize(
    "cfg, error, match",
    [
        (dict(enable=True, reference_world_sise=8), ValueError, "reference_world_size"),
        (dict(enable=True), ValueError, "reference_world_size must be an int >= 1"),
        (dict(enable=True, reference_world_size=0), ValueError, "got 0"),
        ([8], TypeError, "must be a dict"),
    ],
)
def test_bad_settings_are_refused(cfg, error, match):
    with pytest.raises(error, match=match):
        check_auto_scale_workers(cfg)


def test_disabled_is_off():
    assert check_auto_scale_workers(dict(enable=False, reference_world_size=8)) is None
    assert check_auto_scale_workers(None) is None


def test_built_objects_cannot_be_rescaled():
    with pytest.raises(TypeError, match="train_cfg is an already built"):
        scale_to_world_size(dict(train_cfg=object()), world_size=2, reference_world_size=1)


# ---------------------------------------------------------------- runner
def _loader(sampler: str = "InfiniteSampler") -> dict:
    return dict(
        batch_size=8,
        dataset=dict(type="Blobs", n=64, seed=0),
        sampler=dict(type=sampler, shuffle=True),
        collate_fn=dict(type="default_collate"),
    )


def _runner_cfg(work_dir: str, reference: int, **overrides) -> Config:
    cfg = dict(
        model=dict(type="ToyClassifier"),
        work_dir=work_dir,
        train_dataloader=_loader(),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=8),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05)),
        param_scheduler=[dict(type="LinearLR", start_factor=0.5, by_epoch=False, end=4)],
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=2),
            checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False),
        ),
        log_processor=dict(by_epoch=False),
        randomness=dict(seed=3),
        auto_scale_workers=dict(enable=True, reference_world_size=reference),
    )
    cfg.update(overrides)
    return Config(cfg)


class _LrRecorder(Hook):
    def __init__(self) -> None:
        self.lrs: list[float] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.lrs.append(runner.optim_wrapper.get_lr()["lr"][0])


def test_runner_rescales_before_building_and_logs_and_saves(tmp_path):
    # tuned for 2 processes, run on 1: scale 1/2
    runner = Runner.from_cfg(_runner_cfg(str(tmp_path), reference=2))
    recorder = _LrRecorder()
    runner.register_hook(recorder)
    runner.train()
    assert runner.max_iters == 16
    # warm-up now spans iterations [0, 8) (end 4 -> 8): from 0.5 x 0.025 up to 0.025
    # at the last one (LinearLR reaches its end value at iteration end - 1)
    assert recorder.lrs[0] == pytest.approx(0.0125)
    assert recorder.lrs[3] == pytest.approx(0.025 * (0.5 + 0.5 * 3 / 7))
    assert recorder.lrs[7] == pytest.approx(0.025) and recorder.lrs[-1] == pytest.approx(0.025)
    names = sorted(os.listdir(tmp_path))
    assert "iter_8.pth" in names and "iter_16.pth" in names and "iter_4.pth" not in names
    log = next(tmp_path.glob("*/*.log")).read_text()
    assert "auto_scale_workers: reference world size 2 -> 1" in log
    assert "total 16 -> 8" in log and "train_cfg.max_iters: 8 -> 16" in log
    saved = Config.fromfile(str(tmp_path / f"{runner.timestamp}.py"))  # as mmengine
    assert saved.train_cfg.max_iters == 16
    assert saved.optim_wrapper.optimizer.lr == pytest.approx(0.025)
    assert saved.auto_scale_workers.reference_world_size == 1  # saved config re-runs as is


def test_runner_refuses_auto_scale_lr_at_the_same_time(tmp_path):
    cfg = _runner_cfg(str(tmp_path), 2, auto_scale_lr=dict(enable=True, base_batch_size=16))
    with pytest.raises(ValueError, match="auto_scale_workers and auto_scale_lr"):
        Runner.from_cfg(cfg).train()


def test_runner_checks_the_setting_when_built(tmp_path):
    cfg = _runner_cfg(str(tmp_path), 2)
    cfg.auto_scale_workers = dict(enable=True, referenceworldsize=2)
    with pytest.raises(ValueError, match="Did you mean 'reference_world_size'"):
        Runner.from_cfg(cfg)


def _train_two_ranks(work_dir: str) -> dict:
    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
    cfg = _runner_cfg(work_dir, reference=1, launcher="pytorch",
                      strategy=dict(type="DDPStrategy"))  # fmt: skip
    runner = Runner.from_cfg(cfg)
    recorder = _LrRecorder()
    runner.register_hook(recorder)
    runner.train()
    return dict(max_iters=runner.max_iters, lrs=recorder.lrs, files=sorted(os.listdir(work_dir)))


@pytest.mark.dist
def test_two_ranks_double_the_lr_and_halve_the_iterations(tmp_path):
    r0, r1 = run_distributed(_train_two_ranks, str(tmp_path), timeout=120)
    for result in (r0, r1):
        assert result["max_iters"] == 4
        assert result["lrs"][0] == pytest.approx(0.05)  # 0.5 x (2 x 0.05)
        assert result["lrs"][-1] == pytest.approx(0.1)
    assert "iter_2.pth" in r0["files"] and "iter_4.pth" in r0["files"]


def test_auto_scale_lr_ratio_scales_to_the_total_batch_and_names_missing_keys():
    import logging
    from types import SimpleNamespace

    from cadence.runner.auto_scale import auto_scale_lr_ratio

    log = logging.getLogger("test_auto_scale_lr")
    loader = SimpleNamespace(batch_size=24)
    assert auto_scale_lr_ratio({}, 4, loader, log) == 1.0
    assert auto_scale_lr_ratio(dict(base_batch_size=32), 4, loader, log) == 1.0  # not enabled
    assert auto_scale_lr_ratio(dict(enable=True, base_batch_size=32), 4, loader, log) == 3.0
    with pytest.raises(ValueError, match="auto_scale_lr.base_batch_size is missing"):
        auto_scale_lr_ratio(dict(enable=True), 4, loader, log)
    with pytest.raises(ValueError, match="batch_size"):
        auto_scale_lr_ratio(
            dict(enable=True, base_batch_size=32), 4, SimpleNamespace(batch_size=None), log
        )

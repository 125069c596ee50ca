"""RunnerTestCase as downstream suites use it: subclass, build a runner, train."""

from __future__ import annotations

import os

from cadence.registry import DATASETS, METRICS, MODELS
from cadence.testing import RunnerTestCase


class TestToyRunners(RunnerTestCase):
    def test_epoch_based_config_trains_and_validates(self):
        runner = self.build_runner(self.epoch_based_cfg)
        assert runner.experiment_name.startswith("test_epoch_based_config_trains_and_validates_")
        runner.train()
        assert (runner.epoch, runner.iter) == (2, 8)  # 12 samples, batches of 3, 2 epochs
        assert runner.val() == {"acc": 1}

    def test_iter_based_config_trains_to_max_iters(self):
        cfg = self.iter_based_cfg
        cfg.train_cfg.max_iters = 4
        cfg.default_hooks.checkpoint.interval = 4
        cfg.val_cfg = None
        cfg.val_dataloader = None
        cfg.val_evaluator = None
        runner = self.build_runner(cfg)
        runner.train()
        assert runner.iter == 4 and not runner.train_loop_by_epoch
        assert any(name.endswith(".pth") or "iter_4" in name
                   for name in os.listdir(runner.work_dir))  # fmt: skip

    def test_runners_of_one_test_train_one_after_another_in_its_work_dir(self):
        cfg = self.epoch_based_cfg
        cfg.train_cfg.max_epochs = 1
        for _ in range(2):  # the second replaces the first's checkpoint, as in mmengine
            self.build_runner(cfg).train()

    def test_experiment_names_differ_between_calls(self):
        assert self.experiment_name != self.experiment_name

    def test_setup_dist_env_sets_a_one_process_group_env(self):
        self.setup_dist_env()
        assert os.environ["RANK"] == "0" and os.environ["WORLD_SIZE"] == "1"
        assert os.environ["MASTER_ADDR"] == "127.0.0.1"
        assert os.environ["MASTER_PORT"] == str(self.dist_cfg["MASTER_PORT"])


class _Probe(RunnerTestCase):
    __test__ = False  # a helper, not a test of its own

    def runTest(self):  # noqa: N802 - unittest's name
        pass


def test_setup_registers_the_toys_and_teardown_restores_everything(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    case = _Probe()
    case.setUp()
    assert MODELS.get("ToyModel") is not None and DATASETS.get("ToyDataset") is not None
    assert METRICS.get("ToyMetric") is not None
    assert case.epoch_based_cfg.train_cfg.max_epochs == 2
    assert case.iter_based_cfg.train_cfg.max_iters == 12
    assert case.iter_based_cfg.train_dataloader.sampler.type == "InfiniteSampler"
    assert case.epoch_based_cfg.train_dataloader.sampler.type == "DefaultSampler"
    work_dir = case.temp_dir.name
    case.setup_dist_env()
    case.tearDown()
    assert "ToyModel" not in MODELS.module_dict and "ToyMetric" not in METRICS.module_dict
    assert "WORLD_SIZE" not in os.environ
    assert not os.path.exists(work_dir)

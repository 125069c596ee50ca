"""``RunnerTestCase``: a ``unittest.TestCase`` with tiny epoch- and iteration-based runner configs.

Downstream suites subclass it, tweak ``self.epoch_based_cfg`` or
``self.iter_based_cfg`` and call ``self.build_runner(cfg)``. Registrations of
the toy classes, named instances (message hubs, visualizers, loggers), the
default scope and environment variables set by :meth:`setup_dist_env` are
undone in ``tearDown``.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from contextlib import ExitStack
from typing import Any, ClassVar
from unittest import TestCase

import torch
import torch.nn as nn
from torch.utils.data import Dataset

from ..config import Config
from ..dist.testing import free_port
from ..evaluator import BaseMetric
from ..logging import isolated_instances
from ..model import BaseModel
from ..registry import DATASETS, METRICS, MODELS, isolated_registries
from ..runner import Runner


class ToyModel(BaseModel):
    """Two linear layers on 2-d inputs; the loss is ``sum(label - output)``."""

    def __init__(self, data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear1 = nn.Linear(2, 2)
        self.linear2 = nn.Linear(2, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if isinstance(inputs, list):
            inputs = torch.stack(inputs)
        outputs = self.linear2(self.linear1(inputs))
        if mode == "loss":
            labels = torch.stack(data_samples) if isinstance(data_samples, list) else data_samples
            return {"loss": (labels - outputs).sum()}
        if mode in ("tensor", "predict"):
            return outputs
        raise ValueError(f"mode must be 'loss', 'tensor' or 'predict', got {mode!r}")


class ToyDataset(Dataset):
    """12 random 2-d points, each labelled 1."""

    METAINFO: ClassVar[dict[str, Any]] = {}
    data = torch.randn(12, 2)
    label = torch.ones(12)

    @property
    def metainfo(self) -> dict[str, Any]:
        return self.METAINFO

    def __len__(self) -> int:
        return int(self.data.size(0))

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.data[index], "data_samples": self.label[index]}


class ToyMetric(BaseMetric):
    """Reports ``acc=1`` whatever the predictions (one result per sample)."""

    default_prefix = ""  # metric key "acc", as in mmengine, without the no-prefix warning

    def __init__(self, collect_device: str = "cpu", dummy_metrics: Any = None) -> None:
        super().__init__(collect_device=collect_device)
        self.dummy_metrics = dummy_metrics

    def process(self, data_batch: Any, data_samples: Any) -> None:
        self.results.extend({"acc": 1} for _ in range(len(data_samples)))

    def compute_metrics(self, results: list[Any]) -> dict[str, Any]:
        return {"acc": 1}


def _loader(sampler: str, shuffle: bool) -> dict[str, Any]:
    return {"dataset": {"type": "ToyDataset"}, "sampler": {"type": sampler, "shuffle": shuffle},
            "batch_size": 3, "num_workers": 0}  # fmt: skip


class RunnerTestCase(TestCase):
    """Test case with ``epoch_based_cfg`` (2 epochs) and ``iter_based_cfg`` (12 iterations)."""

    #: Environment for a one-process "distributed" run (:meth:`setup_dist_env`).
    dist_cfg: dict[str, Any] = {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": 29600, "RANK": "0", "WORLD_SIZE": "1",
        "LOCAL_RANK": "0",
    }  # fmt: skip

    def setUp(self) -> None:
        self._cleanup = ExitStack()
        self._cleanup.enter_context(isolated_registries())
        self._cleanup.enter_context(isolated_instances(start_empty=False))
        self._saved_env = {key: os.environ.get(key) for key in self.dist_cfg}
        self.temp_dir = tempfile.TemporaryDirectory()
        MODELS.register_module(module=ToyModel, force=True)
        METRICS.register_module(module=ToyMetric, force=True)
        DATASETS.register_module(module=ToyDataset, force=True)
        self.epoch_based_cfg = Config(
            {
                "work_dir": self.temp_dir.name,
                "model": {"type": "ToyModel"},
                "train_dataloader": _loader("DefaultSampler", True),
                "val_dataloader": _loader("DefaultSampler", False),
                "val_evaluator": [{"type": "ToyMetric"}],
                "test_dataloader": _loader("DefaultSampler", False),
                "test_evaluator": [{"type": "ToyMetric"}],
                "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1}},
                "train_cfg": {"by_epoch": True, "max_epochs": 2, "val_interval": 1},
                "val_cfg": {},
                "test_cfg": {},
                "default_hooks": {"logger": {"type": "LoggerHook", "interval": 1}},
                "custom_hooks": [],
                "env_cfg": {"dist_cfg": {"backend": "nccl"}},
                "experiment_name": "test1",
                # the runners of one test share its temporary work dir: a later one
                # replaces an earlier one's checkpoints there, as in mmengine
                "overwrite": True,
            }
        )
        self.iter_based_cfg: Config = copy.deepcopy(self.epoch_based_cfg)
        self.iter_based_cfg.train_dataloader = _loader("InfiniteSampler", True)
        self.iter_based_cfg.log_processor = {"by_epoch": False}
        self.iter_based_cfg.train_cfg = {"by_epoch": False, "max_iters": 12}
        self.iter_based_cfg.default_hooks = {
            "logger": {"type": "LoggerHook", "interval": 1},
            "checkpoint": {"type": "CheckpointHook", "interval": 12, "by_epoch": False},
        }

    def tearDown(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._cleanup.close()
        self.temp_dir.cleanup()

    def build_runner(self, cfg: Config) -> Runner:
        """A runner from ``cfg``, under a fresh :attr:`experiment_name`."""
        cfg.experiment_name = self.experiment_name
        return Runner.from_cfg(cfg)

    @property
    def experiment_name(self) -> str:
        """A name unique to this test method and moment (``<test>_<ns>``)."""
        return f"{self._testMethodName}_{time.time_ns()}"

    def setup_dist_env(self) -> None:
        """Set the env of a one-process group (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``...).

        Each call picks a free port (stored in ``dist_cfg['MASTER_PORT']``); the
        variables are restored in ``tearDown``.
        """
        self.dist_cfg = {**self.dist_cfg, "MASTER_PORT": free_port()}
        for key, value in self.dist_cfg.items():
            os.environ[key] = str(value)

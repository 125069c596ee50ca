"""``cadence check CONFIG --dry-run``: builds the run for real, takes two steps per stage,
writes nothing to the work_dir, and names the dataset index that fails."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
import torch
from torch import nn

from cadence.cli import main
from cadence.cli.dry_run import describe
from cadence.evaluator import BaseMetric
from cadence.model import BaseModel
from cadence.registry import DATASETS, METRICS, MODELS


@pytest.fixture(autouse=True)
def toys():
    """A 4 -> 2 linear classifier (10 parameters), a dataset that can break at one index,
    and a metric counting the samples it saw."""

    @MODELS.register_module()
    class DryNet(BaseModel):
        def __init__(self, fail_step: bool = False) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.fail_step = fail_step

        def forward(self, inputs, data_samples=None, mode="tensor"):
            if self.fail_step:
                raise ValueError("the model's own bug")
            logits = self.fc(inputs)
            if mode == "loss":
                return {"loss": nn.functional.cross_entropy(logits, data_samples)}
            return list(logits.argmax(1))

    @DATASETS.register_module()
    class DrySet(torch.utils.data.Dataset):
        def __init__(self, size: int = 8, broken_at: int = -1) -> None:
            self.size, self.broken_at = size, broken_at

        def __len__(self):
            return self.size

        def __getitem__(self, index):
            if index == self.broken_at:
                raise KeyError(f"no label for sample {index}")
            return {"inputs": torch.full((4,), float(index)), "data_samples": index % 2}

    @METRICS.register_module()
    class DryCount(BaseMetric):
        def process(self, data_batch, data_samples):
            self.results.extend(1 for _ in data_samples)

        def compute_metrics(self, results):
            return {"seen": len(results)}


CONFIG = """\
model = dict(type='DryNet')
work_dir = {work_dir!r}
loader = dict(collate_fn=dict(type='default_collate'),
              sampler=dict(type='DefaultSampler', shuffle=False))
train_dataloader = dict(batch_size=2, dataset=dict(type='DrySet'), **loader)
val_dataloader = dict(batch_size=3, dataset=dict(type='DrySet', size=5), **loader)
val_evaluator = dict(type='DryCount')
train_cfg = dict(max_epochs=1)
val_cfg = dict()
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))
"""


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def write(tmp_path, **replace):
    text = CONFIG.format(work_dir=str(tmp_path / "wd"))
    for old, new in replace.items():
        text = text.replace(old, new)
    path = tmp_path / "cfg.py"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_dry_run_reports_shapes_parameters_steps_and_writes_nothing(tmp_path, capsys):
    assert run(["check", write(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "model: DryNet, 10 parameters (10 trainable)" in out
    assert "strategy: SingleDeviceStrategy on cpu, world size 1" in out
    assert "train data: 8 samples, 4 batches per epoch" in out
    assert "  first batch: {inputs: Tensor[2, 4] float32, data_samples: Tensor[2] int64}" in out
    train = next(line for line in out if line.startswith("train step: "))
    assert train.count(" ms") == 2 and "; loss " in train  # two steps, each timed
    # two validation batches of 3 and 2 samples: the metric sees all 5
    val = next(line for line in out if line.startswith("val step: "))
    assert val.endswith("metrics on 5 samples: seen=5")
    assert out[-1] == "dry run OK"
    assert not os.path.exists(tmp_path / "wd")  # the configured work_dir is never created


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/fd")
def test_dry_run_leaves_no_log_file_open(tmp_path, capsys):
    def open_dry_run_files():
        fds = os.listdir("/proc/self/fd")
        targets = [os.path.realpath(f"/proc/self/fd/{fd}") for fd in fds]
        return [t for t in targets if "cadence-dry-run-" in t]

    assert run(["check", write(tmp_path), "--dry-run"]) == 0
    assert open_dry_run_files() == []


def test_a_broken_dataset_item_is_named_by_its_index(tmp_path, capsys):
    cfg = write(tmp_path, **{"type='DrySet')": "type='DrySet', broken_at=3)"})
    assert run(["check", cfg, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "train_dataloader.dataset[3] (DrySet) failed: KeyError: 'no label for sample 3'" in err
    assert "Traceback" not in err
    assert not os.path.exists(tmp_path / "wd")


def test_a_failing_training_step_names_the_stage_and_the_users_frame(tmp_path, capsys):
    cfg = write(tmp_path, **{"type='DryNet'": "type='DryNet', fail_step=True"})
    assert run(["check", cfg, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "dry run failed while taking a training step: ValueError: the model's own bug" in err
    assert f"{__file__}:" in err and "in forward" in err


def test_describe_names_shapes_dtypes_and_lengths():
    batch = {"x": torch.zeros(2, 3, dtype=torch.float16), "meta": [{"a": 1}, {"a": 2}]}
    assert describe(batch) == "{x: Tensor[2, 3] float16, meta: list[2] of dict(1 keys)}"
    assert describe([torch.zeros(1), torch.zeros(2)]) == "list[2]"
    assert describe(()) == "tuple[0]"

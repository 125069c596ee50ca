"""Validation loss (``val_cfg=dict(compute_loss=True)``) and several validation/test sets."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from cadence.evaluator import BaseMetric
from cadence.loops.eval_sets import split_eval_sets
from cadence.model import BaseModel
from cadence.registry import DATASETS, METRICS, MODELS
from cadence.runner import Runner


class Values(Dataset):
    """Sample ``i`` is the number ``offset + i``."""

    def __init__(self, n: int = 5, offset: float = 0.0) -> None:
        self.n, self.offset = n, offset

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"inputs": torch.tensor([self.offset + i])}


class Echo(BaseModel):
    """Loss: the batch mean of ``inputs * w`` (w = 1); predictions: each ``inputs * w``."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))
        self.forwards: list[str] = []

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        self.forwards.append(mode)
        out = inputs.float().squeeze(-1) * self.w
        if mode == "loss":
            return {"loss_value": out.mean()}
        if mode == "tensor":
            return out
        return [{"pred": float(v)} for v in out]


class EchoOnce(Echo):
    """The same, with both computed from one forward pass."""

    def loss_and_predict(self, data: Any) -> tuple[dict[str, Any], list[Any]]:
        batch = self.data_preprocessor(data, False)
        out = self(batch["inputs"], mode="tensor")
        return {"loss_value": out.mean()}, [{"pred": float(v)} for v in out]


class MeanPred(BaseMetric):
    default_prefix = "pred"

    def process(self, data_batch: Any, data_samples: Any) -> None:
        self.results.extend(s["pred"] for s in data_samples)

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        return {"mean": sum(results) / len(results)}


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Values, force=True)
    MODELS.register_module(module=Echo, force=True)
    MODELS.register_module(module=EchoOnce, force=True)
    METRICS.register_module(module=MeanPred, force=True)


def loader(n: int = 5, offset: float = 0.0, batch_size: int = 2) -> dict[str, Any]:
    return dict(
        dataset=dict(type="Values", n=n, offset=offset), batch_size=batch_size,
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
    )  # fmt: skip


def validate(tmp_path: Any, model: str = "Echo", **kwargs: Any) -> tuple[Runner, dict[str, Any]]:
    cfg: dict[str, Any] = dict(
        model=dict(type=model), work_dir=str(tmp_path), val_dataloader=loader(),
        val_cfg=dict(compute_loss=True), val_evaluator=dict(type="MeanPred"),
        default_hooks=dict(checkpoint=None), log_level="WARNING",
    )  # fmt: skip
    cfg.update(kwargs)
    runner = Runner.from_cfg(cfg)
    return runner, runner.val()


def test_val_loss_is_the_mean_over_samples_not_over_batches(tmp_path):
    # samples 0..4 in batches (0,1), (2,3), (4): batch means 0.5, 2.5, 4 average to 2.33,
    # the mean over the 5 samples is 2
    _, metrics = validate(tmp_path)
    assert metrics["loss"] == pytest.approx(2.0)
    assert metrics["loss_value"] == pytest.approx(2.0)
    assert metrics["pred/mean"] == pytest.approx(2.0)
    assert list(metrics)[0] == "pred/mean"  # the evaluator's metrics come first ('auto')


def test_a_model_with_loss_and_predict_runs_one_forward_per_batch(tmp_path):
    runner, metrics = validate(tmp_path, model="EchoOnce")
    assert metrics["loss"] == pytest.approx(2.0) and metrics["pred/mean"] == pytest.approx(2.0)
    assert runner.model.forwards == ["tensor"] * 3
    plain, _ = validate(tmp_path / "plain")
    assert plain.model.forwards == ["loss", "predict"] * 3


def test_without_compute_loss_no_loss_is_recorded(tmp_path):
    runner, metrics = validate(tmp_path, val_cfg=dict())
    assert metrics == {"pred/mean": pytest.approx(2.0)}
    assert runner.model.forwards == ["predict"] * 3


def test_named_sets_prefix_their_metrics_and_losses(tmp_path):
    runner, metrics = validate(
        tmp_path,
        val_dataloader=dict(clean=loader(), noisy=loader(n=3, offset=10.0)),
        val_evaluator=dict(clean=dict(type="MeanPred"), noisy=dict(type="MeanPred")),
    )
    assert metrics == {
        "clean/pred/mean": pytest.approx(2.0), "clean/loss": pytest.approx(2.0),
        "clean/loss_value": pytest.approx(2.0), "noisy/pred/mean": pytest.approx(11.0),
        "noisy/loss": pytest.approx(11.0), "noisy/loss_value": pytest.approx(11.0),
    }  # fmt: skip
    loop = runner.val_loop
    assert loop.dataloader is loop.dataloaders["clean"]  # the first set, between runs
    assert runner.message_hub.get_scalar("val/noisy/loss").current() == pytest.approx(11.0)


def test_list_sets_are_named_by_position_and_share_one_evaluator_config(tmp_path):
    runner = Runner.from_cfg(dict(
        model=dict(type="Echo"), work_dir=str(tmp_path), log_level="WARNING",
        test_dataloader=[loader(), loader(n=2, offset=4.0)], test_cfg=dict(),
        test_evaluator=dict(type="MeanPred"), default_hooks=dict(checkpoint=None),
    ))  # fmt: skip
    metrics = runner.test()
    assert metrics == {"0/pred/mean": pytest.approx(2.0), "1/pred/mean": pytest.approx(4.5)}
    evaluators = runner.test_loop.evaluators
    assert evaluators["0"] is not evaluators["1"]


def test_the_end_of_test_line_counts_the_batches_of_every_set(tmp_path):
    runner = Runner.from_cfg(dict(
        model=dict(type="Echo"), work_dir=str(tmp_path),
        test_dataloader=[loader(), loader(n=2, offset=4.0)], test_cfg=dict(),
        test_evaluator=dict(type="MeanPred"), default_hooks=dict(checkpoint=None),
    ))  # fmt: skip
    runner.test()
    log = "".join(p.read_text() for p in tmp_path.rglob("*.log"))
    # 5 samples in batches of 2 (3 batches), then 2 samples (1 batch)
    assert "Epoch(test) [4/4]" in log and "Epoch(test) [3/3]" not in log


@pytest.mark.parametrize(
    ("loaders", "evaluators", "message"),
    [
        ([loader(), loader()], [dict(type="MeanPred")] * 3,
         "val_dataloader is a list of 2 dataloaders, so val_evaluator must be a list of 2"),
        (dict(a=loader(), b=loader()), dict(a=dict(type="MeanPred"), c=dict(type="MeanPred")),
         "val_evaluator must name the same sets as val_dataloader (a, b): missing b; unknown c"),
        (dict(a=loader()), [dict(type="MeanPred")],
         "val_dataloader names its sets (a), so val_evaluator must be a dict"),
        ([], dict(type="MeanPred"), "val_dataloader is an empty list"),
        (dict(**{"a/b": loader()}), dict(type="MeanPred"), "set name 'a/b' must be"),
    ],
)  # fmt: skip
def test_sets_that_do_not_pair_up_name_both_keys(loaders, evaluators, message):
    with pytest.raises(ValueError) as info:
        split_eval_sets(loaders, evaluators, "val")
    assert message in str(info.value)


def test_one_loader_config_keeps_its_evaluator_whatever_its_shape():
    metrics = [dict(type="MeanPred"), dict(type="MeanPred", prefix="b")]
    assert split_eval_sets(loader(), metrics) == [(None, loader(), metrics)]


def test_save_best_and_plateau_use_a_named_sets_loss(tmp_path):
    runner = Runner.from_cfg(dict(
        model=dict(type="Echo"), work_dir=str(tmp_path), log_level="WARNING",
        train_dataloader=loader(n=4), train_cfg=dict(max_epochs=3),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        param_scheduler=dict(type="ReduceOnPlateauLR", monitor="noisy/loss", patience=0,
                             factor=0.5),
        val_dataloader=dict(clean=loader(), noisy=loader(n=3, offset=10.0)),
        val_evaluator=dict(type="MeanPred"), val_cfg=dict(compute_loss=True),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=-1,
                                           save_best="noisy/loss")),
    ))  # fmt: skip
    runner.train()
    # w falls by 0.1 * mean(input) per step, so each validation's loss is lower than the
    # last: the best checkpoint is the last epoch's, and the LR is never reduced
    best = os.path.basename(runner.message_hub.get_info("best_ckpt"))
    assert best == "best_noisy_loss_epoch_3.pth"
    assert runner.optim_wrapper.get_lr()["lr"][0] == pytest.approx(0.1)

"""BaseTTAModel: one test_step per augmented view, predictions merged per sample.

Cases from mmengine's BaseTTAModel documentation: a batch collated from
``TestTimeAug`` samples holds, for every key, one entry per view; each view is
run through the wrapped model's ``test_step`` and ``merge_preds`` receives, for
each sample, its predictions in the views' order.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cadence.checkpoint import load_checkpoint
from cadence.dataset import pseudo_collate
from cadence.model import BaseModel, BaseTTAModel
from cadence.registry import MODELS
from cadence.structures import BaseDataElement
from cadence.transforms import TestTimeAug


class Doubler(BaseModel):
    """Predicts ``2 * w * x`` for each input; records what each call received."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor=data_preprocessor)
        self.w = nn.Parameter(torch.ones(()))
        self.calls = []

    def forward(self, inputs, data_samples=None, mode="tensor"):
        self.calls.append((inputs, data_samples))
        preds = [2 * self.w.detach() * x for x in inputs]
        if data_samples is None:
            return preds
        return [(tag, p) for tag, p in zip(data_samples, preds)]


class KeepAll(BaseTTAModel):
    """Merges nothing: returns the per-sample lists, to see what merge_preds receives."""

    def merge_preds(self, data_samples_list):
        return data_samples_list


class Mean(BaseTTAModel):
    def merge_preds(self, data_samples_list):
        return [sum(p for _, p in views) / len(views) for views in data_samples_list]


def t(*values):
    return torch.tensor(values, dtype=torch.float32)


def test_test_step_runs_each_view_and_hands_predictions_grouped_by_sample():
    module = Doubler()
    tta = KeepAll(module)
    batch = dict(  # two images (a, b), each in two views
        inputs=[[t(1.0), t(2.0)], [t(10.0), t(20.0)]],
        data_samples=[["a/view0", "b/view0"], ["a/view1", "b/view1"]],
    )
    merged = tta.test_step(batch)

    # the wrapped model saw one batch per view: view 0 of every image, then view 1
    assert [samples for _, samples in module.calls] == [["a/view0", "b/view0"],
                                                          ["a/view1", "b/view1"]]  # fmt: skip
    assert [[float(x) for x in inputs] for inputs, _ in module.calls] == [[1, 2], [10, 20]]
    # merge_preds got, for each image, its predictions in the views' order
    assert [[tag for tag, _ in views] for views in merged] == [["a/view0", "a/view1"],
                                                                ["b/view0", "b/view1"]]  # fmt: skip
    assert [[float(p) for _, p in views] for views in merged] == [[2, 20], [4, 40]]


def test_merged_predictions_are_what_merge_preds_returns():
    tta = Mean(Doubler())
    batch = dict(inputs=[[t(1.0)], [t(3.0)], [t(5.0)]], data_samples=[["x"], ["x"], ["x"]])
    (merged,) = tta.test_step(batch)
    assert float(merged) == pytest.approx(2 * (1 + 3 + 5) / 3)


def test_a_list_batch_is_split_by_position():
    module = Doubler()
    batch = [[[t(1.0)], [t(2.0)]], [["s/view0"], ["s/view1"]]]  # (inputs, data_samples)
    merged = KeepAll(module).test_step(batch)
    assert [samples for _, samples in module.calls] == [["s/view0"], ["s/view1"]]
    assert [[float(p) for _, p in views] for views in merged] == [[2, 4]]


def test_a_test_time_aug_pipeline_collated_feeds_test_step():
    """The whole path: TestTimeAug per sample, pseudo_collate, then test_step."""
    aug = TestTimeAug([[lambda r: {**r, "x": r["x"] * 1}, lambda r: {**r, "x": r["x"] * -1}],
                       [lambda r: {"inputs": t(r["x"]), "data_samples": r["name"]}]])  # fmt: skip
    batch = pseudo_collate([aug({"x": 1.0, "name": "one"}), aug({"x": 3.0, "name": "three"})])
    merged = KeepAll(Doubler()).test_step(batch)
    assert [[(tag, float(p)) for tag, p in views] for views in merged] == [
        [("one", 2.0), ("one", -2.0)],
        [("three", 6.0), ("three", -6.0)],
    ]


def test_val_step_also_runs_each_view():
    module = Doubler()
    merged = Mean(module).val_step(dict(inputs=[[t(1.0)], [t(2.0)]], data_samples=[["s"], ["s"]]))
    assert len(module.calls) == 2 and float(merged[0]) == pytest.approx(3.0)


def test_module_from_config_takes_the_default_data_preprocessor():
    MODELS.register_module(module=Doubler)
    preprocessor = dict(type="ImgDataPreprocessor", mean=[1.0], std=[2.0])
    tta = Mean(dict(type="Doubler"), data_preprocessor=preprocessor)
    assert isinstance(tta.module, Doubler)
    assert type(tta.module.data_preprocessor).__name__ == "ImgDataPreprocessor"
    # a module config with its own preprocessor keeps it
    own = Mean(dict(type="Doubler", data_preprocessor=dict(type="BaseDataPreprocessor")),
               data_preprocessor=preprocessor)  # fmt: skip
    assert type(own.module.data_preprocessor).__name__ == "BaseDataPreprocessor"


def test_module_must_be_a_module_or_config_with_test_step():
    with pytest.raises(TypeError, match="nn.Module or a model config"):
        Mean(3)
    with pytest.raises(TypeError, match="has no test_step"):
        Mean(nn.Linear(1, 1))


def test_merge_preds_is_abstract_and_forward_is_not_used():
    with pytest.raises(TypeError, match="merge_preds"):
        BaseTTAModel(Doubler())
    with pytest.raises(NotImplementedError):
        Mean(Doubler())(t(1.0))


@pytest.mark.parametrize(
    ("batch", "error", "match"),
    [
        (dict(inputs=[[t(1.0)], [t(2.0)]], data_samples=[["s"]]), ValueError, "different numbers"),
        (dict(inputs=t(1.0, 2.0)), TypeError, "TestTimeAug"),
        (dict(), ValueError, "no fields"),
        ("text", TypeError, "dict, list or tuple"),
    ],
)
def test_malformed_batches_are_rejected(batch, error, match):
    with pytest.raises(error, match=match):
        Mean(Doubler()).test_step(batch)


def test_state_dicts_with_and_without_the_module_prefix_load_into_the_wrapped_module():
    plain = Doubler()
    with torch.no_grad():
        plain.w.fill_(3.0)
    tta = Mean(Doubler())
    tta.load_state_dict(plain.state_dict(), strict=True)  # keys: "w", ...
    assert tta.module.w.item() == 3.0
    again = Mean(Doubler())
    again.load_state_dict(tta.state_dict(), strict=True)  # keys: "module.w", ...
    assert again.module.w.item() == 3.0
    outer = nn.ModuleDict({"tta": Mean(Doubler())})  # the hook honours a parent's prefix
    outer.load_state_dict({f"tta.{k}": v for k, v in plain.state_dict().items()}, strict=True)
    assert outer["tta"].module.w.item() == 3.0


def test_a_checkpoint_of_the_plain_model_loads_into_the_wrapped_module(tmp_path):
    trained = Doubler()
    with torch.no_grad():
        trained.w.fill_(5.0)
    path = tmp_path / "plain.pth"
    torch.save({"state_dict": trained.state_dict(), "meta": {}}, path)
    tta = Mean(Doubler())
    with pytest.warns(UserWarning, match="no manifest"):  # saved by torch.save, not cadence
        load_checkpoint(tta, str(path), strict=True)
    assert tta.module.w.item() == 5.0
    sample = BaseDataElement(metainfo=dict(flip=False))
    (merged,) = tta.test_step(dict(inputs=[[t(1.0)], [t(1.0)]], data_samples=[[sample], [sample]]))
    assert float(merged) == 10.0

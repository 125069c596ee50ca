"""BaseInferencer (mmengine's inferencer base): config from the checkpoint, weights
loaded, inputs batched through pipeline -> collate -> test_step -> postprocess."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cadence.inference import BaseInferencer
from cadence.registry import MODELS


@MODELS.register_module(name="_InferencerToy", force=True)
class _Scale(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(1.0))

    def test_step(self, batch):
        return [x * self.w for x in batch]


class _Scaler(BaseInferencer):
    preprocess_kwargs: set[str] = set()
    postprocess_kwargs = {"times"}

    def _init_pipeline(self, cfg):
        return torch.as_tensor

    def visualize(self, inputs, preds, show=False, **kwargs):
        return None

    def postprocess(self, preds, visualization, return_datasample=False, times=1):
        return [float(p) * times for p in preds]


@pytest.mark.filterwarnings("ignore::UserWarning")  # the toy checkpoint has no manifest
def test_config_and_weights_come_from_the_checkpoint(tmp_path):
    path = tmp_path / "toy.pth"
    torch.save({"state_dict": {"w": torch.tensor(3.0)},
                "meta": {"cfg": "model = dict(type='_InferencerToy')"}}, path)  # fmt: skip
    inferencer = _Scaler(weights=str(path), device="cpu", show_progress=False)
    assert not inferencer.model.training
    assert inferencer([1.0, 2.0, 4.0], batch_size=2, times=10) == [30.0, 60.0, 120.0]
    assert list(inferencer._get_chunk_data(range(5), 2)) == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="unknown argument"):
        inferencer([1.0], colour="red")


def test_stage_keywords_may_not_overlap():
    with pytest.raises(AssertionError, match="Class define error"):

        class _Bad(BaseInferencer):  # noqa: F841
            preprocess_kwargs = {"a"}
            forward_kwargs = {"a"}

"""Predictor: config + checkpoint -> predictions with the config's test-time preprocessing."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

pytest.importorskip("sklearn")  # the `examples` extra (CI installs it through `test`)

import examples.digits.digits as digits  # noqa: E402  (registers at collection time)
from cadence.config import Config  # noqa: E402
from cadence.config.errors import ConfigKeyError  # noqa: E402
from cadence.inference import Predictor  # noqa: E402

CONFIG = os.path.join(ROOT, "examples", "digits", "configs", "cnn_1xb32_digits.py")
MEAN, STD = 4.9, 6.0  # configs/_base_/models/cnn.py


def hand_scores(state: dict[str, torch.Tensor], images: np.ndarray) -> torch.Tensor:
    """Softmax scores computed without the Predictor: plain module, hand normalisation."""
    torch.manual_seed(123)
    model = digits.DigitsCNN(channels=32, num_classes=10)
    model.load_state_dict(state)
    model.eval()
    x = (torch.as_tensor(images, dtype=torch.float32).reshape(-1, 1, 8, 8) - MEAN) / STD
    with torch.no_grad():
        return model(x).softmax(dim=-1)


@pytest.fixture(scope="module")
def weights() -> dict[str, torch.Tensor]:
    """Random but fixed weights with non-trivial BatchNorm statistics."""
    torch.manual_seed(0)
    model = digits.DigitsCNN(channels=32, num_classes=10)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.fixture
def checkpoint(tmp_path, weights) -> str:
    path = tmp_path / "epoch_1.pth"
    torch.save({"state_dict": weights, "meta": {"epoch": 1}}, path)
    return str(path)


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return digits.DigitsDataset("test").images[:12]


def scores_of(predictions: list[dict]) -> torch.Tensor:
    return torch.stack([p["pred_score"] for p in predictions])


def test_batch_predictions_match_a_hand_written_forward(checkpoint, weights, images):
    predictor = Predictor(CONFIG, checkpoint, device="cpu")
    predictions = predictor(list(images))
    assert len(predictions) == len(images)
    expected = hand_scores(weights, images)
    torch.testing.assert_close(scores_of(predictions), expected, rtol=1e-5, atol=1e-6)
    assert [p["pred_label"] for p in predictions] == expected.argmax(-1).tolist()
    assert "gt_label" not in predictions[0]  # raw inputs carry no labels


def test_one_input_gives_one_prediction_equal_to_its_batch_entry(checkpoint, images):
    predictor = Predictor(Config.fromfile(CONFIG), checkpoint)
    single = predictor(images[3])
    assert isinstance(single, dict)
    batch = predictor(list(images[:5]))
    torch.testing.assert_close(single["pred_score"], batch[3]["pred_score"])
    assert predictor([]) == []


def test_model_is_in_eval_mode_on_the_device_and_runs_under_inference_mode(checkpoint, images):
    predictor = Predictor(CONFIG, checkpoint, device=torch.device("cpu"))
    assert not any(m.training for m in predictor.model.modules())
    assert all(p.device.type == "cpu" for p in predictor.model.parameters())
    first, second = predictor(images[0]), predictor(images[0])
    assert torch.equal(first["pred_score"], second["pred_score"])  # dropout is off
    assert first["pred_score"].is_inference()
    assert predictor.device == torch.device("cpu")


def test_default_device_is_cuda_when_available(checkpoint):
    predictor = Predictor(CONFIG, checkpoint)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert predictor.device.type == expected
    assert next(predictor.model.parameters()).device.type == expected


def test_test_pipeline_is_applied_to_raw_inputs(checkpoint, weights, images):
    """A pipeline step that inverts pixels changes what the model sees."""
    cfg = Config.fromfile(CONFIG)
    steps = [dict(type="Invert"), dict(type="PackDigitInputs")]
    cfg.merge_from_dict({"test_dataloader.dataset.pipeline": steps})

    class Invert:
        def __call__(self, results: dict) -> dict:
            results["img"] = 16.0 - results["img"]
            return results

    from cadence.registry import TRANSFORMS

    TRANSFORMS.register_module(name="Invert", module=Invert)
    predictor = Predictor(cfg, checkpoint)
    assert predictor.pipeline_path == "test_dataloader.dataset.pipeline"
    got = scores_of(predictor(list(images)))
    torch.testing.assert_close(got, hand_scores(weights, 16.0 - images), rtol=1e-5, atol=1e-6)


def test_dict_inputs_enter_the_pipeline_as_they_are(checkpoint, weights, images):
    predictor = Predictor(CONFIG, checkpoint)
    got = predictor([{"img": images[0], "gt_label": 7}])[0]
    assert got["gt_label"] == 7  # the pipeline packed the label as a data sample
    torch.testing.assert_close(got["pred_score"], hand_scores(weights, images[:1])[0])


def test_without_a_pipeline_inputs_go_straight_to_the_data_preprocessor(
    checkpoint, weights, images
):
    cfg = Config.fromfile(CONFIG)
    del cfg["test_dataloader"]["dataset"]["pipeline"]
    for loader in cfg["val_dataloader"].values():  # the example validates two named sets
        del loader["dataset"]["pipeline"]
    del cfg["test_pipeline"]
    predictor = Predictor(cfg, checkpoint)
    assert predictor.pipeline_path is None
    tensors = [torch.as_tensor(img).reshape(1, 8, 8) for img in images[:4]]
    got = scores_of(predictor(tensors))
    torch.testing.assert_close(got, hand_scores(weights, images[:4]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layout", ["ddp_prefix", "bare_state_dict", "work_dir"])
def test_checkpoint_layouts_load_the_same_weights(tmp_path, weights, images, layout):
    if layout == "ddp_prefix":
        path = tmp_path / "ddp.pth"
        torch.save({"state_dict": {f"module.{k}": v for k, v in weights.items()}}, path)
    elif layout == "bare_state_dict":
        path = tmp_path / "bare.pth"
        torch.save(weights, path)
    else:
        torch.save({"state_dict": weights}, tmp_path / "epoch_3.pth")
        (tmp_path / "last_checkpoint").write_text(str(tmp_path / "epoch_3.pth"))
        path = tmp_path
    predictor = Predictor(CONFIG, path)
    got = scores_of(predictor(list(images)))
    torch.testing.assert_close(got, hand_scores(weights, images), rtol=1e-5, atol=1e-6)


def test_missing_or_mismatched_checkpoints_are_reported(tmp_path, weights):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Predictor(CONFIG, tmp_path / "nope.pth")
    with pytest.raises(FileNotFoundError, match="last_checkpoint"):
        Predictor(CONFIG, tmp_path)
    partial = {k: v for k, v in weights.items() if not k.startswith("head.")}
    torch.save({"state_dict": partial}, tmp_path / "partial.pth")
    with pytest.raises(RuntimeError, match="head"):
        Predictor(CONFIG, tmp_path / "partial.pth")
    with pytest.warns(UserWarning, match="missing keys"):
        Predictor(CONFIG, tmp_path / "partial.pth", strict=False)


def test_unknown_collate_function_names_the_key_and_suggests(checkpoint):
    cfg = Config.fromfile(CONFIG)
    cfg.merge_from_dict({"test_dataloader.collate_fn": dict(type="default_colate")})
    with pytest.raises(ConfigKeyError, match="test_dataloader.collate_fn.*default_collate"):
        Predictor(cfg, checkpoint)


def test_predictor_is_reachable_from_the_top_level_package_lazily():
    import cadence

    assert cadence.Predictor is Predictor
    assert "Predictor" in cadence.__all__

"""examples/detection_toy: trains briefly, draws validation samples, tests with flip TTA.

Chance level: the best constant box (searched over a grid on the generated box
distribution) has a mean IoU of 0.25 with the true boxes, so a mean IoU above
0.5 means the model localises the rectangle. Two epochs of 48 batches of 16
reach about 0.7.
"""

from __future__ import annotations

import ast
import glob
import os
import pickle
import sys

import numpy as np
import pytest
import torch
from example_runner import ROOT

sys.path.insert(0, ROOT)

# Register the example's components before the registries' per-test snapshot.
import examples.detection_toy.data as data  # noqa: E402
import examples.detection_toy.evaluation as evaluation  # noqa: E402
import examples.detection_toy.model  # noqa: E402, F401
from cadence.cli import main  # noqa: E402

CONFIG = os.path.join(ROOT, "examples", "detection_toy", "config.py")
CHANCE_IOU = 0.25  # the best constant box, see the module docstring


def shortened(tmp_path):
    """Overrides for a short run whose files all go under ``tmp_path``."""
    root = str(tmp_path / "data")
    sizes = {"train": 768, "val": 32, "test": 128}
    return [f"{split}_dataloader.dataset.{key}={value}" for split, n in sizes.items()
            for key, value in (("data_root", root), ("num_samples", n))]  # fmt: skip


def test_short_training_then_flip_tta_runs_both_views_and_beats_chance(tmp_path, capsys):
    work = str(tmp_path / "work")
    overrides = shortened(tmp_path)
    assert main(["train", CONFIG, "--work-dir", work, "train_cfg.max_epochs=2",
                 "train_cfg.val_interval=2", "train_dataloader.batch_size=16",
                 "custom_hooks.0.max_images=2", *overrides]) == 0  # fmt: skip
    drawn = glob.glob(os.path.join(work, "*", "vis_data", "vis_image", "val_img_*.png"))
    assert sorted(map(os.path.basename, drawn)) == ["val_img_0_96.png", "val_img_1_96.png"]
    assert os.path.exists(tmp_path / "data" / "train.json")  # generated on first use

    out = str(tmp_path / "preds.pkl")
    checkpoint = os.path.join(work, "epoch_2.pth")
    assert main(["test", CONFIG, checkpoint, "--tta", "--out", out, "--work-dir", work,
                 *overrides]) == 0  # fmt: skip
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    metrics = ast.literal_eval(printed)  # the metrics dict the command prints last
    assert metrics["toy/mean_iou"] > 2 * CHANCE_IOU

    with open(out, "rb") as f:
        results = pickle.load(f)
    assert len(results) == 128
    views = torch.cat([r["pred_instances"]["view_bboxes"] for r in results])  # N x 2 x 4
    merged = torch.cat([r["pred_instances"]["bboxes"] for r in results])
    gt = torch.cat([r["gt_instances"]["bboxes"] for r in results])
    assert {r["tta_views"] for r in results} == {2} and views.shape == (128, 2, 4)
    assert torch.allclose(merged, views.mean(dim=1))  # the merge averages the two views
    assert not torch.allclose(views[:, 0], views[:, 1])  # two different inputs
    # the flipped view (first in tta_pipeline) was mirrored back: it fits the true box too
    for view in (0, 1):
        assert evaluation.box_iou(views[:, view], gt).mean() > 2 * CHANCE_IOU
    # the ground truth reported is the unflipped one, as in the annotation file
    annotations = data.make_annotations(128, 32, seed=3)["data_list"]
    assert gt.tolist() == [a["gt_bboxes"][0] for a in annotations]


def test_tta_without_tta_keys_is_a_config_error(tmp_path, capsys):
    assert main(["test", CONFIG, "w.pth", "--tta", "tta_model=None"]) == 2
    assert "'tta_model'" in capsys.readouterr().err


def test_random_flip_mirrors_the_image_and_its_box():
    results = data.RenderToyImage()({"img_shape": [32, 32], "noise_seed": 0,
                                      "gt_bboxes": [[2, 5, 10, 9]]})  # fmt: skip
    img = results["img"].copy()
    flipped = data.ToyRandomFlip(prob=1.0)(dict(results))
    assert flipped["flip"] is True
    assert np.array_equal(flipped["img"], img[:, ::-1])
    assert flipped["gt_bboxes"].tolist() == [[22, 5, 30, 9]]  # x1' = 32 - x2, x2' = 32 - x1
    assert flipped["img"][5:9, 22:30].min() > img[:, :2].max()  # the bright box moved there
    kept = data.ToyRandomFlip(prob=0.0)(dict(results))
    assert kept["flip"] is False and kept["gt_bboxes"].tolist() == [[2, 5, 10, 9]]


def test_box_iou_of_known_boxes():
    a = torch.tensor([[0.0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 4, 4]])
    b = torch.tensor([[0.0, 0, 10, 10], [5, 0, 15, 10], [10, 10, 12, 12]])
    assert evaluation.box_iou(a, b).tolist() == pytest.approx([1.0, 50 / 150, 0.0])

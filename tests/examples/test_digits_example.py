"""examples/digits: trains, tests, reports where its outputs are; the Predictor agrees."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
from example_runner import ROOT, printed, printed_dict, run_example

sys.path.insert(0, ROOT)
pytest.importorskip("sklearn")  # the `examples` extra; CI installs it with `test`

import examples.digits.digits as digits  # noqa: E402  (registers at collection time)
from cadence.inference import Predictor  # noqa: E402

CONFIG = os.path.join(ROOT, "examples", "digits", "configs", "cnn_1xb32_digits.py")


def test_splits_are_disjoint_deterministic_and_cover_the_data():
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    splits = {name: digits.DigitsDataset(name) for name in ("train", "val", "test")}
    indices = [i for split in splits.values() for i in split.indices.tolist()]
    assert sorted(indices) == list(range(len(labels)))  # every image in exactly one split
    assert [len(s) for s in splits.values()] == [1258, 180, 359]
    test = splits["test"]
    assert (test.images.reshape(-1, 64) == images[test.indices]).all()
    assert (test.labels == labels[test.indices]).all()
    assert (digits.DigitsDataset("test").indices == test.indices).all()  # same split each time
    packed = digits.DigitsDataset("test", pipeline=[dict(type="PackDigitInputs")])[0]
    assert packed["inputs"].shape == (1, 8, 8)
    assert torch.equal(packed["inputs"][0], torch.as_tensor(test.images[0]))
    assert packed["data_samples"] == test.labels[0]


@pytest.mark.slow  # a training run in a subprocess
def test_short_run_reports_outputs_and_the_predictor_reproduces_its_test_accuracy(tmp_path):
    stdout = run_example(
        "examples/digits/train.py", "--work-dir", str(tmp_path),
        "--cfg-options", "train_cfg.max_epochs=3", "train_cfg.val_interval=1",
    )  # fmt: skip
    accuracy = printed_dict(stdout, "test metrics")["accuracy/top1"]
    assert accuracy > 80  # 10 classes: chance is 10
    for label in ("log", "scalars", "checkpoint", "best", "curves"):
        path = printed(stdout, label)
        assert path.startswith(str(tmp_path)) and os.path.isfile(path), (label, path)
    assert printed(stdout, "curves").endswith(".png")
    assert printed(stdout, "checkpoint").endswith("epoch_3.pth")

    predictor = Predictor(CONFIG, printed(stdout, "checkpoint"), device="cpu")
    test = digits.DigitsDataset("test")
    predictions = predictor(list(test.images))
    labels = torch.tensor([p["pred_label"] for p in predictions])
    mine = 100.0 * (labels == torch.as_tensor(test.labels)).float().mean().item()
    assert mine == pytest.approx(accuracy, abs=0.01)


# The default config's >= 97 % is asserted by README.md's quick-start block, which trains
# that config through the Python API (tests/docs/test_doc_snippets.py); the script itself
# is run above on 3 epochs. (A second full training here cost ~16 s of the suite's CPU.)


def test_random_shift_moves_the_image_by_at_most_max_shift_with_zero_fill():
    img = np.arange(1, 65, dtype=np.float32).reshape(8, 8)
    shift = digits.RandomShift(max_shift=1)
    np.random.seed(0)
    seen = set()
    for _ in range(200):
        out = shift({"img": img.copy()})["img"]
        assert out.shape == (8, 8)
        # find (dy, dx) with out[y, x] == img[y + dy, x + dx] wherever both exist
        matches = [
            (dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
            if np.array_equal(out[max(0, -dy):8 - max(0, dy), max(0, -dx):8 - max(0, dx)],
                              img[max(0, dy):8 + min(0, dy), max(0, dx):8 + min(0, dx)])
        ]  # fmt: skip
        assert len(matches) == 1
        seen.add(matches[0])
        assert (out == 0).sum() == 8 * abs(matches[0][0]) + 8 * abs(matches[0][1]) - abs(
            matches[0][0] * matches[0][1]
        )
    assert len(seen) == 9  # all nine shifts occur

"""MSE, MAE and R² against values worked out by hand (and sklearn's definitions)."""

from __future__ import annotations

import math

import pytest
import torch

from cadence.evaluator import MAE, MSE, R2
from cadence.registry import METRICS

# pred, target: errors -1, 0, 2, 1 over 4 values
SAMPLES = [
    {"pred": 1.0, "target": 2.0},
    {"pred": torch.tensor([3.0]), "target": torch.tensor(3.0)},
    {"pred": torch.tensor([6.0, 5.0]), "target": torch.tensor([4.0, 4.0])},
]


def evaluate(metric, samples=SAMPLES, size=3):
    metric.process({}, samples)
    return metric.evaluate(size)


def test_values_over_every_element():
    assert evaluate(MSE()) == {"regression/mse": (1 + 0 + 4 + 1) / 4}
    assert evaluate(MAE()) == {"regression/mae": (1 + 0 + 2 + 1) / 4}
    # targets 2, 3, 4, 4: mean 3.25, SS_tot = 1.5625 + 0.0625 + 0.5625 + 0.5625 = 2.75
    r2 = evaluate(R2())["regression/r2"]
    assert r2 == pytest.approx(1 - 6 / 2.75)


def test_built_by_name_with_own_keys_and_prefix():
    metric = METRICS.build(dict(type="MAE", pred_key="y_hat", target_key="y", prefix="val"))
    assert evaluate(metric, [{"y_hat": 2.0, "y": -1.0}], 1) == {"val/mae": 3.0}


def test_constant_targets_and_no_results_give_nan():
    assert math.isnan(evaluate(R2(), [{"pred": 1.0, "target": 2.0}], 1)["regression/r2"])
    assert math.isnan(R2().compute_metrics([])["r2"])


def test_mismatched_shapes_and_missing_keys_are_named():
    with pytest.raises(ValueError, match="'pred' has 2 values and 'target' 1"):
        MSE().process({}, [{"pred": torch.zeros(2), "target": 0.0}])
    with pytest.raises(KeyError, match="'target'"):
        MSE().process({}, [{"pred": 1.0}])

"""get_metric_value: a metric by its full name, or by its name without the prefix."""

from __future__ import annotations

import pytest

from cadence.evaluator import get_metric_value

METRICS = {"coco/AP": 0.5, "coco/AR": 0.6, "voc/AP": 0.7, "bare": 1.0}


def test_full_and_unique_short_names_are_found() -> None:
    assert get_metric_value("voc/AP", METRICS) == 0.7
    assert get_metric_value("AR", METRICS) == 0.6
    assert get_metric_value("bare", METRICS) == 1.0


def test_unknown_and_ambiguous_names_are_value_errors() -> None:
    with pytest.raises(ValueError, match="can not match any metric.*Did you mean .*'coco/AR'"):
        get_metric_value("coco/AX", METRICS)
    with pytest.raises(ValueError, match="can not match any metric"):
        get_metric_value("mIoU", METRICS)
    with pytest.raises(ValueError, match=r"matches multiple metrics \['coco/AP', 'voc/AP'\]"):
        get_metric_value("AP", METRICS)

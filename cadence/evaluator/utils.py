"""Look a metric up in an evaluator's results by its full or its short name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..utils import did_you_mean


def get_metric_value(indicator: str, metrics: Mapping[str, Any]) -> Any:
    """Return the value of ``indicator`` in ``metrics``.

    ``indicator`` is a full name with the metric's prefix (``'coco/AP'``), or a name
    without it (``'AP'``), which must then end exactly one key after its last ``/``.
    Raises ``ValueError`` when nothing matches (naming the closest keys) or when a short
    name matches several keys.
    """
    keys = list(metrics)
    if "/" in indicator:
        if indicator in metrics:
            return metrics[indicator]
        raise ValueError(
            f"The indicator '{indicator}' can not match any metric in {keys}."
            f"{did_you_mean(indicator, keys)}"
        )
    matched = [key for key in keys if key.rsplit("/", 1)[-1] == indicator]
    if not matched:
        raise ValueError(
            f"The indicator '{indicator}' can not match any metric in {keys}."
            f"{did_you_mean(indicator, [key.rsplit('/', 1)[-1] for key in keys])}"
        )
    if len(matched) > 1:
        raise ValueError(
            f"The indicator '{indicator}' matches multiple metrics {matched}; give its full "
            "name with the prefix"
        )
    return metrics[matched[0]]

"""Counts as short text."""

from __future__ import annotations

from cadence.analysis.table import format_count


def test_format_count_uses_the_largest_unit_above_a_tenth() -> None:
    assert [format_count(n) for n in (0, 100, 101, 45_600, 123_456, 7.5e9, 2e15)] == [
        "0", "100", "0.101K", "45.6K", "0.123M", "7.5G", "2P",
    ]  # fmt: skip
    assert format_count(0, hide_zero=True) == ""

"""``to_3tuple`` as mmengine documents ``to_ntuple``: a single value is repeated, an iterable
is returned as it is (not checked for length, not converted)."""

from __future__ import annotations

from cadence.utils import to_3tuple


def test_a_single_value_is_repeated_three_times() -> None:
    assert to_3tuple(2) == (2, 2, 2)
    assert to_3tuple(0.5) == (0.5, 0.5, 0.5)


def test_an_iterable_passes_unchanged() -> None:
    sizes = [1, 2]
    assert to_3tuple(sizes) is sizes
    assert to_3tuple("ab") == "ab"

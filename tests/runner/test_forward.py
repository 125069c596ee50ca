"""Forward and Settable: attributes that read and write an attribute of a part."""

from __future__ import annotations

import pytest

from cadence.runner.forward import Forward, Settable


class _Part:
    def __init__(self) -> None:
        self.value = 1
        self.seen: list[int] = []

    def keep(self, value: int) -> None:
        self.seen.append(value)


class _Holder:
    value = Forward[int]("part.value")
    writable = Settable[int]("part.value")
    kept = Settable[int]("part.value", setter=_Part.keep)

    def __init__(self) -> None:
        self.part = _Part()


def test_forward_reads_the_part_and_refuses_assignment():
    holder = _Holder()
    holder.part.value = 4
    assert holder.value == 4
    with pytest.raises(AttributeError):
        holder.value = 5


def test_settable_writes_the_part_or_calls_its_setter():
    holder = _Holder()
    holder.writable = 6
    assert holder.part.value == 6 and holder.value == 6
    holder.kept = 7
    assert holder.part.seen == [7] and holder.part.value == 6


def test_reading_a_forward_runs_no_python_function():
    import sys

    holder, calls = _Holder(), []
    sys.setprofile(lambda frame, event, arg: calls.append(event) if event == "call" else None)
    try:
        _ = holder.value
    finally:
        sys.setprofile(None)
    assert calls == []

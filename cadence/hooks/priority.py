"""Hook priorities: lower runs first."""

from __future__ import annotations

from enum import Enum


class Priority(Enum):
    """Named priorities (the same names and numbers as mmengine)."""

    HIGHEST = 0
    VERY_HIGH = 10
    HIGH = 30
    ABOVE_NORMAL = 40
    NORMAL = 50
    BELOW_NORMAL = 60
    LOW = 70
    VERY_LOW = 90
    LOWEST = 100


def get_priority(priority: int | str | Priority) -> int:
    """Turn a name (``'LOW'``), a :class:`Priority` or a number 0-100 into a number."""
    if isinstance(priority, Priority):
        return priority.value
    if isinstance(priority, bool):
        raise TypeError("priority must be a name, a Priority or an int, not a bool")
    if isinstance(priority, int):
        if not 0 <= priority <= 100:
            raise ValueError(f"priority must be between 0 and 100, got {priority}")
        return priority
    if isinstance(priority, str):
        try:
            return Priority[priority.upper()].value
        except KeyError:
            from ..utils import did_you_mean

            names = [p.name for p in Priority]
            raise ValueError(
                f"unknown priority '{priority}'; expected one of {', '.join(names)}."
                + did_you_mean(priority.upper(), names)
            ) from None
    raise TypeError(
        "priority must be an integer or Priority enum value (or a Priority's name), got "
        f"{type(priority).__name__}"
    )

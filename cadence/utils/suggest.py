"""Did-you-mean suggestions for error messages."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest_names(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Return up to ``n`` candidates that look like ``name``, best first.

    Case-insensitive exact matches come first, then close spellings.
    """
    if n <= 0:
        return []
    pool = sorted({c for c in candidates if isinstance(c, str)})
    lowered = name.lower()
    exact = [c for c in pool if c.lower() == lowered and c != name]
    by_lower = {c.lower(): c for c in pool}
    close = difflib.get_close_matches(lowered, list(by_lower), n=n, cutoff=0.6)
    result = list(exact)
    for low in close:
        cand = by_lower[low]
        if cand not in result and cand != name:
            result.append(cand)
    return result[:n]


def did_you_mean(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """Return ``" Did you mean 'x'?"`` (or ``''`` when nothing is close)."""
    close = closest_names(name, candidates, n)
    if not close:
        return ""
    if len(close) == 1:
        return f" Did you mean '{close[0]}'?"
    quoted = ", ".join(f"'{c}'" for c in close)
    return f" Did you mean one of {quoted}?"

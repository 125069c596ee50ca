"""Numbers and tables as text: ``1.23M``-style counts and left-aligned pipe tables."""

from __future__ import annotations

from collections.abc import Sequence

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K"))


def format_count(count: float, sig_figs: int = 3, hide_zero: bool = False) -> str:
    """``123`` -> ``'123'``, ``45600`` -> ``'45.6K'``, ``7.5e9`` -> ``'7.5G'``: counts
    above 100 of a unit are written in that unit with ``sig_figs`` decimals at most
    (trailing zeros dropped); ``hide_zero`` writes 0 as ``''``."""
    if hide_zero and count == 0:
        return ""
    for unit, prefix in _PREFIXES:
        if abs(count) > unit / 10:
            text = f"{count / unit:.{sig_figs}f}".rstrip("0").rstrip(".")
            return text + prefix
    return str(count)


def pipe_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A left-aligned table in pipe (Markdown) syntax, padded to fixed width."""
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    rule = "|" + "|".join(":" + "-" * (w + 1) for w in widths) + "|"
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])

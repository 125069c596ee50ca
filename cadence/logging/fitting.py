"""Fitting a log line to the console's width: fewer items, then more lines."""

from __future__ import annotations


def fit_items(head: str, items: list[str], essential: int, width: int | None) -> str:
    """``head`` and ``items`` joined by two spaces, at most ``width`` columns a line: the
    items after the first ``essential`` ones (timings) are left out, last first, then the
    rest wraps onto lines indented by four spaces, a new line for each named set
    (``clean/...``, ``noisy/...``). ``width=None``: one line, as mmengine's."""
    line = head + "  ".join(items)
    if width is None or len(line) <= width:
        return line
    items = list(items)
    while len(head + "  ".join(items)) > width and len(items) > essential:
        items.pop()
    if len(head + "  ".join(items)) <= width:
        return head + "  ".join(items)
    lines, current, group = [], head.rstrip(), None
    for item in items:
        name = item.split(": ", 1)[0]
        item_group = name.split("/", 1)[0] if "/" in name else None
        new_group = group is not None and item_group != group
        group = item_group
        joined = f"{current}  {item}"
        if current.strip() and (new_group or len(joined) > width) and current != head.rstrip():
            lines.append(current)
            current = "    " + item
        else:
            current = joined
    lines.append(current)
    return "\n".join(lines)


def fit_pieces(pieces: list[tuple[str, int]], width: int | None) -> str:
    """Concatenate the texts of ``(text, rank)`` pieces, leaving out the lowest-ranked ones
    (the latest first among equals; never the first piece, never a loss term) until the
    line, without its trailing spaces, is at most ``width`` characters; what is still
    wider wraps onto lines indented by four spaces. Pieces ranked below 0 are for the
    file only (a lone loss term, equal to ``loss``). ``width=None``: every piece."""
    if width is None:
        return "".join([text for text, _ in pieces])
    kept = [piece for piece in pieces if piece[1] >= 0]
    texts = [text for text, _ in kept]
    line = "".join(texts)
    if len(line.rstrip()) <= width:
        return line
    # the lowest rank goes first, the latest first among equals: one order for the whole fit
    order = sorted((rank, -i) for i, (text, rank) in enumerate(kept)
                   if i > 0 and "loss" not in text)  # fmt: skip
    for _, i in order:
        texts[-i] = ""  # left out
        line = "".join(texts)
        if len(line.rstrip()) <= width:
            return line
    dropped = {-i for _, i in order}
    kept = [piece for j, piece in enumerate(kept) if j not in dropped]
    lines, current = [], ""
    for text, _ in kept:
        if current.strip() and len((current + text).rstrip()) > width:
            lines.append(current.rstrip())
            current = "    " + text.lstrip()
        else:
            current += text
    return "\n".join([*lines, current])

"""The cadence version."""

__version__ = "0.1.0"


def parse_version_info(version: str) -> tuple[int | str, ...]:
    """``'0.1.0'`` -> ``(0, 1, 0)``; ``'1.2.0rc1'`` -> ``(1, 2, 0, 'rc1')`` (mmengine's form)."""
    parts: list[int | str] = []
    for piece in version.split("."):
        number = piece[: len(piece) - len(piece.lstrip("0123456789"))]
        if number:
            parts.append(int(number))
        if piece[len(number) :]:
            parts.append(piece[len(number) :])
    return tuple(parts)


version_info = parse_version_info(__version__)

"""The error of a sweep that cannot start or go on."""

from __future__ import annotations


class SweepError(Exception):
    """A sweep's arguments or study are wrong; ``exit_code`` is what the CLI returns."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code

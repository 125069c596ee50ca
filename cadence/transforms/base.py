"""``BaseTransform``: one step of a data pipeline, a callable on a results dict."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any


class BaseTransform(metaclass=ABCMeta):
    """A data transform: ``transform(results)`` returns the changed dict, or ``None``.

    Calling the object calls :meth:`transform`. Returning ``None`` tells the
    pipeline (and ``BaseDataset`` in training) that the sample is unusable, so
    another one is drawn.
    """

    def __call__(self, results: dict[str, Any]) -> dict[str, Any] | None:
        return self.transform(results)

    @abstractmethod
    def transform(self, results: dict[str, Any]) -> dict[str, Any] | None:
        """Return ``results`` with this step applied (``None`` drops the sample)."""

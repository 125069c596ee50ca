"""Errors of the runner's own methods."""

from __future__ import annotations


class RunnerOrderError(RuntimeError, AssertionError):
    """A runner method called before what it needs exists (e.g. ``build_param_scheduler``
    before the optimizer wrapper). A ``RuntimeError`` that ``except AssertionError``
    also catches: mmengine checks these orders with ``assert``."""


__all__ = ["RunnerOrderError"]

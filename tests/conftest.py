"""Shared fixtures: every test runs with registries and the default scope restored after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cadence.registry import isolated_registries


@pytest.fixture(autouse=True)
def _isolate_registries() -> Iterator[None]:
    with isolated_registries():
        yield

"""Shared fixtures: every test runs with registries, the default scope and the named
instances (message hubs, visualizers) restored after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cadence.logging import isolated_instances
from cadence.registry import isolated_registries


@pytest.fixture(autouse=True)
def _isolate_global_state() -> Iterator[None]:
    with isolated_registries(), isolated_instances(start_empty=False):
        yield

"""Shared fixtures: every test runs with registries, the default scope and the named
instances (message hubs, visualizers) restored after it.

The suite runs on two pytest-xdist workers (``addopts`` in pyproject.toml); the
tests marked ``dist`` (each starts several processes) form one xdist group, so
they run one at a time on one worker while the other worker runs the rest.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cadence.logging import isolated_instances
from cadence.registry import isolated_registries


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (with --dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test marked ``dist`` in the xdist group ``dist``."""
    for item in items:
        if item.get_closest_marker("dist") is not None:
            item.add_marker(pytest.mark.xdist_group("dist"))


@pytest.fixture(autouse=True)
def _isolate_global_state() -> Iterator[None]:
    with isolated_registries(), isolated_instances(start_empty=False):
        yield

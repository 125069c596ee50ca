"""Every test here starts with no message hubs, visualizers or current logger, and leaves none."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cadence.logging import isolated_instances


@pytest.fixture(autouse=True)
def _isolate_instances() -> Iterator[None]:
    with isolated_instances():
        yield

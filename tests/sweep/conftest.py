"""One SQLite study storage for the sweep tests (making one takes a while); a study per test."""

from __future__ import annotations

from typing import Any

import pytest

from cadence.sweep.study import default_storage, open_storage


@pytest.fixture(scope="session")
def storage(tmp_path_factory: Any) -> Any:
    return open_storage(default_storage(str(tmp_path_factory.mktemp("sweep"))))

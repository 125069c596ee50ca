"""Every test here starts with no message hubs, visualizers or current logger, and leaves none;
``wandb_offline`` runs wandb offline with its files under ``tmp_path``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cadence.logging import isolated_instances


@pytest.fixture(autouse=True)
def _isolate_instances() -> Iterator[None]:
    with isolated_instances():
        yield


@pytest.fixture
def wandb_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """wandb offline and silent, every file it writes under ``tmp_path`` (the working
    directory, which the config's code artifact scans); its service process stopped after."""
    import wandb  # a test dependency (the `test` extra): missing, the test fails

    wandb.teardown()  # a service started earlier would keep the environment it was given
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_CONSOLE", "off")
    for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR",
                 "XDG_CACHE_HOME"):  # fmt: skip
        monkeypatch.setenv(name, str(tmp_path / "wandb_home"))  # XDG: the service's logs
    monkeypatch.delenv("WANDB_RUN_ID", raising=False)
    monkeypatch.delenv("WANDB_RESUME", raising=False)
    monkeypatch.chdir(tmp_path)
    yield
    wandb.teardown()

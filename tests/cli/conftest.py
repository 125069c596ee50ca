"""Fixtures of the command-line tests."""

from __future__ import annotations

import os
from types import ModuleType

import pytest

from cadence.registry import DATASETS, MODELS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def blobs(monkeypatch) -> ModuleType:
    """The blobs example importable (from the repository root) and registered.

    Registries are restored after each test, but a module is imported once per
    process, so the config's ``custom_imports`` alone would not register its
    classes again in a later test.
    """
    monkeypatch.chdir(ROOT)
    import examples.blobs.blobs as module

    for registry, cls in ((MODELS, module.MLPClassifier), (DATASETS, module.BlobsDataset)):
        if registry.get(cls.__name__) is None:
            registry.register_module(module=cls)
    return module

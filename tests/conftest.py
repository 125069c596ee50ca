"""Shared fixtures: every test runs with registries, the default scope and the named
instances (message hubs, visualizers) restored after it.

The suite runs on two pytest-xdist workers (``addopts`` in pyproject.toml); the
tests marked ``dist`` (each starts several processes) form one xdist group, so
they run one at a time on one worker while the other worker runs the rest. Each
worker, and what it starts, uses one torch thread (``OMP_NUM_THREADS``, unless set): two
workers with a thread per core each oversubscribe the CPUs, which made single tests
several times slower.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator

import pytest
import torch

import cadence
from cadence.logging import isolated_instances
from cadence.registry import isolated_registries

if os.environ.get("PYTEST_XDIST_WORKER"):  # inherited by subprocesses and spawned ranks
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


def pytest_configure(config: pytest.Config) -> None:
    """Compile cadence and the tests' modules once, before the workers start: the suite
    starts hundreds of fresh processes (ranks, CLI runs) that import them. Where
    ``PYTHONDONTWRITEBYTECODE`` is set (as in this workplace's shells) no process writes
    its bytecode, so each of them compiled every module it imported again: a clean clone's
    tests took 851 s summed, against 649 s with the caches written. Up-to-date caches are
    left as they are (about 1 s for all of them)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    import compileall

    for folder in (os.path.dirname(cadence.__file__), os.path.dirname(__file__)):
        compileall.compile_dir(folder, quiet=1)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (with --dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test marked ``dist`` in the xdist group ``dist``."""
    for item in items:
        if item.get_closest_marker("dist") is not None:
            item.add_marker(pytest.mark.xdist_group("dist"))


_INSTALLED = tuple(
    os.path.realpath(p) + os.sep
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(torch.__path__[0])}
)
_CADENCE = os.path.realpath(os.path.dirname(cadence.__file__)) + os.sep


def _forget_user_modules(before: set[str]) -> None:
    """Drop from ``sys.modules`` the modules a test imported that are neither installed
    packages nor cadence (examples, a config's ``custom_imports``, tmp_path files): the
    registries are restored after each test, and a module imported again by a later
    test's ``custom_imports`` must register its classes again."""
    for name in set(sys.modules) - before:
        path = getattr(sys.modules.get(name), "__file__", None)
        if not path:
            continue
        path = os.path.realpath(path)
        if not path.startswith(_INSTALLED) and not path.startswith(_CADENCE):
            del sys.modules[name]


@pytest.fixture(autouse=True)
def _isolate_global_state() -> Iterator[None]:
    from cadence.compat import alias

    before = set(sys.modules)
    door_open = alias.is_installed()
    with isolated_registries(), isolated_instances(start_empty=False):
        yield
    if alias.is_installed() and not door_open:  # a door opened by the test closes with it
        alias.uninstall()  # (it also decides how later tests' checkpoints are pickled)
    _forget_user_modules(before)


@pytest.fixture(scope="session")
def s3_session() -> Iterator[object]:
    """moto's S3 server for the whole session (per xdist worker)."""
    from s3_server import s3_server

    with s3_server() as server:
        yield server


@pytest.fixture
def s3(s3_session: object, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> object:
    """The S3 server, with this test's own staging folder (``CADENCE_STAGING_DIR``)."""
    for key, value in s3_session.env.items():  # type: ignore[attr-defined]
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CADENCE_STAGING_DIR", os.path.join(str(tmp_path), "staging"))
    return s3_session


@pytest.fixture
def blobs(monkeypatch: pytest.MonkeyPatch) -> object:
    """The blobs example importable (from the repository root) and registered.

    Registries are restored after each test, but a module is imported once per
    process, so the config's ``custom_imports`` alone would not register its
    classes again in a later test.
    """
    from cadence.registry import DATASETS, MODELS

    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import examples.blobs.blobs as module

    for registry, cls in ((MODELS, module.MLPClassifier), (DATASETS, module.BlobsDataset)):
        if registry.get(cls.__name__) is None:
            registry.register_module(module=cls)
    return module


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def current_log() -> Iterator[list[logging.LogRecord]]:
    """The records the current logger (``print_log(..., logger='current')``) gets."""
    from cadence.logging.logger import get_current_logger

    handler = _Records()
    logger = get_current_logger()
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)

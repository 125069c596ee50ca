"""Fixtures for the registry tests.

Every test runs inside ``isolated_registries()`` so that what it registers, the
child registries it creates and the default scope it sets are gone afterwards.
``make_modules`` writes throw-away modules and packages (``fakepkg`` ...) to
``tmp_path``, puts that folder on ``sys.path`` and forgets the imported modules
at teardown, so the next test imports fresh copies.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cadence.registry import isolated_registries


@pytest.fixture(autouse=True)
def _registry_isolation() -> Iterator[None]:
    with isolated_registries():
        yield


def _forget(top_level: set[str]) -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in top_level:
            del sys.modules[name]


@pytest.fixture
def make_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[dict[str, str]], Path]]:
    """Return ``make({'pkg/mod.py': source, ...})`` that writes importable files."""
    root = tmp_path / "importable"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    created: set[str] = set()

    def make(files: dict[str, str]) -> Path:
        for rel, source in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
            created.add(Path(rel).parts[0].removesuffix(".py"))
        _forget(created)
        importlib.invalidate_caches()
        return root

    yield make
    _forget(created)


LAZY_IMPORT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import cadence.registry as r
    heavy = ('cadence.optim', 'cadence.dataset')
    state = {'after_import': {m: m in sys.modules for m in heavy}}
    r.OPTIMIZERS.get('SGD')
    state['after_optimizer_lookup'] = {m: m in sys.modules for m in heavy}
    r.FUNCTIONS.get('pseudo_collate')
    state['after_function_lookup'] = {m: m in sys.modules for m in heavy}
    print(json.dumps(state))
    """
)


@pytest.fixture(scope="session", autouse=True)
def lazy_import_probe() -> Iterator[Callable[[], dict[str, Any]]]:
    """Run the fresh-interpreter import probe in the background from the first test on.

    It imports torch (seconds), so it runs alongside the other tests; the test
    that needs its result waits for it.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", LAZY_IMPORT_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def result() -> dict[str, Any]:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        return json.loads(out.strip().splitlines()[-1])

    yield result
    if proc.poll() is None:
        proc.kill()
    proc.communicate()

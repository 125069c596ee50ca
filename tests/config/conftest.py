"""Fixtures for the config tests: config trees written into ``tmp_path``."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

WriteFiles = Callable[[dict[str, str]], Path]


@pytest.fixture
def write_files(tmp_path: Path) -> WriteFiles:
    """Return ``write({relative path: source text}) -> tmp_path``.

    Sources are dedented and stripped of leading newlines, so line 1 of a file
    is the first non-empty line of the triple-quoted string; parent folders are
    created as needed. Calling it again adds (or overwrites) files.
    """

    def write(files: dict[str, str]) -> Path:
        for rel, text in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return tmp_path

    return write


def line_of(path: str | Path, needle: str, nth: int = 1) -> int:
    """1-based number of the ``nth`` line of ``path`` that contains ``needle``."""
    seen = 0
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            seen += 1
            if seen == nth:
                return number
    raise AssertionError(f"{needle!r} not found {nth} time(s) in {path}")


@pytest.fixture
def find_line() -> Callable[..., int]:
    """``find_line(path, needle, nth=1)``: the line of ``path`` holding ``needle``."""
    return line_of


@pytest.fixture
def spy_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Path]]:
    """Return ``make(name, body='')``: write an importable module ``name`` into tmp_path.

    The module's folder is put on ``sys.path`` for the test, and the module is
    removed from ``sys.modules`` afterwards, so "was it imported?" can be asked
    with ``name in sys.modules``.
    """
    folder = tmp_path / "_spy_modules"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    names: list[str] = []

    def make(name: str, body: str = "") -> Path:
        assert name not in sys.modules, f"{name} is already imported"
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
        names.append(name)
        importlib.invalidate_caches()
        return path

    yield make
    for name in names:
        sys.modules.pop(name, None)

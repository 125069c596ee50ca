"""Every ```python block of README.md, CONTRIBUTING.md and docs/*.md runs.

The blocks of one page run in order in one namespace, in a temporary working
directory that links the repository's ``examples`` folder (so paths such as
``examples/digits/configs/...`` resolve and work dirs land in the temporary
directory). Markers on the line before a block:

* ``<!-- file: PATH -->``: write the block to PATH (e.g. a config file) instead of running it;
* ``<!-- skip: REASON -->``: do not run it (use sparingly, say why).

Blocks in other languages (```bash, ```text) are not run.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(file|skip):\s*(.+?)\s*-->\s*$")

sys.path.insert(0, str(ROOT))
pytest.importorskip("sklearn")  # the examples the docs run need the `examples` extra

# The docs' examples register their components by name; import them before the registries'
# per-test snapshot so that every page sees them (tests/conftest.py isolates registries).
import examples.custom_hook_and_loop.components  # noqa: E402, F401
import examples.digits.digits  # noqa: E402, F401


def blocks(page: Path) -> list[tuple[int, str, str | None, str]]:
    """``(fence line, language, marker, code)`` of each block; marker: 'file:P', 'skip' or None."""
    lines = page.read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, language = i, match.group(1)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        marker = None
        previous = lines[start - 1] if start > 0 else ""
        hint = MARKER.match(previous)
        if hint:
            marker = "skip" if hint.group(1) == "skip" else f"file:{hint.group(2)}"
        found.append((start + 1, language, marker, "\n".join(lines[start + 1 : end]) + "\n"))
        i = end + 1
    return found


def test_every_page_is_found_and_has_closed_fences():
    assert ROOT / "README.md" in PAGES and ROOT / "CONTRIBUTING.md" in PAGES and len(PAGES) > 2
    for page in PAGES:
        fences = sum(1 for line in page.read_text().splitlines() if line.startswith("```"))
        assert fences % 2 == 0, f"{page.name}: unclosed code fence"


def test_block_parser_reads_languages_and_markers(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "text\n```python\na = 1\n```\n<!-- file: c/x.py -->\n```python\nb = 2\n```\n"
        "<!-- skip: needs a GPU -->\n```python\nc = 3\n```\n```bash\nls\n```\n"
    )
    assert blocks(page) == [
        (2, "python", None, "a = 1\n"),
        (6, "python", "file:c/x.py", "b = 2\n"),
        (10, "python", "skip", "c = 3\n"),
        (13, "bash", None, "ls\n"),
    ]


def page_params() -> list:
    """One param per page; pages whose code trains a model are marked slow."""
    params = []
    for page in PAGES:
        marks = [pytest.mark.slow] if ".train()" in page.read_text() else []
        params.append(pytest.param(page, id=page.name, marks=marks))
    return params


@pytest.mark.parametrize("page", page_params())
def test_python_blocks_run(page: Path, tmp_path, monkeypatch):
    python = [b for b in blocks(page) if b[1] == "python"]
    if not python:
        return
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {"__name__": f"doc_{page.stem}"}
    for line, _, marker, code in python:
        if marker == "skip":
            continue
        if marker and marker.startswith("file:"):
            target = tmp_path / marker[len("file:") :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code)
            continue
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
        except Exception as exc:
            where = f"{page.relative_to(ROOT)}, block at line {line}"
            raise AssertionError(f"{where}: {exc!r}") from exc


def test_built_in_hook_table_matches_the_code():
    """docs/hooks.md lists each built-in hook with its class priority and overridden stages."""
    import cadence.hooks as hooks

    rows = {}
    for line in (ROOT / "docs" / "hooks.md").read_text().splitlines():
        match = re.match(r"^\| `(\w+Hook)` \| (\w+) \| ([\w, ]+) \|$", line)
        if match:
            rows[match.group(1)] = (match.group(2), [s.strip() for s in match.group(3).split(",")])
    built_in = {
        name: cls for name in hooks.__all__
        if isinstance(cls := getattr(hooks, name), type)
        and issubclass(cls, hooks.Hook) and cls is not hooks.Hook
    }  # fmt: skip
    assert sorted(rows) == sorted(built_in)
    for name, (priority, stages) in rows.items():
        cls = built_in[name]
        assert priority == cls.priority, name
        overridden = [s for s in hooks.Hook.stages if getattr(cls, s) is not getattr(hooks.Hook, s)]
        assert stages == overridden, name

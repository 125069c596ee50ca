"""docs/mmengine_module_status.md agrees with benchmarks/mmengine_coverage.py and with tests/.

Each row of the page's table names an mmengine module; its counts must be what the
script computes against this checkout, and a row may say "same" only when cadence has
every name at mmengine's path and the row's test files exist and use each of those names.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "mmengine_module_status.md"
STATUSES = {"same", "renamed", "partial", "not provided"}
HEADER = "| mmengine module | cadence | same path | elsewhere | status | why | tests |"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mmengine_coverage", ROOT / "benchmarks" / "mmengine_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while being defined
    spec.loader.exec_module(module)
    return module


def page_rows() -> dict[str, list[str]]:
    """mmengine module -> the row's cells (without the backticks around code)."""
    lines = PAGE.read_text().splitlines()
    start = lines.index(HEADER) + 2  # skip the header and the |---| line
    rows: dict[str, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 7, f"row with {len(cells)} cells: {line}"
        module = cells[0].strip("`")
        assert module not in rows, f"{module} has two rows"
        rows[module] = cells
    return rows


def listed_tests(cell: str) -> list[Path]:
    return [ROOT / path for path in re.findall(r"`(tests/[\w/]+\.py)`", cell)]


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script()


@pytest.fixture(scope="module")
def covs(script: ModuleType) -> list:
    return script.coverage()


@pytest.fixture(scope="module")
def rows() -> dict[str, list[str]]:
    return page_rows()


def test_every_mmengine_module_has_one_row(script, rows):
    assert sorted(rows) == sorted(script.MMENGINE_NAMES)


def test_counterparts_and_counts_are_what_the_script_computes(covs, rows):
    for cov in covs:
        cells = rows[cov.mmengine]
        assert cells[1].strip("`") == (cov.cadence or "—"), cov.mmengine
        assert cells[2] == cov.count, f"{cov.mmengine}: page {cells[2]}, script {cov.count}"
        assert cells[3] == str(len(cov.elsewhere)), f"{cov.mmengine}: elsewhere"


def test_statuses_follow_the_counts(covs, rows):
    for cov in covs:
        status = rows[cov.mmengine][4]
        assert status in STATUSES, f"{cov.mmengine}: unknown status {status!r}"
        if status == "same":
            assert not cov.missing and not cov.elsewhere, cov.mmengine
        if status == "not provided":
            assert not cov.provided, cov.mmengine
        if status != "not provided":
            assert cov.provided or cov.elsewhere, cov.mmengine


def test_same_rows_name_tests_that_use_every_name(covs, rows):
    for cov in covs:
        cells = rows[cov.mmengine]
        if cells[4] != "same":
            continue
        paths = listed_tests(cells[6])
        assert paths, f"{cov.mmengine}: 'same' without a test file"
        text = ""
        for path in paths:
            assert path.is_file(), f"{cov.mmengine}: {path} does not exist"
            text += path.read_text()
        unused = [n for n in cov.provided if not re.search(rf"\b{re.escape(n)}\b", text)]
        assert not unused, f"{cov.mmengine}: no listed test uses {unused}"


def test_listed_test_files_exist(rows):
    for module, cells in rows.items():
        for path in listed_tests(cells[6]):
            assert path.is_file(), f"{module}: {path} does not exist"


def test_the_page_total_is_the_sum_of_the_rows(covs):
    provided = sum(len(cov.provided) for cov in covs)
    total = sum(cov.total for cov in covs)
    assert f"{provided} of mmengine's {total}" in PAGE.read_text()


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_to_the_migration_doc_name_existing_sections():
    migration = (ROOT / "docs" / "migrating_from_mmengine.md").read_text()
    anchors = {slug(line.lstrip("#")) for line in migration.splitlines() if line.startswith("#")}
    links = set(re.findall(r"\(migrating_from_mmengine\.md#([\w\-]+)\)", PAGE.read_text()))
    assert links and not links - anchors, sorted(links - anchors)

"""CI guard: no import cycle between cadence modules, function-level imports included."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest
from import_graph import Edge, find_cycles, format_cycles, import_edges

CADENCE = Path(__file__).resolve().parents[1] / "cadence"

# Edges the check ignores, each with a comment saying why and what will remove it.
# None is needed today; keep it that way.
ALLOWED_EDGES: frozenset[Edge] = frozenset()


@pytest.mark.parametrize("type_only", [False, True], ids=["runtime", "typing"])
def test_cadence_modules_have_no_import_cycle(type_only: bool) -> None:
    start = time.process_time()  # CPU time: other processes (xdist workers) do not count
    edges = import_edges(CADENCE, type_only=type_only)
    cycles = find_cycles(edges - ALLOWED_EDGES)
    assert not cycles, (
        "import cycles between cadence modules (a function-level import only defers a "
        "cycle, and one under TYPE_CHECKING still ties the modules together; move the "
        "shared code down a layer, see DESIGN.md):\n" + format_cycles(cycles)
    )
    assert time.process_time() - start < 2.0


def test_allowed_edges_still_exist() -> None:
    stale = ALLOWED_EDGES - import_edges(CADENCE)
    assert not stale, f"remove these edges from ALLOWED_EDGES, the code no longer has them: {stale}"


def test_the_graph_sees_known_cadence_edges() -> None:
    edges = import_edges(CADENCE)
    assert ("cadence.config.loader", "cadence.config.pure") in edges  # module level
    assert ("cadence.hooks.checkpoint_hook", "cadence.checkpoint.publish") in edges  # in a method
    assert ("cadence.hooks.checkpoint_hook", "cadence.checkpoint") in edges  # the package runs too
    # runner/protocol.py imports the Runner only under TYPE_CHECKING, which never runs
    assert ("cadence.runner.protocol", "cadence.runner.runner") not in edges
    assert ("cadence.runner.protocol", "cadence.runner.runner") in import_edges(CADENCE, True)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "pkg"


def test_detects_a_cycle_behind_a_function_level_import(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": """
                def helper():
                    from pkg.high import run  # runs at call time: still a cycle
                    return run
            """,
            "pkg/high/__init__.py": "from .run import run\n",
            "pkg/high/run.py": "from ..low import helper\n\ndef run():\n    return helper\n",
        },
    )
    cycles = find_cycles(import_edges(pkg))
    assert format_cycles(cycles) == "pkg.high -> pkg.high.run -> pkg.low -> pkg.high"


def test_type_checking_imports_and_parent_packages_are_not_cycles(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .a import A\n",
            "pkg/a.py": """
                from typing import TYPE_CHECKING
                from .sub import tool  # runs pkg/sub/__init__.py, not pkg/__init__.py again

                if TYPE_CHECKING:
                    from .b import B
                else:
                    import os

                class A: ...
            """,
            "pkg/b.py": "from .a import A\n\nclass B(A): ...\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/tool.py": "import os\n",
        },
    )
    edges = import_edges(pkg)
    assert ("pkg.a", "pkg.sub.tool") in edges and ("pkg.a", "pkg.sub") in edges
    assert ("pkg.a", "pkg.b") not in edges
    assert find_cycles(edges) == []
    edges.add(("pkg.a", "pkg.b"))  # the same import outside TYPE_CHECKING would be one
    assert format_cycles(find_cycles(edges)) == "pkg.a -> pkg.b -> pkg.a"
    typing_edges = import_edges(pkg, type_only=True)  # the typing graph counts it
    assert ("pkg.a", "pkg.b") in typing_edges and ("pkg.a", "os") not in typing_edges
    assert format_cycles(find_cycles(typing_edges)) == "pkg.a -> pkg.b -> pkg.a"


def test_a_lazy_export_table_is_an_edge(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": 'LAZY_EXPORTS: dict[str, str] = {"Tool": ".tool"}\n',
            "pkg/tool.py": "from pkg import Tool as Tool\n",  # reads the table back: a cycle
        },
    )
    assert ("pkg", "pkg.tool") in import_edges(pkg)
    assert format_cycles(find_cycles(import_edges(pkg))) == "pkg -> pkg.tool -> pkg"

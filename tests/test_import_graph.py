"""CI guard: no import cycle between cadence modules, function-level and type-only imports
included, and no import against the layer order of tests/layers.py."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from import_graph import (
    Edge,
    find_cycles,
    format_cycles,
    format_up_imports,
    import_edges,
    module_names,
    unplaced_packages,
    up_imports,
)
from layers import LAYERS

CADENCE = Path(__file__).resolve().parents[1] / "cadence"

# Edges the check ignores, each with a comment saying why and what will remove it.
# None is needed today; keep it that way.
ALLOWED_EDGES: frozenset[Edge] = frozenset()

# Imports against the layer order that the check tolerates, each with a comment saying
# why and what will remove it. None is needed today; keep it that way.
ALLOWED_UP_IMPORTS: frozenset[Edge] = frozenset()


@pytest.mark.parametrize("type_only", [False, True], ids=["runtime", "typing"])
def test_cadence_modules_have_no_import_cycle(type_only: bool) -> None:
    edges = import_edges(CADENCE, type_only=type_only)
    cycles = find_cycles(edges - ALLOWED_EDGES)
    assert not cycles, (
        "import cycles between cadence modules (a function-level import only defers a "
        "cycle, and one under TYPE_CHECKING still ties the modules together; move the "
        "shared code down a layer of tests/layers.py, see docs/architecture.md):\n"
        + format_cycles(cycles)
    )


def test_allowed_edges_still_exist() -> None:
    stale = ALLOWED_EDGES - import_edges(CADENCE)
    assert not stale, f"remove these edges from ALLOWED_EDGES, the code no longer has them: {stale}"


def test_cadence_imports_follow_the_layer_order() -> None:
    unplaced = unplaced_packages(module_names(CADENCE), LAYERS)
    assert not unplaced, f"place these packages in a layer of tests/layers.py: {sorted(unplaced)}"
    edges = import_edges(CADENCE, type_only=True)  # type-only imports count: they tie too
    up = [edge for edge in up_imports(edges, LAYERS) if edge not in ALLOWED_UP_IMPORTS]
    assert not up, "imports against the layer order:\n" + format_up_imports(
        up, LAYERS, "tests/layers.py"
    )


def test_the_architecture_page_draws_the_layers() -> None:
    page = (CADENCE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## Layers", 1)[1]
    picture = section.split("```text\n", 1)[1].split("```", 1)[0]
    drawn = [set(re.findall(r"[A-Za-z_]+", line)) for line in picture.splitlines()]
    assert drawn == [set(layer) for layer in LAYERS], (
        "docs/architecture.md's picture of the layers differs from tests/layers.py; "
        "redraw it (one line per layer, top first)"
    )


def test_allowed_up_imports_still_exist() -> None:
    stale = ALLOWED_UP_IMPORTS - set(up_imports(import_edges(CADENCE, True), LAYERS))
    assert not stale, f"remove these edges from ALLOWED_UP_IMPORTS, they are gone: {stale}"


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


def test_an_import_from_a_higher_layer_is_named_with_its_layers(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/top/__init__.py": "from ..low import tool\n",  # down: fine
            "pkg/low/__init__.py": "from .tool import tool\n",
            "pkg/low/tool.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:  # type-only, and still against the order
                    from pkg.top import thing
            """,
        },
    )
    layers = (("pkg", "top"), ("low",))
    edges = import_edges(pkg, type_only=True)
    assert up_imports(import_edges(pkg), layers) == []
    assert up_imports(edges, layers) == [("pkg.low.tool", "pkg.top")]
    assert format_up_imports(up_imports(edges, layers), layers, "layers.py") == (
        "pkg.low.tool imports pkg.top: low is in layer 2 of 2 (low), below top in layer 1 of "
        "2 (pkg, top). Imports point down the layers of layers.py: move what pkg.low.tool "
        "needs down to low's layer or lower, or have the caller pass it in; if the order "
        "itself is wrong, change layers.py (and docs/architecture.md) instead."
    )
    assert unplaced_packages(module_names(pkg), (("top",),)) == {"pkg", "low"}

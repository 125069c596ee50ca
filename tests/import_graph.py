"""Static import graph of a Python package, and cycle detection over it.

Every ``import``/``from ... import`` statement that can run is an edge: module-level ones
and those inside functions or methods (a function-level import only defers a cycle, it does
not remove it). Imports under ``if TYPE_CHECKING:`` never run: the runtime graph
(``import_edges(pkg)``) skips them, the typing graph (``import_edges(pkg, type_only=True)``)
counts them too, since a contract that type-imports its users still depends on them.

Granularity is the module (file): ``pkg/a/b.py`` is ``pkg.a.b`` and ``pkg/a/__init__.py`` is
``pkg.a``. Importing ``pkg.a.b`` runs ``pkg/a/__init__.py`` first, so an edge to a submodule
also implies an edge to each enclosing package that lies *outside* the importer's own
package chain (a module's own parents are already running when it is imported).
``from pkg.a import name`` is an edge to ``pkg.a.name`` when that is a module, else to
``pkg.a``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

Edge = tuple[str, str]


def module_names(package_dir: Path) -> dict[str, Path]:
    """Map every module name under ``package_dir`` (a package root) to its file."""
    root = package_dir.name
    names: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join([root, *parts])] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(node: ast.AST, type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Yield the import statements under ``node``; those guarded by TYPE_CHECKING only
    when ``type_only`` is set."""
    yield from _imports_in(ast.iter_child_nodes(node), type_only)


def _imports_in(nodes: Iterable[ast.AST], type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in nodes:
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test) and not type_only:
            yield from _imports_in(child.orelse, type_only)  # the ``else:`` branch does run
        else:
            yield from _imports(child, type_only)


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name a ``from X import ...`` statement refers to."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _with_parents(target: str, importer: str, known: set[str]) -> Iterator[str]:
    """``target`` plus the enclosing packages its import runs that ``importer`` is not in."""
    parts = target.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name not in known or name == importer:
            continue
        if name != target and (importer == name or importer.startswith(name + ".")):
            continue  # the importer's own parent package: already running
        yield name


def _lazy_export_targets(tree: ast.Module, module: str, is_package: bool) -> list[str]:
    """The modules named by a module-level ``LAZY_EXPORTS = {name: module}`` table
    (``cadence.utils.lazy``): the package imports them on first use, an edge like any."""
    targets = []
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if not (isinstance(target, ast.Name) and target.id == "LAZY_EXPORTS"):
            continue
        if not isinstance(value, ast.Dict):
            continue
        for item in value.values:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                name = item.value
                level = len(name) - len(name.lstrip("."))
                relative = ast.ImportFrom(module=name[level:] or None, names=[], level=level)
                targets.append(_resolve_from(module, is_package, relative))
    return targets


def import_edges(package_dir: Path, type_only: bool = False) -> set[Edge]:
    """All runnable import edges between modules of the package rooted at ``package_dir``;
    with ``type_only``, those under ``if TYPE_CHECKING:`` as well."""
    modules = module_names(package_dir)
    known = set(modules)
    root = package_dir.name
    edges: set[Edge] = set()
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets: list[str] = []
        for node in _imports(tree, type_only):
            if isinstance(node, ast.Import):
                targets.extend(alias.name for alias in node.names)
                continue
            base = _resolve_from(module, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in known else base)
        targets.extend(_lazy_export_targets(tree, module, is_package))
        for target in targets:
            if target != root and not target.startswith(root + "."):
                continue
            while target not in known and "." in target:  # ``import pkg.mod.attr``-like
                target = target.rsplit(".", 1)[0]
            for name in _with_parents(target, module, known):
                edges.add((module, name))
    return edges


def _graph(edges: Iterable[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for src, dst in edges:
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
    return graph


def cyclic_components(edges: Iterable[Edge]) -> list[set[str]]:
    """The strongly connected components of the graph that contain a cycle, largest first."""
    graph = _graph(edges)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graph is small (a few hundred nodes)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            comp: set[str] = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                comp.add(top)
                if top == node:
                    break
            if len(comp) > 1 or node in graph[node]:
                components.append(comp)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components, key=lambda comp: (-len(comp), min(comp)))


def find_cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """One cycle per strongly connected component of the graph, each as a closed path.

    Returns ``[["a", "b", "a"], ...]``, sorted, so a message can print ``a -> b -> a``.
    """
    graph = _graph(edges)
    return sorted(_cycle_in(comp, graph) for comp in cyclic_components(edges))


def _cycle_in(comp: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the smallest-named node of a strongly connected component."""
    start = min(comp)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier: list[str] = []
        for node in frontier:
            for nxt in sorted(graph[node] & comp):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if nxt not in parents:
                    parents[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - comp is an SCC


def package_of(module: str) -> str:
    """The top-level package a module belongs to: ``pkg.a.b`` -> ``a``; the root -> ``pkg``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def up_imports(edges: Iterable[Edge], layers: Sequence[Sequence[str]]) -> list[Edge]:
    """The edges that import from a higher layer (``layers`` top to bottom), sorted."""
    rank = {package: i for i, layer in enumerate(layers) for package in layer}
    return sorted((src, dst) for src, dst in edges if rank[package_of(src)] > rank[package_of(dst)])


def unplaced_packages(modules: Iterable[str], layers: Sequence[Sequence[str]]) -> set[str]:
    """The packages of ``modules`` that no layer lists."""
    placed = {package for layer in layers for package in layer}
    return {package_of(module) for module in modules} - placed


def format_up_imports(up: list[Edge], layers: Sequence[Sequence[str]], where: str) -> str:
    """One paragraph per edge: what imports what, the two layers, and how to fix it."""
    rank = {package: i for i, layer in enumerate(layers) for package in layer}

    def layer(package: str) -> str:
        i = rank[package]
        return f"layer {i + 1} of {len(layers)} ({', '.join(layers[i])})"

    lines = []
    for src, dst in up:
        low, high = package_of(src), package_of(dst)
        lines.append(
            f"{src} imports {dst}: {low} is in {layer(low)}, below {high} in {layer(high)}. "
            f"Imports point down the layers of {where}: move what {src} needs down to "
            f"{low}'s layer or lower, or have the caller pass it in; if the order itself "
            f"is wrong, change {where} (and docs/architecture.md) instead."
        )
    return "\n".join(lines)


def format_cycles(cycles: list[list[str]]) -> str:
    """One line per cycle: ``a -> b -> a``."""
    return "\n".join(" -> ".join(cycle) for cycle in cycles)


if __name__ == "__main__":  # ``python tests/import_graph.py [--typing]``: cadence's cycles
    import sys

    typing_graph = "--typing" in sys.argv[1:]
    cadence = Path(__file__).resolve().parents[1] / "cadence"
    edges = import_edges(cadence, type_only=typing_graph)
    found = cyclic_components(edges)
    for comp, cycle in zip(found, (_cycle_in(c, _graph(edges)) for c in found), strict=True):
        print(f"{len(comp)} modules, e.g. " + " -> ".join(cycle))
    print(f"{len(found)} cyclic component(s)" if found else "no import cycles")
    sys.exit(1 if found else 0)

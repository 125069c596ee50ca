"""Provenance: which file and line set each value of a loaded config.

While a file is loaded, its syntax tree tells where each key was written
(``lr=0.01`` inside ``optim_wrapper = dict(optimizer=dict(...))``). Records of
base files are overridden by the files that inherit from them, and dropped
where a child replaces a whole subtree (``_delete_=True``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Path = tuple[str, ...]


@dataclass(frozen=True)
class Origin:
    """Where a config value was set: a file, a line (when known) and how."""

    filename: str
    line: int | None = None
    note: str | None = None

    def __str__(self) -> str:
        text = f"{self.filename}:{self.line}" if self.line else self.filename
        return f"{text} ({self.note})" if self.note else text


class _Node:
    __slots__ = ("origin", "children")

    def __init__(self) -> None:
        self.origin: Origin | None = None
        self.children: dict[str, _Node] = {}


class Provenance:
    """A map from key paths (tuples of keys) to the :class:`Origin` that set them.

    Stored as a trie so that forgetting a whole subtree (a child config that
    replaces a base value) costs nothing however many records lie below it.
    """

    def __init__(self, records: Mapping[Path, Origin] | None = None) -> None:
        self._root = _Node()
        if records:
            self.overlay(records)

    def _node(self, path: Path, create: bool) -> _Node | None:
        node = self._root
        for key in path:
            child = node.children.get(key)
            if child is None:
                if not create:
                    return None
                child = node.children[key] = _Node()
            node = child
        return node

    def copy(self) -> Provenance:
        new = Provenance()
        new.overlay(dict(self.items()))
        return new

    def __len__(self) -> int:
        return sum(1 for _ in self.items())

    def items(self) -> Iterator[tuple[Path, Origin]]:
        stack: list[tuple[Path, _Node]] = [((), self._root)]
        while stack:
            path, node = stack.pop()
            if node.origin is not None:
                yield path, node.origin
            stack.extend(((*path, k), child) for k, child in reversed(node.children.items()))

    def set(self, path: Path, origin: Origin) -> None:
        """Record ``origin`` for ``path`` and forget what was recorded below it."""
        node = self._node(path, create=True)
        assert node is not None
        node.origin = origin
        node.children = {}

    def drop_subtree(self, path: Path) -> None:
        """Forget ``path`` and everything below it."""
        if not path:
            self._root = _Node()
            return
        parent = self._node(path[:-1], create=False)
        if parent is not None:
            parent.children.pop(path[-1], None)

    def update(self, other: Provenance) -> None:
        """Overlay ``other``'s records on these (other wins); ``other`` is consumed."""
        _graft(self._root, other._root)

    def overlay(self, records: Mapping[Path, Origin]) -> None:
        """Overlay raw records (a file's own) on these."""
        for path, origin in records.items():
            node = self._node(path, create=True)
            assert node is not None
            node.origin = origin

    def lookup(self, path: Path) -> Origin | None:
        """Return the origin of ``path`` or of its nearest recorded ancestor."""
        found = None
        node = self._root
        for key in path:
            child = node.children.get(key)
            if child is None:
                break
            node = child
            if node.origin is not None:
                found = node.origin
        return found


def _graft(into: _Node, other: _Node) -> None:
    if other.origin is not None:
        into.origin = other.origin
    for key, child in other.children.items():
        mine = into.children.get(key)
        if mine is None:
            into.children[key] = child
        else:
            _graft(mine, child)


def split_key(key: str) -> Path:
    """``'a.b.0'`` → ``('a', 'b', '0')``."""
    return tuple(key.split(".")) if key else ()


def join_key(path: Path) -> str:
    return ".".join(str(p) for p in path)


class _TreeRecorder:
    """Walks a config file's module body and records key paths to lines."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.records: dict[Path, Origin] = {}

    def origin(self, node: ast.AST, note: str | None = None) -> Origin:
        return Origin(self.filename, getattr(node, "lineno", None), note)

    def record_value(self, path: Path, value: ast.AST, line_node: ast.AST) -> None:
        """Record ``path`` at ``line_node`` and walk into a literal ``value``."""
        if path in self.records:  # re-assigned: forget what the old value recorded
            n = len(path)
            for key in [k for k in self.records if len(k) > n and k[:n] == path]:
                del self.records[key]
        note = None
        if isinstance(value, ast.Attribute) and _root_name(value) == "_base_":
            note = f"from {ast.unparse(value)}"
        self.records[path] = self.origin(line_node, note)
        self.walk(path, value)

    def walk(self, path: Path, value: ast.AST) -> None:
        if isinstance(value, ast.Call) and _call_name(value) in ("dict", "ConfigDict"):
            for kw in value.keywords:
                if kw.arg is not None:
                    self.record_value(path + (kw.arg,), kw.value, kw)
        elif isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, (str, int)):
                    self.record_value(path + (str(k.value),), v, k)
        elif isinstance(value, (ast.List, ast.Tuple)):
            for index, elt in enumerate(value.elts):
                self.record_value(path + (str(index),), elt, elt)
        elif isinstance(value, ast.Name) and (value.id,) in self.records:
            source = (value.id,)
            for key, origin in list(self.records.items()):
                if len(key) > 1 and key[0] == source[0]:
                    self.records[path + key[1:]] = origin

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if stmt.value is None:
                return
            for target in targets:
                path = _target_path(target)
                if path:
                    self.record_value(path, stmt.value, stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in ("update", "merge"):
                path = _target_path(func.value)
                if path:
                    for arg in call.args:
                        self.walk(path, arg)
                    for kw in call.keywords:
                        if kw.arg is not None:
                            self.record_value(path + (kw.arg,), kw.value, kw)
        elif isinstance(stmt, ast.If):
            for sub in stmt.body + stmt.orelse:
                self.statement(sub)


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _target_path(node: ast.AST) -> Path | None:
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return tuple(reversed(parts))
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            parts.append(str(node.slice.value))
            node = node.value
        else:
            return None


def python_origins(tree: ast.Module, filename: str) -> dict[Path, Origin]:
    """Record which line of a Python config sets each key path."""
    recorder = _TreeRecorder(filename)
    for stmt in tree.body:
        recorder.statement(stmt)
    return recorder.records


def yaml_origins(text: str, filename: str) -> dict[Path, Origin]:
    """Record lines for a YAML (or JSON) config; empty if the text cannot be composed."""
    try:
        import yaml
    except ImportError:
        return {}
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    records: dict[Path, Origin] = {}

    def walk(path: Path, node: Any) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = (*path, str(key_node.value))
                records[key] = Origin(filename, key_node.start_mark.line + 1)
                walk(key, value_node)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                key = (*path, str(index))
                records[key] = Origin(filename, item.start_mark.line + 1)
                walk(key, item)

    if root is not None:
        walk((), root)
    return records


def leaf_paths(value: Any, prefix: Path = ()) -> Iterable[tuple[Path, Any]]:
    """Yield ``(path, value)`` for every leaf of nested dicts and lists."""
    if isinstance(value, dict):
        if not value and prefix:
            yield prefix, value
        for key, sub in dict.items(value):
            yield from leaf_paths(sub, (*prefix, str(key)))
    elif isinstance(value, (list, tuple)) and any(
        isinstance(v, (dict, list, tuple)) for v in value
    ):
        for index, sub in enumerate(value):
            yield from leaf_paths(sub, (*prefix, str(index)))
    else:
        yield prefix, value

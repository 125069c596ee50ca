"""Pure-Python configs: ``with read_base(): from .base import *`` and lazy imports.

Inside ``with read_base():`` each ``from <module> import ...`` names another
config file (relative to this one, or inside an installed package); its
variables are loaded and bound here. Outside it, imports of non-standard-library
modules bind :class:`LazyObject` placeholders that import on first use, so
``type=SGD`` names the class without importing torch while the file loads.
Standard-library imports run normally. Python assignment semantics apply: a
re-assigned variable replaces the base's; ``.update()`` merges into it.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeGuard

from ..utils.suggest import did_you_mean
from .config_dict import ConfigDict
from .errors import ConfigError, ConfigFileNotFoundError, ConfigSyntaxError
from .execute import import_bound_names, is_config_value, run_config_code
from .lazy import LazyObject
from .provenance import Provenance, python_origins

if TYPE_CHECKING:
    from .loaded import Loaded

READ_BASE_MODULES = ("cadence.config", "mmengine.config", "mmengine")
_LAZY_FACTORY = "__cadence_lazy__"


def _is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def _is_read_base_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else None
    )
    return name == "read_base"


def _is_read_base_block(stmt: ast.stmt) -> TypeGuard[ast.With]:
    if not isinstance(stmt, ast.With):
        return False
    return any(_is_read_base_call(item.context_expr) for item in stmt.items)


def uses_read_base(text: str) -> bool:
    """Whether a Python config is in the pure style (mmengine's detection rules).

    A top-level ``_base_ = ...`` means the classic style. Otherwise a
    ``with read_base():`` block, a relative import, or an import of a module
    outside the standard library means the pure style.
    """
    if "import" not in text and "read_base" not in text:
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "read_base" in text
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_base_" for t in stmt.targets
        ):
            return False
    for stmt in tree.body:
        if _is_read_base_block(stmt):
            return True
        if isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                return True
            if stmt.module and not _is_stdlib(stmt.module):
                return True
        if isinstance(stmt, ast.Import) and any(not _is_stdlib(a.name) for a in stmt.names):
            return True
    return False


def read_base_line(text: str) -> int | None:
    """Line of a top-level ``with read_base():`` block, or ``None``."""
    if "read_base" not in text:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for stmt in tree.body:
        if _is_read_base_block(stmt):
            return stmt.lineno
    return None


def _base_file(stmt: ast.ImportFrom, path: str) -> str:
    """Resolve the config file named by an import inside ``read_base()``."""
    module = stmt.module or ""
    if stmt.level:
        base_dir = os.path.dirname(path)
        for _ in range(stmt.level - 1):
            base_dir = os.path.dirname(base_dir)
        candidate = os.path.join(base_dir, *module.split(".")) + ".py"
    else:
        package, _, rest = module.partition(".")
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations or not rest:
            raise ConfigFileNotFoundError(
                f"read_base(): cannot find config module '{module}' (expected "
                "'package.path.to.config' of an installed package, or a relative import)",
                filename=path,
                line=stmt.lineno,
            )
        candidate = os.path.join(list(spec.submodule_search_locations)[0], *rest.split(".")) + ".py"
    if not os.path.isfile(candidate):
        raise ConfigFileNotFoundError(
            f"read_base(): base config '{'.' * stmt.level}{module}' not found at {candidate}",
            filename=path,
            line=stmt.lineno,
        )
    return candidate


class _LazyImports(ast.NodeTransformer):
    """Turn top-level non-stdlib imports into ``name = __cadence_lazy__(path)``."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.imported: dict[str, LazyObject] = {}

    def _assign(self, node: ast.stmt, name: str, dotted: str) -> ast.stmt:
        self.imported[name] = LazyObject(dotted, f"{self.filename}:{node.lineno}")
        call = ast.Call(
            func=ast.Name(_LAZY_FACTORY, ast.Load()),
            args=[ast.Constant(dotted), ast.Constant(f"{self.filename}:{node.lineno}")],
            keywords=[],
        )
        return ast.copy_location(
            ast.Assign(targets=[ast.Name(name, ast.Store())], value=call), node
        )

    def visit_Import(self, node: ast.Import) -> Any:
        if all(_is_stdlib(a.name) for a in node.names):
            return node
        out = []
        for alias in node.names:
            if alias.asname:
                out.append(self._assign(node, alias.asname, alias.name))
            else:
                top = alias.name.split(".")[0]
                out.append(self._assign(node, top, top))
        return out

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        if node.level:
            raise ConfigError(
                "relative imports are only allowed inside `with read_base():`",
                filename=self.filename,
                line=node.lineno,
            )
        module = node.module or ""
        if module in READ_BASE_MODULES and all(
            a.name in ("read_base", "Config") for a in node.names
        ):
            return None
        if _is_stdlib(module):
            return node
        out = []
        for alias in node.names:
            if alias.name == "*":
                raise ConfigError(
                    f"`from {module} import *` cannot be imported lazily; name what you use",
                    filename=self.filename,
                    line=node.lineno,
                )
            out.append(self._assign(node, alias.asname or alias.name, f"{module}.{alias.name}"))
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return node  # only top-level statements are rewritten


def load_pure_python(
    path: str, text: str, load_base: Callable[[str, int | None], Loaded]
) -> tuple[ConfigDict, dict[str, Any], Provenance, dict[str, str], list[str]]:
    """Run a pure-Python config; return (config, imported names, provenance, env, base texts)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise ConfigSyntaxError(
            f"invalid Python: {exc.msg}", filename=path, line=exc.lineno
        ) from None
    namespace: dict[str, Any] = {
        _LAZY_FACTORY: LazyObject,
        "__file__": path,
        "__name__": "__config__",
    }
    imported: dict[str, Any] = {}
    provenance = Provenance()
    env: dict[str, str] = {}
    texts: list[str] = []
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if _is_read_base_block(stmt):
            for inner in stmt.body:
                if not isinstance(inner, ast.ImportFrom):
                    raise ConfigError(
                        "only `from <config> import ...` statements may appear inside "
                        "`with read_base():`",
                        filename=path,
                        line=inner.lineno,
                    )
                base = load_base(_base_file(inner, path), inner.lineno)
                texts.append(base.text)
                env.update(base.env_variables)
                _bind_base(inner, base, namespace, imported, provenance, path)
            continue
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_base_" for t in stmt.targets
        ):
            raise ConfigError(
                "a pure-Python config (with read_base() or lazy imports) cannot also use "
                "_base_ = [...]; import its bases inside `with read_base():`",
                filename=path,
                line=stmt.lineno,
            )
        body.append(stmt)
    transformer = _LazyImports(path)
    tree.body = [transformer.visit(stmt) for stmt in body]
    tree.body = [
        s
        for item in tree.body
        if item is not None
        for s in (item if isinstance(item, list) else [item])
    ]
    ast.fix_missing_locations(tree)
    imported.update(transformer.imported)
    provenance.overlay(python_origins(tree, path))

    run_config_code(tree, path, namespace)
    skip = set(imported) | import_bound_names(tree) | {_LAZY_FACTORY}
    cfg = ConfigDict({k: v for k, v in namespace.items() if is_config_value(k, v, skip)})
    imported = {k: namespace.get(k, v) for k, v in imported.items() if k not in cfg}
    return cfg, imported, provenance, env, texts


def _bind_base(
    stmt: ast.ImportFrom,
    base: Loaded,
    namespace: dict[str, Any],
    imported: dict[str, Any],
    provenance: Provenance,
    path: str,
) -> None:
    available = {**base.imported, **dict(dict.items(base.cfg))}
    for alias in stmt.names:
        names = list(available) if alias.name == "*" else [alias.name]
        for name in names:
            if name not in available:
                raise ConfigError(
                    f"read_base(): base config has no variable '{name}'."
                    + did_you_mean(name, available),
                    filename=path,
                    line=stmt.lineno,
                )
            target = alias.asname or name
            namespace[target] = available[name]
            if name in base.imported:
                imported[target] = available[name]
            else:
                imported.pop(target, None)
    for key_path, origin in base.provenance.items():
        if alias_covers(stmt, key_path[0]):
            provenance.overlay({key_path: origin})


def alias_covers(stmt: ast.ImportFrom, name: str) -> bool:
    """Whether an import statement binds the base variable ``name`` (unrenamed)."""
    return any(a.name == "*" or (a.name == name and not a.asname) for a in stmt.names)

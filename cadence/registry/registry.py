"""String-keyed registries with OpenMMLab-style scopes.

A :class:`Registry` maps names to classes or functions. Registries form trees:
a downstream package creates a child of a cadence root registry
(``Registry('model', parent=MODELS)``), whose scope is by default the top-level
package that created it. Lookups of plain names fall back up the parent chain;
``'scope.Name'`` crosses into another scope of the same tree.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..utils.imports import describe_object, import_object
from ..utils.lazy import export_module, load_all
from ..utils.suggest import did_you_mean
from .default_scope import default_scope, get_default_scope
from .errors import RegistryArgumentError, RegistryError

#: Scope names that mean the same registry tree root. Configs written for
#: mmengine name its scope; cadence's root registries answer to it.
SCOPE_ALIASES = {"mmengine": "cadence"}


def _canonical_scope(scope: str | None) -> str | None:
    return SCOPE_ALIASES.get(scope, scope) if scope is not None else None


def infer_scope(depth: int = 2) -> str:
    """Return the top-level package name of the module ``depth`` frames up."""
    frame = sys._getframe(depth)
    module = frame.f_globals.get("__name__", "__main__")
    return module.split(".")[0]


class Registry:
    """A name → class/function mapping that builds objects from config dicts.

    Args:
        name: what the registry holds ('model', 'hook', ...).
        parent: the registry this one extends; lookups fall back to it.
        scope: the scope name; by default the top-level package of the caller.
        locations: modules imported on the first lookup, where the registered
            objects live. Keeps ``import`` cheap.
        build_func: ``f(cfg, *args, registry=..., **kwargs)`` used by
            :meth:`build`; by default the parent's, else ``build_from_cfg``.
    """

    def __init__(
        self,
        name: str,
        parent: Registry | None = None,
        scope: str | None = None,
        locations: Sequence[str] | None = None,
        build_func: Callable[..., Any] | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"registry name must be a str, got {type(name).__name__}")
        if parent is not None and not isinstance(parent, Registry):
            hint = " (pass a build function as build_func=...)" if callable(parent) else ""
            raise RegistryArgumentError(
                f"parent of registry '{name}' must be a Registry, got {type(parent).__name__}{hint}"
            )
        if scope is not None and not isinstance(scope, str):
            raise RegistryArgumentError(
                f"scope of registry '{name}' must be a str, got {type(scope).__name__}"
            )
        self._name = name
        self._scope = scope if scope is not None else infer_scope()
        self._module_dict: dict[str, Any] = {}
        self._fallbacks: dict[str, Any] = {}
        self._children: dict[str, Registry] = {}
        self._locations = list(locations or [])
        self._imported = False
        self._import_failures: dict[str, Exception] = {}
        self._warned_scopes: set[str] = set()
        self.parent = parent
        if parent is not None:
            parent._add_child(self)
        if build_func is None:
            if parent is not None:
                build_func = parent.build_func
            else:
                from .build_functions import build_from_cfg

                build_func = build_from_cfg
        self.build_func: Callable[..., Any] = build_func

    # ------------------------------------------------------------------ basics
    @property
    def name(self) -> str:
        return self._name

    @property
    def scope(self) -> str:
        return self._scope

    @property
    def locations(self) -> list[str]:
        return list(self._locations)

    @property
    def module_dict(self) -> dict[str, Any]:
        """The names registered directly in this registry (locations imported)."""
        self.import_from_location()
        return self._module_dict

    @property
    def children(self) -> dict[str, Registry]:
        return self._children

    @property
    def root(self) -> Registry:
        """The registry at the top of this one's tree."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def _get_root_registry(self) -> Registry:
        """mmengine's name of :attr:`root`."""
        return self.root

    def __len__(self) -> int:
        return len(self.module_dict)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.module_dict)

    def __repr__(self) -> str:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"Registry of {self.name} (scope '{self.scope}')")
        table.add_column("Name", style="cyan", no_wrap=True)
        table.add_column("Object", style="green")
        for key, obj in sorted(self.module_dict.items()):
            table.add_row(key, describe_object(obj))
        console = Console(width=120, color_system=None)
        with console.capture() as capture:
            console.print(table, end="")
        return capture.get()

    def _add_child(self, child: Registry) -> None:
        if child.scope in self._children:
            raise RegistryError(
                f"registry '{self.name}' already has a child with scope '{child.scope}'; "
                "create one child registry per package"
            )
        self._children[child.scope] = child

    @staticmethod
    def split_scope_key(key: str) -> tuple[str | None, str]:
        """Split ``'scope.Name'`` into ``('scope', 'Name')``; ``'Name'`` → ``(None, 'Name')``."""
        scope, dot, rest = key.partition(".")
        return (scope, rest) if dot else (None, key)

    # ----------------------------------------------------------- registration
    def register_module(
        self,
        name: str | Sequence[str] | None = None,
        force: bool = False,
        module: Any = None,
    ) -> Any:
        """Register a class or function, as a decorator or a call.

        ``@REG.register_module()``, ``@REG.register_module('Alias')``,
        ``@REG.register_module`` and ``REG.register_module(module=Cls)`` all work.
        Registering a taken name raises unless ``force=True``.
        """
        if not isinstance(force, bool):
            raise TypeError(f"force must be a boolean, but got {type(force)}")
        if callable(name) and not isinstance(name, str) and module is None:
            # used as a bare decorator: @REG.register_module
            self._register(name, None, force)
            return name
        if not (
            name is None
            or isinstance(name, str)
            or (isinstance(name, Sequence) and all(isinstance(n, str) for n in name))
        ):
            raise TypeError(
                "name must be None, an instance of str, or a sequence of str, but got "
                f"{type(name)} ({name!r})"
            )
        if module is not None:
            self._register(module, name, force)
            return module

        def decorator(obj: Any) -> Any:
            self._register(obj, name, force)
            return obj

        return decorator

    def _register(self, module: Any, name: str | Sequence[str] | None, force: bool) -> None:
        if not callable(module):
            raise TypeError(
                f"module must be Callable, but got {type(module)} ({module!r}): only classes "
                "and functions can be registered"
            )
        names = [module.__name__] if name is None else [name] if isinstance(name, str) else name
        for key in names:
            existing = self._module_dict.get(key)
            if existing is not None and not force and existing is not module:
                where = describe_object(existing)
                raise RegistryError(
                    f"{key} is already registered in {self.name} at {self.scope} (by {where}); "
                    "pass force=True to replace it"
                )
            self._module_dict[key] = module

    def register_fallback(self, name: str | None = None) -> Callable[[Any], Any]:
        """Decorator: answer ``name`` (default: the object's name) only while nothing is
        registered under it.

        The name stays free (not in :attr:`module_dict`): a package that registers the same
        name later (mmcv's ``Compose``...) takes it over without an error, as in mmengine,
        whose root registries hold none of these names.
        """

        def decorator(obj: Any) -> Any:
            self._fallbacks[obj.__name__ if name is None else name] = obj
            return obj

        return decorator

    @property
    def fallbacks(self) -> dict[str, Any]:
        """The names this registry answers only while no one registers them."""
        return dict(self._fallbacks)

    # ------------------------------------------------------------------ lookup
    def import_from_location(self) -> None:
        """Import this registry's locations once, recording failures for errors."""
        if self._imported:
            return
        self._imported = True
        for location in self._locations:
            self._import_location(location, load_all)

    def _import_location(self, location: str, then: Callable[[Any], Any]) -> None:
        """Import ``location`` and call ``then`` on it; a failure is recorded and warned."""
        try:
            then(importlib.import_module(location))
        except Exception as exc:  # a broken location must not hide the others
            self._import_failures[location] = exc
            warnings.warn(
                f"registry '{self.name}' (scope '{self.scope}') could not import "
                f"its location '{location}': {exc}",
                stacklevel=4,
            )

    def _import_defining(self, key: str) -> None:
        """Import only the module that defines ``key`` where a location exports it lazily
        (``LAZY_EXPORTS``, see :mod:`cadence.utils.lazy`); the first name a location does
        not list imports all of them."""
        for location in self._locations:
            module = sys.modules.get(location)
            if module is None:
                try:
                    module = importlib.import_module(location)
                except Exception:  # noqa: BLE001 - import_from_location records why
                    return
            target = export_module(module, key)
            if target is not None:
                self._import_location(target, lambda m: None)
                return

    def _get_local(self, key: str) -> Any:
        obj = self._module_dict.get(key)
        if obj is None and not self._imported:
            self._import_defining(key)
            obj = self._module_dict.get(key)
            if obj is None:
                self.import_from_location()
                obj = self._module_dict.get(key)
        return obj if obj is not None else self._fallbacks.get(key)

    def _get_with_parents(self, key: str) -> Any:
        node: Registry | None = self
        while node is not None:
            obj = node._get_local(key)
            if obj is not None:
                return obj
            node = node.parent
        return None

    def _search_child(self, scope: str) -> Registry | None:
        """Return the registry with ``scope`` among this one and its descendants."""
        if self.scope == scope:
            return self
        for child in self._children.values():
            found = child._search_child(scope)
            if found is not None:
                return found
        return None

    def _registry_for_scope(self, scope: str) -> Registry | None:
        """Find the registry of ``scope`` in this tree, importing ``scope.registry``."""
        scope = _canonical_scope(scope) or scope
        found = self.root._search_child(scope)
        if found is None:
            try:
                importlib.import_module(f"{scope}.registry")
            except ModuleNotFoundError as exc:
                if exc.name not in (scope, f"{scope}.registry"):
                    raise
            found = self.root._search_child(scope)
        return found

    def get(self, key: str) -> Any:
        """Return the object registered as ``key`` or ``None``.

        ``'Name'`` is searched here then up the parents; ``'scope.Name'`` in the
        registry of that scope; a dotted import path (``'torch.nn.Linear'``) is
        imported when no registry has it.
        """
        if not isinstance(key, str):
            raise TypeError(f"registry key must be a str, got {type(key).__name__}")
        scope, real_key = self.split_scope_key(key)
        scope = _canonical_scope(scope)
        obj = None
        if scope is None:
            obj = self._get_with_parents(key)
        elif scope == self.scope:
            obj = self._get_local(real_key)
        else:
            target = self._registry_for_scope(scope)
            if target is not None:
                obj = target.get(real_key)
        if obj is None and "." in key:
            try:
                obj = import_object(key)
            except ImportError:
                obj = None
        return obj

    def _candidate_names(self) -> list[str]:
        names: list[str] = []
        node: Registry | None = self
        while node is not None:
            node.import_from_location()
            names.extend(node._module_dict)
            names.extend(name for name in node._fallbacks if name not in node._module_dict)
            node = node.parent
        return names

    def lookup(self, key: str, key_path: str | None = None, origin: str | None = None) -> Any:
        """Like :meth:`get` but raise :class:`RegistryError` with suggestions."""
        obj = self.get(key)
        if obj is not None:
            return obj
        scope, real_key = self.split_scope_key(key)
        where = [f"config key '{key_path}'"] if key_path else []
        if origin:
            where.append(f"defined at {origin}")
        located = f" ({', '.join(where)})" if where else ""
        if scope is not None and _canonical_scope(scope) != self.scope:
            target = self._registry_for_scope(scope)
            if target is None:
                scopes = self._all_scopes()
                return self._raise(
                    f"'{key}'{located}: no '{self.name}' registry has scope '{scope}'; "
                    f"known scopes: {', '.join(sorted(scopes))}.{did_you_mean(scope, scopes)}"
                )
            candidates = target._candidate_names()
            registry = target
        else:
            candidates = self._candidate_names()
            registry = self
        message = (
            f"'{real_key}'{located} is not registered in registry '{registry.name}' "
            f"(scope '{registry.scope}').{did_you_mean(real_key, candidates)}"
        )
        failures = {
            loc: err
            for node in self._lineage(registry)
            for loc, err in node._import_failures.items()
        }
        for loc, err in failures.items():
            message += f"\n  note: location '{loc}' failed to import ({type(err).__name__}: {err})"
        # The first failure is the cause, so that a caller can tell what to install.
        raise RegistryError(message) from next(iter(failures.values()), None)

    @staticmethod
    def _raise(message: str) -> Any:
        raise RegistryError(message)

    @staticmethod
    def _lineage(registry: Registry) -> list[Registry]:
        nodes: list[Registry] = []
        node: Registry | None = registry
        while node is not None:
            nodes.append(node)
            node = node.parent
        return nodes

    def _all_scopes(self) -> set[str]:
        scopes: set[str] = set()
        stack = [self.root]
        while stack:
            node = stack.pop()
            scopes.add(node.scope)
            stack.extend(node._children.values())
        return scopes

    # ------------------------------------------------------------------- build
    @contextmanager
    def switch_scope_and_registry(self, scope: str | None) -> Iterator[Registry]:
        """Set the default scope to ``scope`` and yield the registry to build from.

        With no scope given the current default scope is used. When the tree has a
        registry for that scope it is yielded, so a downstream package's names
        take precedence; otherwise this registry is.
        """
        explicit = scope is not None
        with default_scope(scope):
            current = _canonical_scope(get_default_scope())
            registry: Registry = self
            if current is not None and current != self.scope:
                found = self._registry_for_scope(current)
                if found is not None:
                    registry = found
                elif explicit and current not in self._warned_scopes:
                    self._warned_scopes.add(current)
                    warnings.warn(
                        f"registry '{self.name}' has no child with scope '{current}'; "
                        f"building from scope '{self.scope}' instead",
                        stacklevel=3,
                    )
            yield registry

    def build(self, cfg: Any, default_args: Any = None, **kwargs: Any) -> Any:
        """Build an object from ``cfg`` (a dict with ``type``) with the build function.

        ``default_args`` fill keys that ``cfg`` lacks; other keyword arguments
        (e.g. ``key_path='model.backbone'``) go to the build function.
        """
        if default_args is not None:
            kwargs["default_args"] = default_args
        return self.build_func(cfg, registry=self, **kwargs)

    # ---------------------------------------------------------------- testing
    def _snapshot(self) -> tuple[Any, ...]:
        return (
            dict(self._module_dict),
            dict(self._children),
            self._imported,
            dict(self._import_failures),
            set(self._warned_scopes),
        )

    def _restore(self, snap: tuple[Any, ...]) -> None:
        module_dict, children, imported, failures, warned = snap
        self._warned_scopes = warned
        self._module_dict.clear()
        self._module_dict.update(module_dict)
        self._children.clear()
        self._children.update(children)
        self._imported = imported
        self._import_failures = failures

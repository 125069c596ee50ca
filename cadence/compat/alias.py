"""The import alias: ``mmengine`` and every ``mmengine.X.Y`` resolve to cadence's modules.

:func:`install` puts :class:`MMEngineAliasFinder` first on ``sys.meta_path``. From then on
``import mmengine.registry`` returns the module object ``cadence.registry`` itself (so
registries, classes and module state are shared with code that imports cadence), and an
mmengine path whose module has another place in cadence resolves there (the table is
:data:`~cadence.compat.module_map.MODULE_MAP`). Only ``mmengine`` and ``mmengine.version``
are modules of their own: they report the mmengine API level cadence implements (0.10.7),
so that the version checks of downstream packages pass while ``cadence.__version__``
stays cadence's; every other attribute of ``mmengine`` is read from ``cadence``.

Nothing installs the alias at interpreter start-up: only the three doors do (``python -m
cadence.compat.mmengine``, ``import cadence.compat.mmengine``, ``cadence train`` on a
config with a downstream ``default_scope``). When a real mmengine is installed as well, the
alias wins inside a door process and says so once on stderr; outside a door,
``import mmengine`` is that real package.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence
from typing import Any

from .module_map import MMENGINE_API_VERSION, MODULE_MAP, OWN_MODULES

ROOT = "mmengine"


class MissingMMEngineModule(ModuleNotFoundError):
    """An mmengine module path that cadence does not provide was imported under the alias."""


class AliasConflict(RuntimeError):
    """A real mmengine was imported in this process before the alias was installed."""


def _version_info(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _top_level_getattr(name: str) -> Any:
    # mmengine's namespace is cadence's (same objects); only the version differs.
    try:
        value = getattr(importlib.import_module("cadence"), name)
    except AttributeError:
        raise AttributeError(f"module 'mmengine' has no attribute '{name}'") from None
    return value


def _own_module(name: str) -> types.ModuleType:
    """``mmengine`` or ``mmengine.version``: the API version, the rest read from cadence."""
    doc = f"cadence's alias of {name} (mmengine API {MMENGINE_API_VERSION})"
    module = types.ModuleType(name, doc)
    module.__version__ = MMENGINE_API_VERSION  # type: ignore[attr-defined]
    module.__cadence_alias__ = True  # type: ignore[attr-defined]  # checkpoint.portable
    module.version_info = _version_info(MMENGINE_API_VERSION)  # type: ignore[attr-defined]
    if name == ROOT:
        module.__path__ = []  # a package: its submodules come from the finder
        module.__getattr__ = _top_level_getattr  # type: ignore[method-assign]
    else:
        from cadence.utils.version_utils import digit_version

        module.digit_version = digit_version  # type: ignore[attr-defined]
    return module


def cadence_name(name: str) -> str | None:
    """The cadence module that the mmengine module path ``name`` means, ``None`` if none."""
    return MODULE_MAP.get(name)


def _missing_message(name: str) -> str:
    if name in MODULE_MAP:
        return (
            f"'{name}' is a module of mmengine {MMENGINE_API_VERSION} that cadence does not "
            f"provide (see docs/mmengine_module_status.md and docs/openmmlab.md)"
        )
    return f"No module named '{name}' (mmengine {MMENGINE_API_VERSION} has no such module)"


class _AliasLoader(importlib.abc.Loader):
    """Hands back an existing module object; executes nothing."""

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self._module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class MMEngineAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``mmengine`` and ``mmengine.*`` to cadence's modules (see the module doc)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        if fullname in OWN_MODULES:
            module = _own_module(fullname)
        else:
            target_name = cadence_name(fullname)
            if target_name is None:
                raise MissingMMEngineModule(_missing_message(fullname), name=fullname)
            module = importlib.import_module(target_name)
            if not hasattr(module, "__path__"):
                # mmengine has a package here (its submodules are imported through this
                # finder); an empty search path lets the import system ask for them.
                module.__path__ = []
        is_package = hasattr(module, "__path__")
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=is_package)
        return spec


_FINDER = MMEngineAliasFinder()


def is_installed() -> bool:
    """Whether the alias is on ``sys.meta_path`` in this process."""
    return _FINDER in sys.meta_path


def _real_mmengine() -> str | None:
    """Where a real mmengine is installed (found by the ordinary path finder), or None."""
    spec = importlib.machinery.PathFinder.find_spec(ROOT)
    return spec.origin if spec is not None and spec.origin else None


def install() -> None:
    """Make ``mmengine`` mean cadence in this process (idempotent)."""
    if is_installed():
        return
    already = sys.modules.get(ROOT)
    loader = getattr(getattr(already, "__spec__", None), "loader", None)
    if already is not None and not isinstance(loader, _AliasLoader):
        raise AliasConflict(
            f"mmengine was imported from {getattr(already, '__file__', '?')} before cadence's "
            f"alias was installed; put `import cadence.compat.mmengine` before any import of "
            f"mmengine or of a package that imports it (or run the script with "
            f"`python -m cadence.compat.mmengine SCRIPT`)"
        )
    real = _real_mmengine()
    sys.meta_path.insert(0, _FINDER)
    if real is not None:
        print(
            f"cadence: a real mmengine is installed ({real}); in this process `mmengine` "
            f"means cadence (mmengine API {MMENGINE_API_VERSION})",
            file=sys.stderr,
        )


def uninstall() -> None:
    """Remove the alias and forget the ``mmengine`` modules it made (for tests)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == ROOT or n.startswith(ROOT + ".")]:
        del sys.modules[name]

"""Reading config files (``.py``, ``.json``, ``.yaml``) and their ``_base_`` chains."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .config_dict import KEY_PATH_ATTR, ConfigDict
from .errors import (
    ConfigError,
    ConfigFileNotFoundError,
    ConfigKeyError,
    ConfigSyntaxError,
)
from .execute import import_bound_names, is_config_value, run_config_code
from .loaded import Loaded
from .merge import get_by_path, merge_a_into_b, strip_delete_keys
from .provenance import Origin, python_origins, yaml_origins
from .pure import load_pure_python, read_base_line, uses_read_base
from .substitute import (
    substitute_base_refs,
    substitute_env,
    substitute_predefined,
)

BASE_KEY = "_base_"
DEPRECATION_KEY = "_deprecation_"
SUFFIXES = (".py", ".json", ".yaml", ".yml")


@dataclass
class LoadOptions:
    """Switches of :meth:`Config.fromfile` that apply to every file of a chain."""

    use_predefined_variables: bool = True
    use_environment_variables: bool = True
    lazy_import: bool | None = None


class ConfigLoader:
    """Loads one config file and, recursively, its bases."""

    def __init__(self, options: LoadOptions | None = None) -> None:
        self.options = options or LoadOptions()
        self._stack: list[str] = []

    # ------------------------------------------------------------ entry
    def load(
        self,
        filename: str,
        *,
        text: str | None = None,
        included_from: tuple[str, int | None] | None = None,
        pure: bool | None = None,
    ) -> Loaded:
        """Load ``filename`` (or ``text`` posing as it) with its bases merged."""
        path = os.path.abspath(os.path.expanduser(str(filename)))
        if path in self._stack:
            chain = " -> ".join(self._stack[self._stack.index(path) :] + [path])
            src = included_from or (path, None)
            raise ConfigError(f"cycle in _base_ inheritance: {chain}", filename=src[0], line=src[1])
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in SUFFIXES:
            raise ConfigError(
                f"unsupported config file type '{suffix or path}'; expected one of "
                + ", ".join(SUFFIXES),
                filename=path,
            )
        if text is None:
            if not os.path.isfile(path):
                if included_from is not None:
                    raise ConfigFileNotFoundError(
                        f"base config '{path}' does not exist",
                        filename=included_from[0],
                        line=included_from[1],
                    )
                raise ConfigFileNotFoundError(f"config file '{path}' does not exist")
            with open(path, encoding="utf-8") as f:
                text = f.read()
        self._stack.append(path)
        try:
            loaded = self._load_text(path, suffix, text, pure)
        finally:
            self._stack.pop()
        return loaded

    # ------------------------------------------------------------ per file
    def _load_text(self, path: str, suffix: str, raw: str, pure: bool | None) -> Loaded:
        env: dict[str, str] = {}
        text = raw
        if self.options.use_predefined_variables:
            text = substitute_predefined(text, path)
        if self.options.use_environment_variables:
            text = substitute_env(text, path, env)
        if suffix == ".py":
            wants_pure = pure if pure is not None else self.options.lazy_import
            if wants_pure is None:
                wants_pure = uses_read_base(text)
            if wants_pure:
                return self._load_pure(path, text, raw, env)
            line = read_base_line(text)
            if line is not None:
                raise ConfigError(
                    "read_base() cannot be used here: the file also sets _base_, was loaded "
                    "with lazy_import=False, or is a _base_ of a classic config. Inherit "
                    "either with _base_ = [...] or with read_base() along the whole chain",
                    filename=path,
                    line=line,
                )
        text, refs = substitute_base_refs(text, python=suffix == ".py")
        if suffix == ".py":
            compiled = compile_python(text, path)
            base_names, base_line = compiled.bases, compiled.base_line
        else:
            data = _parse_data(text, path, suffix)
            base_names = _as_list(data.pop(BASE_KEY, []), path)
            base_line = _line_of_key(raw, BASE_KEY)

        base = self._load_bases(path, base_names, base_line)
        env = {**base.env_variables, **env}
        ref_values: dict[str, Any] = {}
        for token, ref in refs.tokens.items():
            try:
                ref_values[token] = get_by_path(base.cfg, tuple(ref.path.split(".")), what="_base_")
            except ConfigKeyError as exc:
                raise ConfigKeyError(
                    f"bad reference {{{{_base_.{ref.path}}}}}: {exc.message}",
                    filename=path,
                    line=ref.line,
                ) from None

        if suffix == ".py":
            child, origins = _exec_python(compiled, path, base.cfg), compiled.origins
        else:
            child, origins = data, yaml_origins(raw, path) or {(k,): Origin(path) for k in data}
        if refs:
            child = refs.resolve(child, ref_values, path)
        _warn_deprecated(child, path)

        provenance = base.provenance
        merged = merge_a_into_b(child, base.cfg, on_replace=provenance.drop_subtree, filename=path)
        provenance.overlay(origins)
        text_out = "\n".join([t for t in [base.text] if t] + [f"{path}\n{raw}"])
        return Loaded(merged, text_out, env, provenance)

    def _load_bases(self, path: str, names: list[str], line: int | None) -> Loaded:
        result = Loaded(ConfigDict(), "")
        owner: dict[str, str] = {}
        texts: list[str] = []
        for name in names:
            base_path, scope = resolve_base_path(name, path, line)
            sub = self.load(base_path, included_from=(path, line), pure=False)
            if scope is not None:
                _set_scope(sub.cfg, scope)
            duplicated = sorted(set(result.cfg) & set(sub.cfg), key=str)
            if duplicated:
                firsts = {owner[k] for k in duplicated}
                raise ConfigKeyError(
                    f"key(s) {', '.join(map(repr, duplicated))} are defined both in base "
                    f"'{base_path}' and in base(s) {', '.join(sorted(firsts))}; a top-level key "
                    "may come from only one base",
                    filename=path,
                    line=line,
                )
            for key in sub.cfg:
                owner[key] = base_path
            dict.update(result.cfg, dict.items(sub.cfg))
            result.env_variables.update(sub.env_variables)
            result.provenance.update(sub.provenance)
            texts.append(sub.text)
        result.text = "\n".join(texts)
        return result

    def _load_pure(self, path: str, text: str, raw: str, env: dict[str, str]) -> Loaded:
        def load_base(base_path: str, line: int | None) -> Loaded:
            return self.load(base_path, included_from=(path, line), pure=True)

        cfg, imported, provenance, env_more, texts = load_pure_python(
            path, text, load_base=load_base
        )
        env = {**env_more, **env}
        text_out = "\n".join([t for t in texts if t] + [f"{path}\n{raw}"])
        return Loaded(strip_delete_keys(cfg), text_out, env, provenance, imported, pure=True)


# ---------------------------------------------------------------- helpers
@dataclass(frozen=True)
class CompiledFile:
    """What a classic ``.py`` config's text compiles to (pure function of the text)."""

    code: Any
    bases: list[str]
    base_line: int | None
    origins: dict[tuple[str, ...], Origin]
    bound_by_code: frozenset[str]  # names bound by imports, def and class


_COMPILED: OrderedDict[tuple[str, str], CompiledFile] = OrderedDict()
_COMPILED_MAX = 512


def compile_python(text: str, path: str) -> CompiledFile:
    """Parse and compile a classic config, reusing earlier work on the same text.

    Compiling is pure, so sharing it between loads (bases shared by many
    experiments, repeated loads) is safe; executing is never cached.
    """
    key = (path, text)
    hit = _COMPILED.get(key)
    if hit is not None:
        _COMPILED.move_to_end(key)
        return hit
    tree = _parse_python(text, path)
    bases, base_line = _python_bases(tree, path)
    compiled = CompiledFile(
        code=compile(tree, path, "exec"),
        bases=bases,
        base_line=base_line,
        origins=python_origins(tree, path),
        bound_by_code=frozenset(import_bound_names(tree)),
    )
    _COMPILED[key] = compiled
    if len(_COMPILED) > _COMPILED_MAX:
        _COMPILED.popitem(last=False)
    return compiled


def _parse_python(text: str, path: str) -> ast.Module:
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise ConfigSyntaxError(
            f"invalid Python: {exc.msg}" + (f"\n    {exc.text.rstrip()}" if exc.text else ""),
            filename=path,
            line=exc.lineno,
        ) from None


def _parse_data(text: str, path: str, suffix: str) -> dict[str, Any]:
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigSyntaxError(
                f"invalid JSON: {exc.msg}", filename=path, line=exc.lineno
            ) from None
    else:
        from .yaml_io import load_yaml

        data = load_yaml(text, path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"the top level must be a mapping, got {type(data).__name__}", filename=path
        )
    return data


def _line_of_key(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if key in line:
            return number
    return None


def _as_list(value: Any, path: str, line: int | None = None) -> list[str]:
    items = (
        [value]
        if isinstance(value, str)
        else list(value)
        if isinstance(value, (list, tuple))
        else None
    )
    if items is None or not all(isinstance(v, str) for v in items):
        raise ConfigError(
            f"_base_ must be a path or a list of paths, got {value!r}", filename=path, line=line
        )
    return items


def _python_bases(tree: ast.Module, path: str) -> tuple[list[str], int | None]:
    """Find ``_base_ = ...`` at the top level and remove it from ``tree``."""
    for index, stmt in enumerate(tree.body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == BASE_KEY
        ):
            try:
                value = ast.literal_eval(stmt.value)
            except ValueError:
                raise ConfigError(
                    "_base_ must be a literal path or list of paths",
                    filename=path,
                    line=stmt.lineno,
                ) from None
            del tree.body[index]
            return _as_list(value, path, stmt.lineno), stmt.lineno
    return [], None


def resolve_base_path(name: str, path: str, line: int | None) -> tuple[str, str | None]:
    """Resolve a ``_base_`` entry: relative to ``path``, or ``'pkg::rel/path.py'``."""
    if "::" not in name:
        return os.path.normpath(os.path.join(os.path.dirname(path), os.path.expanduser(name))), None
    package, _, rel = name.partition("::")
    spec = importlib.util.find_spec(package) if package else None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigFileNotFoundError(
            f"base '{name}': package '{package}' is not installed", filename=path, line=line
        )
    for root in spec.submodule_search_locations:
        for sub in (os.path.join(".mim", "configs"), "configs", ""):
            candidate = os.path.join(root, sub, rel)
            if os.path.isfile(candidate):
                return candidate, package
    raise ConfigFileNotFoundError(
        f"base '{name}': '{rel}' not found in package '{package}' "
        "(looked in its .mim/configs and configs folders)",
        filename=path,
        line=line,
    )


def _set_scope(cfg: Any, scope: str, has_scope: bool = True) -> None:
    """Give the outermost typed dicts of a package base the package's ``_scope_``."""
    if isinstance(cfg, dict):
        if has_scope and "type" in cfg:
            has_scope = False
            if cfg.get("_scope_") is None:
                dict.__setitem__(cfg, "_scope_", scope)
        for value in dict.values(cfg):
            _set_scope(value, scope, has_scope)
    elif isinstance(cfg, (list, tuple)):
        for value in cfg:
            _set_scope(value, scope, has_scope)


def _exec_python(compiled: CompiledFile, path: str, base_cfg: ConfigDict) -> dict[str, Any]:
    base_cfg.__dict__[KEY_PATH_ATTR] = BASE_KEY  # errors on _base_.x name it
    namespace: dict[str, Any] = {BASE_KEY: base_cfg, "__file__": path, "__name__": "__config__"}
    run_config_code(compiled.code, path, namespace)
    skip = compiled.bound_by_code | {BASE_KEY}
    return {k: v for k, v in namespace.items() if is_config_value(k, v, skip)}


def _warn_deprecated(child: dict[str, Any], path: str) -> None:
    info = child.pop(DEPRECATION_KEY, None)
    if info is None:
        return
    message = f"The config file {path} will be deprecated in the future."
    if isinstance(info, dict):
        if "expected" in info:
            message += f" Please use {info['expected']} instead."
        if "reference" in info:
            message += f" More information can be found at {info['reference']}"
    warnings.warn(message, DeprecationWarning, stacklevel=2)

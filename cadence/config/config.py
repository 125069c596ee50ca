"""``Config``: a loaded config file with attribute access, dumping and provenance."""

from __future__ import annotations

import copy
import difflib
import importlib
import os
import tempfile
import warnings
from argparse import ArgumentParser
from collections.abc import Iterator, Mapping
from pathlib import Path as FsPath
from typing import Any

from .config_dict import ConfigDict, annotate
from .dump import format_json, format_python, format_yaml, to_serializable
from .errors import ConfigError, ConfigImportError, ConfigKeyError
from .lazy import LazyObject
from .loader import ConfigLoader, LoadOptions
from .merge import get_by_path, merge_a_into_b
from .provenance import Origin, Provenance, join_key, leaf_paths, split_key

RESERVED_KEYS = ("filename", "text", "pretty_text", "env_variables")


class Config:
    """A config: nested :class:`ConfigDict` plus where it came from.

    Build one with :meth:`fromfile`, :meth:`fromstring` or ``Config(dict)``.
    Keys read as attributes or items (``cfg.model.type``, ``cfg['model']``).
    """

    def __init__(
        self,
        cfg_dict: Mapping[str, Any] | None = None,
        cfg_text: str | None = None,
        filename: str | os.PathLike[str] | None = None,
        env_variables: Mapping[str, str] | None = None,
        format_python_code: bool = True,
    ) -> None:
        if cfg_dict is None:
            cfg_dict = {}
        elif not isinstance(cfg_dict, Mapping):
            raise TypeError(f"cfg_dict must be a dict, got {type(cfg_dict).__name__}")
        for key in cfg_dict:
            if key in RESERVED_KEYS:
                raise ConfigKeyError(
                    f"'{key}' is reserved for the Config object itself; rename this key",
                    filename=str(filename) if filename else None,
                    key=key,
                )
        filename = str(filename) if filename is not None else None
        if cfg_text is None:
            cfg_text = ""
            if filename and os.path.isfile(filename):
                with open(filename, encoding="utf-8") as f:
                    cfg_text = f.read()
        data = cfg_dict if type(cfg_dict) is ConfigDict else ConfigDict(cfg_dict)
        object.__setattr__(self, "_cfg_dict", data)
        object.__setattr__(self, "_filename", filename)
        object.__setattr__(self, "_text", cfg_text)
        object.__setattr__(self, "_env_variables", dict(env_variables or {}))
        object.__setattr__(self, "_format_python_code", format_python_code)
        object.__setattr__(self, "_provenance", Provenance())
        object.__setattr__(self, "_imported", {})

    # ------------------------------------------------------------ loading
    @staticmethod
    def fromfile(
        filename: str | os.PathLike[str],
        use_predefined_variables: bool = True,
        import_custom_modules: bool = True,
        use_environment_variables: bool = True,
        lazy_import: bool | None = None,
        format_python_code: bool = True,
    ) -> Config:
        """Load a ``.py``, ``.json`` or ``.yaml``/``.yml`` config and its ``_base_`` chain.

        ``lazy_import=None`` detects the pure-Python style (``read_base()``);
        ``True`` forces it, ``False`` refuses it.
        """
        options = LoadOptions(use_predefined_variables, use_environment_variables, lazy_import)
        loaded = ConfigLoader(options).load(str(filename))
        return Config._from_loaded(loaded, str(filename), format_python_code, import_custom_modules)

    @staticmethod
    def fromstring(cfg_str: str, file_format: str) -> Config:
        """Load a config from text; ``file_format`` is ``'.py'``, ``'.json'`` or ``'.yaml'``.

        Relative ``_base_`` paths resolve against the current directory.
        """
        if not file_format.startswith("."):
            file_format = "." + file_format
        virtual = os.path.join(os.getcwd(), f"<string>{file_format}")
        loaded = ConfigLoader().load(virtual, text=cfg_str)
        cfg = Config._from_loaded(loaded, None, True, True)
        return cfg

    @staticmethod
    def auto_argparser(description: str | None = None) -> tuple[ArgumentParser, Config]:
        """``(parser, cfg)`` for a script run as ``script.py CONFIG [--key.path VALUE ...]``.

        The config named by the first positional command-line argument is loaded;
        the parser has that positional ``config`` and one option per config leaf
        (see :func:`cadence.config.auto_args.add_args`).
        """
        from .auto_args import add_args, config_path_parser

        cfg_file = config_path_parser(description, add_help=False).parse_known_args()[0].config
        cfg = Config.fromfile(cfg_file)
        parser = config_path_parser(description)
        add_args(parser, cfg.to_dict())
        return parser, cfg

    @staticmethod
    def _from_loaded(
        loaded: Any, path: str | None, format_python_code: bool, import_custom_modules: bool
    ) -> Config:
        cfg = Config(
            loaded.cfg,
            cfg_text=loaded.text,
            filename=path,
            env_variables=loaded.env_variables,
            format_python_code=format_python_code,
        )
        object.__setattr__(cfg, "_provenance", loaded.provenance)
        object.__setattr__(cfg, "_imported", loaded.imported)
        cfg._annotate()
        if import_custom_modules and cfg._cfg_dict.get("custom_imports"):
            import_custom(cfg._cfg_dict["custom_imports"], path)
        return cfg

    def _annotate(self) -> None:
        def origin_of(path: str) -> str | None:
            origin = self._provenance.lookup(split_key(path))
            return str(origin) if origin is not None else None

        annotate(self._cfg_dict, "", origin_of)

    # ------------------------------------------------------------- access
    @property
    def filename(self) -> str | None:
        """The file this config was loaded from."""
        return self._filename

    @property
    def text(self) -> str:
        """The source text of the file and of every base, each after its path."""
        return self._text

    @property
    def env_variables(self) -> dict[str, str]:
        """Environment variables that ``{{$NAME}}`` substitutions read."""
        return self._env_variables

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(self._cfg_dict, name)

    def __getitem__(self, name: Any) -> Any:
        return self._cfg_dict[name]

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._cfg_dict, name, value)

    def __setitem__(self, name: Any, value: Any) -> None:
        self._cfg_dict[name] = value

    def __delattr__(self, name: str) -> None:
        delattr(self._cfg_dict, name)

    def __delitem__(self, name: Any) -> None:
        del self._cfg_dict[name]

    def __len__(self) -> int:
        return len(self._cfg_dict)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cfg_dict)

    def __contains__(self, key: object) -> bool:
        return key in self._cfg_dict

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return dict.__eq__(self._cfg_dict, other._cfg_dict)
        if isinstance(other, Mapping):
            return dict.__eq__(self._cfg_dict, dict(other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Config (path: {self.filename}): {self._cfg_dict.__repr__()}"

    def to_dict(self, keep_imported: bool = False) -> dict[str, Any]:
        """Plain nested dicts; lazy imports become dotted-path strings (as mmengine)."""
        data = _lazy_to_str(self._cfg_dict.to_dict())
        if keep_imported:
            data.update({k: _lazy_to_str(v) for k, v in self._imported.items()})
        return data

    # --------------------------------------------------------- copy/pickle
    def __copy__(self) -> Config:
        new = Config.__new__(Config)
        new.__dict__.update(self.__dict__)
        return new

    def copy(self) -> Config:
        return self.__copy__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Config:
        new = Config.__new__(Config)
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            object.__setattr__(new, key, copy.deepcopy(value, memo))
        return new

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)

    # -------------------------------------------------------------- merge
    def merge_from_dict(self, options: Mapping[str, Any], allow_list_keys: bool = True) -> None:
        """Merge ``{'a.b.c': 1, 'pipeline.0.type': 'X'}`` into the config.

        Dotted keys address nested dicts; with ``allow_list_keys`` a digit part
        addresses a list element. Merged values are recorded as coming from
        ``--cfg-options`` in the provenance.
        """
        nested: dict[str, Any] = {}
        for full_key, value in options.items():
            if not isinstance(full_key, str) or not full_key or "" in full_key.split("."):
                raise ConfigKeyError(f"bad override key {full_key!r}", filename="--cfg-options")
            node = nested
            parts = full_key.split(".")
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    raise ConfigKeyError(
                        f"'{full_key}' overrides a key that another option sets to a value",
                        key=full_key,
                        filename="--cfg-options",
                    )
                node = child
            node[parts[-1]] = value
        merged = merge_a_into_b(
            nested,
            self._cfg_dict,
            allow_list_keys=allow_list_keys,
            on_replace=self._provenance.drop_subtree,
            filename="--cfg-options",
        )
        object.__setattr__(self, "_cfg_dict", merged)
        for full_key in options:
            self._provenance.set(split_key(full_key), Origin("--cfg-options"))
        self._annotate()

    # ---------------------------------------------------------- provenance
    def provenance(self, key: str | None = None) -> Any:
        """Where the value at ``key`` (``'optim_wrapper.optimizer.lr'``) was set.

        Returns an :class:`Origin` (file, line, note), or ``None`` when nothing
        recorded it (a key added in code). Overrides through
        :meth:`merge_from_dict` are recorded as ``'--cfg-options'``; other
        changes made in code after loading are not tracked. Without ``key``, a
        dict of every leaf key to its origin.
        """
        if key is None:
            return {
                join_key(path): self._provenance.lookup(path)
                for path, _ in leaf_paths(self._cfg_dict)
            }
        path = split_key(key)
        get_by_path(self._cfg_dict, path)  # raises with suggestions for a bad key
        return self._provenance.lookup(path)

    # -------------------------------------------------------------- output
    @property
    def pretty_text(self) -> str:
        """The config as formatted Python source that loads back equal."""
        return format_python(self._cfg_dict, format_code=self._format_python_code)

    def dump(self, file: str | os.PathLike[str] | None = None) -> str | None:
        """Write the config to ``file`` (``.py``, ``.json``, ``.yaml``) or return its text.

        Without ``file`` the text is in the format of the loaded file (Python
        when there is none). Writing is atomic: a temporary file is renamed.
        """
        if file is None:
            suffix = os.path.splitext(self.filename)[1] if self.filename else ".py"
            return self._format(suffix)
        target = str(file)
        text = self._format(os.path.splitext(target)[1])
        directory = os.path.dirname(os.path.abspath(target))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".cfg-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return None

    def _format(self, suffix: str) -> str:
        suffix = suffix.lower()
        if suffix == ".py":
            return self.pretty_text
        if suffix == ".json":
            return format_json(self._cfg_dict)
        if suffix in (".yaml", ".yml"):
            return format_yaml(self._cfg_dict)
        raise ConfigError(f"cannot dump a config as '{suffix}'; use .py, .json or .yaml")

    @staticmethod
    def diff(cfg1: Config | str, cfg2: Config | str) -> str:
        """Unified diff of two configs' Python text (files or loaded configs)."""
        a = Config.fromfile(cfg1) if isinstance(cfg1, (str, FsPath)) else cfg1
        b = Config.fromfile(cfg2) if isinstance(cfg2, (str, FsPath)) else cfg2
        lines = difflib.unified_diff(
            a.pretty_text.splitlines(),
            b.pretty_text.splitlines(),
            fromfile=a.filename or "cfg1",
            tofile=b.filename or "cfg2",
            lineterm="",
        )
        return "\n".join(lines)


def _lazy_to_str(value: Any) -> Any:
    if isinstance(value, LazyObject):
        return value.dotted_path
    if isinstance(value, dict):
        return {k: _lazy_to_str(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lazy_to_str(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_lazy_to_str(v) for v in value)
    return value


def import_custom(spec: Any, filename: str | None = None) -> list[Any]:
    """Import ``custom_imports=dict(imports=[...], allow_failed_imports=False)``."""
    if not isinstance(spec, Mapping) or "imports" not in spec:
        raise ConfigKeyError(
            "custom_imports must be dict(imports=[...], allow_failed_imports=False)",
            filename=filename,
            key="custom_imports",
        )
    imports = spec["imports"]
    allow_failed = bool(spec.get("allow_failed_imports", False))
    names = [imports] if isinstance(imports, str) else list(imports)
    modules: list[Any] = []
    for name in names:
        if not isinstance(name, str):
            raise ConfigKeyError(
                f"custom_imports.imports must hold module names, got {name!r}",
                filename=filename,
                key="custom_imports.imports",
            )
        try:
            modules.append(importlib.import_module(name))
        except ImportError as exc:
            if not allow_failed:
                raise ConfigImportError(
                    f"custom_imports: cannot import '{name}': {exc}",
                    filename=filename,
                    key="custom_imports",
                ) from exc
            warnings.warn(
                f"custom_imports: {name} failed to import and is skipped", UserWarning, stacklevel=2
            )
            modules.append(None)
    return modules


__all__ = ["Config", "import_custom", "to_serializable"]

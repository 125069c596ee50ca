"""YAML reading and writing for configs (PyYAML is optional: ``pip install pyyaml``)."""

from __future__ import annotations

from typing import Any

from .errors import ConfigError, ConfigSyntaxError

_TUPLE_TAG = "tag:yaml.org,2002:python/tuple"


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:
        raise ConfigError(
            "YAML configs need PyYAML; install it with `pip install pyyaml` "
            "(or `pip install cadence[yaml]`)"
        ) from exc
    return yaml


def load_yaml(text: str, filename: str | None = None) -> Any:
    """Parse YAML safely; ``!!python/tuple`` sequences become tuples."""
    yaml = _yaml()

    Loader: Any = type("Loader", (yaml.SafeLoader,), {})

    Loader.add_constructor(
        _TUPLE_TAG, lambda loader, node: tuple(loader.construct_sequence(node, deep=True))
    )
    try:
        return yaml.load(text, Loader=Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigSyntaxError(
            f"invalid YAML: {getattr(exc, 'problem', None) or exc}",
            filename=filename,
            line=mark.line + 1 if mark is not None else None,
        ) from None


#: Characters YAML reads as line breaks: in plain or single-quoted scalars they fold into
#: spaces, so strings holding them are written double-quoted (where they are escaped).
_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: Any, value: str) -> Any:
    style = '"' if any(c in value for c in _YAML_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def dump_yaml(data: Any) -> str:
    """Write YAML that :func:`load_yaml` reads back equal (tuples stay tuples)."""
    yaml = _yaml()

    Dumper: Any = type("Dumper", (yaml.SafeDumper,), {})

    Dumper.add_representer(
        tuple, lambda dumper, value: dumper.represent_sequence(_TUPLE_TAG, value)
    )
    Dumper.add_representer(str, _represent_str)
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True)

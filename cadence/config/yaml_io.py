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


def dump_yaml(data: Any) -> str:
    """Write YAML that :func:`load_yaml` reads back equal (tuples stay tuples)."""
    yaml = _yaml()

    Dumper: Any = type("Dumper", (yaml.SafeDumper,), {})

    Dumper.add_representer(
        tuple, lambda dumper, value: dumper.represent_sequence(_TUPLE_TAG, value)
    )
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True)

"""The runner's path keys: a URL there is a config error naming the key and its origin."""

from __future__ import annotations

from collections.abc import Iterable

from ..config import Config, ConfigError
from ..utils.paths import url_refusal


def refuse_url_keys(cfg: Config, keys: Iterable[str]) -> None:
    """Raise :class:`ConfigError` (file:line, key) if one of ``keys`` of ``cfg`` is a URL."""
    for key in keys:
        message = url_refusal(cfg.get(key), key)
        if message is None:
            continue
        try:
            origin = cfg.provenance(key)
        except Exception:  # noqa: BLE001 - a value without a recorded origin
            origin = None
        filename, line = (origin.filename, origin.line) if origin is not None else (None, None)
        raise ConfigError(message, filename=filename, line=line)

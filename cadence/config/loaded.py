"""What loading one config file gives: its merged dict, text, variables and origins.

A module of its own so that the pure-Python reader (:mod:`.pure`) can name the type
without importing the loader that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .config_dict import ConfigDict
from .provenance import Provenance


@dataclass
class Loaded:
    """One file's result with its bases merged in."""

    cfg: ConfigDict
    text: str
    env_variables: dict[str, str] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    imported: dict[str, Any] = field(default_factory=dict)  # name -> lazy import (pure style)
    pure: bool = False


__all__ = ["Loaded"]

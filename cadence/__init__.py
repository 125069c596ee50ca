"""cadence: a PyTorch training framework driven by one Python config file."""

from __future__ import annotations

import importlib
from typing import Any

from ._exports import LAZY_EXPORTS
from .version import __version__, version_info

__all__ = ["__version__", "version_info", *sorted(LAZY_EXPORTS)]


def __getattr__(name: str) -> Any:
    # Imported on first use so that `import cadence` stays cheap (see _exports.py).
    module = LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cadence' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY_EXPORTS})

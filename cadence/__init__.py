"""cadence: a PyTorch training framework driven by one Python config file."""

from __future__ import annotations

from typing import Any

from .version import __version__

__all__ = ["Config", "Predictor", "Runner", "__version__"]


def __getattr__(name: str) -> Any:
    # Imported on first use so that `import cadence` stays cheap.
    if name == "Config":
        from .config import Config

        return Config
    if name == "Runner":
        from .runner import Runner

        return Runner
    if name == "Predictor":
        from .inference import Predictor

        return Predictor
    raise AttributeError(f"module 'cadence' has no attribute '{name}'")

"""Small helpers shared by several cadence packages."""

from .imports import import_object
from .suggest import closest_names, did_you_mean

__all__ = ["closest_names", "did_you_mean", "import_object"]

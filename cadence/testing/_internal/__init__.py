"""mmengine's ``mmengine.testing._internal`` path for :class:`MultiProcessTestCase`."""

from .distributed import MultiProcessTestCase

__all__ = ["MultiProcessTestCase"]

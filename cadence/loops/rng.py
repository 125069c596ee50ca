"""Run a block without disturbing this process's global random streams.

The helper lives in :mod:`cadence.utils.rng` (hooks and checkpoints use it too); this
path keeps working.
"""

from ..utils.rng import preserved_rng

__all__ = ["preserved_rng"]

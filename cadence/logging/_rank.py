"""This process's rank, without importing torch when it is not loaded."""

from __future__ import annotations

import os
import sys


def process_rank() -> int:
    """The global rank: from torch.distributed when initialised, else ``$RANK``, else 0."""
    torch = sys.modules.get("torch")
    if torch is not None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0

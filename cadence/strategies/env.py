"""Process environment: random seeds, determinism flags and multiprocessing settings."""

from __future__ import annotations

import os
import platform
import random
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch


def set_random_seed(
    seed: int | None = None,
    deterministic: bool = False,
    diff_rank_seed: bool = False,
    rank: int = 0,
    sync: Any = None,
) -> int:
    """Seed Python, NumPy and torch (all devices) and return the base seed.

    ``seed=None`` draws one (``sync`` makes every rank agree on it);
    ``diff_rank_seed`` adds the rank so that ranks draw different streams;
    ``deterministic`` turns on torch's deterministic algorithms and cuDNN's
    deterministic mode (benchmark off).
    """
    if seed is None:
        seed = sync() if sync is not None else random.SystemRandom().randrange(2**31)
    if not isinstance(seed, int):
        raise TypeError(f"randomness.seed must be an int or None, got {type(seed).__name__}")
    effective = seed + rank if diff_rank_seed else seed
    random.seed(effective)
    np.random.seed(effective % 2**32)
    torch.manual_seed(effective)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(effective)
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return seed


def apply_env_cfg(env_cfg: Mapping[str, Any] | None) -> None:
    """Apply ``env_cfg``: ``cudnn_benchmark`` and ``mp_cfg`` (start method, OpenCV threads)."""
    env_cfg = dict(env_cfg or {})
    known = {"cudnn_benchmark", "mp_cfg", "dist_cfg", "resource_limit"}
    unknown = sorted(set(env_cfg) - known)
    if unknown:
        warnings.warn(
            f"env_cfg: unknown keys {unknown}; expected some of {sorted(known)}", stacklevel=2
        )
    if env_cfg.get("cudnn_benchmark"):
        torch.backends.cudnn.benchmark = True
    mp_cfg = dict(env_cfg.get("mp_cfg") or {})
    start_method = mp_cfg.get("mp_start_method")
    if start_method and platform.system() != "Windows":
        current = torch.multiprocessing.get_start_method(allow_none=True)
        if current != start_method:
            torch.multiprocessing.set_start_method(start_method, force=True)
    threads = mp_cfg.get("opencv_num_threads")
    if threads is not None:
        try:
            import cv2  # optional

            cv2.setNumThreads(int(threads))
        except ImportError:
            pass

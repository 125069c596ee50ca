"""Facts about the environment, logged at the start of a run."""

from __future__ import annotations

import platform
import subprocess
import sys
from typing import Any

import numpy as np
import torch

from ..version import __version__


def git_hash(directory: str) -> str | None:
    """The short commit hash of the git checkout containing ``directory``, if any."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=directory, capture_output=True, text=True, timeout=2, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def collect_env(directory: str = ".") -> dict[str, Any]:
    """Python, platform, torch, CUDA and cadence versions; git hash of ``directory``."""
    info: dict[str, Any] = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
        "platform": platform.platform(),
        "PyTorch": torch.__version__,
        "NumPy": np.__version__,
        "cadence": __version__,
        "CUDA available": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        info["CUDA"] = torch.version.cuda
        info["GPUs"] = ", ".join(
            torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())
        )
    info["git"] = git_hash(directory)
    return info


def format_env(info: dict[str, Any]) -> str:
    width = max(len(k) for k in info)
    return "\n".join(f"    {k:<{width}}: {v}" for k, v in info.items())

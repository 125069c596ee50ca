"""The environment facts that OpenMMLab tools print at start-up (``collect_env``)."""

from __future__ import annotations

import os
import os.path as osp
import subprocess
import sys
from collections import OrderedDict, defaultdict
from typing import Any

import numpy as np
import torch

from ...version import __version__


def _gcc_version() -> str:
    try:
        out = subprocess.run(["gcc", "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "n/a"
    return out.stdout.splitlines()[0].strip() if out.returncode == 0 and out.stdout else "n/a"


def _cuda_home() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home is None and osp.isdir("/usr/local/cuda"):
        home = "/usr/local/cuda"
    return home


def _optional_version(module: str) -> str | None:
    import importlib.metadata

    for dist in (module, {"cv2": "opencv-python"}.get(module, module)):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def collect_env() -> OrderedDict[str, Any]:
    """An ordered mapping of platform, Python, CUDA, compiler, torch and package versions.

    Keys follow mmengine's (``'sys.platform'``, ``'Python'``, ``'CUDA available'``,
    ``'numpy_random_seed'``, ``'GPU 0,1'``, ``'CUDA_HOME'``, ``'GCC'``,
    ``'PyTorch'``, ``'PyTorch compiling details'``, ``'TorchVision'``...);
    the framework's own version is under ``'cadence'``.
    """
    info: OrderedDict[str, Any] = OrderedDict()
    info["sys.platform"] = sys.platform
    info["Python"] = sys.version.replace("\n", "")
    cuda = torch.cuda.is_available()
    info["CUDA available"] = cuda
    info["numpy_random_seed"] = int(np.random.get_state()[1][0])  # type: ignore[index]
    if cuda:
        by_name: defaultdict[str, list[str]] = defaultdict(list)
        for i in range(torch.cuda.device_count()):
            by_name[torch.cuda.get_device_name(i)].append(str(i))
        for name, ids in by_name.items():
            info["GPU " + ",".join(ids)] = name
        info["CUDA_HOME"] = _cuda_home()
    info["GCC"] = _gcc_version()
    info["PyTorch"] = torch.__version__
    info["PyTorch compiling details"] = torch.__config__.show()
    for label, module in (("TorchVision", "torchvision"), ("OpenCV", "cv2")):
        version = _optional_version(module)
        if version is not None:
            info[label] = version
    info["cadence"] = __version__
    return info

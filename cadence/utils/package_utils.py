"""Installed-package queries and running commands."""

from __future__ import annotations

import importlib.util
import os.path as osp
import subprocess
import sys
from typing import Any


def is_installed(package: str) -> bool:
    """Whether ``package`` is installed: a distribution of that name, or an importable module."""
    import importlib.metadata  # ~50 ms: only when asked

    try:
        importlib.metadata.distribution(package)
        return True
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def get_installed_path(package: str) -> str:
    """The directory ``package`` is installed in (its import location).

    ``package`` may be a distribution name whose top-level module differs
    (``'pyyaml'`` -> ``.../yaml``). Raises ``PackageNotFoundError`` when it is not installed.
    """
    import importlib.metadata

    spec = _find_spec(package)
    if spec is None:
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            raise importlib.metadata.PackageNotFoundError(f"{package} is not installed") from None
        top = (dist.read_text("top_level.txt") or "").split()
        spec = _find_spec(top[0]) if top else None
        if spec is None:
            raise importlib.metadata.PackageNotFoundError(f"cannot locate the files of {package}")
    if spec.submodule_search_locations:
        return str(list(spec.submodule_search_locations)[0])
    return osp.dirname(str(spec.origin))


def _find_spec(name: str) -> Any:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def call_command(cmd: list[str]) -> None:
    """Run ``cmd``; a non-zero exit raises ``subprocess.CalledProcessError``."""
    subprocess.check_call(cmd)


def install_package(package: str) -> None:
    """``pip install package`` with the running interpreter, unless it is already installed."""
    if not is_installed(package):
        call_command([sys.executable, "-m", "pip", "install", package])

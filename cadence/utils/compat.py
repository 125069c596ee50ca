"""Arguments accepted for mmengine compatibility that cadence does not act on yet."""

from __future__ import annotations

import warnings
from typing import Any

STORAGE_KEYS = ("file_client_args", "backend_args")


def warn_unused_storage_args(owner: str, stacklevel: int = 3, **args: Any) -> None:
    """Warn (``UserWarning``) for each of ``args`` that has a non-empty value.

    ``file_client_args``/``backend_args`` choose a remote storage backend in mmengine;
    cadence reads and writes local (or mounted) paths until remote storage lands, so a
    value given there would otherwise be dropped without a word.
    """
    for key, value in args.items():
        if value is None or (hasattr(value, "__len__") and len(value) == 0):
            continue
        warnings.warn(
            f"{owner}: {key} is accepted for mmengine compatibility but not used yet; "
            f"remote storage is not supported, paths are read and written as local files "
            f"(got {key}={value!r})",
            UserWarning,
            stacklevel=stacklevel,
        )

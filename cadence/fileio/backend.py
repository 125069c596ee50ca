"""Where a path lives: a local file, or an object in storage that fsspec can reach.

A *URL* is a path with a scheme (``s3://bucket/run``, ``gs://``, ``memory://``);
anything else is a local (or mounted) path and keeps the plain ``os`` code path.
``backend_args`` (mmengine's name; ``file_client_args`` is its older one) become
fsspec storage options: ``dict(endpoint_url=..., key=..., secret=...)`` for s3fs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: mmengine backends that name local files (fsspec needs no options for them)
_LOCAL_BACKENDS = ("local", "disk", None)


class StorageUnavailable(ValueError):
    """A URL whose storage cannot be reached from here (unknown scheme, missing package)."""


def url_scheme(value: Any) -> str | None:
    """The scheme of ``value`` if it is a URL (``'s3'`` for ``s3://bucket/run``), else None."""
    if not isinstance(value, str):
        return None
    match = _URL.match(value)
    return match.group(1).lower() if match else None


def is_url(value: Any) -> bool:
    """Whether ``value`` is a URL (a remote path), as opposed to a local one."""
    scheme = url_scheme(value)
    return scheme is not None and scheme != "file"


def local_path(value: str) -> str:
    """``value`` without a ``file://`` scheme (local paths are returned unchanged)."""
    return value[len("file://") :] if url_scheme(value) == "file" else value


def storage_options(backend_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """fsspec storage options from mmengine-style ``backend_args``.

    ``backend`` names mmengine's client and is dropped for local/``s3``-like ones;
    ``path_mapping`` is applied by :func:`map_path`; everything else is passed on.
    """
    options = dict(backend_args or {})
    backend = options.pop("backend", None)
    options.pop("path_mapping", None)
    if backend not in _LOCAL_BACKENDS + ("s3", "fsspec", "gcs", "gs", "azure", "http"):
        raise StorageUnavailable(
            f"backend_args: backend={backend!r} is an mmengine client that cadence does not "
            "have; cadence reaches remote storage through fsspec: give a URL "
            "(s3://, gs://, az://) and its fsspec options instead"
        )
    return options


def map_path(path: str, backend_args: Mapping[str, Any] | None) -> str:
    """``path`` with mmengine's ``path_mapping`` (prefix -> replacement) applied."""
    for src, dst in dict((backend_args or {}).get("path_mapping") or {}).items():
        path = path.replace(src, dst)
    return path


def check_url(value: Any, what: str) -> str | None:
    """Why URL ``value`` (given as ``what``) cannot be used here, or None when it can."""
    scheme = url_scheme(value)
    if scheme is None or scheme == "file":
        return None
    try:
        import fsspec
    except ImportError:
        return (
            f"{what}={value!r} is a URL; reading and writing {scheme}:// needs fsspec: "
            "pip install 'cadence[remote]'"
        )
    try:
        fsspec.get_filesystem_class(scheme)
    except ImportError as e:
        return f"{what}={value!r} needs a package for {scheme}:// that is not installed ({e})"
    except ValueError:
        from ..utils import did_you_mean

        hint = did_you_mean(scheme, fsspec.available_protocols()) or (
            " Common ones: s3, gs, az, http(s), hf, memory (fsspec.available_protocols() "
            "lists them all)."
        )
        return f"{what}={value!r}: no storage is known for {scheme}://.{hint}"
    return None


def filesystem(url: str, backend_args: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path inside it."""
    problem = check_url(url, "path")
    if problem is not None:
        raise StorageUnavailable(problem)
    from fsspec.core import url_to_fs

    return url_to_fs(map_path(url, backend_args), **storage_options(backend_args))

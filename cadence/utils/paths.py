"""Paths that cadence reads and writes: local (or mounted) files only, for now."""

from __future__ import annotations

import re
from typing import Any

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def url_scheme(value: Any) -> str | None:
    """The scheme of ``value`` if it is a URL (``'s3'`` for ``s3://bucket/run``), else None."""
    if not isinstance(value, str):
        return None
    match = _URL.match(value)
    return match.group(1) if match else None


def url_refusal(value: Any, what: str) -> str | None:
    """Why ``value`` (given as ``what``) cannot be used as a path, or None when it can."""
    scheme = url_scheme(value)
    if scheme is None:
        return None
    return (
        f"{what}={value!r} is a URL, and cadence does not read or write {scheme}:// yet: "
        f"the run would go to a local folder named '{scheme}:' instead. Give a local path, "
        "or mount the storage (s3fs, gcsfuse, blobfuse) and give the mounted path"
    )


def refuse_url(value: Any, what: str) -> None:
    """Raise ``ValueError`` if ``value`` (given as ``what``) is a URL (see :func:`url_refusal`)."""
    message = url_refusal(value, what)
    if message is not None:
        raise ValueError(message)

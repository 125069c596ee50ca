"""Version comparison and git revision helpers."""

from __future__ import annotations

import os
import re
import subprocess
import warnings

_VERSION = re.compile(
    r"^\s*v?(?:\d+!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|alpha|b|beta|rc|c|pre|preview)[-_.]?(?P<pre_n>\d*))?"
    r"(?:(?:[-_.]?(?:post|rev|r)[-_.]?(?P<post_n>\d*))|-(?P<post_implicit>\d+))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev_n>\d*))?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": -3, "alpha": -3, "b": -2, "beta": -2, "rc": -1, "c": -1, "pre": -1, "preview": -1}


def digit_version(version_str: str, length: int = 4) -> tuple[int, ...]:
    """A tuple of ints that orders versions as PEP 440 does, for ``<``/``>=`` comparisons.

    The release part is padded (or cut) to ``length`` numbers, then two more
    follow: pre-releases get a negative rank (``a`` -3, ``b`` -2, ``rc`` -1) and
    their number, dev releases ``-4, 0``, post-releases ``1`` and their number, and
    final releases ``0, 0``. So ``'1.0rc1' < '1.0' < '1.0.post1'``.
    """
    match = _VERSION.match(version_str)
    if match is None:
        raise ValueError(f"failed to parse version {version_str!r}")
    release = [int(x) for x in match["release"].split(".")][:length]
    release += [0] * (length - len(release))
    if match["pre"]:
        tail = [_PRE_RANK[match["pre"].lower()], int(match["pre_n"] or 0)]
    elif match["dev_n"] is not None and match["post_n"] is None and not match["post_implicit"]:
        tail = [-4, 0]  # as mmengine: every dev release of a version ranks the same
    elif match["post_n"] is not None or match["post_implicit"]:
        tail = [1, int(match["post_n"] or match["post_implicit"] or 0)]
    else:
        tail = [0, 0]
    return tuple(release + tail)


def get_git_hash(fallback: str = "unknown", digits: int | None = None) -> str:
    """The commit hash of the git checkout around the working directory, else ``fallback``.

    ``digits`` keeps only the first characters of the hash.
    """
    if digits is not None and not isinstance(digits, int):
        raise TypeError(f"digits must be None or an int, got {type(digits).__name__}")
    env = {**os.environ, "LANGUAGE": "C", "LANG": "C", "LC_ALL": "C"}
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             env=env, timeout=10, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return fallback
    sha = out.stdout.strip()
    if not sha:
        warnings.warn("git rev-parse printed nothing", stacklevel=2)
        return fallback
    return sha[:digits] if digits is not None else sha

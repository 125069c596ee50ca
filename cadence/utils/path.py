"""Path helpers: existence checks, directory creation, symlinks and file listing."""

from __future__ import annotations

import os
import os.path as osp
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def is_filepath(x: Any) -> bool:
    """Whether ``x`` is a ``str`` or a ``pathlib.Path``."""
    return isinstance(x, str | Path)


def is_abs(path: str) -> bool:
    """Whether ``path`` is absolute: a rooted local path or a URL with a scheme (``s3://...``)."""
    return osp.isabs(path) or "://" in path


def fopen(filepath: str | Path, *args: Any, **kwargs: Any) -> IO[Any]:
    """``open`` for a ``str`` or ``Path``; anything else raises ``ValueError``."""
    if isinstance(filepath, str | Path):
        return open(filepath, *args, **kwargs)  # noqa: SIM115 - the caller closes it
    raise ValueError(f"`filepath` should be a string or a Path, got {type(filepath).__name__}")


def check_file_exist(filename: str | Path, msg_tmpl: str = 'file "{}" does not exist') -> None:
    """Raise ``FileNotFoundError`` (message ``msg_tmpl.format(filename)``) unless it is a file."""
    if not osp.isfile(filename):
        raise FileNotFoundError(msg_tmpl.format(filename))


def mkdir_or_exist(dir_name: str | Path, mode: int = 0o777) -> None:
    """Create ``dir_name`` and its parents (``~`` expanded) if missing; ``''`` does nothing."""
    if dir_name == "":
        return
    os.makedirs(osp.expanduser(dir_name), mode=mode, exist_ok=True)


def symlink(src: str | Path, dst: str | Path, overwrite: bool = True, **kwargs: Any) -> None:
    """Make ``dst`` a symlink to ``src``, replacing an existing ``dst`` when ``overwrite``."""
    if overwrite and osp.lexists(dst):
        os.remove(dst)
    os.symlink(src, dst, **kwargs)


def scandir(
    dir_path: str | Path,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    case_sensitive: bool = True,
) -> Iterator[str]:
    """Yield the files under ``dir_path`` (paths relative to it), optionally by suffix.

    Hidden entries (names starting with ``.``) are skipped; ``recursive`` descends
    into subdirectories; ``case_sensitive=False`` compares suffixes lower-cased.
    """
    if not isinstance(dir_path, str | Path):
        raise TypeError('"dir_path" must be a string or Path object')
    if suffix is not None and not isinstance(suffix, str | tuple):
        raise TypeError('"suffix" must be a string or tuple of strings')
    if suffix is not None and not case_sensitive:
        suffix = suffix.lower() if isinstance(suffix, str) else tuple(s.lower() for s in suffix)
    root = str(dir_path)

    def walk(path: str) -> Iterator[str]:
        for entry in os.scandir(path):
            if entry.name.startswith("."):
                continue
            if entry.is_file():
                rel = osp.relpath(entry.path, root)
                name = rel if case_sensitive else rel.lower()
                if suffix is None or name.endswith(suffix):
                    yield rel
            elif recursive and entry.is_dir():
                yield from walk(entry.path)

    return walk(root)

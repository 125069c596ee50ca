"""mmengine-style file functions that work the same on local paths and on URLs."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from .backend import filesystem, is_url, local_path

BackendArgs = Mapping[str, Any] | None


def exists(path: str, backend_args: BackendArgs = None) -> bool:
    """Whether ``path`` (a file or a folder) exists."""
    if not is_url(path):
        return os.path.exists(local_path(path))
    fs, inner = filesystem(path, backend_args)
    return bool(fs.exists(inner))


def isfile(path: str, backend_args: BackendArgs = None) -> bool:
    """Whether ``path`` is a file."""
    if not is_url(path):
        return os.path.isfile(local_path(path))
    fs, inner = filesystem(path, backend_args)
    return bool(fs.isfile(inner))


def isdir(path: str, backend_args: BackendArgs = None) -> bool:
    """Whether ``path`` is a folder (on object storage: a prefix with objects under it)."""
    if not is_url(path):
        return os.path.isdir(local_path(path))
    fs, inner = filesystem(path, backend_args)
    return bool(fs.isdir(inner))


def join_path(path: str, *parts: str) -> str:
    """``path`` joined with ``parts`` (``/`` on URLs, the OS separator locally)."""
    if is_url(path):
        return "/".join([path.rstrip("/"), *(p.strip("/") for p in parts)])
    return os.path.join(path, *parts)


def get(path: str, backend_args: BackendArgs = None) -> bytes:
    """The bytes of file ``path``."""
    if not is_url(path):
        with open(local_path(path), "rb") as f:
            return f.read()
    fs, inner = filesystem(path, backend_args)
    return bytes(fs.cat_file(inner))


def put(data: bytes, path: str, backend_args: BackendArgs = None) -> None:
    """Write ``data`` to file ``path`` (parent folders are created locally)."""
    if not is_url(path):
        target = local_path(path)
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        return
    fs, inner = filesystem(path, backend_args)
    fs.pipe_file(inner, data)


def get_text(path: str, encoding: str = "utf-8", backend_args: BackendArgs = None) -> str:
    """The text of file ``path``."""
    return get(path, backend_args).decode(encoding)


def put_text(
    text: str, path: str, encoding: str = "utf-8", backend_args: BackendArgs = None
) -> None:
    """Write ``text`` to file ``path``."""
    put(text.encode(encoding), path, backend_args)


def remove(path: str, backend_args: BackendArgs = None) -> None:
    """Delete file ``path``."""
    if not is_url(path):
        os.remove(local_path(path))
        return
    fs, inner = filesystem(path, backend_args)
    fs.rm_file(inner)


def copyfile(src: str, dst: str, backend_args: BackendArgs = None) -> str:
    """Copy file ``src`` to ``dst`` (either may be a URL); return the path written.

    A local ``dst`` that is a folder receives the file under its own name.
    """
    if not is_url(dst) and os.path.isdir(local_path(dst)):
        dst = os.path.join(dst, os.path.basename(src.rstrip("/")))
    if not is_url(dst):
        os.makedirs(os.path.dirname(os.path.abspath(local_path(dst))), exist_ok=True)
    if not is_url(src) and not is_url(dst):
        shutil.copyfile(local_path(src), local_path(dst))
    elif is_url(dst) and not is_url(src):
        fs, inner = filesystem(dst, backend_args)
        fs.put_file(local_path(src), inner)
    elif is_url(src) and not is_url(dst):
        fs, inner = filesystem(src, backend_args)
        fs.get_file(inner, local_path(dst))
    else:
        put(get(src, backend_args), dst, backend_args)
    return dst


def list_dir_or_file(
    dir_path: str,
    list_dir: bool = True,
    list_file: bool = True,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    backend_args: BackendArgs = None,
) -> Iterator[str]:
    """Paths relative to ``dir_path`` of the folders and/or files under it (as mmengine)."""
    if list_dir and suffix is not None:
        raise TypeError("`suffix` should be None when `list_dir` is True")
    if is_url(dir_path):
        fs, root = filesystem(dir_path, backend_args)
        entries = fs.find(root, withdirs=True, detail=True, maxdepth=None if recursive else 1)
        items = [(e["name"], e["type"] == "directory") for e in entries.values()]
        root = root.rstrip("/")
    else:
        root = local_path(dir_path)
        items = []
        for folder, dirs, files in os.walk(root):
            items += [(os.path.join(folder, d), True) for d in dirs]
            items += [(os.path.join(folder, f), False) for f in files]
            if not recursive:
                break
    for name, is_dir in sorted(items):
        relative = os.path.relpath(name, root) if not is_url(dir_path) else name[len(root) + 1 :]
        if not relative or relative == ".":
            continue
        if is_dir and list_dir:
            yield relative
        elif not is_dir and list_file and (suffix is None or relative.endswith(suffix)):
            yield relative


@contextlib.contextmanager
def get_local_path(
    filepath: str | os.PathLike[str], backend_args: BackendArgs = None
) -> Iterator[str]:
    """Context manager: a local path to ``filepath``'s content.

    A local path is given back as it is; a URL is downloaded into a temporary
    folder (the file keeps its name) that is removed on exit.
    """
    path = os.fspath(filepath)
    if not is_url(path):
        yield local_path(path)
        return
    fs, inner = filesystem(path, backend_args)
    with tempfile.TemporaryDirectory(prefix="cadence-fileio-") as folder:
        target = os.path.join(folder, os.path.basename(inner.rstrip("/")) or "file")
        fs.get_file(inner, target)
        yield target


def rmtree(dir_path: str, backend_args: BackendArgs = None) -> None:
    """Delete folder ``dir_path`` and everything under it."""
    if not is_url(dir_path):
        shutil.rmtree(local_path(dir_path))
        return
    fs, inner = filesystem(dir_path, backend_args)
    fs.rm(inner, recursive=True)


def copytree(src: str, dst: str, backend_args: BackendArgs = None) -> str:
    """Copy folder ``src`` to ``dst`` (either may be a URL), which must not exist yet
    (``FileExistsError``); return ``dst``."""
    if exists(dst, backend_args):
        raise FileExistsError(f"copytree: {dst} already exists")
    if not is_url(src) and not is_url(dst):
        shutil.copytree(local_path(src), local_path(dst))
        return dst
    for name in list_dir_or_file(src, list_dir=False, recursive=True, backend_args=backend_args):
        parts = name.split(os.sep) if not is_url(src) else name.split("/")
        copyfile(join_path(src, *parts), join_path(dst, *parts), backend_args)
    return dst

"""mmengine-style file functions that work the same on local paths and on URLs."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from .backend import filesystem, is_url, local_path

BackendArgs = Mapping[str, Any] | None
PathLike = str | os.PathLike[str]
P = TypeVar("P", str, os.PathLike[str])

#: get_file_backend's instances under ``enable_singleton=True``, by prefix and arguments
#: (mmengine's ``fileio.io.backend_instances``; assigning a new dict here resets them)
backend_instances: dict[str, Any] = {}


def _parse_uri_prefix(uri: PathLike) -> str:
    """The scheme of ``uri`` (``'s3'`` for ``s3://b/k`` and ``cluster:s3://b/k``), or ``''``
    for a local path (mmengine's private helper, which its tests and some projects call)."""
    if not isinstance(uri, str | os.PathLike):
        raise _NotAPathError(f"uri should be a str or a path, got {type(uri).__name__}")
    text = os.fspath(uri)
    if "://" not in text:
        return ""
    prefix = text.split("://", 1)[0]
    return prefix.split(":")[-1]  # "clusterName:s3" names the cluster before the scheme


class _NotAPathError(TypeError, AssertionError):
    """Not a str or a path (mmengine asserted, hence both bases)."""


def exists(path: PathLike, backend_args: BackendArgs = None) -> bool:
    """Whether ``path`` (a file or a folder) exists."""
    path = os.fspath(path)
    if not is_url(path):
        return os.path.exists(local_path(path))
    fs, inner = filesystem(path, backend_args)
    return bool(fs.exists(inner))


def isfile(path: PathLike, backend_args: BackendArgs = None) -> bool:
    """Whether ``path`` is a file."""
    path = os.fspath(path)
    if not is_url(path):
        return os.path.isfile(local_path(path))
    fs, inner = filesystem(path, backend_args)
    return bool(fs.isfile(inner))


def isdir(path: PathLike, backend_args: BackendArgs = None) -> bool:
    """Whether ``path`` is a folder (on object storage: a prefix with objects under it)."""
    path = os.fspath(path)
    if not is_url(path):
        return os.path.isdir(local_path(path))
    fs, inner = filesystem(path, backend_args)
    return bool(fs.isdir(inner))


def join_path(path: PathLike, *parts: PathLike) -> str:
    """``path`` joined with ``parts`` (``/`` on URLs, the OS separator locally)."""
    head, rest = os.fspath(path), [os.fspath(p) for p in parts]
    if is_url(head):
        return "/".join([head.rstrip("/"), *(p.strip("/") for p in rest)])
    return os.path.join(head, *rest)


def get(path: PathLike, backend_args: BackendArgs = None) -> bytes:
    """The bytes of file ``path``."""
    path = os.fspath(path)
    if not is_url(path):
        with open(local_path(path), "rb") as f:
            return f.read()
    fs, inner = filesystem(path, backend_args)
    return bytes(fs.cat_file(inner))


def put(data: bytes, path: PathLike, backend_args: BackendArgs = None) -> None:
    """Write ``data`` to file ``path`` (parent folders are created locally)."""
    path = os.fspath(path)
    if not is_url(path):
        target = local_path(path)
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        return
    fs, inner = filesystem(path, backend_args)
    fs.pipe_file(inner, data)


def get_text(path: PathLike, encoding: str = "utf-8", backend_args: BackendArgs = None) -> str:
    """The text of file ``path``."""
    return get(path, backend_args).decode(encoding)


def put_text(
    text: str, path: PathLike, encoding: str = "utf-8", backend_args: BackendArgs = None
) -> None:
    """Write ``text`` to file ``path``."""
    put(text.encode(encoding), path, backend_args)


def remove(path: PathLike, backend_args: BackendArgs = None) -> None:
    """Delete file ``path``."""
    path = os.fspath(path)
    if not is_url(path):
        os.remove(local_path(path))
        return
    fs, inner = filesystem(path, backend_args)
    fs.rm_file(inner)


def copyfile(src: PathLike, dst: P, backend_args: BackendArgs = None) -> P | str:
    """Copy file ``src`` to ``dst`` (either may be a URL); return the path written.

    A local ``dst`` that is a folder receives the file under its own name (the
    result is then that joined path, a str). Copying a file onto itself raises
    ``shutil.SameFileError``, as mmengine does.
    """
    source, target = os.fspath(src), os.fspath(dst)
    result: P | str = dst
    if not is_url(target) and os.path.isdir(local_path(target)):
        target = result = os.path.join(target, os.path.basename(source.rstrip("/")))
    if not is_url(source) and not is_url(target):
        os.makedirs(os.path.dirname(os.path.abspath(local_path(target))), exist_ok=True)
        # shutil.SameFileError for a file onto itself, as mmengine
        shutil.copyfile(local_path(source), local_path(target))
    elif not is_url(source):
        fs, inner = filesystem(target, backend_args)
        fs.put_file(local_path(source), inner)
    elif not is_url(target):
        os.makedirs(os.path.dirname(os.path.abspath(local_path(target))), exist_ok=True)
        fs, inner = filesystem(source, backend_args)
        fs.get_file(inner, local_path(target))
    else:
        if source == target:
            raise shutil.SameFileError(f"{source} and {target} are the same file")
        put(get(source, backend_args), target, backend_args)
    return result


#: mmengine's names for copies between a backend and the local disk: on cadence's
#: functions, which take local paths and URLs on either side, they are copyfile/copytree
copyfile_from_local = copyfile
copyfile_to_local = copyfile


def copy_if_symlink_fails(src: PathLike, dst: PathLike, backend_args: BackendArgs = None) -> bool:
    """Link ``dst`` to ``src`` (a file or a folder); copy it where linking fails.

    Returns True when a symbolic link was made, False when ``src`` was copied (always
    for URLs, which hold no links).
    """
    source, target = os.fspath(src), os.fspath(dst)
    if not is_url(source) and not is_url(target):
        try:
            os.symlink(local_path(source), local_path(target))
            return True
        except Exception:  # noqa: BLE001 - any failure to link (mmengine's rule): copy instead
            pass
    if isfile(source, backend_args):
        copyfile(source, target, backend_args)
    else:
        copytree(source, target, backend_args)
    return False


def list_dir_or_file(
    dir_path: PathLike,
    list_dir: bool = True,
    list_file: bool = True,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    backend_args: BackendArgs = None,
) -> Iterator[str]:
    """Paths relative to ``dir_path`` of the folders and/or files under it (as mmengine).

    The arguments are checked at the call (``TypeError``), the folder is read as the
    result is iterated.
    """
    if list_dir and suffix is not None:
        raise TypeError("`suffix` should be None when `list_dir` is True")
    if suffix is not None and not isinstance(suffix, str | tuple):
        raise TypeError("`suffix` must be a string or tuple of strings")
    return _walk(os.fspath(dir_path), list_dir, list_file, suffix, recursive, backend_args)


def _walk(
    dir_path: str,
    list_dir: bool,
    list_file: bool,
    suffix: str | tuple[str, ...] | None,
    recursive: bool,
    backend_args: BackendArgs,
) -> Iterator[str]:
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


def generate_presigned_url(
    url: str,
    client_method: str = "get_object",
    expires_in: int = 3600,
    backend_args: BackendArgs = None,
) -> str:
    """A URL granting access to object ``url`` for ``expires_in`` seconds (fsspec's
    ``sign``; ``s3://`` supports it). ``client_method`` is what Petrel names the access;
    fsspec signs for reading."""
    del client_method
    if not is_url(url):
        raise NotImplementedError(f"{url} is a local path: only object storage signs URLs")
    fs, inner = filesystem(url, backend_args)
    return str(fs.sign(inner, expiration=expires_in))


def rmtree(dir_path: PathLike, backend_args: BackendArgs = None) -> None:
    """Delete folder ``dir_path`` and everything under it."""
    dir_path = os.fspath(dir_path)
    if not is_url(dir_path):
        shutil.rmtree(local_path(dir_path))
        return
    fs, inner = filesystem(dir_path, backend_args)
    fs.rm(inner, recursive=True)


def copytree(src: PathLike, dst: P, backend_args: BackendArgs = None) -> P:
    """Copy folder ``src`` to ``dst`` (either may be a URL), which must not exist yet
    (``FileExistsError``); return ``dst``."""
    source, target = os.fspath(src), os.fspath(dst)
    if exists(target, backend_args):
        raise FileExistsError(f"copytree: {target} already exists")
    if not is_url(source) and not is_url(target):
        shutil.copytree(local_path(source), local_path(target))
        return dst
    names = list_dir_or_file(source, list_dir=False, recursive=True, backend_args=backend_args)
    for name in names:
        parts = name.split(os.sep) if not is_url(source) else name.split("/")
        copyfile(join_path(source, *parts), join_path(target, *parts), backend_args)
    return dst


copytree_from_local = copytree
copytree_to_local = copytree

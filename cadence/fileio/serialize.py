"""``load``/``dump``: objects from and to json, yaml and pickle files, local or remote,
and the text-file parsers ``list_from_file``/``dict_from_file``."""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from .handlers import file_handlers
from .io import get, get_text, put, put_text

BackendArgs = Mapping[str, Any] | None


def resolve_backend_args(file_client_args: BackendArgs, backend_args: BackendArgs) -> BackendArgs:
    """``backend_args``, or mmengine's deprecated ``file_client_args`` (with a
    ``DeprecationWarning``); giving both is a ``ValueError``."""
    if file_client_args is None:
        return backend_args
    warnings.warn(
        '"file_client_args" will be deprecated in future. Please use "backend_args" instead',
        DeprecationWarning,
        stacklevel=3,
    )
    if backend_args is not None:
        raise ValueError('"file_client_args" and "backend_args" cannot be set at the same time.')
    return file_client_args


def _format_of(file: Any, file_format: str | None) -> str:
    if file_format is None and isinstance(file, str):
        file_format = file.split(".")[-1]
    if file_format not in file_handlers:
        raise TypeError(f"Unsupported format: {file_format}")
    return file_format


def load(
    file: str | os.PathLike[str] | Any,
    file_format: str | None = None,
    file_client_args: BackendArgs = None,
    backend_args: BackendArgs = None,
    **kwargs: Any,
) -> Any:
    """The object stored in ``file`` (a path, a URL such as ``s3://b/x.json``, or a
    readable file object).

    ``file_format`` defaults to the path's suffix (``json``, ``yaml``/``yml``,
    ``pickle``/``pkl`` or one added by :func:`register_handler`); an unknown one is
    a ``TypeError``. ``kwargs`` go to the handler (``json.load``, ``yaml.load``...).
    """
    if isinstance(file, os.PathLike):
        file = os.fspath(file)
    args = resolve_backend_args(file_client_args, backend_args)
    handler = file_handlers[_format_of(file, file_format)]
    if isinstance(file, str):
        if handler.str_like:
            with io.StringIO(get_text(file, backend_args=args)) as text:
                return handler.load_from_fileobj(text, **kwargs)
        with io.BytesIO(get(file, backend_args=args)) as data:
            return handler.load_from_fileobj(data, **kwargs)
    if hasattr(file, "read"):
        return handler.load_from_fileobj(file, **kwargs)
    raise TypeError('"file" must be a filepath str or a file-object')


def dump(
    obj: Any,
    file: str | os.PathLike[str] | Any = None,
    file_format: str | None = None,
    file_client_args: BackendArgs = None,
    backend_args: BackendArgs = None,
    **kwargs: Any,
) -> str | bytes | None:
    """Write ``obj`` to ``file`` (a path, a URL or a writable file object), or return
    it serialised when ``file`` is None (then ``file_format`` is required).

    Returns the ``str`` (``bytes`` for pickle) when ``file`` is None, else None.
    """
    if isinstance(file, os.PathLike):
        file = os.fspath(file)
    if file_format is None and file is None:
        raise ValueError("file_format must be specified since file is None")
    args = resolve_backend_args(file_client_args, backend_args)
    handler = file_handlers[_format_of(file, file_format)]
    if file is None:
        return handler.dump_to_str(obj, **kwargs)
    if isinstance(file, str):
        if handler.str_like:
            with io.StringIO() as text:
                handler.dump_to_fileobj(obj, text, **kwargs)
                put_text(text.getvalue(), file, backend_args=args)
        else:
            with io.BytesIO() as data:
                handler.dump_to_fileobj(obj, data, **kwargs)
                put(data.getvalue(), file, backend_args=args)
        return None
    if hasattr(file, "write"):
        handler.dump_to_fileobj(obj, file, **kwargs)
        return None
    raise TypeError('"file" must be a filename str or a file-object')


def list_from_file(
    filename: str | os.PathLike[str],
    prefix: str = "",
    offset: int = 0,
    max_num: int = 0,
    encoding: str = "utf-8",
    file_client_args: BackendArgs = None,
    backend_args: BackendArgs = None,
) -> list[str]:
    """The lines of a text file, without line endings, each with ``prefix`` in front.

    The first ``offset`` lines are skipped; at most ``max_num`` lines are returned
    when it is positive.
    """
    args = resolve_backend_args(file_client_args, backend_args)
    lines = list(io.StringIO(get_text(os.fspath(filename), encoding, backend_args=args)))
    lines = lines[offset:]
    if max_num > 0:
        lines = lines[:max_num]
    return [prefix + line.rstrip("\n\r") for line in lines]


def dict_from_file(
    filename: str | os.PathLike[str],
    key_type: Callable[[str], Any] = str,
    encoding: str = "utf-8",
    file_client_args: BackendArgs = None,
    backend_args: BackendArgs = None,
) -> dict[Any, Any]:
    """A dict from a text file of whitespace-separated columns: the first column is
    the key (converted by ``key_type``), the rest the value (one string when there
    are two columns, a list of strings when more)."""
    args = resolve_backend_args(file_client_args, backend_args)
    mapping: dict[Any, Any] = {}
    text = get_text(os.fspath(filename), encoding, backend_args=args)
    for number, line in enumerate(io.StringIO(text), 1):
        items = line.rstrip("\n").split()
        if len(items) < 2:
            raise AssertionError(
                f"{filename}:{number}: expected a key and at least one value separated by "
                f"whitespace, got {line.rstrip()!r}"
            )
        mapping[key_type(items[0])] = items[1:] if len(items) > 2 else items[1]
    return mapping

"""File I/O on local paths and on URLs (``s3://``, ``gs://``...) through fsspec."""

from .backend import (
    StorageUnavailable,
    check_url,
    filesystem,
    is_url,
    local_path,
    map_path,
    storage_options,
    url_scheme,
)
from .file_backend import (
    BaseStorageBackend,
    FileBackend,
    FsspecBackend,
    LocalBackend,
    get_file_backend,
)
from .handlers import BaseFileHandler, JsonHandler, PickleHandler, YamlHandler, register_handler
from .io import (
    copyfile,
    copytree,
    exists,
    get,
    get_local_path,
    get_text,
    isdir,
    isfile,
    join_path,
    list_dir_or_file,
    put,
    put_text,
    remove,
    rmtree,
)
from .serialize import dict_from_file, dump, list_from_file, load

__all__ = [
    "BaseFileHandler", "BaseStorageBackend", "FileBackend", "FsspecBackend", "JsonHandler",
    "LocalBackend", "PickleHandler", "StorageUnavailable", "YamlHandler", "check_url", "copyfile",
    "copytree",
    "dict_from_file", "dump", "exists", "filesystem", "get", "get_file_backend",
    "get_local_path", "get_text", "is_url", "isdir", "isfile", "join_path",
    "list_dir_or_file", "list_from_file", "load", "local_path", "map_path", "put", "put_text",
    "register_handler", "remove", "rmtree", "storage_options", "url_scheme",
]  # fmt: skip

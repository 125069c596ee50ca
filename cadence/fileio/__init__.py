"""File I/O on local paths and on URLs (``s3://``, ``gs://``...) through fsspec."""

from . import backends  # mmengine's fileio.backends namespace (fileio.backends.LocalBackend)
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
from .backend_registry import get_file_backend, register_backend
from .client_backends import HTTPBackend, LmdbBackend, MemcachedBackend
from .file_backend import BaseStorageBackend, FileBackend, FsspecBackend, LocalBackend
from .file_client import FileClient, HardDiskBackend
from .handlers import BaseFileHandler, JsonHandler, PickleHandler, YamlHandler, register_handler
from .io import (
    copy_if_symlink_fails,
    copyfile,
    copyfile_from_local,
    copyfile_to_local,
    copytree,
    copytree_from_local,
    copytree_to_local,
    exists,
    generate_presigned_url,
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
from .petrel_backend import PetrelBackend
from .serialize import dict_from_file, dump, list_from_file, load

__all__ = [
    "BaseFileHandler", "BaseStorageBackend", "FileBackend", "FileClient", "FsspecBackend",
    "HTTPBackend", "HardDiskBackend", "JsonHandler", "LmdbBackend", "LocalBackend",
    "MemcachedBackend", "PetrelBackend", "PickleHandler", "StorageUnavailable", "YamlHandler",
    "backends", "check_url", "copy_if_symlink_fails", "copyfile", "copyfile_from_local",
    "copyfile_to_local", "copytree", "copytree_from_local", "copytree_to_local",
    "generate_presigned_url", "register_backend",
    "dict_from_file", "dump", "exists", "filesystem", "get", "get_file_backend",
    "get_local_path", "get_text", "is_url", "isdir", "isfile", "join_path",
    "list_dir_or_file", "list_from_file", "load", "local_path", "map_path", "put", "put_text",
    "register_handler", "remove", "rmtree", "storage_options", "url_scheme",
]  # fmt: skip

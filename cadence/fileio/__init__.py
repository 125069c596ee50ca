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
from .io import (
    copyfile,
    exists,
    get,
    get_text,
    isdir,
    isfile,
    join_path,
    list_dir_or_file,
    put,
    put_text,
    remove,
)

__all__ = [
    "StorageUnavailable", "check_url", "copyfile", "exists", "filesystem", "get", "get_text",
    "is_url", "isdir", "isfile", "join_path", "list_dir_or_file", "local_path", "map_path",
    "put", "put_text", "remove", "storage_options", "url_scheme",
]  # fmt: skip

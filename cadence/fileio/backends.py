"""mmengine's ``fileio.backends`` namespace: the backend classes and their tables."""

from .backend_registry import backends, prefix_to_backends, register_backend
from .client_backends import HTTPBackend, LmdbBackend, MemcachedBackend
from .file_backend import BaseStorageBackend, FileBackend, FsspecBackend, LocalBackend
from .petrel_backend import PetrelBackend

__all__ = [
    "BaseStorageBackend", "FileBackend", "FsspecBackend", "HTTPBackend", "LmdbBackend",
    "LocalBackend", "MemcachedBackend", "PetrelBackend", "backends", "prefix_to_backends",
    "register_backend",
]  # fmt: skip

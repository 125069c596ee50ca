"""Reading ``torch.distributed.checkpoint`` (DCP) folders without running code from them.

DCP reads its ``.metadata`` file with plain :mod:`pickle` and the non-tensor
entries of its shard files with ``torch.load(weights_only=False)``: a crafted
file would run code on load. :class:`SafeFileSystemReader` unpickles the
metadata with an allow-list of the metadata classes DCP writes, and
:class:`SafeLoadPlanner` reads the non-tensor entries with
``torch.load(weights_only=True)``; anything else raises
:class:`~cadence.checkpoint.CheckpointError` before it is called.
The files are also checksummed by the checkpoint's manifest before any of this runs.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import pickle
from collections.abc import Iterator
from typing import Any

import torch
from torch.distributed.checkpoint import DefaultLoadPlanner, FileSystemReader, FileSystemWriter
from torch.distributed.checkpoint.filesystem import FileSystem
from torch.distributed.checkpoint.metadata import Metadata, StorageMeta
from torch.distributed.checkpoint.planner import ReadItem

from .digest import HashingWriter
from .files import CheckpointError
from .unpickling import refusal

_METADATA_CLASSES = {
    "torch.distributed.checkpoint.metadata": {
        "Metadata", "TensorStorageMetadata", "BytesStorageMetadata", "ChunkStorageMetadata",
        "TensorProperties", "_MEM_FORMAT_ENCODING", "StorageMeta", "MetadataIndex",
    },
    "torch.distributed.checkpoint.filesystem": {"_StorageInfo"},
    "torch.serialization": {"_get_layout"},
    "torch": {"Size"},
    "pathlib": {"Path", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath"},
}  # fmt: skip


class MetadataUnpickler(pickle.Unpickler):
    """Unpickles DCP metadata; refuses every class and function not on the allow-list."""

    def __init__(self, file: Any, source: str) -> None:
        super().__init__(file)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        if name in _METADATA_CLASSES.get(module, ()):
            return super().find_class(module, name)
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        raise CheckpointError(
            f"{self.source} was refused: it asks to load '{module}.{name}', which is not "
            "part of DCP checkpoint metadata (nothing in it was executed)"
        )


def load_metadata(stream: Any, source: str) -> Metadata:
    """Read DCP metadata from ``stream`` through :class:`MetadataUnpickler`."""
    try:
        metadata = MetadataUnpickler(stream, source).load()
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError) as e:
        raise CheckpointError(f"{source} cannot be read as DCP metadata: {e}") from e
    if not isinstance(metadata, Metadata):
        raise CheckpointError(f"{source} holds a {type(metadata).__name__}, not DCP metadata")
    return metadata


class _HashingFileSystem(FileSystem):
    """DCP's local file system, hashing every file it writes while it is written;
    ``digests``: ``{path: {"size", "digest"}}`` by final path (after DCP's renames)."""

    def __init__(self) -> None:
        super().__init__()
        self.digests: dict[str, dict[str, Any]] = {}

    @contextlib.contextmanager
    def create_stream(self, path: str | os.PathLike[str], mode: str) -> Iterator[Any]:
        if mode != "wb":
            with super().create_stream(path, mode) as stream:
                yield stream
            return
        with open(path, "wb", buffering=0) as raw:
            writer = HashingWriter(raw, os.fspath(path))
            try:
                yield writer
            except BaseException:
                writer.abort()
                raise
            self.digests[os.fspath(path)] = {"size": writer.tell(), "digest": writer.hexdigest()}

    def rename(self, path: str | os.PathLike[str], new_path: str | os.PathLike[str]) -> None:
        super().rename(path, new_path)
        if os.fspath(path) in self.digests:
            self.digests[os.fspath(new_path)] = self.digests.pop(os.fspath(path))


class HashingFileSystemWriter(FileSystemWriter):
    """DCP's ``FileSystemWriter`` whose files are hashed as they are written
    (:attr:`digests`, by path), so a save needs no second pass over the shards."""

    def __init__(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.fs = _HashingFileSystem()

    @property
    def digests(self) -> dict[str, dict[str, Any]]:
        """``{path: {"size": bytes, "digest": hex}}`` of the files this process wrote."""
        assert isinstance(self.fs, _HashingFileSystem)
        return self.fs.digests


class SafeFileSystemReader(FileSystemReader):
    """A DCP :class:`FileSystemReader` whose metadata is read by :func:`load_metadata`."""

    #: The refusal raised here, kept because DCP rewraps it as an AssertionError.
    refused: CheckpointError | None = None

    def read_metadata(self, *args: Any, **kwargs: Any) -> Metadata:
        path = self._get_metadata_path(kwargs.get("rank"))
        with self.fs.create_stream(path, "rb") as stream:
            try:
                metadata = load_metadata(stream, str(path))
            except CheckpointError as e:
                self.refused = e
                raise
        if getattr(metadata, "storage_meta", None) is None:
            metadata.storage_meta = StorageMeta()
        assert metadata.storage_meta is not None
        metadata.storage_meta.load_id = self.load_id
        return metadata


class _SafeBytes(DefaultLoadPlanner):
    """Reads DCP's non-tensor entries ``weights_only`` (DCP would unpickle them freely)."""

    def load_bytes(self, read_item: ReadItem, value: io.BytesIO) -> None:
        from torch.distributed.checkpoint._traverse import set_element

        try:
            obj = torch.load(value, weights_only=True)
        except pickle.UnpicklingError as e:
            entry = f"DCP entry '{read_item.dest_index.fqn}'"
            raise CheckpointError(refusal(entry, e)) from None
        fqn = read_item.dest_index.fqn
        if self.flatten_state_dict:
            set_element(self.original_state_dict, self.mappings[fqn], obj)
        else:
            self.state_dict[fqn] = obj


class SafeLoadPlanner(_SafeBytes):
    """DCP's default load planner, with non-tensor entries read ``weights_only``."""


def consolidated_model(folder: str | pathlib.Path) -> dict[str, torch.Tensor]:
    """The full model weights of a DCP folder written by FSDPStrategy, read in this one
    process (no process group) through the safe reader: for publishing on one machine."""
    from torch.distributed.checkpoint.default_planner import _EmptyStateDictLoadPlanner
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict

    class Planner(_SafeBytes, _EmptyStateDictLoadPlanner):
        pass

    state: dict[str, Any] = {}
    _load_state_dict(
        state, storage_reader=SafeFileSystemReader(folder), planner=Planner(keys=["model"]),
        no_dist=True,
    )  # fmt: skip
    return dict(state["model"])


def safe_dcp_load(state: dict[str, Any], folder: str | pathlib.Path) -> None:
    """``dcp.load(state, checkpoint_id=folder)`` through the safe reader and planner.

    A refusal on any rank is raised on every rank as :class:`CheckpointError`
    (DCP gathers the ranks' errors into one ``CheckpointException``).
    """
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.api import CheckpointException

    reader = SafeFileSystemReader(folder)
    try:
        dcp.load(state, storage_reader=reader, planner=SafeLoadPlanner())
    except CheckpointException as e:
        gathered = [f[0] for f in e.failures.values() if isinstance(f[0], CheckpointError)]
        refused = reader.refused or (gathered[0] if gathered else None)
        if refused is not None:
            raise CheckpointError(str(refused)) from e
        raise

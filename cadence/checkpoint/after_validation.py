"""Writing and reading the after-validation files of a manager's checkpoints
(:mod:`.after_val` says what they are)."""

from __future__ import annotations

import copy
import functools
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .after_val import BINDING_KEY, after_val_path
from .files import (
    CheckpointError,
    atomic_torch_save,
    checkpoint_digest,
    manifest_path,
    read_manifest,
    safe_torch_load,
)
from .removal import remove_after_val

if TYPE_CHECKING:
    import logging

    from .remote import RemoteStorage
    from .steps import CheckpointSteps
    from .writer import AsyncCheckpointWriter


class Manager(Protocol):
    """What :class:`AfterValidation` uses of its :class:`~.manager.CheckpointManager`."""

    steps: CheckpointSteps
    storage: RemoteStorage | None
    logger: logging.Logger

    def collect_after_val(self) -> dict[str, Any]: ...

    def background_writer(self) -> AsyncCheckpointWriter: ...

    def upload(self, path: str, source: str) -> None: ...

    def fetch(self, path: str) -> None: ...

    def agree(self, ok: bool) -> bool: ...


@dataclass
class _Awaiting:
    """A checkpoint saved just before a validation, whose after-validation file is due
    once the validation has finished."""

    path: str
    durable: bool
    background: bool


class AfterValidation:
    """The after-validation files of one :class:`~.manager.CheckpointManager`'s
    checkpoints: which are due, writing them once the validation has finished, dropping
    one whose checkpoint is written anew, and reading one on resume."""

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._awaiting: list[_Awaiting] = []  # saved before the validation now under way
        self._digests: dict[str, str] = {}  # their files' digests, once written (rank 0)

    # ------------------------------------------------------------ saving
    def expect(self, path: str, durable: bool, *, background: bool) -> None:
        """Checkpoint ``path`` precedes a validation: its file is due after it."""
        self._awaiting.append(_Awaiting(path, durable, background))

    def written(self, path: str, digest: str) -> None:
        """Checkpoint ``path`` is written, with this digest (its manifest's; rank 0)."""
        self._digests[path] = digest

    def await_resumed(self, path: str) -> None:
        """``path`` was resumed from before the validation that followed it had run: its
        file is due once the resumed run has run it (without a manifest, none is written)."""
        manager = self._manager
        storage = manager.storage
        durable = storage is None or storage.remote(path) is None
        if manager.steps.rank == 0:
            try:
                digest = checkpoint_digest(read_manifest(path))
            except CheckpointError:
                digest = None
            if digest is not None:
                self._digests[path] = digest
        self.expect(path, durable, background=False)

    def write_due(self) -> None:
        """The validation has finished (its ``after_val`` hooks have run): write the due
        files with the state of every ``after_val`` part now. Every rank calls this (parts
        may gather); rank 0 writes, in the background when the checkpoint was saved so."""
        manager = self._manager
        awaiting, self._awaiting = self._awaiting, []
        for entry in awaiting:
            state = manager.collect_after_val()
            if manager.steps.rank != 0:
                continue
            if entry.background:  # the checkpoint may still be written: queued behind it
                job = functools.partial(self._write, entry, copy.deepcopy(state))
                manager.background_writer().submit(job, after_val_path(entry.path), queue=True)
            else:
                self._write(entry, state)

    def _write(self, entry: _Awaiting, state: dict[str, Any]) -> None:
        """Write the file of ``entry``'s checkpoint, bound to its file's digest, with its
        manifest (and upload both). A failure costs only the validation a resume then
        runs again: it is logged, not raised."""
        manager = self._manager
        path, after = entry.path, after_val_path(entry.path)
        digest = self._digests.pop(path, None)
        if digest is None:  # the checkpoint was not written
            return
        state["meta"] = {BINDING_KEY: {"file": os.path.basename(path), "digest": digest}}
        upload = None if entry.durable else functools.partial(manager.upload, after)
        try:
            atomic_torch_save(state, after, durable=entry.durable, upload=upload)
            if manager.storage is not None:
                manager.storage.push_file(manifest_path(after))
        except Exception as e:  # noqa: BLE001 - the checkpoint itself is whole
            manager.logger.warning(
                f"Could not write {after} ({e!r}); a resume from {path} validates again"
            )

    def drop(self, path: str) -> None:
        """Delete the file of ``path`` before ``path`` is written anew (it belongs to the
        file about to be replaced; rank 0)."""
        after = after_val_path(path)
        if not (os.path.exists(after) or os.path.exists(manifest_path(after))):
            return  # (the staged folder of a remote one holds its manifest)
        remove_after_val(path)
        storage = self._manager.storage
        if storage is not None:
            storage.withdraw_after_val(path)

    # ----------------------------------------------------------- reading
    def read(
        self, path: str, info: Mapping[str, Any] | None, map_location: Any
    ) -> dict[str, Any] | None:
        """The states of the file of ``path`` (described by manifest ``info``), or None:
        absent (the validation had not finished), or unusable (with a warning). Every rank
        calls this, and the ranks agree: all use it or none does."""
        manager = self._manager
        after = after_val_path(path)
        state, problem = None, None
        try:
            manager.fetch(after)
        except Exception:  # noqa: BLE001 - verifying says what is wrong, on every rank
            pass
        try:
            found = manager.steps.verify_checkpoint(after)  # every rank raises if one does
            state = _bound_state(after, found, info, map_location)
        except FileNotFoundError:
            pass  # none: the validation had not finished
        except Exception as e:  # noqa: BLE001 - never more than a validation run again
            problem = str(e) if isinstance(e, CheckpointError) else f"{type(e).__name__}: {e}"
        if manager.agree(state is not None):
            return state
        if problem is not None:
            warnings.warn(
                f"Not using {after}: {problem}. The validation that followed "
                f"{os.path.basename(path)} runs again",
                stacklevel=6,
            )
        return None


def _bound_state(
    after: str, found: Mapping[str, Any] | None, info: Mapping[str, Any] | None, map_location: Any
) -> dict[str, Any]:
    """The states in after-validation file ``after`` (verified: manifest ``found``), read
    weights-only, if it belongs to the checkpoint file that manifest ``info`` describes;
    otherwise :class:`CheckpointError` saying why."""
    if found is None:
        raise CheckpointError(f"'{after}' has no manifest, so it cannot be verified")
    expected = checkpoint_digest(info)
    if expected is None:
        raise CheckpointError("its checkpoint has no manifest to tie it to")
    state = safe_torch_load(after, map_location)
    meta = state.pop("meta", None) if isinstance(state, dict) else None
    binding = meta.get(BINDING_KEY) if isinstance(meta, Mapping) else None
    # files written before manifests named their algorithm bound the SHA-256 as "sha256"
    bound = binding.get("digest", binding.get("sha256")) if isinstance(binding, Mapping) else None
    if bound != expected:
        raise CheckpointError(
            "it belongs to another file of that name (not the checkpoint there now)"
        )
    return state

"""CheckpointManager: one template for saving, loading and resuming a run.

A checkpoint is the strategy's state (model, optimizer, schedulers: see
:class:`~cadence.checkpoint.steps.CheckpointSteps`) plus ``meta`` plus every
registered *part*: anything with ``state_dict()``/``load_state_dict()`` (the
message hub, the hooks, the training loop, the RNG streams...). A save writes
crash-safely (docs/checkpoints.md, "the order of a save"); a load verifies every
file before reading it and restores the strategy first, then the parts in the
order they were registered. A checkpoint taken just before a validation (``before_val``)
gets, once that validation has finished, an after-validation file with the states the
validation changed (:mod:`.after_val`); a resume from it takes those states.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..fileio import is_url
from .after_val import BINDING_KEY, after_val_path
from .companions import discard_staging, staging_path
from .files import (
    BeforeLoad,
    CheckpointError,
    atomic_torch_save,
    manifest_path,
    read_checkpoint,
    read_manifest,
    remove_after_val,
    remove_checkpoint,
    safe_torch_load,
    warn_unverified,
)
from .pointer import (
    LAST_CHECKPOINT,
    checkpoint_candidates,
    find_latest_checkpoint,
    held_checkpoints,
    pointer_target,
    unverified_checkpoints,
    write_last_checkpoint,
)
from .remote import RemoteStorage
from .snapshot import Snapshot
from .steps import CheckpointSteps
from .writer import AsyncCheckpointWriter

DEFAULT_REVISE_KEYS: tuple[tuple[str, str], ...] = ((r"^module\.", ""),)


class Stateful(Protocol):
    """Anything a checkpoint can hold."""

    def state_dict(self) -> Any: ...

    def load_state_dict(self, state: Any) -> Any: ...


@dataclass
class _Part:
    part: Stateful
    per_rank: bool
    shared: bool
    after_val: bool  # a validation may change it: kept in the after-validation file too
    in_checkpoint: bool  # False: kept in the after-validation file only


@dataclass
class _Awaiting:
    """A checkpoint saved just before a validation, whose after-validation file is due
    once the validation has finished."""

    path: str
    durable: bool
    async_: bool


class CheckpointManager:
    """Saves and restores a run through its strategy's :class:`CheckpointSteps`.

    Args:
        steps: the strategy.
        work_dir: where the ``last_checkpoint`` pointer lives.
        logger: where background-write errors and skipped checkpoints are reported.
        storage: the run's remote folders (:mod:`~cadence.checkpoint.remote`), if any:
            every save is uploaded after it is written, every load downloads first.
    """

    def __init__(
        self,
        steps: CheckpointSteps,
        work_dir: str,
        logger: logging.Logger | None = None,
        storage: RemoteStorage | None = None,
    ) -> None:
        self.steps = steps
        self.work_dir = work_dir
        self.storage = storage
        self.logger = logger or logging.getLogger("cadence")
        self.parts: dict[str, _Part] = {}
        self._writer: AsyncCheckpointWriter | None = None
        self._snapshot: Snapshot | None = None
        self._awaiting: list[_Awaiting] = []  # saved before the validation now under way
        self._digests: dict[str, str] = {}  # their files' SHA-256, once written (rank 0)

    def register(
        self,
        name: str,
        part: Stateful,
        *,
        per_rank: bool = False,
        shared: bool = True,
        after_val: bool = False,
        in_checkpoint: bool = True,
    ) -> None:
        """Save ``part`` under ``name`` and restore it on resume (replacing an earlier one).

        ``per_rank``: with several processes every rank's state is also gathered
        under ``<name>_ranks`` and each rank restores its own; a rank the saved run did
        not have restores the shared state, or with ``shared=False`` (only the per-rank
        list is kept) rank 0's. ``after_val``: a validation may change it, so its state
        after the validation that follows a checkpoint is kept beside that checkpoint
        (:mod:`.after_val`); ``in_checkpoint=False``: kept only there (for state the
        strategy's part of the checkpoint holds already, such as the schedulers).
        """
        self.parts[name] = _Part(part, per_rank, shared, after_val, in_checkpoint)

    # ---------------------------------------------------------------- save
    def collect(self, meta: Mapping[str, Any]) -> dict[str, Any]:
        """``meta`` and every part's state (a collective where parts gather)."""
        return self._collect(meta, lambda entry: entry.in_checkpoint)

    def _collect(self, meta: Mapping[str, Any], wanted: Callable[[_Part], bool]) -> dict[str, Any]:
        from ..dist import all_gather_object

        state: dict[str, Any] = {"meta": dict(meta)}
        several = self.steps.world_size > 1
        # by name, not by registration: the ranks' gathers must pair up even where the
        # ranks registered the parts in different orders (rank 0 may need the manager first)
        for name, entry in sorted(self.parts.items()):
            if not wanted(entry) or (not entry.shared and not several):
                continue
            value = entry.part.state_dict()
            if entry.shared:
                state[name] = value
            if entry.per_rank and several:
                state[f"{name}_ranks"] = all_gather_object(value)
        return state

    def save(
        self,
        path: str,
        *,
        meta: Mapping[str, Any],
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        update_last: bool = True,
        delete_after: Sequence[str] = (),
        async_: bool = False,
        before_save: BeforeLoad | None = None,
        pointers: Sequence[str] = (),
        before_val: bool = False,
    ) -> str:
        """Write the run to ``path``; then (rank 0) move the pointer (and the ``pointers``
        named, e.g. ``best_checkpoint``), then delete ``delete_after``. With ``async_``
        (where the strategy supports it) the state is copied now and written on a
        background thread. ``before_val``: a validation follows this checkpoint, and
        :meth:`after_validation` writes its after-validation file once it has finished.
        Every rank calls this."""
        self.wait()
        extra = self.collect(meta)
        if before_save is not None:
            before_save(extra)
        steps = self.steps
        options = dict(save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler)
        stale = [p for p in delete_after if os.path.abspath(p) != os.path.abspath(path)]

        storage = self.storage
        # a staged copy needs no fsync: the upload is the durable copy, and the staged
        # index is rebuilt from the remote one before any resume
        durable = storage is None or storage.remote(path) is None

        # the file is uploaded while it is hashed; the manifest after it and every companion
        upload = None if durable else functools.partial(self._upload, path)

        def written(info: Mapping[str, Any]) -> None:
            if before_val:  # what its after-validation file will be bound to
                self._digests[path] = str(info["sha256"])

        def finish() -> None:
            if storage is not None:
                storage.push_file(manifest_path(path))
            names = ([LAST_CHECKPOINT] if update_last else []) + list(pointers)
            for name in names:
                outside = storage.remote(path) if storage is not None else None
                write_last_checkpoint(self.work_dir, path, name, outside=outside)
                if storage is not None:
                    storage.push_pointer(self.work_dir, name)
            for old in stale:
                remove_checkpoint(old)
                if storage is not None:
                    storage.delete_checkpoint(old)

        awaiting = _Awaiting(path, durable, async_ and steps.supports_async_save)
        if awaiting.async_:
            if steps.rank == 0:
                state = self._snapshots().take({**steps.checkpoint_state(**options), **extra})

                def job() -> None:
                    self._drop_after_val(path)
                    if storage is not None:
                        storage.withdraw_manifest(path)
                    written(atomic_torch_save(state, path, durable=durable, upload=upload))
                    finish()

                self._writers().submit(job, path)
            if before_val:
                self._awaiting.append(awaiting)
            return path
        if async_:
            import warnings

            warnings.warn(
                f"{type(steps).__name__} saves checkpoints synchronously (its engine writes "
                "collectively); async_=True is ignored",
                stacklevel=3,
            )
        state = {**steps.checkpoint_state(**options), **extra}
        # companions are written aside and swapped in with the file (.companions)
        staged = staging_path(path)
        if steps.rank == 0:
            discard_staging(path)  # what an interrupted save of this name left
            self._drop_after_val(path)
            if storage is not None:
                storage.withdraw_manifest(path)  # its files are about to be replaced
        steps.barrier()
        steps.save_companion(staged, save_optimizer=save_optimizer)
        files = steps.companion_digests(staged)
        if storage is not None:  # each process uploads a share of its machine's files
            from ..dist import get_local_rank, get_local_size

            storage.push_companions(path, get_local_rank(), get_local_size(), source=staged)
            if not durable:
                steps.barrier()  # every share is uploaded before they are moved into place
        if steps.rank == 0:
            written(atomic_torch_save(state, path, files=files, durable=durable, upload=upload,
                                      staged=True))  # fmt: skip
        steps.barrier()
        if steps.rank == 0:
            finish()
        if before_val:
            self._awaiting.append(awaiting)
        return path

    def _drop_after_val(self, path: str) -> None:
        """Delete the after-validation file of ``path`` before ``path`` is written anew (it
        belongs to the file about to be replaced; rank 0)."""
        after = after_val_path(path)
        if not (os.path.exists(after) or os.path.exists(manifest_path(after))):
            return  # (the staged folder of a remote one holds its manifest)
        remove_after_val(path)
        if self.storage is not None:
            self.storage.withdraw_after_val(path)

    # ------------------------------------------------------ after validation
    def await_validation(self, path: str) -> None:
        """``path`` was resumed from before the validation that followed it had run: once the
        resumed run has run it, :meth:`after_validation` writes its after-validation file,
        as after the save (every rank calls this; without a manifest, nothing is written)."""
        storage = self.storage
        durable = storage is None or storage.remote(path) is None
        if self.steps.rank == 0:
            try:
                sha256 = (read_manifest(path) or {}).get("sha256")
            except CheckpointError:
                sha256 = None
            if sha256 is not None:
                self._digests[path] = str(sha256)
        self._awaiting.append(_Awaiting(path, durable, async_=False))

    def after_validation(self) -> None:
        """The validation that followed the checkpoints saved with ``before_val`` has
        finished (its ``after_val`` hooks have run): write their after-validation files,
        with the state of every ``after_val`` part now (:mod:`.after_val`). Every rank
        calls this (parts may gather); rank 0 writes, in the background when the
        checkpoint was saved so."""
        awaiting, self._awaiting = self._awaiting, []
        for entry in awaiting:
            state = self._collect({}, lambda part: part.after_val)
            if self.steps.rank != 0:
                continue
            if entry.async_:  # the checkpoint may still be written: queued behind it
                job = functools.partial(self._write_after_val, entry, copy.deepcopy(state))
                self._writers().submit(job, after_val_path(entry.path), queue=True)
            else:
                self._write_after_val(entry, state)

    def _write_after_val(self, entry: _Awaiting, state: dict[str, Any]) -> None:
        """Write the after-validation file of ``entry``'s checkpoint, bound to its file's
        SHA-256, with its manifest (and upload both). A failure costs only the validation
        a resume then runs again: it is logged, not raised."""
        path, after = entry.path, after_val_path(entry.path)
        sha256 = self._digests.pop(path, None)
        if sha256 is None:  # the checkpoint was not written
            return
        state["meta"] = {BINDING_KEY: {"file": os.path.basename(path), "sha256": sha256}}
        upload = None if entry.durable else functools.partial(self._upload, after)
        try:
            atomic_torch_save(state, after, durable=entry.durable, upload=upload)
            if self.storage is not None:
                self.storage.push_file(manifest_path(after))
        except Exception as e:  # noqa: BLE001 - the checkpoint itself is whole
            self.logger.warning(
                f"Could not write {after} ({e!r}); a resume from {path} validates again"
            )

    def _upload(self, path: str, source: str) -> None:
        assert self.storage is not None
        self.storage.push_file(path, source)

    def _pull_index(self) -> bool:
        """Make the staged index (pointers, manifests) of remote checkpoint folders equal
        the remote one; return whether there is one."""
        storage = self.storage
        assert storage is not None
        partial = storage.pull_index(self.work_dir)
        try:
            target = pointer_target(self.work_dir)
        except CheckpointError:
            target = None
        remote = storage.remote(self.work_dir) is not None
        if is_url(target):  # the pointer names a checkpoint in a remote out_dir
            assert target is not None
            local = storage.local(target)
            partial += storage.pull_index(os.path.dirname(local))
            remote = True
        for url in partial:
            self.logger.warning(
                f"Ignoring {url}: it has no manifest (an upload cut short), so it cannot be "
                "verified"
            )
        return remote

    def _fetch(self, path: str) -> None:
        """Download a staged remote checkpoint (what the local copy lacks) before reading
        (each process; the processes of one machine share the staged copy)."""
        if self.storage is not None:
            self.storage.fetch(path)

    def wait(self) -> None:
        """Wait for a background write (and upload) to finish; raise its error, if any.
        Then (rank 0) upload the work dir's other files that changed: logs, config, scalars."""
        try:
            if self._writer is not None:
                self._writer.wait()
        finally:
            if self.storage is not None and self.steps.rank == 0:
                self.storage.push_tree(self.work_dir)

    def _writers(self) -> AsyncCheckpointWriter:
        if self._writer is None:
            self._writer = AsyncCheckpointWriter(self.logger)
        return self._writer

    def _snapshots(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = Snapshot()
        return self._snapshot

    # ---------------------------------------------------------------- load
    def load_weights(
        self,
        path: str,
        *,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = DEFAULT_REVISE_KEYS,
        before_load: BeforeLoad | None = None,
    ) -> dict[str, Any]:
        """Load the model weights of ``path`` (verified first); return the checkpoint."""
        checkpoint = self._read(path, map_location, before_load)
        self.steps.load_weights(checkpoint, strict=strict, revise_keys=revise_keys)
        return checkpoint

    def resume(
        self,
        path: str,
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: Any = "cpu",
        before_load: BeforeLoad | None = None,
    ) -> dict[str, Any]:
        """Restore the strategy's state and every part from ``path``; return the checkpoint."""
        checkpoint = self._read(path, map_location, before_load, after_val=True)
        self.steps.restore(
            path, checkpoint, resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler,
        )  # fmt: skip
        rank = self.steps.rank
        everything = resume_optimizer and resume_param_scheduler
        for name, entry in self.parts.items():
            if not entry.in_checkpoint and not everything:
                continue  # the optimizer's or schedulers' state after validation: not asked
            ranks = checkpoint.get(f"{name}_ranks") if entry.per_rank else None
            if ranks and rank < len(ranks):
                entry.part.load_state_dict(ranks[rank])
            elif entry.shared and name in checkpoint:
                entry.part.load_state_dict(checkpoint[name])
            elif ranks:  # a rank the saved run did not have
                entry.part.load_state_dict(ranks[0])
        return checkpoint

    def _read(
        self, path: str, map_location: Any, before_load: BeforeLoad | None, after_val: bool = False
    ) -> dict:
        """Fetch (remote), verify (the ranks share the hashing) and read ``path``; with
        ``after_val``, the states of its after-validation file replace the checkpoint's
        (before ``before_load`` sees it)."""
        self._fetch(path)
        info = self.steps.verify_checkpoint(path)
        if info is None:
            warn_unverified(path, stacklevel=4)
        checkpoint = read_checkpoint(path, map_location, verify=False)
        if after_val:
            checkpoint.update(self._after_val_state(path, info, map_location) or {})
        if before_load is not None:
            before_load(checkpoint)
        return checkpoint

    def _after_val_state(
        self, path: str, info: Mapping[str, Any] | None, map_location: Any
    ) -> dict[str, Any] | None:
        """The states of the after-validation file of ``path`` (described by manifest
        ``info``), or None: absent (the validation had not finished), or unusable (with a
        warning). Every rank calls this, and the ranks agree: all use it or none does."""
        after = after_val_path(path)
        state, problem = None, None
        try:
            self._fetch(after)
        except Exception:  # noqa: BLE001 - verifying says what is wrong, on every rank
            pass
        try:
            found = self.steps.verify_checkpoint(after)  # every rank raises if one does
            state = _bound_state(after, found, info, map_location)
        except FileNotFoundError:
            pass  # none: the validation had not finished
        except Exception as e:  # noqa: BLE001 - never more than a validation run again
            problem = str(e) if isinstance(e, CheckpointError) else f"{type(e).__name__}: {e}"
        if self._agree(state is not None):
            return state
        if problem is not None:
            warnings.warn(
                f"Not using {after}: {problem}. The validation that followed "
                f"{os.path.basename(path)} runs again",
                stacklevel=5,
            )
        return None

    def _agree(self, ok: bool) -> bool:
        """Whether ``ok`` holds on every rank."""
        if self.steps.world_size <= 1:
            return ok
        from ..dist import all_gather_object

        return all(all_gather_object(ok))

    def held(self) -> list[str]:
        """The checkpoints the work dir (and its pointer's folder) holds already; of a remote
        work dir, those its remote index lists."""
        if self.storage is not None:
            self._pull_index()
        return held_checkpoints(self.work_dir)

    def resume_latest(
        self,
        before_load: BeforeLoad | None = None,
        foreign: bool = False,
        *,
        restarted: bool = False,
    ) -> str | None:
        """Resume from the newest checkpoint of the work dir that verifies; return its path,
        or None where the work dir holds no checkpoint. A ``foreign`` work dir (one that
        cadence never ran in) without any manifest, mmengine's, resumes from its
        ``last_checkpoint`` target unverified, with one warning. Otherwise unusable ones
        are skipped with a warning saying why; checkpoints that exist but none of which
        can be verified stop the run (:class:`CheckpointError`) rather than being
        overwritten by a new one -- unless the launcher ``restarted`` this job: then they
        are its previous attempt's unfinished saves (killed before the manifest), and the
        job starts anew (None)."""
        staged = self.storage is not None and self._pull_index()
        try:
            latest = find_latest_checkpoint(self.work_dir)
        except CheckpointError as e:
            latest = None
            self.logger.warning(f"{e}; looking for the newest verified checkpoint instead")
        unverified = unverified_checkpoints(self.work_dir)
        resolve = self.storage.local if self.storage is not None else None
        candidates = checkpoint_candidates(self.work_dir, staged=staged, resolve=resolve)
        bare = {os.path.abspath(path) for path in unverified}
        if foreign and not candidates and latest and os.path.abspath(latest) in bare:
            self.logger.info(f"{self.work_dir} is not cadence's and has no manifest (mmengine's?)")
            self.resume(latest, before_load=before_load)  # warns once: unverified
            return latest
        for path in unverified:
            self.logger.warning(
                f"Skipping checkpoint {path}: it has no manifest, so it could not be verified"
            )
        skipped: list[str] = []
        for path in candidates:
            try:
                self.resume(path, before_load=before_load)
            except (CheckpointError, FileNotFoundError) as e:  # incl. a missing shard folder
                self.logger.warning(f"Skipping checkpoint {path}: {e}")
                skipped.append(path)
                continue
            if skipped or unverified:
                self.logger.warning(
                    f"Resumed from {path}, the newest valid checkpoint; skipped "
                    f"{skipped + unverified}"
                )
            return path
        if restarted and (skipped or unverified):
            self.logger.warning(
                f"No checkpoint in {self.work_dir} verifies; {skipped + unverified}: left by "
                "the previous attempt of this restarted job, killed while saving"
            )
            return None
        if unverified:
            raise CheckpointError(
                f"resume=True: the checkpoints in {self.work_dir} could not be verified "
                f"({', '.join(skipped + unverified)}: no manifest, or damaged), and a new run "
                "would overwrite them. Resume from one explicitly (--resume PATH, or "
                "resume='PATH' in the config: it loads with a warning), or start in a new "
                "work dir (--work-dir)"
            )
        if skipped:
            raise CheckpointError(
                f"resume=True: none of the checkpoints in {self.work_dir} can be used "
                f"({', '.join(skipped)}); see the warnings above for why"
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
    expected = (info or {}).get("sha256")
    if expected is None:
        raise CheckpointError("its checkpoint has no manifest to tie it to")
    state = safe_torch_load(after, map_location)
    meta = state.pop("meta", None) if isinstance(state, dict) else None
    binding = meta.get(BINDING_KEY) if isinstance(meta, Mapping) else None
    if not isinstance(binding, Mapping) or binding.get("sha256") != expected:
        raise CheckpointError(
            "it belongs to another file of that name (not the checkpoint there now)"
        )
    return state

"""CheckpointManager: one template for saving, loading and resuming a run.

A checkpoint is the state of the run's model, optimizer and schedulers (a
:class:`~cadence.contracts.Trained`, which the caller hands to every save and load; the
strategy writes and reads it: see :class:`~cadence.checkpoint.steps.CheckpointSteps`)
plus ``meta`` plus every
registered *part*: anything with ``state_dict()``/``load_state_dict()`` (the
message hub, the hooks, the training loop, the RNG streams...). A save writes
crash-safely (docs/checkpoints.md, "the order of a save"); a load verifies every
file before reading it and restores the strategy first, then the parts in the
order they were registered. A checkpoint taken just before a validation (``before_val``)
gets, once that validation has finished, an after-validation file with the states the
validation changed (:mod:`.after_val`; written and read by :mod:`.after_validation`); a
resume from it takes those states.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..fileio import is_url
from .after_validation import AfterValidation
from .companions import discard_staging, staging_path
from .files import (
    CheckpointError,
    atomic_torch_save,
    checkpoint_digest,
    manifest_path,
    read_checkpoint,
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
from .removal import remove_checkpoint
from .resume_search import ResumeSearch
from .snapshot import Snapshot
from .steps import CheckpointSteps
from .writer import AsyncCheckpointWriter

if TYPE_CHECKING:
    from torch import nn

    from ..contracts import Trained

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
        #: the after-validation files of the checkpoints saved before a validation
        self.after_val = AfterValidation(self)

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
        """What a checkpoint holds besides ``trained``: ``meta`` and every part's state (a
        collective where parts gather). A background write still running finishes first
        (and raises its error). The caller may edit the dict (the runner's
        ``before_save_checkpoint`` hooks do) before handing it to :meth:`save`."""
        self.wait()
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
        trained: Trained,
        extra: Mapping[str, Any],
        *,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        update_last: bool = True,
        delete_after: Sequence[str] = (),
        async_: bool = False,
        pointers: Sequence[str] = (),
        before_val: bool = False,
    ) -> str:
        """Write the run to ``path``: ``trained`` (through the strategy) and ``extra``
        (:meth:`collect`'s dict: ``meta`` and the parts); then (rank 0) move the pointer
        (and the ``pointers`` named, e.g. ``best_checkpoint``), then delete
        ``delete_after``. With ``async_`` (where the strategy supports it) the state is
        copied now and written on a background thread. ``before_val``: a validation
        follows this checkpoint, and :meth:`after_validation` writes its after-validation
        file once it has finished. Every rank calls this."""
        steps = self.steps
        options = dict(save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler)
        stale = [p for p in delete_after if os.path.abspath(p) != os.path.abspath(path)]

        storage = self.storage
        # a staged copy needs no fsync: the upload is the durable copy, and the staged
        # index is rebuilt from the remote one before any resume
        durable = storage is None or storage.remote(path) is None

        # the file is uploaded while it is hashed; the manifest after it and every companion
        upload = None if durable else functools.partial(self.upload, path)

        def written(info: Mapping[str, Any]) -> None:
            if before_val:  # what its after-validation file will be bound to
                self.after_val.written(path, str(checkpoint_digest(info)))

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

        background = async_ and steps.supports_async_save
        if background:
            if steps.rank == 0:
                own = steps.checkpoint_state(trained, **options)
                state = self._snapshots().take({**own, **extra})

                def job() -> None:
                    self.after_val.drop(path)
                    if storage is not None:
                        storage.withdraw_manifest(path)
                    written(atomic_torch_save(state, path, durable=durable, upload=upload))
                    finish()

                self.background_writer().submit(job, path)
            if before_val:
                self.after_val.expect(path, durable, background=True)
            return path
        if async_:
            import warnings

            warnings.warn(
                f"{type(steps).__name__} saves checkpoints synchronously (its engine writes "
                "collectively); async_=True is ignored",
                stacklevel=3,
            )
        state = {**steps.checkpoint_state(trained, **options), **extra}
        # companions are written aside and swapped in with the file (.companions)
        staged = staging_path(path)
        if steps.rank == 0:
            discard_staging(path)  # what an interrupted save of this name left
            self.after_val.drop(path)
            if storage is not None:
                storage.withdraw_manifest(path)  # its files are about to be replaced
        steps.barrier()
        steps.save_companion(trained, staged, save_optimizer=save_optimizer)
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
            self.after_val.expect(path, durable, background=False)
        return path

    # ------------------------------------------------------ after validation
    def await_validation(self, path: str) -> None:
        """``path`` was resumed from before the validation that followed it had run: once
        the resumed run has run it, :meth:`after_validation` writes its after-validation
        file (every rank calls this)."""
        self.after_val.await_resumed(path)

    def after_validation(self) -> None:
        """The validation that followed the checkpoints saved with ``before_val`` has
        finished: write their after-validation files (every rank calls this)."""
        self.after_val.write_due()

    def collect_after_val(self) -> dict[str, Any]:
        """The state of every part registered with ``after_val`` (a collective where parts
        gather)."""
        return self._collect({}, lambda entry: entry.after_val)

    def upload(self, path: str, source: str) -> None:
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

    def fetch(self, path: str) -> None:
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

    def background_writer(self) -> AsyncCheckpointWriter:
        if self._writer is None:
            self._writer = AsyncCheckpointWriter(self.logger)
        return self._writer

    def _snapshots(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = Snapshot()
        return self._snapshot

    # ---------------------------------------------------------------- load
    def read(self, path: str, map_location: Any = "cpu", *, after_val: bool = False) -> dict:
        """Fetch (remote), verify (the ranks share the hashing) and read ``path``; with
        ``after_val`` (a resume), the states of its after-validation file replace the
        checkpoint's. Nothing is restored: the caller may edit the dict (the runner's
        ``after_load_checkpoint`` hooks do) before :meth:`restore` or
        :meth:`load_weights`."""
        self.fetch(path)
        info = self.steps.verify_checkpoint(path)
        if info is None:
            warn_unverified(path, stacklevel=3)
        checkpoint = read_checkpoint(path, map_location, verify=False)
        if after_val:
            checkpoint.update(self.after_val.read(path, info, map_location) or {})
        return checkpoint

    def load_weights(
        self,
        model: nn.Module,
        checkpoint: dict[str, Any],
        *,
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = DEFAULT_REVISE_KEYS,
    ) -> None:
        """Load the model weights of ``checkpoint`` (:meth:`read`'s) into ``model``."""
        self.steps.load_weights(model, checkpoint, strict=strict, revise_keys=revise_keys)

    def restore(
        self,
        path: str,
        checkpoint: dict[str, Any],
        trained: Trained,
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore ``trained`` (through the strategy: its companion files beside ``path``)
        and every part from ``checkpoint``, :meth:`read`'s dict of ``path``."""
        self.steps.restore(
            trained, path, checkpoint, resume_optimizer=resume_optimizer,
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

    def resume(self, path: str, trained: Trained, map_location: Any = "cpu") -> dict[str, Any]:
        """:meth:`read` ``path`` (with its after-validation states) and :meth:`restore`
        everything from it; return the checkpoint."""
        checkpoint = self.read(path, map_location, after_val=True)
        self.restore(path, checkpoint, trained)
        return checkpoint

    def agree(self, ok: bool) -> bool:
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

    def candidates(self, *, foreign: bool = False) -> ResumeSearch:
        """The checkpoints of the work dir a ``resume=True`` run tries, newest first, as a
        :class:`ResumeSearch` (which also says what to do when they fail). A ``foreign``
        work dir (one that cadence never ran in) without any manifest, mmengine's, offers
        its ``last_checkpoint`` target alone, read unverified with one warning."""
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
            return ResumeSearch(self.work_dir, self.logger, [latest], [], skippable=False)
        for path in unverified:
            self.logger.warning(
                f"Skipping checkpoint {path}: it has no manifest, so it could not be verified"
            )
        return ResumeSearch(self.work_dir, self.logger, candidates, unverified)

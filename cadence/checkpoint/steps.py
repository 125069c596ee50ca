"""The steps of saving and loading that differ between strategies.

:class:`~cadence.checkpoint.CheckpointManager` runs the template of every save
and load (collect the run's state, write crash-safely with a manifest, move the
pointer, delete old checkpoints; verify every file before reading, restore every
part). A strategy contributes only what it does differently, through this
interface; :class:`~cadence.strategies.BaseStrategy` implements it for one-file
checkpoints written by rank 0 (single device, DDP), and FSDP and DeepSpeed
override the steps that write and read their companion folders.

The strategy keeps none of the run's objects: every step that reads or writes them is
handed them (a :class:`~cadence.contracts.Trained`: model, optimizer wrapper,
schedulers, owned by the runner), and the manager gets them from its caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .companions import FileDigests

if TYPE_CHECKING:
    from torch import nn

    from ..contracts import Trained


@runtime_checkable
class CheckpointSteps(Protocol):
    """What a strategy does for a checkpoint (see the module docstring)."""

    #: Whether :meth:`checkpoint_state` alone makes the whole checkpoint, so a copy of
    #: it may be written on a background thread (False when an engine writes
    #: companion files collectively).
    supports_async_save: bool

    @property
    def rank(self) -> int:
        """This process's rank (rank 0 writes the checkpoint file)."""
        ...

    @property
    def world_size(self) -> int:
        """The number of processes."""
        ...

    def checkpoint_state(
        self, trained: Trained, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """What of ``trained`` goes into the checkpoint file (``state_dict``, ``optimizer``,
        ``param_schedulers``...); every rank calls it (gathering may be collective)."""
        ...

    def save_companion(
        self, trained: Trained, filename: str, *, save_optimizer: bool = True
    ) -> None:
        """Write the companion folder ``<filename>.<suffix>`` of ``trained`` (every rank;
        may be a no-op).

        The manager passes the name the companions are staged under
        (:func:`~cadence.checkpoint.companions.staging_path`), not the checkpoint's: they
        are moved into place with the checkpoint file once it is written."""
        ...

    def companion_digests(self, filename: str) -> FileDigests:
        """Size and digest of every companion file (every rank calls it)."""
        ...

    def verify_checkpoint(self, filename: str) -> dict[str, Any] | None:
        """Check every file of ``filename`` against its manifest before any is read; return
        the manifest (None: there is none). Every rank calls it, and every rank raises
        (:class:`~cadence.checkpoint.CheckpointError`, ``FileNotFoundError``) when one
        file fails, so that all ranks skip the same checkpoint."""
        ...

    def barrier(self) -> None:
        """Wait for every rank (a no-op in one process)."""
        ...

    def load_weights(
        self,
        model: nn.Module,
        checkpoint: dict[str, Any],
        *,
        strict: bool,
        revise_keys: Sequence[tuple[str, str]],
    ) -> None:
        """Load the model weights of a read checkpoint into ``model`` (``load_from``)."""
        ...

    def restore(
        self,
        trained: Trained,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore the model, optimizer and schedulers of ``trained`` exactly (``resume``),
        reading the companion folder of ``filename`` where the strategy wrote one."""
        ...

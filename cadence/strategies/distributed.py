"""What every multi-process strategy shares: the process group, ranks, seeds, teardown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as torch_dist

from ..checkpoint.companions import FileDigests, companion_digests, companion_files
from ..checkpoint.files import verify_checkpoint
from ..resilience import heartbeat
from .base import BaseStrategy
from .launch import init_process_group

if TYPE_CHECKING:
    from ..contracts import Trained


class DistributedStrategy(BaseStrategy):
    """Base of strategies that run one process per device in a process group."""

    def __init__(self, device: str | torch.device | None = None) -> None:
        super().__init__(device)
        self._local_rank = 0
        self._owns_process_group = False

    @property
    def rank(self) -> int:
        return torch_dist.get_rank() if torch_dist.is_initialized() else 0

    @property
    def world_size(self) -> int:
        return torch_dist.get_world_size() if torch_dist.is_initialized() else 1

    @property
    def local_rank(self) -> int:
        return self._local_rank

    def default_device(self) -> torch.device:
        if torch.cuda.is_available():
            return torch.device("cuda", self._local_rank % torch.cuda.device_count())
        return torch.device("cpu")

    def setup_distributed(self, launcher: str, dist_cfg: dict[str, Any]) -> None:
        """Create the process group (or join one that exists) and pick this rank's device.

        :meth:`teardown` destroys only a group created here, never one the caller made.
        """
        if launcher == "none" and not torch_dist.is_initialized():
            launcher = "auto"
        created = not torch_dist.is_initialized()
        info = init_process_group(launcher, dist_cfg)
        self._owns_process_group = self._owns_process_group or created
        self._local_rank = info.local_rank

    def sync_seed(self) -> int:
        from ..dist import sync_random_seed

        return sync_random_seed()

    def barrier(self) -> None:
        """Wait for every rank."""
        if torch_dist.is_initialized():
            with heartbeat.current.waiting("a barrier"):  # the hang watchdog names the wait
                torch_dist.barrier()

    def companion_digests(self, filename: str) -> FileDigests:
        """Size and digest of every companion file of ``filename`` (a collective: every
        rank calls it once all ranks wrote their files): those the ranks hashed while
        writing them (:attr:`written_digests`), and the rest hashed now, a share per rank."""
        from ..dist import all_gather_object

        self.barrier()
        files = companion_files(filename)
        present = set(files)
        written, self.written_digests = self.written_digests, {}
        digests: FileDigests = {}
        for part in all_gather_object(written):
            digests.update({k: v for k, v in part.items() if k in present})
        rest = [f for f in files if f not in digests]
        mine = companion_digests(filename, rest[self.rank :: self.world_size])
        for part in all_gather_object(mine):
            digests.update(part)
        return dict(sorted(digests.items()))

    def verify_checkpoint(self, filename: str) -> dict[str, Any] | None:
        """Check ``filename`` against its manifest, the hashing split between the ranks
        (each hashes every ``world_size``-th file), then agree: when any rank found a
        problem, every rank raises it (the first rank's, naming the file)."""
        from ..checkpoint import CheckpointError
        from ..dist import all_gather_object

        info: dict[str, Any] | None = None
        problem: tuple[str, str] | None = None
        try:
            info = verify_checkpoint(filename, (self.rank, self.world_size))
        except FileNotFoundError as exc:
            problem = ("missing", str(exc))
        except CheckpointError as exc:
            problem = ("corrupt", str(exc))
        except Exception as exc:  # noqa: BLE001 - every rank must reach the gather
            problem = ("error", f"{type(exc).__name__}: {exc}")
        found = [p for p in all_gather_object(problem) if p is not None]
        if not found:
            return info
        kind, message = found[0]
        if kind == "missing":
            raise FileNotFoundError(message)
        raise CheckpointError(message)

    @property
    def owns_process_group(self) -> bool:
        """Whether :meth:`setup_distributed` created the live process group."""
        return self._owns_process_group and torch_dist.is_initialized()

    def teardown(self, trained: Trained | None = None, *, barrier: bool = True) -> None:
        """Drop the run's model, optimizer wrapper and schedulers from ``trained`` (they are
        wrapped over the process group: DDP's reducer holds it), then destroy the process
        group if this strategy created it (after a barrier unless ``barrier=False``: a
        failed rank leaves at once, which makes its peers' collectives fail instead of
        wait). A later run sets the strategy up again and builds them anew.

        Order matters: a gloo group's destructor joins its worker threads while holding
        the GIL, and a worker that is still freeing a finished operation whose tensors
        Python knows waits for the GIL: a deadlock, seen at exit under load when the
        wrapped model was freed right after the barrier. So the model goes first (the
        group lives on in torch's registry), and the barrier's handle is kept until the
        group is destroyed, so that the worker never frees that operation itself."""
        import gc

        if trained is not None:
            trained.drop()
        gc.collect()
        if not self.owns_process_group:
            return
        self._owns_process_group = False
        work = None
        try:
            if barrier:
                work = torch_dist.barrier(async_op=True)
                if work is not None:
                    work.wait()
        finally:
            torch_dist.destroy_process_group()
            del work  # after the group: freed here, under the GIL this thread holds

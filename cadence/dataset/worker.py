"""Seed python ``random``, numpy and torch in DataLoader worker processes.

Formula (documented because runs must be reproducible from it)::

    worker_seed = SeedSequence([seed mod 2**64, rank, worker_id, epoch])
                      .generate_state(1, uint64)[0] mod 2**63
    random.seed(worker_seed); torch.manual_seed(worker_seed)
    numpy.random.seed(worker_seed mod 2**32)

``epoch`` is the sampler's ``epoch`` attribute when the workers start (0 for
samplers without one), so workers that are restarted every epoch
(``persistent_workers=False``) draw new augmentations each epoch, and a run
resumed at epoch ``e`` draws what the uninterrupted run drew. Hashing the four
numbers keeps nearby seeds from sharing worker streams (unlike ``seed + id``).
"""

from __future__ import annotations

import operator
import random
import warnings
from typing import Any

import numpy as np
import torch


def worker_seed(seed: int, rank: int, worker_id: int, epoch: int = 0) -> int:
    """The seed of worker ``worker_id`` on rank ``rank`` in epoch ``epoch`` (see module doc)."""
    entropy = [operator.index(seed) % 2**64, rank, worker_id, epoch]
    state = np.random.SeedSequence(entropy).generate_state(1, np.uint64)
    return int(state[0]) % 2**63


def seed_everything_in_worker(seed: int) -> None:
    """Seed python ``random``, numpy's global generator and torch with ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _epoch_of(source: Any) -> int:
    epoch = getattr(source, "epoch", 0)
    try:
        return max(operator.index(epoch), 0)
    except TypeError:
        return 0


class WorkerSeeder:
    """A picklable ``worker_init_fn`` that seeds each worker from (seed, rank, worker id, epoch).

    Args:
        seed: the run's seed.
        rank: this process's rank.
        epoch_source: an object whose ``epoch`` attribute is read when a worker
            starts (the sampler); ``None`` means epoch 0.
        disable_subprocess_warning: silence warnings in every worker but worker 0.
    """

    def __init__(
        self,
        seed: int,
        rank: int,
        epoch_source: Any = None,
        disable_subprocess_warning: bool = False,
    ) -> None:
        self.seed = operator.index(seed)
        self.rank = operator.index(rank)
        self.epoch_source = epoch_source
        self.disable_subprocess_warning = bool(disable_subprocess_warning)

    def __call__(self, worker_id: int) -> None:
        """Seed the calling worker process."""
        epoch = _epoch_of(self.epoch_source)
        seed_everything_in_worker(worker_seed(self.seed, self.rank, worker_id, epoch))
        if self.disable_subprocess_warning and worker_id != 0:
            warnings.simplefilter("ignore")


def worker_init_fn(
    worker_id: int,
    num_workers: int,
    rank: int,
    seed: int,
    disable_subprocess_warning: bool = False,
) -> None:
    """mmengine's ``worker_init_fn`` signature, seeding with cadence's formula at epoch 0.

    ``num_workers`` is accepted for compatibility; the formula does not need it.
    """
    WorkerSeeder(seed, rank, None, disable_subprocess_warning)(worker_id)

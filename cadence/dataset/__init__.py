"""Data: collate functions, resumable samplers, worker seeding and the dataloader builder."""

from .builder import SlicedDataset, build_dataloader
from .collate import default_collate, pseudo_collate
from .sampler import DefaultSampler, InfiniteSampler
from .worker import WorkerSeeder, worker_init_fn, worker_seed

__all__ = [
    "DefaultSampler", "InfiniteSampler", "SlicedDataset", "WorkerSeeder", "build_dataloader",
    "default_collate", "pseudo_collate", "worker_init_fn", "worker_seed",
]  # fmt: skip

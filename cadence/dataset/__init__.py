"""Data: datasets and their wrappers, collate functions, resumable samplers, worker seeding
and the dataloader builder."""

from __future__ import annotations

from ..registry import FUNCTIONS
from ..utils.lazy import lazy_exports

#: mmengine's name: ``COLLATE_FUNCTIONS`` is the ``FUNCTIONS`` registry (and
#: ``default_worker_init_fn``, in worker.py, is ``worker_init_fn``).
COLLATE_FUNCTIONS = FUNCTIONS

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "Compose": "..transforms",
    "BaseDataset": ".base_dataset",
    "force_full_init": ".base_dataset",
    "SlicedDataset": ".builder",
    "build_dataloader": ".builder",
    "default_collate": ".collate",
    "pseudo_collate": ".collate",
    "DataLoaderTimeoutError": ".explained_loader",
    "ExplainedDataLoader": ".explained_loader",
    "dataloader_state_dict": ".loader_state",
    "load_dataloader_state_dict": ".loader_state",
    "MultigridSchedule": ".multigrid",
    "ShortCycleBatchSampler": ".multigrid",
    "DescribesIndex": ".sample_errors",
    "note_sample_errors": ".sample_errors",
    "DefaultSampler": ".sampler",
    "InfiniteSampler": ".sampler",
    "StreamLoader": ".stream",
    "is_resumable_stream": ".stream",
    "SampleIndex": ".worker",
    "WorkerSeeder": ".worker",
    "batch_seed": ".worker",
    "worker_init_fn": ".worker",
    "worker_seed": ".worker",
    "default_worker_init_fn": ".worker",
    "ShieldedWorkerInit": ".worker_signals",
    "shield_worker_signals": ".worker_signals",
    "ClassBalancedDataset": ".wrappers",
    "ConcatDataset": ".wrappers",
    "RepeatDataset": ".wrappers",
}

__all__ = [
    "BaseDataset", "ClassBalancedDataset", "Compose", "ConcatDataset", "RepeatDataset",
    "COLLATE_FUNCTIONS", "default_worker_init_fn", "force_full_init",
    "DataLoaderTimeoutError", "DefaultSampler", "DescribesIndex", "ExplainedDataLoader",
    "InfiniteSampler", "MultigridSchedule", "ShortCycleBatchSampler", "SampleIndex",
    "ShieldedWorkerInit", "SlicedDataset", "WorkerSeeder", "batch_seed", "build_dataloader",
    "dataloader_state_dict", "default_collate", "load_dataloader_state_dict",
    "note_sample_errors", "pseudo_collate", "shield_worker_signals", "worker_init_fn",
    "worker_seed",
    "StreamLoader", "is_resumable_stream",
]  # fmt: skip
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)

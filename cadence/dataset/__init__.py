"""Data: datasets and their wrappers, collate functions, resumable samplers, worker seeding
and the dataloader builder."""

from ..registry import FUNCTIONS
from ..transforms import Compose
from .base_dataset import BaseDataset, force_full_init
from .builder import SlicedDataset, build_dataloader
from .collate import default_collate, pseudo_collate
from .explained_loader import DataLoaderTimeoutError, ExplainedDataLoader
from .loader_state import dataloader_state_dict, load_dataloader_state_dict
from .multigrid import MultigridSchedule, ShortCycleBatchSampler
from .sample_errors import DescribesIndex, note_sample_errors
from .sampler import DefaultSampler, InfiniteSampler
from .stream import StreamLoader, is_resumable_stream
from .worker import SampleIndex, WorkerSeeder, batch_seed, worker_init_fn, worker_seed
from .worker_signals import ShieldedWorkerInit, shield_worker_signals
from .wrappers import ClassBalancedDataset, ConcatDataset, RepeatDataset

#: mmengine's names: ``COLLATE_FUNCTIONS`` is the ``FUNCTIONS`` registry, and
#: ``default_worker_init_fn`` is ``worker_init_fn``.
COLLATE_FUNCTIONS = FUNCTIONS
default_worker_init_fn = worker_init_fn

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

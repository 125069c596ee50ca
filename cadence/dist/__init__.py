"""Rank/world helpers and collectives on tensors and plain objects (mmengine.dist names).

Everything works without an initialized process group, as one process of one.
Process groups are set up by the strategies; ``cadence.dist.testing`` starts
small local groups for tests. The hang watchdog, which ends a job whose ranks stopped
making progress (shared outside the process group), is in ``cadence.resilience``.
"""

from .collectives import (
    all_gather,
    all_gather_object,
    all_reduce,
    all_reduce_dict,
    all_reduce_params,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    sync_random_seed,
)
from .data_device import cast_data_device, get_data_device
from .results import collect_results, collect_results_cpu, collect_results_gpu
from .utils import (
    barrier,
    get_backend,
    get_comm_device,
    get_default_group,
    get_dist_info,
    get_local_group,
    get_local_rank,
    get_local_size,
    get_rank,
    get_world_size,
    init_local_group,
    is_distributed,
    is_main_process,
    master_only,
)

__all__ = [
    "all_gather", "all_gather_object", "all_reduce", "all_reduce_dict", "all_reduce_params",
    "barrier", "broadcast", "broadcast_object_list", "cast_data_device", "collect_results",
    "collect_results_cpu", "collect_results_gpu", "gather", "gather_object", "get_backend",
    "get_comm_device", "get_data_device", "get_default_group", "get_dist_info",
    "get_local_group", "get_local_rank", "get_local_size", "get_rank", "get_world_size",
    "init_local_group", "is_distributed", "is_main_process", "master_only", "sync_random_seed",
]  # fmt: skip

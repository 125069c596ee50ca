"""A process-group store that a torchrun restart cannot mix up with the previous attempt's.

torchrun's c10d rendezvous (``--standalone``, ``--rdzv-backend c10d``) lets the ranks
share the agent's TCPStore (``TORCHELASTIC_USE_AGENT_STORE=True``) and, in the torch
versions this was written against (2.5 to 2.13), keeps that one store across
``--max-restarts`` restarts without a namespace per attempt. The ranks of a restarted
group then may read the addresses the previous group left there: gloo fails with
``connectFullMesh failed ... Connection refused`` or hangs, NCCL reads a stale unique id
(pytorch/pytorch#135712); with torch 2.13 and gloo, 5 of 6 restarted groups measured
here failed or hung.

On one machine every rank of an attempt has the same ``TORCHELASTIC_RESTART_COUNT``, so
the ranks of attempt ``k > 0`` use the agent's store under the prefix
``cadence/attempt_<k>/``. Across machines the count is not the same on every machine (an
agent that restarts for a peer's failure may not count it), so there the prefix cannot be
used: torchrun must be started with ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` (each round
then gets a store of its own), and :func:`shared_store_warning` says so.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

import torch.distributed as torch_dist

from .cluster import current_attempt

#: the environment variable that gives each rendezvous round a store of its own
DISABLE_SHARING = "TORCH_DISABLE_SHARE_RDZV_TCP_STORE"


def _shared(env: Mapping[str, str]) -> bool:
    return env.get("TORCHELASTIC_USE_AGENT_STORE") == "True"


def _restart_count(env: Mapping[str, str]) -> int:
    return current_attempt(env).counts.get("TORCHELASTIC_RESTART_COUNT", 0)


def restart_safe_store(
    env: Mapping[str, str], world_size: int, timeout: datetime.timedelta
) -> torch_dist.Store | None:
    """The store for ``init_process_group`` in a restarted single-machine torchrun group (the
    agent's store under ``cadence/attempt_<k>/``), or None where torch's own is safe."""
    attempt = _restart_count(env)
    if not _shared(env) or attempt == 0 or env.get("GROUP_WORLD_SIZE", "1") != "1":
        return None
    store = torch_dist.TCPStore(
        env["MASTER_ADDR"], int(env["MASTER_PORT"]), world_size, is_master=False, timeout=timeout
    )
    return torch_dist.PrefixStore(f"cadence/attempt_{attempt}", store)


def shared_store_warning(env: Mapping[str, str]) -> str | None:
    """Why a multi-machine torchrun job with restarts may fail to form its restarted group,
    and what to do (None when it cannot happen)."""
    may_restart = int(env.get("TORCHELASTIC_MAX_RESTARTS", "0") or 0) > 0
    if not (_shared(env) and may_restart and env.get("GROUP_WORLD_SIZE", "1") != "1"):
        return None
    return (
        "torchrun shares its rendezvous store with the ranks and keeps it across restarts "
        "(--max-restarts): the ranks of a restarted group may read the previous group's "
        "addresses and fail or hang (pytorch/pytorch#135712). Start torchrun with "
        f"{DISABLE_SHARING}=1 in its environment on every machine"
    )


__all__ = ["DISABLE_SHARING", "restart_safe_store", "shared_store_warning"]

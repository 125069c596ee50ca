"""The store a restarted torchrun group uses: the agent's store under a prefix per attempt, so
that the ranks cannot read the previous attempt's addresses (pytorch/pytorch#135712)."""

from __future__ import annotations

import datetime

import torch.distributed as dist

from cadence.dist.testing import free_port
from cadence.resilience.elastic_store import restart_safe_store, shared_store_warning

TIMEOUT = datetime.timedelta(seconds=10)


def agent_env(port: int, **more: str) -> dict[str, str]:
    return {"TORCHELASTIC_USE_AGENT_STORE": "True", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port), "GROUP_WORLD_SIZE": "1", **more}  # fmt: skip


def test_a_restarted_group_on_one_machine_keeps_its_keys_apart_from_the_previous_ones():
    port = free_port()
    agent = dist.TCPStore("127.0.0.1", port, 1, is_master=True, timeout=TIMEOUT)
    agent.set("0/rank_0", "the first attempt's address")
    store = restart_safe_store(agent_env(port, TORCHELASTIC_RESTART_COUNT="2"), 2, TIMEOUT)
    assert store is not None
    store.set("0/rank_0", "this attempt's address")
    assert agent.get("cadence/attempt_2/0/rank_0") == b"this attempt's address"
    assert agent.get("0/rank_0") == b"the first attempt's address"


def test_torchs_own_store_is_kept_where_it_is_safe():
    port = free_port()
    first = agent_env(port, TORCHELASTIC_RESTART_COUNT="0")
    assert restart_safe_store(first, 2, TIMEOUT) is None  # nothing stale yet
    own = agent_env(port, TORCHELASTIC_RESTART_COUNT="1", TORCHELASTIC_USE_AGENT_STORE="False")
    assert restart_safe_store(own, 2, TIMEOUT) is None  # a store per round already
    machines = agent_env(port, TORCHELASTIC_RESTART_COUNT="1", GROUP_WORLD_SIZE="2")
    assert restart_safe_store(machines, 2, TIMEOUT) is None  # counts differ between machines


def test_several_machines_that_may_restart_are_told_how_to_avoid_the_shared_store():
    machines = agent_env(1, GROUP_WORLD_SIZE="2", TORCHELASTIC_MAX_RESTARTS="3")
    assert "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1" in shared_store_warning(machines)
    assert shared_store_warning({**machines, "TORCHELASTIC_MAX_RESTARTS": "0"}) is None
    assert shared_store_warning({**machines, "GROUP_WORLD_SIZE": "1"}) is None
    assert shared_store_warning({**machines, "TORCHELASTIC_USE_AGENT_STORE": "False"}) is None

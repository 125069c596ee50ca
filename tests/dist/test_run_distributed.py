"""``run_distributed`` itself: the ranks' store port cannot be lost to a parallel test."""

from __future__ import annotations

import os
import socket

import pytest
import torch.distributed as torch_dist

from cadence.dist import testing
from cadence.dist.testing import run_distributed

pytestmark = pytest.mark.dist


def _rank_and_port() -> tuple[int, int, int]:
    return torch_dist.get_rank(), torch_dist.get_world_size(), int(os.environ["MASTER_PORT"])


def test_ranks_join_on_the_callers_store_even_when_a_picked_port_is_taken(monkeypatch):
    """The old way (pick a free port, close it, let rank 0 bind it later) lost the port to
    another xdist worker now and then (EADDRINUSE at init). Here every port that
    ``free_port`` could hand out is already taken, and the run still joins."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        monkeypatch.setattr(testing, "free_port", lambda: taken)
        results = run_distributed(_rank_and_port, world_size=2)
    assert [r[:2] for r in results] == [(0, 2), (1, 2)]
    assert results[0][2] == results[1][2] != taken


def test_the_store_port_is_released_when_the_run_ends():
    port = run_distributed(_rank_and_port, world_size=1)[0][2]
    # released afterwards: the port can be bound again
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))

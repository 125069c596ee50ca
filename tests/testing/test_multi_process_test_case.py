"""MultiProcessTestCase runs each test method on two real ranks joined by gloo."""

from __future__ import annotations

import os
import types

import pytest
import torch
import torch.distributed as torch_dist

from cadence.dist.testing import PRELOAD, free_port
from cadence.testing import MultiProcessTestCase

pytestmark = pytest.mark.dist


class TestTwoRanks(MultiProcessTestCase):
    start_method = "forkserver"  # the clean, torch-preloaded server the dist tests use

    def setUp(self):
        super().setUp()
        torch.multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
        self.port = free_port()  # picklable state travels to the ranks
        self._spawn_processes()

    def test_all_reduce_across_ranks(self):
        assert self.rank in (0, 1) and self.is_master == (self.rank == 0)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(self.port))
        torch_dist.init_process_group("gloo", rank=self.rank, world_size=self.world_size)
        try:
            value = torch.tensor([self.rank + 1.0])
            torch_dist.all_reduce(value)
            assert value.item() == 3.0  # 1 + 2
        finally:
            torch_dist.destroy_process_group()


class _Joiner(MultiProcessTestCase):
    __test__ = False  # a helper, not a test of its own

    def runTest(self):  # noqa: N802 - unittest's name
        pass


class _Pipe:
    def __init__(self, message: str):
        self.message = message

    def poll(self, timeout: float) -> bool:
        return True

    def recv(self) -> str:
        return self.message

    def close(self) -> None:
        pass


def _joiner_with_exit_codes(*codes: int | None) -> _Joiner:
    case = _Joiner()
    case.setUp()
    case.processes = [types.SimpleNamespace(exitcode=c, pid=i) for i, c in enumerate(codes)]
    case.pid_to_pipe = {i: _Pipe(f"Traceback of rank {i}") for i in range(len(codes))}
    return case


def test_a_failing_rank_fails_the_test_with_its_traceback():
    with pytest.raises(
        RuntimeError,
        match="Process 1 exited with error code 10 and exception:\nTraceback of rank 1",
    ):
        _joiner_with_exit_codes(0, MultiProcessTestCase.TEST_ERROR_EXIT_CODE)._check_return_codes(
            0.1
        )
    with pytest.raises(RuntimeError, match="Process 0 timed out"):
        _joiner_with_exit_codes(None, 0)._check_return_codes(5)
    with pytest.raises(AssertionError, match="Process 1 exited with code 3"):
        _joiner_with_exit_codes(0, 3)._check_return_codes(0.1)
    _joiner_with_exit_codes(0, 0)._check_return_codes(0.1)  # clean exits pass
    with pytest.raises(RuntimeError, match="_spawn_processes"):
        _joiner_with_exit_codes()._check_return_codes(0.1)

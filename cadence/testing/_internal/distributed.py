"""``MultiProcessTestCase``: each test method runs in ``world_size`` fresh processes.

The main process starts the ranks (``self._spawn_processes()``, usually in
``setUp``), then its copy of the test method only waits for them; each rank
builds its own instance of the test case, sets ``self.rank`` and runs the real
method. A rank that raises sends its traceback to the main process, which
stops the others and fails the test with every rank's traceback.
"""

from __future__ import annotations

import pickle
import sys
import tempfile
import time
import traceback
import types
import unittest
from collections.abc import Callable
from functools import wraps
from typing import Any, ClassVar

import torch.multiprocessing as mp


class MultiProcessTestCase(unittest.TestCase):
    """A ``TestCase`` whose test methods run on ``world_size`` ranks (``self.rank``)."""

    MAIN_PROCESS_RANK: ClassVar[int] = -1
    #: Exit code of a rank whose test raised.
    TEST_ERROR_EXIT_CODE: ClassVar[int] = 10
    #: Exit code of a rank whose test raised ``unittest.SkipTest``.
    TEST_SKIP_EXIT_CODE: ClassVar[int] = 13
    #: How ranks start: ``'spawn'`` as in mmengine; ``'forkserver'`` reuses one clean server.
    start_method: ClassVar[str] = "spawn"

    @property
    def world_size(self) -> int:
        """Number of ranks (2)."""
        return 2

    @property
    def timeout(self) -> int:
        """Seconds the main process waits for the ranks before stopping them."""
        return 500

    @property
    def is_master(self) -> bool:
        """Whether this is rank 0."""
        return self.rank == 0

    def __init__(self, method_name: str = "runTest") -> None:
        super().__init__(method_name)
        self.rank = self.MAIN_PROCESS_RANK
        fn = getattr(self, method_name, None)
        if fn is not None:  # unittest allows a case without runTest (test collectors make one)
            setattr(self, method_name, self._join_or_run(fn))

    def _join_or_run(self, fn: Callable[[], Any]) -> Callable[[], None]:
        @wraps(fn)
        def wrapper(self: MultiProcessTestCase) -> None:
            if self.rank == self.MAIN_PROCESS_RANK:
                self._join_processes()
            else:
                fn()

        return types.MethodType(wrapper, self)

    def setUp(self) -> None:
        super().setUp()
        self.processes: list[Any] = []
        self.rank = self.MAIN_PROCESS_RANK
        with tempfile.NamedTemporaryFile(delete=False) as f:
            self.file_name = f.name
        self.pid_to_pipe: dict[int, Any] = {}

    def tearDown(self) -> None:
        super().tearDown()
        for proc in self.processes:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=5)
        self.processes = []

    def _current_test_name(self) -> str:
        return self.id().split(".")[-1]

    def _picklable_state(self) -> dict[str, Any]:
        """A copy of the attributes that pickle (the ranks get these), minus the process table."""
        state = {}
        for key, value in self.__dict__.items():
            if key in ("processes", "pid_to_pipe"):
                continue
            try:
                state[key] = pickle.loads(pickle.dumps(value))
            except Exception:
                continue
        return state

    def _start_processes(self, process_class: Any) -> None:
        """Start one ``process_class`` per rank, each running this test method."""
        self.processes = []
        state = self._picklable_state()
        for rank in range(int(self.world_size)):
            parent_conn, child_conn = mp.Pipe()
            proc = process_class(target=type(self)._run, name=f"rank {rank}",
                                 args=(state, rank, self._current_test_name(), self.file_name,
                                       child_conn))  # fmt: skip
            proc.start()
            self.pid_to_pipe[proc.pid] = parent_conn
            self.processes.append(proc)

    def _spawn_processes(self) -> None:
        """Start the ranks with :attr:`start_method` (``'spawn'`` by default)."""
        context: Any = mp.get_context(self.start_method)
        self._start_processes(context.Process)

    @classmethod
    def _run(
        cls, state: dict[str, Any], rank: int, test_name: str, file_name: str, pipe: Any
    ) -> None:
        self = cls(test_name)
        self.__dict__.update(state)
        self.rank = rank
        self.file_name = file_name
        self.run_test(test_name, pipe)

    def run_test(self, test_name: str, pipe: Any) -> None:
        """Run ``test_name`` here; on failure send the traceback and exit with an error code."""
        try:
            getattr(self, test_name)()
        except unittest.SkipTest as skip:
            pipe.send(f"skipped: {skip}")
            sys.exit(self.TEST_SKIP_EXIT_CODE)
        except BaseException:
            pipe.send(traceback.format_exc())
            sys.exit(self.TEST_ERROR_EXIT_CODE)
        finally:
            pipe.close()

    def _join_processes(self) -> None:
        start = time.monotonic()
        try:
            while True:
                codes = [proc.exitcode for proc in self.processes]
                if self.TEST_ERROR_EXIT_CODE in codes or all(c is not None for c in codes):
                    break
                if time.monotonic() - start > self.timeout:
                    break
                time.sleep(0.05)
            self._check_return_codes(time.monotonic() - start)
        finally:
            for proc in self.processes:
                if proc.is_alive():
                    proc.terminate()
            for pipe in self.pid_to_pipe.values():
                pipe.close()

    def _message_of(self, proc: Any) -> str:
        pipe = self.pid_to_pipe[proc.pid]
        try:
            return str(pipe.recv()) if pipe.poll(1) else "(no traceback received)"
        except (EOFError, OSError):
            return "(no traceback received)"

    def _check_return_codes(self, elapsed: float) -> None:
        if not self.processes:
            raise RuntimeError(f"{type(self).__name__} started no ranks: call "
                               "self._spawn_processes() in setUp")  # fmt: skip
        errors = [(rank, proc) for rank, proc in enumerate(self.processes)
                  if proc.exitcode == self.TEST_ERROR_EXIT_CODE]  # fmt: skip
        if errors:
            raise RuntimeError("\n".join(
                f"Process {rank} exited with error code {self.TEST_ERROR_EXIT_CODE} and "
                f"exception:\n{self._message_of(proc)}" for rank, proc in errors))  # fmt: skip
        for rank, proc in enumerate(self.processes):
            if proc.exitcode is None:
                raise RuntimeError(f"Process {rank} timed out after {elapsed:.0f} seconds")
        codes = [proc.exitcode for proc in self.processes]
        if all(code == self.TEST_SKIP_EXIT_CODE for code in codes):
            raise unittest.SkipTest(self._message_of(self.processes[0]))
        for rank, code in enumerate(codes):
            self.assertEqual(code, 0, msg=f"Process {rank} exited with code {code}")

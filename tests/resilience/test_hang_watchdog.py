"""The hang watchdog: a stuck rank is reported by rank, host and iteration, with every rank's
stacks, and the job exits 3 within hang_timeout + a few seconds instead of 30 minutes.

The job test runs real ranks under torchrun with gloo; the board tests use a real
TCPStore server in this process and watchdogs whose report is recorded rather than fatal.
"""

from __future__ import annotations

import datetime
import re
import threading
import time

import pytest
import torch.distributed as torch_dist
from signal_runs import Job, cadence, record, write_config

from cadence.dist.testing import free_port
from cadence.resilience.heartbeat import Heartbeat
from cadence.resilience.progress_board import FileBoard, LocalBoard, ProgressBoard, StoreBoard
from cadence.resilience.watchdog import HangWatchdog, describe_ranks


@pytest.mark.dist
@pytest.mark.slow
def test_a_rank_stuck_at_iteration_3_is_named_and_the_job_exits_3(tmp_path):
    """Rank 1 sleeps forever after iteration 3; rank 0 blocks in iteration 4's all-reduce
    (gloo would wait its 600 s). Both ranks report within hang_timeout + 30 s (before:
    the group's timeout, then torchrun's 30 s, naming neither rank nor iteration)."""
    marks = str(tmp_path / "marks")
    hang_timeout = 2
    cfg = write_config(tmp_path, hooks=[dict(type="StallAt", marks=marks, at=3, rank=1)],
                       env_cfg=dict(dist_cfg=dict(backend="gloo", timeout=600,
                                                  hang_timeout=hang_timeout)))  # fmt: skip
    job = Job(tmp_path, ["-m", "torch.distributed.run", "--nproc_per_node", "2",
                         "--master_port", str(free_port()),
                         *cadence("train", str(cfg), "--launcher", "pytorch")])  # fmt: skip
    try:
        job.wait_for("stalled.rank1", timeout=180)
        stalled = time.monotonic()
        code = job.finish(timeout=hang_timeout + 60)
        took = time.monotonic() - stalled
        record("hang watchdog, rank 1 stuck under torchrun", stall_to_exit=took)
        assert code != 0
        assert hang_timeout < took < hang_timeout + 30, job.err_tail()
        err = job.err()
        assert err.count("exitcode  : 3") == 2, err[-3000:]  # torchrun's summary, both ranks
        rank_1 = "in iteration 3, in hook StallAt.after_train_iter"
        rank_0 = "in iteration 4, backward pass done, waiting for the gradients' all-reduce"
        for rank, where in ((0, rank_0), (1, rank_1)):
            said = re.search(rf"cadence \(rank {rank} of 2, host \S+, pid \d+\): no rank made "
                             rf"progress for [\d.]+ s \(env_cfg\.dist_cfg\.hang_timeout=2\)[^\n]*",
                             err)  # fmt: skip
            assert said, err[-3000:]
            line = said.group(0)
            behind = (rf"Behind: rank 1 \(host \S+, pid \d+\) {rank_1}\. Ahead of it: "
                      rf"rank 0 \(host \S+, pid \d+\) {rank_0}\.")  # fmt: skip
            assert re.search(behind, line), line
            assert f"This rank is {where}" in line and "Exiting with code 3" in line
            assert f"[rank {rank}] Python stacks, {where}:" in err
            assert f"[rank {rank}] threads: " in err and "cadence-signal-watch" in err
        stuck = re.search(r"\[rank 1\]   File \"\S+signal_toys\.py\", line \d+ in after_train_iter",
                          err)  # fmt: skip
        assert stuck, "rank 1's stack shows where it sleeps"
        logged = "".join(p.read_text() for p in (tmp_path / "work").glob("*/*.log"))
        assert "no rank made progress" in logged
        assert job.survivors() == []
    finally:
        job.cleanup()


class Recorded(HangWatchdog):
    """A watchdog whose report is recorded (and ends its watch) instead of ending the process."""

    reports: list[tuple[float, str]]

    def _report(self, board: ProgressBoard, silent_for: float, busy: bool = False) -> None:
        self.reports.append((silent_for, describe_ranks(board.entries(), self.world_size)))
        self._stop.set()


class Lockstep:
    """The watchdogs' clock and wait: every dog waits at a barrier, then the clock moves one
    poll interval (so each look of every dog happens at a known time), ``actions[tick]``
    runs, and the watch ends once every dog has reported or after ``ticks`` ticks."""

    def __init__(self, dogs: int, interval: float, ticks: int, actions: dict) -> None:
        self.now, self.tick, self.interval, self.ticks = 100.0, 0, interval, ticks
        self.actions, self.watched = actions, []
        self.done = threading.Event()
        self._barrier = threading.Barrier(dogs, action=self._advance)

    def clock(self) -> float:
        return self.now

    def _advance(self) -> None:
        self.tick += 1
        self.now += self.interval
        self.actions.get(self.tick, lambda: None)()
        if self.tick >= self.ticks or all(dog.reports for dog in self.watched):
            self.done.set()

    def wait(self, seconds: float) -> bool:
        assert seconds == self.interval
        if not self.done.is_set():
            try:
                self._barrier.wait(timeout=10)
            except threading.BrokenBarrierError:  # the other dog's thread ended: stop too
                self.done.set()
        return self.done.is_set()


def test_ranks_busy_together_are_no_hang_but_one_rank_outside_the_section_is():
    """Every rank in a checkpoint save counts as moving; when one leaves it and stops moving
    while the other waits inside, both report it as behind after the timeout exactly."""
    server = torch_dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                                 timeout=datetime.timedelta(seconds=5))  # fmt: skip
    beats = [Heartbeat(), Heartbeat()]
    for beat in beats:
        beat.mode, beat.busy_depth, beat.busy_with = "train", 1, "saving a checkpoint"
    timeout = 1.25  # polled every 0.125 s (exact in binary): tick k is at 100 + k / 8
    quiet = []

    def leave() -> None:  # tick 20: two timeouts all busy (under BUSY_FACTOR's 3), unreported
        quiet.append([list(dog.reports) for dog in dogs])
        beats[1].busy_depth = 0

    steps = Lockstep(2, 0.125, ticks=80, actions={20: leave})
    dogs = []
    for rank, beat in enumerate(beats):

        def board(rank=rank):
            return StoreBoard.connect("127.0.0.1", server.port, rank, 2, 5.0, "test")

        dog = Recorded(timeout, beat, board, rank=rank, world_size=2, clock=steps.clock,
                       wait=steps.wait)  # fmt: skip
        dog.reports = []
        dogs.append(dog)
    steps.watched = dogs
    for dog in dogs:
        dog.start()
    try:
        assert steps.done.wait(30)
        assert quiet == [[[], []]]
        for dog in dogs:
            assert len(dog.reports) == 1
            silent_for, said = dog.reports[0]
            assert silent_for == timeout  # at the first look a timeout after the last move
            assert said.startswith("Behind: rank 1 (host "), said
            assert "waiting for the data of iteration 1. Ahead of it: rank 0" in said
            assert said.endswith("waiting for the data of iteration 1, saving a checkpoint.")
        # within a tick the ranks post in either order: rank 0 may still see rank 1 busy
        assert steps.tick in (30, 31)
    finally:
        steps.done.set()
        for dog in dogs:
            dog.stop()
    assert server.add("busy", 0) == 0  # each watchdog took its rank out of the busy count


def test_a_file_board_shares_progress_busy_ranks_and_reports(tmp_path):
    boards = [FileBoard(str(tmp_path), rank, 2) for rank in range(2)]
    entry = {"host": "h", "pid": 1, "order": [0, -1], "busy": False, "where": "x"}
    first, _ = boards[0].post(entry, progressed=False, busy=True)
    token, busy = boards[1].post(entry, progressed=True, busy=True)
    assert (token, busy) == (first + 1, 2)
    boards[1].close()
    assert boards[0].post(entry, progressed=False, busy=True) == (token, 1)
    assert sorted(boards[0].entries()) == [0, 1]
    boards[0].reported()
    assert boards[1].wait_reported(0.1) == 1
    boards[1].reported()
    assert boards[0].wait_reported(5) == 2
    assert LocalBoard().post(entry, progressed=True, busy=False) == (1, 0)


def test_the_summary_groups_ranks_and_names_those_that_never_posted():
    def at(steps, where, host="a", busy=False, outer=-1):  # Heartbeat.order()'s layout
        order = [steps, 0, 0, -1, -1, -1] if outer < 0 else [outer, 0, 0, steps, 0, 0]
        order += [int(busy), 0]
        return {"host": host, "pid": 9, "order": order, "busy": busy, "where": where}

    entries = {0: at(7, "in iteration 4"), 2: at(7, "in iteration 4", "b"),
               3: at(3, "in validation batch 2", "c", outer=7),
               4: at(5, "in iteration 3")}  # fmt: skip
    assert describe_ranks(entries, 5) == (
        "Behind: rank 4 (host a, pid 9) in iteration 3; ranks 0, 2 (on a, b) in iteration 4. "
        "Ahead of them: rank 3 (host c, pid 9) in validation batch 2. No progress ever posted "
        "by rank 1 (not started, or stuck before its loop began)."
    )
    same = {0: at(3, "in iteration 2"), 1: at(3, "in iteration 2")}
    assert describe_ranks(same, 2) == (
        "No rank is behind the others: ranks 0-1 (on a) in iteration 2."
    )

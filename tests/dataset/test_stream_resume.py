"""Streams resume mid-epoch exactly (cadence.dataset.stream): the bookkeeping of each
worker's place, a kill+resume that ends bitwise equal to an uninterrupted run with 0 and
2 workers, a dataloader that keeps its own state (as torchdata's StatefulDataLoader), and
the warning of a stream without state."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from stream_toys import Net, Seen
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info
from torch.utils.data._utils.collate import default_collate

from cadence.dataset import StreamLoader, build_dataloader
from cadence.dataset.stream import StreamPositions
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner

N, BATCH = 17, 4  # 2 workers: worker 0 streams 9 items (3 batches), worker 1 8 (2 batches)


class PlainStream(IterableDataset):
    """Points in a fixed order, each worker streaming every ``num_workers``-th one."""

    def __init__(self, n: int = N) -> None:
        g = torch.Generator().manual_seed(0)
        self.points = torch.randn(n, 4, generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        self._start = 0
        self._yielded = 0

    def _share(self) -> list[int]:
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        return list(range(worker, len(self.labels), workers))

    def __iter__(self) -> Any:
        start, self._start = self._start, 0
        self._yielded = start
        for index in self._share()[start:]:
            self._yielded += 1
            yield {"inputs": self.points[index], "data_samples": self.labels[index], "i": index}


class Stream(PlainStream):
    """PlainStream with the protocol: its state is the number of items of its share yielded."""

    def state_dict(self) -> dict[str, int]:
        return {"yielded": self._yielded}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self._start = state["yielded"]


class SizedStream(Stream):
    """Stream with a length, which an epoch loop needs."""

    def __len__(self) -> int:
        return len(self.labels)


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Stream, force=True)
    DATASETS.register_module(module=PlainStream, force=True)
    DATASETS.register_module(module=SizedStream, force=True)
    MODELS.register_module(module=Net, force=True)


def run(
    work_dir: Any, loader: Any, max_iters: int = 12, resume: Any = False, epochs: int = 0
) -> tuple[Runner, Seen]:
    """Train ``max_iters`` iterations (or ``epochs`` epochs), saving every 3 iterations."""
    train_cfg = dict(type="IterBasedTrainLoop", max_iters=max_iters)
    if epochs:
        train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=epochs)
    runner = Runner(**dict(
        model=dict(type="Net"), work_dir=str(work_dir), train_dataloader=loader,
        train_cfg=train_cfg,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)),
        default_hooks=dict(logger=dict(type="LoggerHook", progress="off"),
                           checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False)),
        randomness=dict(seed=3), log_level="WARNING", resume=resume,
    ))  # fmt: skip
    seen = Seen()
    runner.register_hook(seen)
    runner.train()
    return runner, seen


def stream_cfg(workers: int, stream: str = "Stream") -> dict[str, Any]:
    return dict(dataset=dict(type=stream), batch_size=BATCH, num_workers=workers,
                collate_fn=dict(type="default_collate"))  # fmt: skip


def order(workers: int) -> list[list[int]]:
    """One epoch's batches: each worker's share in batches, taken in turn from worker 0."""
    shares = [list(range(w, N, max(workers, 1))) for w in range(max(workers, 1))]
    batched = [[s[i : i + BATCH] for i in range(0, len(s), BATCH)] for s in shares]
    turns = max(len(b) for b in batched)
    return [b[t] for t in range(turns) for b in batched if t < len(b)]


def assert_same_weights(a: Runner, b: Runner) -> None:
    for (key, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(x, y), key


@pytest.mark.parametrize(
    ("workers", "resume_at", "iters"),
    [(0, 9, 12), (2, 3, 7)],  # iteration 3 of 2 workers: worker 1's batch is due next
)
def test_a_killed_stream_resumes_mid_epoch_exactly(tmp_path, workers, resume_at, iters, recwarn):
    loader = stream_cfg(workers)
    if workers:
        loader["persistent_workers"] = True  # the second epoch reuses the workers' copies
    full, seen = run(tmp_path / "full", loader, max_iters=iters)
    assert isinstance(full.train_dataloader, StreamLoader)
    epoch = order(workers)  # 5 batches per epoch either way: the run crosses an epoch's end
    assert seen.batches == (epoch * 3)[:iters]
    # a fresh runner (as after a kill) takes the mid-epoch checkpoint and finishes the run
    checkpoint = tmp_path / "full" / f"iter_{resume_at}.pth"
    resumed, rest = run(tmp_path / "resumed", loader, max_iters=iters, resume=str(checkpoint))
    assert rest.batches == seen.batches[resume_at:]
    assert_same_weights(full, resumed)
    assert not [w for w in recwarn if "restarts from its beginning" in str(w.message)]


def test_an_epoch_loop_resumes_a_stream_with_a_length_mid_epoch_exactly(tmp_path):
    loader = stream_cfg(0, "SizedStream")
    full, seen = run(tmp_path / "full", loader, epochs=2)
    assert seen.batches == order(0) * 2  # 5 batches an epoch
    resumed, rest = run(
        tmp_path / "resumed", loader, epochs=2, resume=str(tmp_path / "full/iter_6.pth")
    )  # fmt: skip
    assert rest.batches == seen.batches[6:]
    assert_same_weights(full, resumed)


def test_a_stream_without_state_resumes_with_a_warning_naming_the_consequence(tmp_path):
    loader = stream_cfg(0, "PlainStream")
    run(tmp_path / "full", loader, max_iters=3)
    with pytest.warns(UserWarning, match="restarts from its beginning.*repeated or skipped"):
        run(tmp_path / "resumed", loader, max_iters=4, resume=str(tmp_path / "full/iter_3.pth"))


class Points(Dataset):
    def __init__(self) -> None:
        self.stream = Stream()

    def __len__(self) -> int:
        return N

    def __getitem__(self, index: int) -> dict[str, Any]:
        s = self.stream
        return {"inputs": s.points[index], "data_samples": s.labels[index], "i": index}


class CountingLoader(DataLoader):
    """A dataloader that keeps its own place (as torchdata's StatefulDataLoader): the batches
    of the current epoch yielded; a new epoch starts at the first."""

    def __init__(self, dataset: Dataset) -> None:
        super().__init__(dataset, batch_size=BATCH)
        self._start = self._done = 0

    def __iter__(self) -> Any:
        start, self._start = self._start, 0
        self._done = start
        for first in range(start * BATCH, len(self.dataset), BATCH):  # type: ignore[arg-type]
            last = min(first + BATCH, len(self.dataset))  # type: ignore[arg-type]
            self._done += 1
            yield default_collate([self.dataset[i] for i in range(first, last)])
        self._done = 0

    def state_dict(self) -> dict[str, int]:
        return {"done": self._done}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self._start = state["done"]


def test_a_dataloader_with_its_own_state_is_saved_and_restored_as_a_whole(tmp_path):
    full, seen = run(tmp_path / "full", CountingLoader(Points()), max_iters=8)
    assert seen.batches[5] == [0, 1, 2, 3]  # 17 samples: 5 batches, then a new epoch
    resumed, rest = run(
        tmp_path / "resumed", CountingLoader(Points()), max_iters=8,
        resume=str(tmp_path / "full/iter_3.pth"),
    )  # fmt: skip
    assert rest.batches == seen.batches[3:]
    assert_same_weights(full, resumed)


# ------------------------------------------------------------------ bookkeeping


def test_positions_in_the_middle_of_a_turn_repeat_the_workers_before_the_one_due():
    positions = StreamPositions(3)
    for worker, state in [(0, "a1"), (1, "b1"), (2, "c1"), (0, "a2"), (1, "b2")]:
        positions.record(worker, state)
    # worker 2 is due: 0 and 1 go back one batch, which the resumed run drops
    assert positions.state_dict() == {
        "num_workers": 3, "workers": {0: "a1", 1: "b1", 2: "c1"}, "skip": 2,
    }  # fmt: skip


def test_positions_after_a_full_turn_continue_from_each_latest_batch():
    positions = StreamPositions(2)
    for worker, state in [(0, "a1"), (1, "b1")]:
        positions.record(worker, state)
    assert positions.state_dict() == {"num_workers": 2, "workers": {0: "a1", 1: "b1"}, "skip": 0}


def test_positions_of_a_first_batch_go_back_to_the_start_the_worker_was_given():
    fresh = StreamPositions(2)
    fresh.record(0, "a1")
    assert fresh.state_dict() == {"num_workers": 2, "workers": {}, "skip": 1}
    loaded = StreamPositions(2, {0: "a5", 1: "b5"})
    loaded.record(0, "a6")
    assert loaded.state_dict() == {"num_workers": 2, "workers": {0: "a5", 1: "b5"}, "skip": 1}


def test_positions_of_a_resumed_iterator_that_drew_nothing_yet_are_its_start():
    positions = StreamPositions(2, {0: "a5", 1: "b6"}, skip=1)
    assert positions.state_dict() == {"num_workers": 2, "workers": {0: "a5", 1: "b6"}, "skip": 1}
    positions.record(0, "a6")  # the dropped repeat
    positions.record(1, "b7")
    assert positions.state_dict() == {"num_workers": 2, "workers": {0: "a6", 1: "b7"}, "skip": 0}


def test_positions_skip_workers_whose_stream_ended():
    positions = StreamPositions(3)  # worker 1 ran out: turns go 0, 2, 0, 2
    for worker, state in [(0, "a1"), (1, "b1"), (2, "c1"), (0, "a2"), (2, "c2"), (0, "a3")]:
        positions.record(worker, state)
    assert positions.state_dict() == {
        "num_workers": 3, "workers": {0: "a2", 1: "b1", 2: "c2"}, "skip": 1,
    }  # fmt: skip


def test_positions_of_one_process_never_skip_and_an_ended_iterator_starts_afresh():
    positions = StreamPositions(0)
    positions.record(0, "a1")
    positions.record(0, "a2")
    assert positions.state_dict() == {"num_workers": 0, "workers": {0: "a2"}, "skip": 0}
    positions.end()
    assert positions.state_dict() == {"num_workers": 0, "workers": {}, "skip": 0}


def test_a_stream_loader_continues_where_its_saved_state_says():
    loader = StreamLoader(Stream(), batch_size=BATCH)
    first = iter(loader)
    taken = [next(first)["i"].tolist() for _ in range(2)]
    again = StreamLoader(Stream(), batch_size=BATCH)
    again.load_state_dict(loader.state_dict())
    assert taken == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b["i"].tolist() for b in again] == [[8, 9, 10, 11], [12, 13, 14, 15], [16]]
    assert again.state_dict() == {"num_workers": 0, "workers": {}, "skip": 0}  # epoch ended


def test_a_stream_config_takes_no_sampler():
    with pytest.raises(ValueError, match=r"train_dataloader\.sampler.*stream"):
        build_dataloader(
            dict(dataset=dict(type="Stream"), batch_size=2, sampler=dict(type="DefaultSampler")),
            key_path="train_dataloader",
        )


def test_a_state_saved_with_another_number_of_workers_restarts_the_stream_with_a_warning():
    loader = StreamLoader(Stream(), batch_size=BATCH)
    with pytest.warns(UserWarning, match="num_workers=2.*restarts from its beginning"):
        loader.load_state_dict({"num_workers": 2, "workers": {0: {"yielded": 4}}, "skip": 0})
    assert next(iter(loader))["i"].tolist() == [0, 1, 2, 3]

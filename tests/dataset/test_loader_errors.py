"""A sample that raises names its index, the dataset's description of it and the worker; a
worker that hangs is reported after the loader's timeout, naming the worker and the setting.

Real DataLoader worker processes (forked); each test prints the measured seconds.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from torch.utils.data import Dataset

from cadence.dataset import DataLoaderTimeoutError, build_dataloader
from cadence.dataset.sample_errors import describe_sample


class Files(Dataset):
    """Eight 'files'; the one at ``bad`` cannot be decoded, the one at ``stuck`` never loads."""

    def __init__(self, bad: int = -1, stuck: int = -1) -> None:
        self.bad, self.stuck = bad, stuck

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> int:
        if index == self.bad:
            raise ValueError("cannot decode")
        if index == self.stuck:
            time.sleep(60)  # a read that never returns (its parent stops it)
        return index

    def describe_index(self, index: int) -> str:
        return f"/data/img_{index}.jpg"


class Annotated(Files):
    """An mmengine-style dataset: ``get_data_info`` instead of ``describe_index``."""

    describe_index = None  # type: ignore[assignment]

    def get_data_info(self, index: int) -> dict[str, Any]:
        return {"img_path": f"/data/img_{index}.jpg", "label": 3}


def loader(dataset: Dataset, num_workers: int, **options: Any) -> Any:
    cfg = dict(batch_size=2, num_workers=num_workers, dataset=dataset,
               sampler=dict(type="DefaultSampler", shuffle=False), **options)  # fmt: skip
    return build_dataloader(cfg, seed=0, key_path="train_dataloader")


@pytest.mark.parametrize("dataset_type", [Files, Annotated])
@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_failing_sample_names_its_index_description_and_worker(num_workers, dataset_type):
    start = time.monotonic()
    batches = iter(loader(dataset_type(bad=5), num_workers))
    try:
        list(batches)
    except ValueError as exc:  # the dataset's own type: user code still catches it
        said = "\n".join([str(exc), *getattr(exc, "__notes__", [])])
        # torch's re-raise keeps the exception in its own frame, a reference cycle through
        # the iterator: freed later by the garbage collector, the iterator's shutdown would
        # wait 5 s per worker (torch's behaviour, unchanged); dropping the traceback frees it
        exc.__traceback__ = None
    else:
        raise AssertionError("no error")
    print(f"num_workers={num_workers}: the error came {time.monotonic() - start:.2f} s after start")
    del batches
    where = "the main process \\(num_workers=0\\)" if not num_workers else \
        r"DataLoader worker [01] of 2 \(pid \d+\)"  # fmt: skip
    assert re.search(rf"cadence: while loading sample 5 \(/data/img_5\.jpg\) of "
                     rf"{dataset_type.__name__} in {where}", said), said  # fmt: skip
    by = "its 2 worker processes" if num_workers else "the main process (num_workers=0)"
    assert f"cadence: raised while train_dataloader fetched a batch in {by}" in said
    assert "cannot decode" in said


def test_a_description_that_fails_does_not_hide_the_error():
    class Broken(Files):
        def describe_index(self, index: int) -> str:
            raise KeyError(index)

    assert describe_sample(Broken(), 2) == "describing it raised KeyError: 2"
    assert describe_sample(Files(), (3, 224)) == "/data/img_3.jpg"  # a short cycle's index
    assert describe_sample(object(), 1) is None


def test_a_hanging_worker_is_reported_after_the_timeout_with_its_stack(capfd):
    data = loader(Files(stuck=4), num_workers=2, timeout=1)
    batches = iter(data)
    assert [next(batches), next(batches)] == [[0, 1], [2, 3]]
    asked = time.monotonic()
    with pytest.raises(DataLoaderTimeoutError) as caught:  # a RuntimeError, as torch's
        next(batches)
    took = time.monotonic() - asked
    message = str(caught.value)
    found = re.search(r"train_dataloader: worker (\d) of 2 \(pid (\d+)\) delivered no batch "
                      r"within 1 s \(train_dataloader\.timeout=1\); its Python stacks are printed "
                      r"above\. A worker is stuck", message)  # fmt: skip
    assert found, message
    assert "DataLoader timed out after 1 seconds" in str(caught.value.__cause__)
    err = capfd.readouterr().err
    worker, pid = found.group(1), int(found.group(2))
    assert f"train_dataloader's worker {worker} of 2 (pid {pid}), which owes the next" in err
    assert re.search(r'test_loader_errors\.py", line \d+ in __getitem__', err), err[-2000:]
    del batches, caught
    stopped = time.monotonic()
    while _alive(pid) and time.monotonic() - stopped < 5:
        time.sleep(0.05)
    print(
        f"timeout=1: reported {took:.2f} s after the batch was asked for; the stuck worker "
        f"ended {time.monotonic() - stopped:.2f} s later"
    )
    assert 1 <= took < 10
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("value", [-1, "5", True])
def test_a_bad_timeout_names_its_key(value):
    with pytest.raises(ValueError, match=r"'train_dataloader\.timeout'.*must be a number"):
        loader(Files(), num_workers=2, timeout=value)


def test_workers_wait_300_s_by_default_and_0_waits_forever():
    assert loader(Files(), num_workers=2).timeout == 300
    assert loader(Files(), num_workers=2, timeout=0).timeout == 0
    assert loader(Files(), num_workers=0).timeout == 0  # torch's: no workers to wait for

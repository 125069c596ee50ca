"""Memory of DataLoader workers for a serialised ``BaseDataset``: 0 workers vs 4.

A ``BaseDataset`` with ``serialize_data=True`` (the default) keeps its samples in
one numpy buffer. Workers forked from the main process share that buffer
copy-on-write, so the memory of the whole job (main process + workers) should
hardly grow with the number of workers. With ``serialize_data=False`` the
samples are a list of dicts, and each worker ends up with its own copy of the
pages it touches (reference counts and the garbage collector write to every
object), so memory grows with each worker.

For each layout the script loads one epoch through a ``DataLoader`` (fork start
method) with 0 and with 4 workers, then reads ``/proc/<pid>/smaps_rollup``: PSS
(shared pages counted once across processes, so the sum over processes is the
job's real footprint; RSS where PSS is unavailable) and each worker's private
memory (USS). It prints the job's total with 4 workers over the total with 0.

    python benchmarks/dataset_worker_memory.py [--samples 100000]

Runs in about 10-20 s on 2 busy cores; Linux only (fork, /proc).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import torch
from torch.utils.data import DataLoader

from cadence.dataset import BaseDataset

MiB = 1024 * 1024


class Synthetic(BaseDataset):
    """``samples`` annotations like a detection dataset's, made in code."""

    def __init__(self, samples: int, **kwargs) -> None:
        self.samples = samples
        super().__init__(data_prefix={}, **kwargs)

    def load_data_list(self) -> list[dict]:
        return [
            {
                "img_path": f"images/{i:08d}.jpg",
                "height": 480 + i % 7,
                "width": 640,
                "instances": [{"bbox": [i % 50, 3.0, 40.5, 80.25], "bbox_label": i % 80}],
            }
            for i in range(self.samples)
        ]


def count(batch: list) -> int:
    """Collate to the batch size only: the samples do not travel back."""
    return len(batch)


def memory(pid: int) -> tuple[float, float]:
    """``(PSS or RSS, USS)`` of process ``pid`` in MiB."""
    fields: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as file:
            for line in file:
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    fields[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except FileNotFoundError:  # no smaps_rollup: RSS from statm, USS unknown
        with open(f"/proc/{pid}/statm") as file:
            rss = int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        return rss / MiB, float("nan")
    uss = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return fields.get("Pss", fields.get("Rss", 0)) / MiB, uss / MiB


def job_memory(dataset: BaseDataset, workers: int) -> tuple[float, float]:
    """Total PSS of main + workers after one epoch, and the mean worker USS (MiB)."""
    loader = DataLoader(
        dataset,
        batch_size=256,
        num_workers=workers,
        collate_fn=count,
        persistent_workers=workers > 0,
        multiprocessing_context="fork" if workers else None,
    )
    iterator = iter(loader)
    assert sum(iterator) == len(dataset)
    pids = [w.pid for w in getattr(iterator, "_workers", [])]
    main, _ = memory(os.getpid())
    per_worker = [memory(pid) for pid in pids]
    total = main + sum(pss for pss, _ in per_worker)
    uss = sum(u for _, u in per_worker) / len(per_worker) if per_worker else 0.0
    del iterator, loader
    return total, uss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    print(f"{args.samples} samples, 0 vs {args.workers} workers (PSS, MiB)")
    for serialize in (True, False):
        start = time.perf_counter()
        dataset = Synthetic(args.samples, serialize_data=serialize)
        alone, _ = job_memory(dataset, 0)
        total, uss = job_memory(dataset, args.workers)
        label = "serialize_data=True " if serialize else "serialize_data=False"
        print(
            f"{label}: 0 workers {alone:7.1f}   {args.workers} workers {total:7.1f} "
            f"(each worker private {uss:6.1f})   ratio {total / alone:.2f}x   "
            f"[{time.perf_counter() - start:.1f} s]"
        )
        del dataset


if __name__ == "__main__":
    main()

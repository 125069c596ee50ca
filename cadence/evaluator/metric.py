"""``BaseMetric``: accumulate per-sample results, then compute metrics over all ranks."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from ..dist import broadcast_object_list, collect_results, is_main_process
from ..dist.results import to_cpu
from ..logging import print_log

_to_cpu = to_cpu  # mmengine's private name, which downstream metrics import

_DEVICES = ("cpu", "gpu", "cuda", "npu")


class BaseMetric(ABC):
    """A metric: ``process`` each batch into ``self.results``, then ``evaluate`` once.

    Subclasses implement :meth:`process`, which appends **one entry per sample**
    to ``self.results`` (picklable; tensors preferably on the CPU), and
    :meth:`compute_metrics`, which turns the full list into a dict. In a
    distributed run :meth:`evaluate` gathers every rank's entries in dataset
    order, drops the duplicates a padding sampler added, computes on rank 0
    and hands the same dict to every rank.

    Args:
        collect_device: where results are gathered, ``'cpu'`` (default; tensors
            are moved to the CPU before sending) or ``'gpu'``.
        prefix: metric names become ``'{prefix}/{name}'``; defaults to the class
            attribute ``default_prefix``.
        collect_dir: accepted for mmengine configs; unused, because results
            travel through the process group (no shared file system needed).
    """

    default_prefix: str | None = None

    def __init__(
        self,
        collect_device: str = "cpu",
        prefix: str | None = None,
        collect_dir: str | None = None,
    ) -> None:
        if collect_device not in _DEVICES:
            raise ValueError(
                f"collect_device must be one of {', '.join(map(repr, _DEVICES))}, "
                f"got {collect_device!r}"
            )
        if collect_dir is not None and collect_device != "cpu":
            raise ValueError("collect_dir can only be set with collect_device='cpu'")
        self._dataset_meta: dict | None = None
        self.collect_device = collect_device
        self.collect_dir = collect_dir
        self.results: list[Any] = []
        self.prefix = prefix or self.default_prefix
        if self.prefix is None:
            print_log(
                f"{type(self).__name__} has no prefix: set prefix= or the class attribute "
                "default_prefix so that its metric names cannot clash with other metrics'",
                logger="current",
                level=logging.WARNING,
            )

    @property
    def dataset_meta(self) -> dict | None:
        """Meta information of the evaluated dataset (class names...), if set."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        self._dataset_meta = dataset_meta

    @abstractmethod
    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        """Append one result per sample of this batch to ``self.results``."""

    @abstractmethod
    def compute_metrics(self, results: list[Any]) -> dict[str, Any]:
        """Compute the metrics from the results of the whole dataset (in dataset order)."""

    def evaluate(self, size: int) -> dict[str, Any]:
        """Compute the metrics over exactly ``size`` samples, gathered from every rank.

        Every rank must call it. Returns the same prefixed dict on every rank and
        clears ``self.results``. An error raised by ``compute_metrics`` on rank 0
        is raised on every rank.
        """
        if not self.results:
            print_log(
                f"{type(self).__name__}.results is empty: process() should append one "
                "result per sample to self.results",
                logger="current",
                level=logging.WARNING,
            )
        try:
            collected = collect_results(self.results, size, self.collect_device)
            failure: BaseException | None = None
            box: list[Any] = [None]
            if is_main_process():
                try:
                    box[0] = ("ok", self._compute(to_cpu(collected)))
                except Exception as exc:
                    failure = exc
                    box[0] = ("error", f"{type(exc).__name__}: {exc}")
            broadcast_object_list(box)
        finally:
            self.results.clear()
        status, payload = box[0]
        if failure is not None:
            raise failure
        if status == "error":
            raise RuntimeError(f"{type(self).__name__}.compute_metrics failed on rank 0: {payload}")
        return payload

    def _compute(self, results: list[Any]) -> dict[str, Any]:
        metrics = self.compute_metrics(results)
        if not isinstance(metrics, Mapping):
            raise TypeError(
                f"{type(self).__name__}.compute_metrics must return a dict, "
                f"got {type(metrics).__name__}"
            )
        if not self.prefix:
            return dict(metrics)
        return {f"{self.prefix}/{name}": value for name, value in metrics.items()}

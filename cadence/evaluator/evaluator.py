"""``Evaluator``: runs several metrics side by side; ``build_evaluator`` for runner configs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..dataset.collate import pseudo_collate
from ..registry import EVALUATOR, METRICS, config_location
from .metric import BaseMetric


class EvaluatorAssertionError(ValueError, AssertionError):
    """An argument mmengine's ``Evaluator`` rejects with ``assert`` (a ``ValueError``,
    and an ``AssertionError`` for code written against mmengine)."""


def _is_metric(obj: Any) -> bool:
    return callable(getattr(obj, "process", None)) and callable(getattr(obj, "evaluate", None))


def _as_plain(sample: Any) -> Any:
    """Data elements (objects with ``to_dict``) become dicts; anything else is kept."""
    if isinstance(sample, Mapping):
        return sample
    to_dict = getattr(sample, "to_dict", None)
    return to_dict() if callable(to_dict) else sample


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while True:
        chunk = list(itertools.islice(items, size))
        if not chunk:
            return
        yield chunk


@EVALUATOR.register_module()
class Evaluator:
    """Feed every batch to each metric and merge their results.

    Args:
        metrics: one metric (a ``METRICS`` config dict or an instance) or a list of them.
    """

    def __init__(self, metrics: Any) -> None:
        single = isinstance(metrics, (Mapping, str)) or _is_metric(metrics)
        if single or not isinstance(metrics, Sequence):
            metrics = [metrics]
        self._dataset_meta: dict | None = None
        self.metrics: list[BaseMetric] = [self._build(m, i) for i, m in enumerate(metrics)]

    @staticmethod
    def _build(metric: Any, index: int) -> BaseMetric:
        if isinstance(metric, Mapping):
            key = config_location(metric)[0] or f"metrics.{index}"
            return METRICS.build(metric, key_path=key)
        if _is_metric(metric):
            return metric
        raise TypeError(
            f"metric {index} must be a METRICS config dict or a metric with process() and "
            f"evaluate(), got {type(metric).__name__}"
        )

    @property
    def dataset_meta(self) -> dict | None:
        """Meta information of the evaluated dataset; setting it sets every metric's."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        self._dataset_meta = dataset_meta
        for metric in self.metrics:
            metric.dataset_meta = dataset_meta

    def process(self, data_samples: Sequence[Any], data_batch: Any = None) -> None:
        """Pass one batch of model outputs (and the input batch) to every metric."""
        samples = [_as_plain(sample) for sample in data_samples]
        for metric in self.metrics:
            metric.process(data_batch, samples)

    def evaluate(self, size: int) -> dict[str, Any]:
        """Evaluate every metric over ``size`` samples and merge the dicts.

        Raises ``ValueError`` when two metrics produce the same name.
        """
        merged: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for metric in self.metrics:
            result = metric.evaluate(size)
            clashes = sorted(set(result) & set(merged))
            if clashes:
                names = ", ".join(f"'{k}' ({owners[k]})" for k in clashes)
                raise ValueError(
                    f"{type(metric).__name__} produced metric names that another metric already "
                    f"produced: {names}. There are multiple evaluation results with the same "
                    "metric name: give the metrics different prefixes"
                )
            merged.update(result)
            owners.update(dict.fromkeys(result, type(metric).__name__))
        return merged

    def offline_evaluate(
        self, data_samples: Sequence[Any], data: Sequence[Any] | None = None, chunk_size: int = 1
    ) -> dict[str, Any]:
        """Evaluate saved predictions (and optionally their inputs) in chunks of ``chunk_size``."""
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
        if data is not None and len(data) != len(data_samples):
            raise EvaluatorAssertionError(
                f"data_samples and data should have the same length, got {len(data_samples)} "
                f"and {len(data)}"
            )
        data_chunks = _chunks(iter(data), chunk_size) if data is not None else None
        size = 0
        for chunk in _chunks(iter(data_samples), chunk_size):
            batch = pseudo_collate(next(data_chunks)) if data_chunks is not None else None
            size += len(chunk)
            self.process(chunk, batch)
        return self.evaluate(size)


def _names_evaluator(cfg: Mapping[str, Any]) -> bool:
    """Whether a config's ``type`` is an evaluator (rather than a metric)."""
    target = cfg.get("type")
    if isinstance(target, str):
        return EVALUATOR.get(target) is not None and METRICS.get(target) is None
    return isinstance(target, type) and issubclass(target, Evaluator)


def build_evaluator(cfg: Any) -> Evaluator:
    """Build an evaluator the way a runner config spells it.

    Accepts an ``Evaluator`` (returned as is); ``dict(metrics=...)`` (type
    defaults to ``'Evaluator'``); a dict whose ``type`` is in ``EVALUATOR``; a
    single metric config dict or metric instance; or a list of them.
    """
    if isinstance(cfg, Evaluator):
        return cfg
    if isinstance(cfg, Mapping):
        if "metrics" in cfg or _names_evaluator(cfg):
            spec = dict(cfg.items())
            spec.setdefault("type", "Evaluator")
            key = config_location(cfg)[0] or "evaluator"
            return EVALUATOR.build(spec, key_path=key)
        return Evaluator(cfg)
    if isinstance(cfg, (list, tuple)) or _is_metric(cfg):
        return Evaluator(cfg)
    raise TypeError(
        "an evaluator config must be an Evaluator, a dict (a metric config or "
        f"dict(metrics=...)), a metric, or a list of metrics; got {type(cfg).__name__}"
    )

"""``DumpResults``: a metric that writes the model's predictions to a pickle file."""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Sequence
from typing import Any

from ..dist.results import to_cpu
from ..registry import METRICS
from .metric import BaseMetric


@METRICS.register_module()
class DumpResults(BaseMetric):
    """Collect every prediction (in dataset order, from all ranks) and pickle the list.

    The predictions are the model's ``test_step``/``val_step`` outputs as the
    evaluator hands them over (data elements as dicts), tensors moved to the CPU.
    Only rank 0 writes ``out_file_path``; the file is replaced atomically. It
    adds no metric values.

    Args:
        out_file_path: the pickle file to write; must end with ``.pkl`` or ``.pickle``.
        collect_device: where results are gathered across ranks (see :class:`BaseMetric`).
        collect_dir: accepted for mmengine configs; unused.
    """

    default_prefix = "dump"

    def __init__(
        self,
        out_file_path: str | os.PathLike[str],
        collect_device: str = "cpu",
        collect_dir: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, collect_dir=collect_dir)
        path = os.fspath(out_file_path)
        if not path.endswith((".pkl", ".pickle")):
            raise ValueError(
                "The output file must be a pkl file. DumpResults writes a pickle: "
                f"out_file_path must end with .pkl or .pickle, got {path!r}"
            )
        self.out_file_path = path

    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        """Keep each sample's prediction, on the CPU."""
        self.results.extend(to_cpu(list(data_samples)))

    def compute_metrics(self, results: list[Any]) -> dict[str, Any]:
        """Write ``results`` to ``out_file_path`` (called on rank 0 only); no metrics."""
        directory = os.path.dirname(os.path.abspath(self.out_file_path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".dump-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(results, f, protocol=pickle.HIGHEST_PROTOCOL)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.out_file_path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        return {}

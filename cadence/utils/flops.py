"""Model FLOPs of a training step, counted once, and the devices' peak for MFU.

:class:`~cadence.hooks.IterTimerHook` counts the first training step of a run under
``torch.utils.flop_counter.FlopCounterMode`` (matrix products and convolutions,
forward and backward; the step itself runs as usual) and records the count as the
runtime info ``flops_per_step``; the log processor turns it into achieved TFLOP/s per
process and, where the device's peak is known, model FLOPs utilisation (MFU).
"""

from __future__ import annotations

import os
from typing import Any

#: Dense 16-bit tensor-core peak of one device, FLOP/s (vendor datasheets, SXM parts).
#: Matched as a substring of ``torch.cuda.get_device_name()``, first match wins.
PEAK_FLOPS: tuple[tuple[str, float], ...] = (
    ("H200", 989e12), ("H100", 989e12), ("GH200", 989e12), ("B200", 2250e12),
    ("A100", 312e12), ("A800", 312e12), ("L40S", 362e12), ("L40", 181e12), ("L4", 121e12),
    ("A10G", 70e12), ("A10", 125e12), ("RTX 4090", 165e12), ("RTX 3090", 71e12),
    ("V100", 125e12), ("T4", 65e12),
)  # fmt: skip
PEAK_ENV = "CADENCE_PEAK_FLOPS"
#: Strategies whose step the counter sees whole (sharded ones run ops on DTensors or in
#: DeepSpeed's engine, which the counter does not attribute reliably).
COUNTED_STRATEGIES = ("SingleDeviceStrategy", "DDPStrategy")


def peak_flops(device: Any) -> float | None:
    """The peak FLOP/s of one ``device``: ``$CADENCE_PEAK_FLOPS`` if set, else the table's
    entry for a CUDA device's name; None when unknown (a CPU, say)."""
    value = os.environ.get(PEAK_ENV)
    if value:
        return float(value)
    import torch

    device = torch.device(device) if device is not None else None
    if device is None or device.type != "cuda" or not torch.cuda.is_available():
        return None
    name = torch.cuda.get_device_name(device)
    return next((peak for key, peak in PEAK_FLOPS if key in name), None)


class StepFlopCounter:
    """Counts the FLOPs of the code between :meth:`start` and :meth:`stop`, once."""

    def __init__(self) -> None:
        self._mode: Any = None
        self.done = False

    def start(self, strategy: str, compiled: bool) -> None:
        """Count from now on if a step of this run can be counted: its strategy (by class
        name) is one of :data:`COUNTED_STRATEGIES` and its model is not compiled;
        otherwise never count."""
        if strategy not in COUNTED_STRATEGIES or compiled:
            self.done = True
            return
        from torch.utils.flop_counter import FlopCounterMode

        self._mode = FlopCounterMode(display=False)
        self._mode.__enter__()

    def stop(self) -> int | None:
        """Stop counting; the FLOPs counted (None when nothing was being counted)."""
        mode, self._mode = self._mode, None
        if mode is None:
            return None
        mode.__exit__(None, None, None)
        self.done = True
        return int(mode.get_total_flops())

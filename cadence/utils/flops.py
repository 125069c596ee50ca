"""Model FLOPs of a training step, counted once, and the devices' peak for MFU.

:class:`~cadence.hooks.IterTimerHook` counts the forward pass of a run's first training
step under ``torch.utils.flop_counter.FlopCounterMode`` (matrix products and
convolutions), takes three times that for the step (:data:`STEP_PER_FORWARD`) and
records it as the runtime info ``flops_per_step``; the log processor turns it into
achieved TFLOP/s per process and, where the device's peak is known, model FLOPs
utilisation (MFU).
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
#: A training step's FLOPs per forward FLOP: the backward pass of a matrix product or a
#: convolution takes twice its forward (the input's and the weight's gradients), the
#: convention of model FLOPs utilisation.
STEP_PER_FORWARD = 3
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
    """Counts the FLOPs of one training step, once: the model's forward pass under
    ``FlopCounterMode``, times :data:`STEP_PER_FORWARD`.

    Only the forward runs under the counter: a backward pass under a Python dispatch mode
    takes other kernels (its gradients differ in the last bits from the same step
    uncounted), and counting must not change a run's numbers.
    """

    def __init__(self) -> None:
        self._mode: Any = None
        self._hooks: list[Any] = []
        self._forward = 0
        self._counted = False
        self.done = False

    def start(self, strategy: str, compiled: bool, module: Any) -> None:
        """Count the next forward pass of ``module`` (the unwrapped model) if a step of
        this run can be counted: its strategy (by class name) is one of
        :data:`COUNTED_STRATEGIES` and its model is not compiled; otherwise never count."""
        if strategy not in COUNTED_STRATEGIES or compiled:
            self.done = True
            return
        self._hooks = [
            module.register_forward_pre_hook(self._enter),
            module.register_forward_hook(self._exit),
        ]

    def _enter(self, module: Any, args: Any) -> None:
        if self._mode is None and not self._counted:
            from torch.utils.flop_counter import FlopCounterMode

            self._mode = FlopCounterMode(display=False)
            self._mode.__enter__()

    def _exit(self, module: Any, args: Any, output: Any) -> None:
        mode, self._mode = self._mode, None
        if mode is not None:
            mode.__exit__(None, None, None)
            self._forward, self._counted = int(mode.get_total_flops()), True

    def stop(self) -> int | None:
        """Stop counting; the step's FLOPs (None when no forward pass was counted)."""
        for hook in self._hooks:
            hook.remove()
        self._hooks = []
        self._exit(None, None, None)  # a forward pass that raised
        self.done = True
        counted, self._counted = self._counted, False
        return STEP_PER_FORWARD * self._forward if counted else None

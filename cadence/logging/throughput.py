"""Throughput items of a training log line: samples/s, tokens/s, TFLOP/s and MFU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def step_rates(
    runner: RunnerProtocol, mode: str, seconds: float, window: int | None = None
) -> list[tuple[str, float, str, int]]:
    """``(tag key, value, text, rank)`` of tokens/s (all processes; the mean of the
    batches' ``num_tokens`` over ``window`` iterations, as the step time ``seconds``),
    achieved TFLOP/s per process and MFU (from ``flops_per_step``)."""
    if mode != "train" or not seconds > 0:
        return []
    rates = []
    hub = runner.message_hub
    tokens = hub.log_scalars.get("train/num_tokens")
    if tokens is not None and len(tokens):
        speed = float(tokens.mean(window)) * runner.world_size / seconds
        rates.append(("tokens_per_sec", speed, f"tokens/s: {speed:.0f}  ", 58))
    flops = hub.runtime_info.get("flops_per_step")
    if flops:
        achieved = float(flops) / seconds
        rates.append(("tflops", achieved / 1e12, f"TFLOP/s: {achieved / 1e12:.3g}  ", 35))
        from ..utils.flops import peak_flops

        peak = peak_flops(runner.strategy.device)
        if peak:
            rates.append(("mfu", achieved / peak, f"mfu: {100 * achieved / peak:.1f}%  ", 45))
    return rates


def samples_per_second(runner: RunnerProtocol, loader: Any, seconds: float) -> float | None:
    """Samples per second over all processes, from the training ``loader``'s batch size and
    a step time."""
    if not seconds > 0:
        return None
    size = getattr(loader, "batch_size", None)
    if size is None:
        size = getattr(getattr(loader, "batch_sampler", None), "batch_size", None)
    if not isinstance(size, int):
        return None
    return size * runner.world_size / seconds


__all__ = ["samples_per_second", "step_rates"]

"""A model's size at a glance: parameters by top-level module, trainable vs frozen, buffers."""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn


@dataclass(frozen=True)
class ModuleSize:
    """Counts of one module (its own parameters and buffers and those of its children)."""

    name: str
    kind: str
    trainable: int
    frozen: int
    buffers: int
    bytes: int

    @property
    def params(self) -> int:
        return self.trainable + self.frozen


def _numel(tensor: object) -> int:
    # ZeRO-3 keeps an empty placeholder and the full count in ``ds_numel``; a DTensor's
    # numel is already the global one.
    return int(getattr(tensor, "ds_numel", None) or tensor.numel())  # type: ignore[attr-defined]


def measure(name: str, module: nn.Module, seen: set[int]) -> ModuleSize:
    """The size of ``module``, counting tensors not already in ``seen`` (shared weights once)."""
    trainable = frozen = buffers = size = 0
    for param in module.parameters():
        if id(param) in seen:
            continue
        seen.add(id(param))
        count = _numel(param)
        size += count * param.element_size()
        if param.requires_grad:
            trainable += count
        else:
            frozen += count
    for buffer in module.buffers():
        if id(buffer) in seen:
            continue
        seen.add(id(buffer))
        buffers += _numel(buffer)
        size += _numel(buffer) * buffer.element_size()
    return ModuleSize(name, type(module).__name__, trainable, frozen, buffers, size)


def summarize(model: nn.Module) -> tuple[list[ModuleSize], ModuleSize]:
    """One row per top-level child of ``model`` (parameters held directly by ``model``
    under ``(own)``), and the total."""
    seen: set[int] = set()
    rows = [measure(name, child, seen) for name, child in model.named_children()]
    own = measure("(own)", model, seen)  # what the children did not hold
    if own.params or own.buffers:
        rows.append(own)
    total = ModuleSize(
        "total", type(model).__name__, sum(r.trainable for r in rows),
        sum(r.frozen for r in rows), sum(r.buffers for r in rows), sum(r.bytes for r in rows),
    )  # fmt: skip
    return rows, total


def human(count: float, unit: str = "", base: int = 1000) -> str:
    """``1234567`` -> ``'1.2 M'``; with ``base=1024`` and ``unit='B'``, ``'1.2 MiB'``-style."""
    prefixes = ["", "K", "M", "G", "T"]
    index = 0
    while abs(count) >= base and index < len(prefixes) - 1:
        count /= base
        index += 1
    suffix = prefixes[index] + ("i" if base == 1024 and index else "") + unit
    text = f"{count:.0f}" if index == 0 else f"{count:.1f}"
    return f"{text} {suffix}".rstrip()


def summary_table(model: nn.Module) -> str:
    """The summary as a fixed-width text table."""
    rows, total = summarize(model)
    header = ("module", "type", "params", "trainable", "frozen", "buffers", "size")
    lines = [header] + [
        (r.name, r.kind, f"{r.params:,}", f"{r.trainable:,}", f"{r.frozen:,}", f"{r.buffers:,}",
         human(r.bytes, "B", 1024))
        for r in [*rows, total]
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
        for line in lines
    ]
    text.insert(1, "-" * len(text[0]))
    text.insert(len(text) - 1, "-" * len(text[0]))
    return "\n".join(text)


def summary_line(model: nn.Module) -> str:
    """One line: parameters (trainable, frozen), buffers and size."""
    _, total = summarize(model)
    frozen = f", {human(total.frozen)} frozen" if total.frozen else ""
    return (
        f"{total.kind}: {human(total.params)} parameters ({human(total.trainable)} trainable"
        f"{frozen}), {human(total.buffers)} buffer values, {human(total.bytes, 'B', 1024)}"
    )

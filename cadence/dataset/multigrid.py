"""Multigrid training schedules (Wu et al., "A Multigrid Method for Efficiently Training
Video Models", CVPR 2020): the schedule, the dataset protocol and the short-cycle sampler.

A video model is trained on a sequence of smaller *long-cycle* shapes (fewer frames,
smaller crops) with proportionally larger batches, so the memory per iteration stays
about that of the base shape. Within each long-cycle shape, *short cycles* vary the
crop size from one iteration to the next (again with larger batches for smaller
crops). Each long-cycle shape gets the same number of iterations per learning-rate
step; a fine-tuning phase at the base shape ends the run.

Arithmetic (``T``, ``S``: base frames and crop size; ``B``: base batch size)::

    shape (t, s) of a long-cycle factor (ft, fs):  t = round(T * ft), s = round(S * fs)
    short-cycle crops of that shape:               round(S * f) for each short factor f, then s
    batch factor of a shape (t, s):                round(T * S**2 / (t * s**2))   (batch = B * it)
    average factor a_i of long-cycle shape i:      mean of its short-cycle batch factors
    LR step k of length L_k, shape i:              L_k * a_i / sum(a) epochs
        (iterations  ~ epochs / a_i = L_k / sum(a): the same for every shape)
    fine-tuning (the last LR step, length L_ft):   L_ft * a_base / mean(a) epochs
        (the same saving of iterations as the rest of the run)
    all durations are then scaled so they add up to max_epochs * epoch_factor, and the
    stage ends are the rounded running sums.

The learning rate of a stage is the LR step's relative value times the stage's batch
factor (linear scaling). The fine-tuning phase runs its first half at the LR of the
last long-cycle stage and its second half at the last LR step's value.

Datasets take part through :class:`MultigridDataset`: ``set_multigrid_shape(frames,
crop_size)`` sets the long-cycle shape, and with short cycles ``__getitem__`` receives
:class:`ShortCycleIndex` ``(index, crop_size)`` tuples (see :func:`split_index`).
"""

from __future__ import annotations

import bisect
import math
import operator
from collections.abc import Iterator, Sequence, Sized
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from torch.utils.data import DataLoader, Sampler

from ..registry import DATA_SAMPLERS
from ..registry.constraints import validated_by_construction
from .explained_loader import ExplainedDataLoader

#: (frames factor, crop factor) of each long-cycle shape, smallest first.
DEFAULT_LONG_CYCLE_FACTORS: tuple[tuple[float, float], ...] = (
    (0.25, 0.5**0.5),
    (0.5, 0.5**0.5),
    (0.5, 1.0),
    (1.0, 1.0),
)
#: Crop factors (of the base crop) of the short-cycle iterations before the long-cycle one.
DEFAULT_SHORT_CYCLE_FACTORS: tuple[float, ...] = (0.5, 0.5**0.5)


class MultigridShape(NamedTuple):
    """A training shape: per-process batch size, frames per clip and crop size."""

    batch_size: int
    frames: int
    crop_size: int


@dataclass(frozen=True)
class MultigridStage:
    """A run of epochs at one long-cycle shape.

    ``cycle`` lists the shapes that consecutive iterations go through (ending with
    ``shape``); it is ``(shape,)`` without short cycles. ``lr_step`` is the index of
    the original LR step; the fine-tuning stage has the last one.
    """

    lr_step: int
    shape: MultigridShape
    cycle: tuple[MultigridShape, ...]
    begin: int
    end: int
    finetune: bool = False

    @property
    def epochs(self) -> int:
        return self.end - self.begin


@runtime_checkable
class MultigridDataset(Protocol):
    """What a dataset implements to be trained with a multigrid schedule.

    ``set_multigrid_shape`` is called in the main process before each dataloader
    of a new long-cycle shape is built (so worker processes start with it). With
    short cycles, ``__getitem__`` gets :class:`ShortCycleIndex` items whose
    ``crop_size`` overrides the long-cycle crop for that sample.
    """

    def set_multigrid_shape(self, frames: int, crop_size: int) -> None: ...


class ShortCycleIndex(NamedTuple):
    """A dataset index (``sample``) with the crop size its batch uses."""

    sample: int
    crop_size: int


def split_index(index: Any) -> tuple[int, int | None]:
    """``(index, crop_size)`` from a plain index or a :class:`ShortCycleIndex` (crop ``None``)."""
    if isinstance(index, tuple):
        return operator.index(index[0]), operator.index(index[1])
    return operator.index(index), None


def with_index(item: Any, index: Any) -> Any:
    """``item`` with its dataset index replaced by ``index``: a tuple's first element
    (the tuple keeps its type, a :class:`ShortCycleIndex` stays one), else ``index``."""
    if not isinstance(item, tuple) or not item:
        return index
    values = (index, *item[1:])
    make = getattr(item, "_make", None)  # a NamedTuple takes fields, not one iterable
    return make(values) if callable(make) else type(item)(values)


def _positive_int(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")
    return value


def _factors(owner: str, name: str, values: Sequence[Any], size: int | None) -> list[Any]:
    items = [tuple(v) if size else v for v in values]
    flat = [x for item in items for x in (item if size else (item,))]
    if not items or any(not isinstance(x, (int, float)) or x <= 0 for x in flat):
        raise ValueError(f"{owner}: {name} must be non-empty positive numbers, got {values!r}")
    if size and any(len(item) != size for item in items):
        raise ValueError(f"{owner}: each of {name} must be a pair, got {values!r}")
    return items


class MultigridSchedule:
    """The stages, learning rates and epoch count of a multigrid run (see module doc).

    Args:
        base_batch_size, base_frames, base_crop_size: the base shape (batch per process).
        milestones: epochs where the original schedule multiplies the LR (as in
            ``MultiStepLR``); the step after the last one is the fine-tuning phase.
        max_epochs: the original run's length (> the last milestone).
        gamma: LR multiplier at each milestone; or give ``lrs``, the relative LR of
            each step (``len(milestones) + 1`` values).
        epoch_factor: the multigrid run lasts ``max_epochs * epoch_factor`` epochs.
        long_cycle_factors: (frames factor, crop factor) pairs, smallest shape first.
        short_cycle_factors: crop factors of the short-cycle iterations; ``()`` or
            ``short_cycle=False`` turns short cycles off.
        owner: the name errors start with (the hook that builds the schedule).
    """

    def __init__(
        self,
        base_batch_size: int,
        base_frames: int,
        base_crop_size: int,
        milestones: Sequence[int],
        max_epochs: int,
        gamma: float = 0.1,
        lrs: Sequence[float] | None = None,
        epoch_factor: float = 1.5,
        long_cycle_factors: Sequence[Sequence[float]] = DEFAULT_LONG_CYCLE_FACTORS,
        short_cycle_factors: Sequence[float] = DEFAULT_SHORT_CYCLE_FACTORS,
        short_cycle: bool = True,
        owner: str = "MultigridSchedule",
    ) -> None:
        self.owner = owner
        self.base = MultigridShape(
            _positive_int(owner, "base_batch_size", base_batch_size),
            _positive_int(owner, "base_frames", base_frames),
            _positive_int(owner, "base_crop_size", base_crop_size),
        )
        self.milestones = [_positive_int(owner, "milestones", m) for m in milestones]
        self.source_epochs = _positive_int(owner, "max_epochs", max_epochs)
        if not self.milestones or self.milestones != sorted(set(self.milestones)):
            raise ValueError(
                f"{owner}: milestones must be increasing epochs (at least one; the "
                f"LR step after the last is the fine-tuning phase), got {list(milestones)!r}"
            )
        if self.milestones[-1] >= max_epochs:
            raise ValueError(
                f"{owner}: the last milestone ({self.milestones[-1]}) must come "
                f"before max_epochs ({max_epochs}), leaving epochs to fine-tune"
            )
        if lrs is None:
            lrs = [gamma**k for k in range(len(self.milestones) + 1)]
        if len(lrs) != len(self.milestones) + 1:
            raise ValueError(
                f"{owner}: lrs needs {len(self.milestones) + 1} values (one per LR "
                f"step, milestones {self.milestones}), got {len(lrs)}"
            )
        self.step_lrs = [float(v) for v in lrs]
        if not epoch_factor > 0:
            raise ValueError(f"{owner}: epoch_factor must be > 0, got {epoch_factor!r}")
        self.epoch_factor = float(epoch_factor)
        self.long_cycle_factors = _factors(owner, "long_cycle_factors", long_cycle_factors, 2)
        self.short_cycle_factors = (
            _factors(owner, "short_cycle_factors", short_cycle_factors, None)
            if short_cycle and len(short_cycle_factors)
            else []
        )
        self.stages = self._build_stages()
        self.lr_milestones, self.lr_values = self._build_lrs()

    # ------------------------------------------------------------ shapes
    def _shape(self, frames: int, crop: int) -> MultigridShape:
        base = self.base
        factor = round(base.frames * base.crop_size**2 / (frames * crop**2))
        if factor < 1:
            raise ValueError(
                f"{self.owner}: shape of {frames} frames x {crop} crop is larger than the "
                f"base shape ({base.frames} x {base.crop_size}); factors must be <= 1"
            )
        return MultigridShape(base.batch_size * factor, frames, crop)

    def _cycle(self, frames_factor: float, crop_factor: float) -> tuple[MultigridShape, ...]:
        frames = max(1, round(self.base.frames * frames_factor))
        crops = [round(self.base.crop_size * f) for f in self.short_cycle_factors]
        crops.append(round(self.base.crop_size * crop_factor))
        return tuple(self._shape(frames, max(1, crop)) for crop in crops)

    def _average_factor(self, cycle: Sequence[MultigridShape]) -> float:
        return sum(s.batch_size for s in cycle) / len(cycle) / self.base.batch_size

    # ------------------------------------------------------------ stages
    def _build_stages(self) -> list[MultigridStage]:
        cycles = [self._cycle(ft, fs) for ft, fs in self.long_cycle_factors]
        averages = [self._average_factor(c) for c in cycles]
        steps = [0, *self.milestones]
        plan: list[tuple[int, tuple[MultigridShape, ...], float]] = []
        for k in range(len(steps) - 1):
            length = steps[k + 1] - steps[k]
            for cycle, avg in zip(cycles, averages):
                plan.append((k, cycle, length * avg / sum(averages)))
        final = self._cycle(1.0, 1.0)
        saving = sum(averages) / len(averages)
        finetune = (self.source_epochs - steps[-1]) * self._average_factor(final) / saving
        plan.append((len(steps) - 1, final, finetune))

        scale = self.source_epochs * self.epoch_factor / sum(p[2] for p in plan)
        stages, total, begin = [], 0.0, 0
        for index, (k, cycle, epochs) in enumerate(plan):
            total += epochs * scale
            end = round(total)
            last = index == len(plan) - 1
            stages.append(MultigridStage(k, cycle[-1], cycle, begin, end, finetune=last))
            begin = end
        if stages[-1].end <= stages[-1].begin:
            raise ValueError(
                f"{self.owner}: the fine-tuning phase rounds to 0 epochs; raise max_epochs "
                f"or epoch_factor (stage ends: {[s.end for s in stages]})"
            )
        return stages

    def _build_lrs(self) -> tuple[list[int], list[float]]:
        lrs = [self.step_lrs[s.lr_step] * s.shape.batch_size / self.base.batch_size
               for s in self.stages]  # fmt: skip
        milestones = [s.end for s in self.stages[:-1]]
        last = self.stages[-1]
        milestones.append((last.begin + last.end) // 2)
        return milestones, [*lrs[:-1], lrs[-2], lrs[-1]]

    # ----------------------------------------------------------- queries
    @property
    def max_epochs(self) -> int:
        """Epochs of the multigrid run."""
        return self.stages[-1].end

    def stage_at(self, epoch: int) -> MultigridStage:
        """The stage that trains ``epoch`` (0-based; the last stage past the end)."""
        for stage in self.stages:
            if epoch < stage.end:
                return stage
        return self.stages[-1]

    def lr_at(self, epoch: int) -> float:
        """The relative learning rate (times the base LR) of ``epoch``."""
        return self.lr_values[bisect.bisect_right(self.lr_milestones, epoch)]

    def summary(self) -> list[tuple[int, int, int, int, int, tuple[int, ...]]]:
        """Plain tuples ``(lr_step, begin, end, batch, frames, crops of the cycle)`` per stage."""
        return [
            (s.lr_step, s.begin, s.end, s.shape.batch_size, s.shape.frames,
             tuple(c.crop_size for c in s.cycle))
            for s in self.stages
        ]  # fmt: skip

    def table(self) -> str:
        """The schedule as a text table (one line per stage) followed by the LR steps."""
        base = self.base
        head = (
            f"Multigrid schedule: base batch {base.batch_size}, {base.frames} frames, crop "
            f"{base.crop_size}; {self.source_epochs} epochs x {self.epoch_factor:g} -> "
            f"{self.max_epochs} epochs"
        )
        rows = [
            ("epochs", "LR step", "batch", "frames", "crop", "short cycle (batch x crop)", "LR x")
        ]
        for s in self.stages:
            cycle = ", ".join(f"{c.batch_size}x{c.crop_size}" for c in s.cycle)
            lr = f"{self.step_lrs[s.lr_step] * s.shape.batch_size / base.batch_size:g}"
            if s.finetune:  # its first half keeps the LR before it
                lr = f"{self.lr_values[-2]:g}, {lr} from {self.lr_milestones[-1]}"
            rows.append((
                f"{s.begin}-{s.end}" + (" ft" if s.finetune else ""), str(s.lr_step),
                str(s.shape.batch_size), str(s.shape.frames), str(s.shape.crop_size),
                cycle if len(s.cycle) > 1 else "-", lr,
            ))  # fmt: skip
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [head] + ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        steps = ", ".join(
            f"{v:g} from {e}" for e, v in zip([0, *self.lr_milestones], self.lr_values)
        )
        lines.append(f"LR (x base LR): {steps}")
        return "\n".join(lines)


def count_batches(num_samples: int, batch_sizes: Sequence[int], drop_last: bool) -> int:
    """How many batches cycling through ``batch_sizes`` makes of ``num_samples`` samples."""
    total = sum(batch_sizes)
    batches = num_samples // total * len(batch_sizes)
    rest = num_samples % total
    for size in batch_sizes:
        if rest < size:
            break
        rest -= size
        batches += 1
    return batches + (1 if rest and not drop_last else 0)


@DATA_SAMPLERS.register_module()
class ShortCycleBatchSampler(Sampler[list[ShortCycleIndex]]):
    """Batches whose size and crop cycle per iteration: ``batch_sizes[i]`` samples at
    ``crop_sizes[i]``, then ``i + 1``, and so on (restarting each epoch).

    Smaller crops come with proportionally larger batches, so the memory per
    iteration stays about the same. Yields lists of :class:`ShortCycleIndex`.
    """

    def __init__(
        self,
        sampler: Sized,
        batch_sizes: Sequence[int],
        crop_sizes: Sequence[int],
        drop_last: bool = False,
    ) -> None:
        if not batch_sizes or len(batch_sizes) != len(crop_sizes):
            raise ValueError(
                "ShortCycleBatchSampler: batch_sizes and crop_sizes must be non-empty and of "
                f"equal length, got {list(batch_sizes)} and {list(crop_sizes)}"
            )
        for name, values in (("batch_sizes", batch_sizes), ("crop_sizes", crop_sizes)):
            if any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in values):
                raise ValueError(
                    f"ShortCycleBatchSampler: {name} must be positive ints, got {list(values)}"
                )
        self.sampler = sampler
        self.batch_sizes = list(batch_sizes)
        self.crop_sizes = list(crop_sizes)
        self.drop_last = bool(drop_last)
        self._start_batch = 0

    def set_start_batch(self, batches: int) -> bool:
        """Make the next ``__iter__`` (only that one) skip its first ``batches`` batches
        without drawing their indices; ``False`` when the sampler cannot start mid-epoch."""
        set_start = getattr(self.sampler, "set_start_index", None)
        if not callable(set_start):
            return False
        cycles, rest = divmod(operator.index(batches), len(self.batch_sizes))
        set_start(cycles * sum(self.batch_sizes) + sum(self.batch_sizes[:rest]))
        self._start_batch = rest
        return True

    def __iter__(self) -> Iterator[list[ShortCycleIndex]]:
        position, self._start_batch = self._start_batch, 0
        size, crop = self.batch_sizes[position], self.crop_sizes[position]
        batch: list[ShortCycleIndex] = []
        for index in self.sampler:  # type: ignore[attr-defined]
            batch.append(ShortCycleIndex(index, crop))
            if len(batch) == size:
                yield batch
                batch = []
                position = (position + 1) % len(self.batch_sizes)
                size, crop = self.batch_sizes[position], self.crop_sizes[position]
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        return count_batches(len(self.sampler), self.batch_sizes, self.drop_last)


def _loader_options(template: DataLoader) -> dict[str, Any]:
    options: dict[str, Any] = dict(
        num_workers=template.num_workers, collate_fn=template.collate_fn,
        pin_memory=template.pin_memory, timeout=template.timeout,
        worker_init_fn=template.worker_init_fn, generator=template.generator,
        persistent_workers=template.persistent_workers,
        pin_memory_device=template.pin_memory_device,
    )  # fmt: skip
    if template.num_workers:
        options["multiprocessing_context"] = template.multiprocessing_context
        options["prefetch_factor"] = template.prefetch_factor
    return options


def multigrid_dataloader(
    template: DataLoader, sampler: Any, stage: MultigridStage, drop_last: bool
) -> DataLoader:
    """A DataLoader like ``template`` (dataset, workers, collate...) over ``sampler`` with
    the batch sizes of ``stage``: a plain batch size, or a :class:`ShortCycleBatchSampler`."""
    options = _loader_options(template)
    explained = isinstance(template, ExplainedDataLoader)  # its errors name its config
    cls = ExplainedDataLoader if explained else DataLoader
    if len(stage.cycle) == 1:
        loader = cls(
            template.dataset, batch_size=stage.shape.batch_size, sampler=sampler,
            drop_last=drop_last, **options,
        )  # fmt: skip
    else:
        batch_sampler = ShortCycleBatchSampler(
            sampler, [c.batch_size for c in stage.cycle], [c.crop_size for c in stage.cycle],
            drop_last,
        )  # fmt: skip
        loader = cls(template.dataset, batch_sampler=batch_sampler, **options)
    if explained:
        loader.key_path = template.key_path  # type: ignore[attr-defined]
    return loader


def epoch_batches(stage: MultigridStage, num_samples: int, drop_last: bool) -> int:
    """Iterations of one epoch of ``num_samples`` samples at ``stage``."""
    sizes = [c.batch_size for c in stage.cycle]
    if len(sizes) == 1:
        return num_samples // sizes[0] if drop_last else math.ceil(num_samples / sizes[0])
    return count_batches(num_samples, sizes, drop_last)


__all__ = [
    "DEFAULT_LONG_CYCLE_FACTORS", "DEFAULT_SHORT_CYCLE_FACTORS", "MultigridDataset",
    "MultigridSchedule", "MultigridShape", "MultigridStage", "ShortCycleBatchSampler",
    "ShortCycleIndex", "count_batches", "epoch_batches", "multigrid_dataloader", "split_index",
    "with_index",
]  # fmt: skip


validated_by_construction(ShortCycleBatchSampler, lambda: {"sampler": [0]})

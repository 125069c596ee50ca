"""Profile the first epochs or iterations of training with ``torch.profiler``."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

_TRACE_TYPES = ("log_trace", "tb_trace")


@HOOKS.register_module()
class ProfilerHook(Hook):
    """Run ``torch.profiler.profile`` over the first ``profile_times`` epochs or iterations.

    When the window closes the collected trace is written in Chrome's JSON
    format (open it in ``chrome://tracing`` or Perfetto) to ``json_trace_path``;
    by default ``<log_dir>/profiler_trace.json`` (``profiler_trace_rank<r>.json``
    in a multi-process run) unless ``on_trace_ready`` handles the traces. A
    relative ``json_trace_path`` is taken relative to the run's log directory.

    Args:
        by_epoch: count ``profile_times`` in epochs (else iterations).
        profile_times: how many epochs/iterations to profile.
        activity_with_cpu / activity_with_cuda: which activities to record.
        schedule: keyword arguments of ``torch.profiler.schedule`` (``wait``,
            ``warmup``, ``active``, ``repeat``, ``skip_first``).
        on_trace_ready: a callable taking the profiler, or
            ``dict(type='log_trace', **table_kwargs)`` (print a summary table) or
            ``dict(type='tb_trace', dir_name=...)`` (TensorBoard traces, in the
            log directory by default).
        record_shapes / profile_memory / with_stack / with_flops: passed to the
            profiler.
        json_trace_path: where to write the Chrome trace.
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        *,
        by_epoch: bool = True,
        profile_times: int = 1,
        activity_with_cpu: bool = True,
        activity_with_cuda: bool = False,
        schedule: Mapping[str, Any] | None = None,
        on_trace_ready: Callable[..., Any] | Mapping[str, Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        json_trace_path: str | None = None,
    ) -> None:
        for name, value in (("by_epoch", by_epoch), ("activity_with_cpu", activity_with_cpu),
                            ("activity_with_cuda", activity_with_cuda)):  # fmt: skip
            if not isinstance(value, bool):
                raise TypeError(f"ProfilerHook.{name} must be a bool, got {value!r}")
        if not isinstance(profile_times, int) or profile_times < 1:
            raise ValueError(f"ProfilerHook.profile_times must be >= 1, got {profile_times!r}")
        if not (activity_with_cpu or activity_with_cuda):
            raise ValueError("ProfilerHook: enable activity_with_cpu or activity_with_cuda")
        if schedule is not None and not isinstance(schedule, Mapping):
            raise TypeError(
                "ProfilerHook.schedule must be a dict of torch.profiler.schedule arguments, "
                f"e.g. dict(wait=1, warmup=1, active=2); got {type(schedule).__name__}"
            )
        if isinstance(on_trace_ready, Mapping):
            kind = on_trace_ready.get("type")
            if kind not in _TRACE_TYPES:
                from ..utils import did_you_mean

                raise ValueError(
                    f"ProfilerHook.on_trace_ready type must be 'log_trace' or 'tb_trace', got "
                    f"{kind!r}.{did_you_mean(str(kind), _TRACE_TYPES)}"
                )
        elif on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(
                "ProfilerHook.on_trace_ready must be a callable, a dict with type 'log_trace' or "
                f"'tb_trace', or None; got {type(on_trace_ready).__name__}"
            )
        self.by_epoch = by_epoch
        self.profile_times = profile_times
        self.activity_with_cpu = activity_with_cpu
        self.activity_with_cuda = activity_with_cuda
        self.schedule = dict(schedule) if schedule is not None else None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.json_trace_path = json_trace_path
        self.profiler: Any = None
        self.trace_path: str | None = None
        self._done = 0
        self._finished = False

    # ------------------------------------------------------------ building
    def _trace_handler(self, runner: RunnerProtocol) -> Callable[..., Any] | None:
        spec = self.on_trace_ready
        if spec is None or callable(spec):
            return spec
        cfg = dict(spec)
        kind = cfg.pop("type")
        if kind == "log_trace":

            def log_table(prof: Any) -> None:
                runner.logger.info("\n" + prof.key_averages().table(**cfg))

            return log_table
        import torch.profiler

        dir_name = cfg.pop("dir_name", "tf_tracing_logs")
        if not os.path.isabs(dir_name):
            dir_name = os.path.join(runner.log_dir, dir_name)
        runner.logger.info(f"ProfilerHook: TensorBoard traces go to {dir_name}")
        return torch.profiler.tensorboard_trace_handler(dir_name, **cfg)

    def _output_path(self, runner: RunnerProtocol) -> str | None:
        path = self.json_trace_path
        if path is None:
            if self.on_trace_ready is not None:
                return None
            suffix = f"_rank{runner.rank}" if runner.world_size > 1 else ""
            path = f"profiler_trace{suffix}.json"
        return path if os.path.isabs(path) else os.path.join(runner.log_dir, path)

    # -------------------------------------------------------------- stages
    def before_train(self, runner: RunnerProtocol) -> None:
        """Start profiling (once per hook)."""
        if self.profiler is not None or self._finished:
            return
        import torch.profiler as tp

        if not tp.kineto_available():
            raise RuntimeError("ProfilerHook needs a PyTorch build with Kineto profiling support")
        activities = []
        if self.activity_with_cpu:
            activities.append(tp.ProfilerActivity.CPU)
        if self.activity_with_cuda:
            activities.append(tp.ProfilerActivity.CUDA)
        self.trace_path = self._output_path(runner)
        self.profiler = tp.profile(
            activities=activities,
            schedule=tp.schedule(**self.schedule) if self.schedule is not None else None,
            on_trace_ready=self._trace_handler(runner),
            record_shapes=self.record_shapes,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
            with_flops=self.with_flops,
        )
        self.profiler.__enter__()
        unit = "epoch" if self.by_epoch else "iteration"
        runner.logger.info(f"ProfilerHook: profiling {self.profile_times} {unit}(s)")

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Step the profiler; close it after the last profiled iteration."""
        if self.profiler is None:
            return
        self.profiler.step()
        if not self.by_epoch:
            self._done += 1
            if self._done >= self.profile_times:
                self._stop(runner)

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        """Close the profiler after the last profiled epoch."""
        if self.profiler is None or not self.by_epoch:
            return
        self._done += 1
        if self._done >= self.profile_times:
            self._stop(runner)

    def after_train(self, runner: RunnerProtocol) -> None:
        """Close the profiler when training ends inside the window."""
        if self.profiler is not None:
            self._stop(runner)

    def _stop(self, runner: RunnerProtocol) -> None:
        profiler, self.profiler = self.profiler, None
        self._finished = True
        profiler.__exit__(None, None, None)
        if self.trace_path is None:
            return
        if getattr(profiler, "profiler", None) is None:
            warnings.warn(
                "ProfilerHook: the schedule recorded nothing within the profiled window; "
                "no trace was written",
                stacklevel=2,
            )
            return
        os.makedirs(os.path.dirname(self.trace_path) or ".", exist_ok=True)
        profiler.export_chrome_trace(self.trace_path)
        runner.logger.info(f"ProfilerHook: Chrome trace written to {self.trace_path}")


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(ProfilerHook)

"""Profile the first epochs or iterations of training with ``torch.profiler``."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

_TRACE_TYPES = ("log_trace", "tb_trace")


def _check_schedule(schedule: Mapping[str, Any]) -> None:
    """Build ``torch.profiler.schedule(**schedule)`` once, so a wrong one fails early."""
    import torch.profiler as tp

    try:
        tp.schedule(**schedule)
    except TypeError as exc:
        raise TypeError(
            f"ProfilerHook.schedule {dict(schedule)!r} is not valid for "
            f"torch.profiler.schedule (it takes wait, warmup, active, repeat, skip_first; "
            f"wait, warmup and active are required): {exc}"
        ) from exc


def check_kineto() -> bool:
    """Whether this PyTorch build can profile with Kineto (what ``ProfilerHook`` needs)."""
    import torch

    return bool(getattr(torch.autograd, "kineto_available", lambda: False)())


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
        if schedule is not None and not isinstance(schedule, Mapping):
            raise TypeError(
                "ProfilerHook.schedule must be a dict of torch.profiler.schedule arguments, "
                f"e.g. dict(wait=1, warmup=1, active=2); got {type(schedule).__name__}"
            )
        if schedule is not None:
            _check_schedule(schedule)
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
        self._first = 0  # the epoch/iteration at which profiling started
        self._closed = False  # the window has closed (the profiler is kept, for its results)

    # ------------------------------------------------------------ building
    def _parse_trace_config(self, runner: RunnerProtocol) -> Callable[..., Any] | None:
        """The profiler's ``on_trace_ready`` callable for ``self.on_trace_ready`` (checked
        again: it may have been replaced after construction)."""
        spec = self.on_trace_ready
        if isinstance(spec, Mapping) and spec.get("type") not in _TRACE_TYPES:
            raise ValueError(
                f"ProfilerHook.on_trace_ready type must be 'log_trace' or 'tb_trace', got "
                f"{spec.get('type')!r}"
            )
        if spec is not None and not isinstance(spec, Mapping) and not callable(spec):
            raise ValueError(
                "ProfilerHook.on_trace_ready must be a callable, a dict with type 'log_trace' "
                f"or 'tb_trace', or None; got {type(spec).__name__}"
            )
        return self._trace_handler(runner)

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
        if path is not None and os.path.isabs(path):
            return path
        log_dir = runner.log_dir
        if not isinstance(log_dir, str):
            return None  # a runner without a log directory gets no default trace
        if path is None:
            if self.on_trace_ready is not None:
                return None
            world_size = runner.world_size
            multi = isinstance(world_size, int) and world_size > 1
            path = f"profiler_trace_rank{runner.rank}.json" if multi else "profiler_trace.json"
        return os.path.join(log_dir, path)

    # -------------------------------------------------------------- stages
    def before_run(self, runner: RunnerProtocol) -> None:
        """Start profiling (once per hook), as mmengine's hook does."""
        self._start(runner)

    def before_train(self, runner: RunnerProtocol) -> None:
        """Start profiling if :meth:`before_run` did not (once per hook); the window counts
        from here (a resumed run's position is known only now)."""
        self._start(runner)
        self._first = self._position(runner)

    def _position(self, runner: RunnerProtocol) -> int:
        position = runner.epoch if self.by_epoch else runner.iter
        return position if isinstance(position, int) else 0

    def _start(self, runner: RunnerProtocol) -> None:
        if self.profiler is not None or self._closed:
            return
        import torch.profiler as tp

        if not tp.kineto_available():
            raise RuntimeError("ProfilerHook needs a PyTorch build with Kineto profiling support")
        activities = []
        if self.activity_with_cpu:
            activities.append(tp.ProfilerActivity.CPU)
        if self.activity_with_cuda:
            activities.append(tp.ProfilerActivity.CUDA)
        self._first = self._position(runner)
        self.profiler = tp.profile(
            # none chosen: torch's default (the CPU, and CUDA where there is one)
            activities=activities or None,
            schedule=tp.schedule(**self.schedule) if self.schedule is not None else None,
            on_trace_ready=self._parse_trace_config(runner),
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
        if self.profiler is None or self._closed:
            return
        self.profiler.step()
        if not self.by_epoch and runner.iter + 1 - self._first >= self.profile_times:
            self._export_chrome_trace(runner)

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        """Close the profiler after the last profiled epoch."""
        if self.profiler is None or self._closed or not self.by_epoch:
            return
        if runner.epoch + 1 - self._first >= self.profile_times:
            self._export_chrome_trace(runner)

    def after_train(self, runner: RunnerProtocol) -> None:
        """Close the profiler when training ends inside the window."""
        if self.profiler is not None and not self._closed:
            self._export_chrome_trace(runner)

    def after_run(self, runner: RunnerProtocol) -> None:
        """Close the profiler of a run that did not train (``runner.val()``/``test()``)."""
        if self.profiler is not None and not self._closed:
            self._export_chrome_trace(runner)

    def _export_chrome_trace(self, runner: RunnerProtocol) -> None:
        """Close the profiling window and write its Chrome trace where it belongs."""
        profiler = self.profiler
        self._closed = True
        if profiler is None:
            return
        profiler.__exit__(None, None, None)
        self.trace_path = self._output_path(runner)
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


@HOOKS.register_module()
class NPUProfilerHook(Hook):
    """Profile iterations ``[begin, end)`` of training on an Ascend NPU (``torch_npu``).

    The optional ``torch_npu`` package records the device time of every operator into
    ``result_path`` (analysed with Ascend's ``msprof``); building the hook without it is
    an ``ImportError``. With ``exit_after_profiling`` the process exits once the window
    closes, as mmengine's hook does.
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        *,
        begin: int = 0,
        end: int = 1,
        result_path: str = "cann_profiling",
        exit_after_profiling: bool = True,
        use_e2e_profiler: bool = False,
        ge_profiling_to_std_out: bool = False,
    ) -> None:
        try:
            import torch_npu
        except ImportError as exc:
            raise ImportError(
                "NPUProfilerHook needs the torch_npu package (PyTorch for Ascend NPUs), which "
                "is not installed; use ProfilerHook on other devices"
            ) from exc
        if begin >= end:
            raise ValueError(
                f"NPUProfilerHook: begin ({begin}) must be smaller than end ({end}), the "
                "iteration after the last profiled one"
            )
        self.begin = begin
        self.end = end
        self.result_path = result_path
        self.exit_after_profiling = exit_after_profiling
        if ge_profiling_to_std_out:
            os.environ["GE_PROFILING_TO_STD_OUT"] = "1"
        os.makedirs(result_path, exist_ok=True)
        self.profiler = torch_npu.npu.profile(result_path, use_e2e_profiler=use_e2e_profiler)

    def before_run(self, runner: RunnerProtocol) -> None:
        """Check that the window ends within training."""
        if runner.rank == 0 and self.end > runner.max_iters:
            raise ValueError(
                f"NPUProfilerHook: end ({self.end}) is after the last iteration "
                f"(max_iters={runner.max_iters})"
            )

    def before_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None
    ) -> None:
        """Open the profiler at iteration ``begin`` (rank 0)."""
        if runner.rank == 0 and runner.iter == self.begin:
            self.profiler.__enter__()
            runner.logger.info("NPUProfilerHook: profiling started")

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Close the profiler after iteration ``end - 1`` (rank 0), then exit if asked."""
        if runner.rank != 0 or runner.iter != self.end - 1:
            return
        runner.logger.info("NPUProfilerHook: saving the profile may take a few minutes")
        self.profiler.__exit__(None, None, None)
        if self.exit_after_profiling:
            sys.exit()


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(ProfilerHook)

"""Keep the message hub up to date with the run's position, learning rates and outputs."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import torch

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

_TENSOR = torch.Tensor

#: (message hub key, reader) pairs; a reader returns one learning rate.
LrReaders = list[tuple[str, Callable[[], Any]]]


def _is_scalar(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    if isinstance(value, torch.Tensor):
        return value.numel() == 1
    return getattr(value, "size", None) == 1 and hasattr(value, "item")  # numpy scalars


def _first_group_lr(wrapper: Any) -> Any:
    return wrapper.optimizer.param_groups[0]["lr"]


def _base_lr(wrapper: Any) -> Any:
    return wrapper.base_param_settings["lr"]


def _direct_readers(wrapper: Any, prefix: str = "") -> LrReaders | None:
    """Readers of the values ``wrapper.get_lr()`` reports (first group of each), or None.

    Built only for the wrappers whose ``get_lr`` is cadence's own, so a reader
    returns exactly what ``get_lr()`` would; it reads the live parameter
    groups, so schedulers and loaded optimizer states are seen at once.
    """
    from ..optim import BaseOptimWrapper, OptimWrapperDict

    get_lr = getattr(type(wrapper), "get_lr", None)
    if isinstance(wrapper, OptimWrapperDict) and get_lr is OptimWrapperDict.get_lr:
        readers: LrReaders = []
        for name, inner in wrapper.optim_wrappers.items():
            found = _direct_readers(inner, f"{prefix}{name}.")
            if found is None:
                return None
            readers += found
        return readers
    if isinstance(wrapper, BaseOptimWrapper) and get_lr is BaseOptimWrapper.get_lr:
        readers = []
        base = wrapper.base_param_settings
        if base is not None and "lr" in base:
            readers.append((f"train/{prefix}base_lr", partial(_base_lr, wrapper)))
        readers.append((f"train/{prefix}lr", partial(_first_group_lr, wrapper)))
        return readers
    return None


def lr_readers(wrapper: Any) -> LrReaders | None:
    """Cheap readers for the learning rates of ``wrapper``, or None to call ``get_lr()``.

    The readers are checked against one ``get_lr()`` call: same keys, same
    order, same values.
    """
    readers = _direct_readers(wrapper)
    if readers is None:
        return None
    expected = [(f"train/{name}", values[0]) for name, values in wrapper.get_lr().items()]
    if [(key, read()) for key, read in readers] != expected:
        return None
    return readers


@HOOKS.register_module()
class RuntimeInfoHook(Hook):
    """Publish epoch/iter, max epochs/iters, learning rates, losses and metrics.

    Runtime information (``message_hub.get_info``): ``seed``,
    ``experiment_name``, ``epoch``, ``iter``, ``max_epochs``, ``max_iters``,
    ``loop_stage`` ('train', 'val' or 'test' while that loop runs) and
    ``dataset_meta`` (the training set's ``metainfo``, when it has one).
    Scalars: ``train/lr`` (first parameter group of each optimizer) and every
    entry of the train step's outputs as ``train/<name>`` each iteration;
    ``val/<metric>``/``test/<metric>`` after each evaluation.

    Per iteration this costs a few dictionary operations: learning rates are
    read straight from the optimizer's first parameter group, and message hub
    keys are built once.
    """

    priority = "VERY_HIGH"

    def __init__(self) -> None:
        self._lr_owner: Any = None
        self._lr_readers: LrReaders | None = None
        self._hub: Any = None  # the message hub the writers below write to
        self._set_iter: Callable[[Any], None] | None = None
        #: (checked writer, number writer, reader) per learning rate key
        self._lr_writers: list[
            tuple[Callable[[Any], None], Callable[[Any], None], Callable[[], Any]]
        ] = []
        self._lr_buffers: list[Any] = []  # their buffers (HistoryBuffer)
        #: (number writer, checked writer) when one reader reads the wrapper's first group
        self._lr_single: tuple[Callable[[Any], None], Callable[[Any], None]] | None = None
        #: per output name, (checked writer, number writer)
        self._output_writers: dict[Any, tuple[Any, Any]] = {}
        self._output_buffers: list[Any] = []  # their buffers, trimmed with the lr ones
        #: the loop stage a validation or test interrupted (mmengine's name), while it runs
        self.last_loop_stage: Any = None

    def before_run(self, runner: RunnerProtocol) -> None:
        hub = runner.message_hub
        hub.update_info("seed", runner.seed)
        hub.update_info("experiment_name", runner.experiment_name)
        self.last_loop_stage = None

    def before_train(self, runner: RunnerProtocol) -> None:
        hub = runner.message_hub
        hub.update_info_dict(
            {
                "loop_stage": "train",
                "epoch": runner.epoch,
                "iter": runner.iter,
                "max_epochs": runner.max_epochs,
                "max_iters": runner.max_iters,
            }
        )
        loader = runner.train_dataloader
        meta = getattr(getattr(loader, "dataset", None), "metainfo", None)
        if meta is not None:
            hub.update_info("dataset_meta", meta)
        self._watch_lr(runner.optim_wrapper)

    def after_train(self, runner: RunnerProtocol) -> None:
        runner.message_hub.pop_info("loop_stage")

    def _watch_lr(self, wrapper: Any) -> None:
        self._lr_owner = wrapper
        self._lr_readers = lr_readers(wrapper) if wrapper is not None else None
        self._hub = None  # the writers follow the readers

    def _writers(self, hub: Any) -> None:
        """Take the hub's writers for the keys written every iteration."""
        self._hub = hub
        self._set_iter = hub.info_writer("iter")
        readers = self._lr_readers or ()
        self._lr_writers = [
            (hub.scalar_writer(key), hub.number_writer(key), read) for key, read in readers
        ]
        self._lr_buffers = [hub.get_scalar(key) for key, _ in readers]
        # the usual: one optimizer, no base lr: its first group's lr read inline
        self._lr_single = None
        if len(readers) == 1:
            read = readers[0][1]
            # (of the wrapper itself, which each step has at hand; not one inside a dict)
            if (isinstance(read, partial) and read.func is _first_group_lr
                    and read.args[0] is self._lr_owner):  # fmt: skip
                write, write_number, _ = self._lr_writers[0]
                self._lr_single = (write_number, write)
        self._output_writers = {}
        self._output_buffers = []

    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        runner.message_hub.update_info("epoch", runner.epoch)

    def before_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None
    ) -> None:
        wrapper: Any = runner.optim_wrapper  # a BaseOptimWrapper when _lr_single is set
        if wrapper is not self._lr_owner:
            self._watch_lr(wrapper)
        hub = runner.message_hub
        if hub is not self._hub:
            self._writers(hub)
        at = runner.iter
        self._set_iter(at)  # type: ignore[misc]
        single = self._lr_single
        if single is not None:  # what the one reader reads (of ``wrapper``), without its call
            lr = wrapper.optimizer.param_groups[0]["lr"]
            if type(lr) is float:  # the buffer list's own append, no frame
                single[0](lr)
            else:
                single[1](lr)
        elif self._lr_readers is not None:
            for write, write_number, read in self._lr_writers:
                lr = read()
                if type(lr) is float:
                    write_number(lr)
                else:
                    write(lr)
        else:
            for name, values in wrapper.get_lr().items():
                hub.update_scalar(f"train/{name}", values[0])
        if not at & 1023:  # what the number writers appended is trimmed now and then
            for buffer in self._lr_buffers:
                buffer.trim()
            for buffer in self._output_buffers:
                buffer.trim()

    def _output_writer(self, hub: Any, name: str) -> tuple[Any, Any]:
        """The writers of output ``name``: any value, and Python numbers."""
        key = f"train/{name}"
        pair = (hub.scalar_writer(key), hub.number_writer(key))
        self._output_buffers.append(hub.get_scalar(key))
        return pair

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if outputs:
            hub = runner.message_hub
            if hub is not self._hub:
                self._writers(hub)
            writers = self._output_writers
            for name, value in outputs.items():
                pair = writers.get(name)
                if pair is None:
                    pair = writers[name] = self._output_writer(hub, name)
                if type(value) is _TENSOR and value.is_cpu:
                    # a CPU tensor is read now, as the buffer's append would: no frame
                    try:
                        pair[1](value.item())
                        continue
                    except RuntimeError:  # not one element: the buffer raises its error
                        pass
                pair[0](value)

    # ---------------------------------------------------------- evaluation
    def _enter(self, runner: RunnerProtocol, stage: str) -> None:
        hub = runner.message_hub
        self.last_loop_stage = hub.get_info("loop_stage")
        hub.update_info("loop_stage", stage)

    def _leave(self, runner: RunnerProtocol) -> None:
        hub = runner.message_hub
        if self.last_loop_stage == "train":  # validation inside training
            hub.update_info("loop_stage", "train")
        else:
            hub.pop_info("loop_stage")
        self.last_loop_stage = None

    def before_val(self, runner: RunnerProtocol) -> None:
        self._enter(runner, "val")

    def after_val(self, runner: RunnerProtocol) -> None:
        self._leave(runner)

    def before_test(self, runner: RunnerProtocol) -> None:
        self._enter(runner, "test")

    def after_test(self, runner: RunnerProtocol) -> None:
        self._leave(runner)

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        self._publish(runner, "val", metrics)

    def after_test_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        self._publish(runner, "test", metrics)

    @staticmethod
    def _publish(runner: RunnerProtocol, mode: str, metrics: dict[str, Any] | None) -> None:
        hub = runner.message_hub
        for key, value in (metrics or {}).items():
            if _is_scalar(value):
                hub.update_scalar(f"{mode}/{key}", value)
            else:
                hub.update_info(f"{mode}/{key}", value)


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(RuntimeInfoHook)

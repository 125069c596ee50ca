"""The runner's ``build_*`` methods (mmengine's names and arguments): each turns one
config into an object with the package that defines it, and returns it without
installing it in the run.

``train()``, ``val()`` and ``test()`` build what they need themselves, lazily; these
methods are for scripts and subclasses that want one part on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from torch import nn

from .errors import RunnerOrderError

if TYPE_CHECKING:
    import logging

    from torch.utils.data import DataLoader

    from ..loops import BaseLoop


class BuildersMixin:
    """Build a run's parts one by one from their configs."""

    _given: dict[str, Any]
    _train_loop: Any
    _experiment_name: str | None
    _timestamp: str
    optim_wrapper: Any
    param_schedulers: Any
    strategy: Any
    logger: Any

    if TYPE_CHECKING:  # provided by the other parts of the runner

        @property
        def log_dir(self) -> str: ...

        @property
        def model(self) -> nn.Module: ...

        @property
        def world_size(self) -> int: ...

        def setup_env(self, env_cfg: Mapping[str, Any] | None = None) -> None: ...

    # ---------------------------------------------------------------- model
    def build_model(self, model: nn.Module | Mapping[str, Any]) -> nn.Module:
        """``model`` built from ``MODELS`` (a module is returned as a cadence model)."""
        from .assemble import build_model

        return build_model(model)

    def wrap_model(
        self, model_wrapper_cfg: Mapping[str, Any] | None, model: nn.Module
    ) -> nn.Module:
        """``model`` on the strategy's device and wrapped by it (DDP, FSDP...); with a
        ``model_wrapper_cfg``, wrapped by that ``MODEL_WRAPPERS`` config instead.

        Sets up the strategy's environment (process group) when it is not yet.
        """
        self.setup_env()
        model = model.to(self.strategy.device)
        if model_wrapper_cfg is None:
            wrapped: nn.Module = self.strategy.wrap_model(model)
            return wrapped
        from ..registry import MODEL_WRAPPERS

        return MODEL_WRAPPERS.build(
            dict(model_wrapper_cfg), default_args={"module": model}, key_path="model_wrapper_cfg"
        )

    # ------------------------------------------------------------ optimizer
    def build_optim_wrapper(self, optim_wrapper: Any) -> Any:
        """The optimizer wrapper(s) of ``optim_wrapper`` over :attr:`model`'s parameters
        (a built wrapper is returned as is)."""
        from ..optim import OptimWrapper, build_optim_wrapper

        if isinstance(optim_wrapper, OptimWrapper):
            return optim_wrapper
        return build_optim_wrapper(
            self.strategy.unwrap(self.model), optim_wrapper, key_path="optim_wrapper"
        )

    def scale_lr(self, optim_wrapper: Any, auto_scale_lr: Mapping[str, Any] | None = None) -> None:
        """Scale ``optim_wrapper``'s learning rates by the total batch size over
        ``auto_scale_lr.base_batch_size`` when ``auto_scale_lr.enable`` is set.

        Must run before the parameter schedulers are built (they record the initial rates).
        """
        if not auto_scale_lr or not auto_scale_lr.get("enable", False):
            return
        if self.param_schedulers is not None:
            raise RunnerOrderError(
                "scale_lr must be called before the parameter schedulers are built: they "
                "record the initial learning rates"
            )
        from ..strategies import scale_lr
        from .auto_scale import auto_scale_lr_ratio

        loop = self._train_loop
        loader = loop.dataloader if loop is not None else self._given["train_dataloader"]
        ratio = auto_scale_lr_ratio(auto_scale_lr, self.world_size, loader, self.logger)
        scale_lr(optim_wrapper, ratio)

    def build_param_scheduler(self, scheduler: Any) -> list[Any] | dict[str, list[Any]]:
        """The schedulers of ``scheduler`` for :attr:`optim_wrapper` (one list, or a dict
        of lists for named optimizer wrappers).

        Once the training loop is built, its length is the default ``end`` and converts
        ``convert_to_iter_based`` schedulers.
        """
        if self.optim_wrapper is None:
            raise RunnerOrderError(
                "build_param_scheduler needs runner.optim_wrapper: set it (e.g. to "
                "runner.build_optim_wrapper(cfg)) first"
            )
        from ..optim import build_param_schedulers

        loop = self._train_loop
        lengths: dict[str, Any] = {}
        if loop is not None:
            try:
                lengths["epoch_length"] = len(loop.dataloader)
            except TypeError:
                pass
            lengths.update(max_epochs=loop.max_epochs, max_iters=loop.max_iters)
        return build_param_schedulers(self.optim_wrapper, scheduler, **lengths)

    # ------------------------------------------------------------------ data
    @staticmethod
    def build_dataloader(
        dataloader: DataLoader[Any] | Mapping[str, Any],
        seed: int | None = None,
        diff_rank_seed: bool = False,
    ) -> DataLoader[Any]:
        """A DataLoader from its config (dataset, sampler, batch sampler, collate
        function, worker seeding); a DataLoader is returned as is."""
        from ..dataset import build_dataloader

        return build_dataloader(dataloader, seed=seed, diff_rank_seed=diff_rank_seed)

    def build_evaluator(self, evaluator: Any) -> Any:
        """An ``Evaluator`` from a metric config, a list of them, ``dict(metrics=...)``
        or an evaluator (returned as is)."""
        from ..evaluator import build_evaluator

        return build_evaluator(evaluator)

    # ----------------------------------------------------------------- loops
    def _build_loop(self, mode: str, loop: Any, *parts: Any) -> BaseLoop:
        from ..loops import BaseLoop
        from ..loops.builder import build_loop

        if not isinstance(loop, (BaseLoop, Mapping)) and not callable(getattr(loop, "run", None)):
            raise TypeError(
                f"{mode}_loop should be a loop or a config dict, got {type(loop).__name__}"
            )
        return build_loop(mode, loop, self, *parts)  # type: ignore[arg-type]

    def build_train_loop(self, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The training loop of ``loop`` over the configured ``train_dataloader``
        (``EpochBasedTrainLoop``, or ``IterBasedTrainLoop`` with ``by_epoch=False``)."""
        return self._build_loop("train", loop, self._given["train_dataloader"])

    def build_val_loop(self, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The validation loop of ``loop`` (``ValLoop`` by default) over the configured
        ``val_dataloader`` and ``val_evaluator``."""
        given = self._given
        return self._build_loop("val", loop, given["val_dataloader"], given["val_evaluator"])

    def build_test_loop(self, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The test loop of ``loop`` (``TestLoop`` by default) over the configured
        ``test_dataloader`` and ``test_evaluator``."""
        given = self._given
        return self._build_loop("test", loop, given["test_dataloader"], given["test_evaluator"])

    # ------------------------------------------------------------ reporting
    def build_log_processor(self, log_processor: Any) -> Any:
        """A log processor from its config (``type`` defaults to ``LogProcessor``); a
        built one is returned as is."""
        if not isinstance(log_processor, Mapping):
            if callable(getattr(log_processor, "get_log_after_iter", None)):
                return log_processor
            raise TypeError(
                "log_processor should be a LogProcessor or a config dict, got "
                f"{type(log_processor).__name__}"
            )
        from ..registry import LOG_PROCESSORS

        cfg = dict(log_processor)
        cfg.setdefault("type", "LogProcessor")
        return LOG_PROCESSORS.build(cfg, key_path="log_processor")

    def build_visualizer(self, visualizer: Any = None) -> Any:
        """The visualizer of ``visualizer`` (a config dict, a built one, or None for a
        ``Visualizer`` with a ``LocalVisBackend``), named after the experiment and
        writing under :attr:`log_dir`."""
        from .setup import build_visualizer

        return build_visualizer(visualizer, self._experiment_name, self.log_dir)

    def build_logger(
        self, log_level: int | str = "INFO", log_file: str | None = None, **kwargs: Any
    ) -> logging.Logger:
        """The run's logger, named after the experiment, writing to ``log_file``
        (default ``<log_dir>/<timestamp>.log``, opened for appending). ``kwargs`` go to
        :func:`cadence.logging.get_logger` (``name``, ``distributed_rank``, ``rank_files``...)."""
        import os

        from ..logging import get_logger

        if log_file is None:
            log_file = os.path.join(self.log_dir, f"{self._timestamp}.log")
        name = kwargs.pop("name", None) or self._experiment_name or "cadence"
        kwargs.setdefault("file_mode", "a")
        return get_logger(name, log_file=log_file, log_level=log_level, **kwargs)

    def build_message_hub(self, message_hub: Mapping[str, Any] | None = None) -> Any:
        """The message hub named after the experiment (``message_hub`` may set ``name``
        and the hub's other arguments)."""
        from ..logging import MessageHub

        if message_hub is not None and not isinstance(message_hub, Mapping):
            raise TypeError(
                f"message_hub should be a dict or None, got {type(message_hub).__name__}"
            )
        cfg = dict(message_hub or {})
        cfg.setdefault("name", self._experiment_name or "cadence")
        return MessageHub.get_instance(**cfg)


__all__ = ["BuildersMixin"]

"""The hook base class: code that runs at fixed points of a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

DATA_BATCH = Any


class Hook:
    """Base class of hooks. Override the stages you need; the rest cost nothing.

    The runner only calls a hook at the stages its class overrides. Stages:
    ``before_run``/``after_run``, ``before_train``/``after_train``, the same for
    ``val`` and ``test``, ``before_<mode>_epoch``/``after_<mode>_epoch``,
    ``before_<mode>_iter``/``after_<mode>_iter``, ``before_save_checkpoint``
    and ``after_load_checkpoint``. Hooks with memory implement
    ``state_dict``/``load_state_dict``. What a hook may use of the ``runner``
    it is given is listed by :class:`cadence.runner.RunnerProtocol`.
    """

    priority: int | str = "NORMAL"
    stages = (
        "before_run", "after_run",
        "before_train", "after_train", "before_train_epoch", "after_train_epoch",
        "before_train_iter", "after_train_iter",
        "before_val", "after_val", "before_val_epoch", "after_val_epoch",
        "before_val_iter", "after_val_iter",
        "before_test", "after_test", "before_test_epoch", "after_test_epoch",
        "before_test_iter", "after_test_iter",
        "before_save_checkpoint", "after_load_checkpoint",
    )  # fmt: skip

    # --------------------------------------------------------------- run
    def before_run(self, runner: RunnerProtocol) -> None: ...
    def after_run(self, runner: RunnerProtocol) -> None: ...

    # ------------------------------------------------------------- train
    def before_train(self, runner: RunnerProtocol) -> None: ...
    def after_train(self, runner: RunnerProtocol) -> None: ...
    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        self._before_epoch(runner, mode="train")

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        self._after_epoch(runner, mode="train")

    def before_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: DATA_BATCH = None
    ) -> None:
        self._before_iter(runner, batch_idx, data_batch, mode="train")

    def after_train_iter(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Any = None,
    ) -> None:
        self._after_iter(runner, batch_idx, data_batch, outputs, mode="train")

    # --------------------------------------------------------------- val
    def before_val(self, runner: RunnerProtocol) -> None: ...
    def after_val(self, runner: RunnerProtocol) -> None: ...
    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        self._before_epoch(runner, mode="val")

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        self._after_epoch(runner, mode="val")

    def before_val_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: DATA_BATCH = None
    ) -> None:
        self._before_iter(runner, batch_idx, data_batch, mode="val")

    def after_val_iter(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Any = None,
    ) -> None:
        self._after_iter(runner, batch_idx, data_batch, outputs, mode="val")

    # -------------------------------------------------------------- test
    def before_test(self, runner: RunnerProtocol) -> None: ...
    def after_test(self, runner: RunnerProtocol) -> None: ...
    def before_test_epoch(self, runner: RunnerProtocol) -> None:
        self._before_epoch(runner, mode="test")

    def after_test_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        self._after_epoch(runner, mode="test")

    def before_test_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: DATA_BATCH = None
    ) -> None:
        self._before_iter(runner, batch_idx, data_batch, mode="test")

    def after_test_iter(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Any = None,
    ) -> None:
        self._after_iter(runner, batch_idx, data_batch, outputs, mode="test")

    # ------------------------------------------- every mode at once (mmengine's)
    # The ``<point>_<mode>_*`` stages of the base class call these, so a hook may
    # override one of them to run in training, validation and testing alike.
    def _before_epoch(self, runner: RunnerProtocol, mode: str = "train") -> None: ...
    def _after_epoch(self, runner: RunnerProtocol, mode: str = "train") -> None: ...

    def _before_iter(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        mode: str = "train",
    ) -> None: ...

    def _after_iter(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Any = None,
        mode: str = "train",
    ) -> None: ...

    # -------------------------------------------------------- checkpoints
    def before_save_checkpoint(
        self, runner: RunnerProtocol, checkpoint: dict[str, Any]
    ) -> None: ...
    def after_load_checkpoint(self, runner: RunnerProtocol, checkpoint: dict[str, Any]) -> None: ...

    # ------------------------------------------------------------ helpers
    def implemented_stages(self) -> list[str]:
        """The stages this hook's class overrides (a ``_before_epoch``, ``_after_epoch``,
        ``_before_iter`` or ``_after_iter`` override counts for the three modes)."""
        cls = type(self)
        found = {s for s in self.stages if getattr(cls, s) is not getattr(Hook, s)}
        for helper, stages in _EVERY_MODE.items():
            if getattr(cls, helper) is not getattr(Hook, helper):
                found.update(stages)
        return [s for s in self.stages if s in found]

    def get_triggered_stages(self) -> list[str]:
        """mmengine's name for :meth:`implemented_stages`."""
        return self.implemented_stages()

    def every_n_epochs(self, runner: RunnerProtocol, n: int, start: int = 0) -> bool:
        """True after every ``n``-th epoch (counting from ``start``)."""
        done = runner.epoch + 1 - start
        return n > 0 and done > 0 and done % n == 0

    def every_n_inner_iters(self, batch_idx: int, n: int) -> bool:
        """True at every ``n``-th iteration inside an epoch."""
        return n > 0 and (batch_idx + 1) % n == 0

    def every_n_train_iters(self, runner: RunnerProtocol, n: int, start: int = 0) -> bool:
        """True after every ``n``-th training iteration (counting from ``start``)."""
        done = runner.iter + 1 - start
        return n > 0 and done > 0 and done % n == 0

    def end_of_epoch(self, dataloader: Any, batch_idx: int) -> bool:
        """True at the last batch of an epoch."""
        return batch_idx + 1 == len(dataloader)

    def is_last_train_epoch(self, runner: RunnerProtocol) -> bool:
        return runner.epoch + 1 == runner.max_epochs

    def is_last_train_iter(self, runner: RunnerProtocol) -> bool:
        return runner.iter + 1 == runner.max_iters

    def state_dict(self) -> dict[str, Any]:
        """State to keep in checkpoints (hooks with memory override this)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""

    def has_state(self) -> bool:
        """Whether this hook keeps state in checkpoints."""
        return type(self).state_dict is not Hook.state_dict


#: The stages each every-mode method of :class:`Hook` runs at.
_EVERY_MODE: dict[str, tuple[str, ...]] = {
    f"_{point}_{unit}": tuple(f"{point}_{mode}_{unit}" for mode in ("train", "val", "test"))
    for point in ("before", "after")
    for unit in ("epoch", "iter")
}

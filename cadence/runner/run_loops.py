"""The run's train, val and test loops, built on first use from their config triples."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .settings import TRIPLES

if TYPE_CHECKING:
    from ..checkpoint import CheckpointManager
    from ..contracts import RunnerProtocol
    from ..loops import BaseLoop
    from .settings import RunSettings


class _TrainPosition:
    """The training loop's position as the checkpoint part ``loops``."""

    def __init__(self, loop: BaseLoop) -> None:
        self.loop = loop

    def state_dict(self) -> dict[str, Any]:
        return {"train": self.loop.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.loop.load_state_dict(state["train"])


class RunLoops:
    """The loops of a run; ``train``/``val``/``test`` are None until built (a loop built
    on first use is made by ``build``, the runner's ``build_<mode>_loop``).

    A training loop is registered with the checkpoint manager when it is set
    (:meth:`set_train`): its position as the part ``loops`` and its dataloader's
    place as ``data_stream``.
    """

    def __init__(
        self,
        runner: RunnerProtocol,
        settings: RunSettings,
        checkpoints: CheckpointManager,
        build: Callable[[str, Any], BaseLoop] | None = None,
    ) -> None:
        self._runner = runner
        #: builds a configured loop: ``build(mode, loop_cfg)`` (the runner's
        #: ``build_<mode>_loop``, which a subclass may override), else :meth:`build`
        self._build = build or self.build
        self._settings = settings
        self._checkpoints = checkpoints
        self.train: BaseLoop | None = None
        self.val: BaseLoop | None = None
        self.test: BaseLoop | None = None

    def set_train(self, loop: BaseLoop | None) -> None:
        """Make ``loop`` the training loop (and its state part of every checkpoint)."""
        self.train = loop
        if loop is not None:
            from .rank_state import LoaderPlace

            self._checkpoints.register("loops", _TrainPosition(loop), after_val=True)
            self._checkpoints.register("data_stream", LoaderPlace(loop), per_rank=True)

    def configured(self, mode: str) -> bool:
        """Whether the config sets the loop of ``mode``."""
        return self._settings.loop_cfg(mode) is not None

    def get(self, mode: str) -> BaseLoop | None:
        """The loop of ``mode``, built now if it is not yet; None for a ``val``/``test``
        loop the config does not set (a ``train`` loop it does not set raises)."""
        loop: BaseLoop | None = getattr(self, mode)
        if loop is None and (mode == "train" or self.configured(mode)):
            loop = self.build_configured(mode)
        return loop

    def build_configured(self, mode: str) -> BaseLoop:
        """Build the loop of ``mode`` from its config triple and make it the run's."""
        loop_cfg = self._settings.loop_cfg(mode)
        if loop_cfg is None:
            raise RuntimeError(
                f"cannot {mode}: {', '.join(TRIPLES[mode])} should not be None; set them in "
                f"the config to {mode}"
            )
        loop = self._build(mode, loop_cfg)
        if mode == "train":
            self.set_train(loop)
        else:
            setattr(self, mode, loop)
        return loop

    def build(self, mode: str, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The loop of ``loop`` (a config or a built loop) over the configured dataloader
        (and evaluator) of ``mode``; the run keeps its own loop."""
        from ..loops import BaseLoop
        from ..loops.builder import build_loop

        if not isinstance(loop, (BaseLoop, Mapping)) and not callable(getattr(loop, "run", None)):
            raise TypeError(
                f"{mode}_loop should be a loop or a config dict, got {type(loop).__name__}"
            )
        given = self._settings.loop_parts
        loader, _, evaluator = TRIPLES[mode]
        parts = [given[loader]] if mode == "train" else [given[loader], given[evaluator]]
        built: BaseLoop = build_loop(mode, loop, self._runner, *parts)
        return built


__all__ = ["RunLoops"]

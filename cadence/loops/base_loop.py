"""The loop base class: a loop owns its dataloader and its position."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from torch.utils.data import DataLoader

from ..resilience.heartbeat import Heartbeat

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


class BaseLoop:
    """A loop runs the model over a dataloader and calls the runner's hooks.

    ``dataloader`` may be a config dict; it is built here with the runner's
    seed, so building a loop is what first touches the data.
    """

    #: what ``ParamSchedulerHook`` does when a resumed run trains for another length
    #: (``train_cfg.resume_policy``: ``'keep'`` or ``'stretch'``; set by the loop builder)
    resume_policy: str = "keep"

    def __init__(self, runner: RunnerProtocol, dataloader: DataLoader | Mapping[str, Any]) -> None:
        self._runner = runner
        #: bumped at each step boundary (the runner's, read by its hang watchdog)
        self._heartbeat: Heartbeat = runner.heartbeat
        self.dataloader = self.build_dataloader(dataloader)

    def build_dataloader(self, dataloader: DataLoader | Mapping[str, Any]) -> DataLoader:
        """``dataloader`` built with the runner's seed when it is a config; else as is."""
        if not isinstance(dataloader, Mapping):
            return dataloader
        from ..dataset import build_dataloader

        runner = self._runner
        randomness = dict(runner.randomness_cfg or {})
        return build_dataloader(
            dataloader,
            seed=runner.seed,
            diff_rank_seed=bool(randomness.get("diff_rank_seed", False)),
        )

    @property
    def runner(self) -> RunnerProtocol:
        """The runner that drives this loop."""
        return self._runner

    def run(self) -> Any:
        """Run the loop."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """The loop's position, enough to continue exactly where it stopped."""
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from a position returned by :meth:`state_dict`."""

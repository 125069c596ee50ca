"""Loops: training by epoch or iteration, validation and testing."""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "BaseLoop": ".base_loop",
    "EpochBasedTrainLoop": ".train_loops",
    "IterBasedTrainLoop": ".train_loops",
    "TestLoop": ".val_loops",
    "ValLoop": ".val_loops",
    # mmengine.runner.loops' name of the endless iterator of IterBasedTrainLoop
    "_InfiniteDataloaderIterator": ".data_position",
}

__all__ = ["BaseLoop", "EpochBasedTrainLoop", "IterBasedTrainLoop", "TestLoop", "ValLoop"]
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)

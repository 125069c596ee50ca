"""Loops: training by epoch or iteration, validation and testing."""

from .base_loop import BaseLoop
from .train_loops import EpochBasedTrainLoop, IterBasedTrainLoop
from .val_loops import TestLoop, ValLoop

__all__ = ["BaseLoop", "EpochBasedTrainLoop", "IterBasedTrainLoop", "TestLoop", "ValLoop"]

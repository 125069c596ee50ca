"""build_loop: a train config names its loop by type or by by_epoch, not both."""

import pytest

from cadence.loops.builder import build_loop


def test_type_and_by_epoch_together_are_refused_as_mmengine_does():
    cfg = dict(type="EpochBasedTrainLoop", by_epoch=True, max_epochs=3)
    with pytest.raises(RuntimeError, match="Only one of type and by_epoch"):  # mmengine's type
        build_loop("train", cfg, runner=None, dataloader=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="type='EpochBasedTrainLoop' and by_epoch=True"):
        build_loop("train", cfg, runner=None, dataloader=None)  # type: ignore[arg-type]

"""EndlessIterator (mmengine's _InfiniteDataloaderIterator): endless batches, restarts said."""

from __future__ import annotations

from torch.utils.data import DataLoader

from cadence.logging import MMLogger
from cadence.loops import _InfiniteDataloaderIterator
from cadence.loops.data_position import EndlessIterator


def test_built_from_a_dataloader_alone_it_restarts_and_says_so(capsys):
    assert _InfiniteDataloaderIterator is EndlessIterator
    MMLogger.get_current_instance()
    batches = EndlessIterator(DataLoader(list(range(3)), batch_size=2))
    got = [next(batches).tolist() for _ in range(2)]
    assert "WARNING" not in capsys.readouterr().out
    got.append(next(batches).tolist())
    assert got == [[0, 1], [2], [0, 1]]
    assert batches.epoch == 1
    assert "WARNING - the training dataloader reached its end" in capsys.readouterr().out

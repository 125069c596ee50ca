"""The base seed a DataLoader iterator draws, drawn ahead (BaseSeedDraw): the draw moves
torch's RNG as building the iterator does, and an iterator built later draws that seed."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader

from cadence.loops.data_position import BaseSeedDraw


def loader(generator: torch.Generator | None = None) -> DataLoader:
    return DataLoader(list(range(8)), batch_size=2, shuffle=True, generator=generator)


def test_the_draw_moves_the_rng_as_building_an_iterator_does_and_is_replayed_later():
    data = loader()
    torch.manual_seed(5)
    expected = iter(data)._base_seed  # torch's own draw, at this point of the RNG
    after = torch.get_rng_state()
    torch.manual_seed(5)
    draw = BaseSeedDraw.of(data)
    assert draw is not None and torch.equal(torch.get_rng_state(), after)
    torch.rand(3)  # what happens in between (a model's initial weights)
    now = torch.get_rng_state()
    with draw.replayed():
        built = iter(data)
    assert built._base_seed == expected
    assert torch.equal(torch.get_rng_state(), now)  # the RNG is left as it was


def test_a_loader_with_its_own_generator_draws_from_it():
    generator = torch.Generator().manual_seed(7)
    data = loader(generator)
    expected = iter(data)._base_seed
    generator.manual_seed(7)
    before = torch.get_rng_state()
    draw = BaseSeedDraw.of(data)
    assert draw is not None and torch.equal(torch.get_rng_state(), before)
    generator.manual_seed(123)  # moved on meanwhile
    with draw.replayed():
        assert iter(data)._base_seed == expected
    assert torch.equal(generator.get_state(), torch.Generator().manual_seed(123).get_state())


def test_not_a_dataloader_draws_nothing():
    before = torch.get_rng_state()
    assert BaseSeedDraw.of([1, 2, 3]) is None
    assert torch.equal(torch.get_rng_state(), before)

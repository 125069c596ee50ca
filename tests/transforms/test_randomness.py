"""cache_randomness / cache_random_params / avoid_cache_randomness."""

from __future__ import annotations

import itertools

import pytest

from cadence.transforms import (
    BaseTransform,
    Compose,
    avoid_cache_randomness,
    cache_random_params,
    cache_randomness,
)


class Counter(BaseTransform):
    """A 'random' draw that is a counter, so caching is visible."""

    def __init__(self) -> None:
        self.draws = itertools.count()

    @cache_randomness
    def draw(self) -> int:
        return next(self.draws)

    def transform(self, results: dict) -> dict:
        results["v"] = self.draw()
        return results


class DrawsTwice(Counter):
    def transform(self, results: dict) -> dict:
        results["v"] = (self.draw(), self.draw())
        return results


def test_decorated_methods_are_listed_on_the_class():
    assert Counter._methods_with_randomness == ["draw"]


def test_decorator_accepts_only_instance_methods():
    with pytest.raises(TypeError):
        cache_randomness(len)
    with pytest.raises(TypeError, match="self"):

        def not_a_method(x):
            return x

        cache_randomness(not_a_method)


def test_outside_the_context_each_call_draws_again():
    t = Counter()
    assert [t({})["v"] for _ in range(3)] == [0, 1, 2]


def test_inside_the_context_the_first_draw_is_reused_then_forgotten():
    t = Counter()
    with cache_random_params(Compose([t])):  # found inside a wrapper too
        assert [t({})["v"] for _ in range(3)] == [0, 0, 0]
    assert t({})["v"] == 1
    assert "transform" not in t.__dict__ and "_cache_enabled" not in t.__dict__


def test_a_cached_method_called_twice_for_one_sample_is_an_error():
    t = DrawsTwice()
    assert t({})["v"] == (0, 1)  # allowed without caching
    with cache_random_params(t), pytest.raises(RuntimeError, match="2 times"):
        t({})


def test_avoid_cache_randomness_refuses_the_context_but_not_in_subclasses():
    @avoid_cache_randomness
    class Opaque(BaseTransform):
        def transform(self, results: dict) -> dict:
            return results

    class Child(Opaque):
        pass

    with pytest.raises(RuntimeError, match="avoid_cache_randomness"), cache_random_params(Opaque()):
        pass
    with cache_random_params(Child()):
        pass
    with pytest.raises(RuntimeError, match="cache_randomness"):
        avoid_cache_randomness(Counter)

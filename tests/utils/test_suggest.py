"""Did-you-mean suggestions used by registry and config errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadence.utils import closest_names, did_you_mean

HOOK_NAMES = ["CheckpointHook", "LoggerHook", "IterTimerHook", "ParamSchedulerHook"]


def test_closest_names_finds_a_misspelling() -> None:
    assert closest_names("CheckpointHok", HOOK_NAMES) == ["CheckpointHook"]


def test_closest_names_puts_case_insensitive_matches_first() -> None:
    candidates = ["ModelA", "Model", "MODEL", "Modle"]
    result = closest_names("model", candidates)
    assert set(result[:2]) == {"Model", "MODEL"}
    assert len(result) <= 3


def test_closest_names_returns_nothing_when_nothing_is_close() -> None:
    assert closest_names("Zebra", HOOK_NAMES) == []
    assert closest_names("anything", []) == []


def test_closest_names_never_suggests_the_name_itself() -> None:
    assert "LoggerHook" not in closest_names("LoggerHook", HOOK_NAMES)


def test_closest_names_ignores_non_string_candidates() -> None:
    assert closest_names("alpha", ["alpah", 3, None, ("alpha",)]) == ["alpah"]


def test_closest_names_respects_n() -> None:
    candidates = ["lr1", "lr2", "lr3", "lr4", "lr5"]
    assert len(closest_names("lr", candidates, n=2)) == 2
    assert len(closest_names("lr", candidates, n=5)) == 5
    assert set(closest_names("lr", candidates, n=5)) == set(candidates)


def test_closest_names_with_n_zero_returns_an_empty_list() -> None:
    assert closest_names("CheckpointHok", HOOK_NAMES, n=0) == []


def test_closest_names_accepts_any_iterable() -> None:
    assert closest_names("depht", iter({"depth": 1, "width": 2})) == ["depth"]


def test_did_you_mean_formats_one_suggestion() -> None:
    assert did_you_mean("CheckpointHok", HOOK_NAMES) == " Did you mean 'CheckpointHook'?"


def test_did_you_mean_formats_several_suggestions_best_first() -> None:
    candidates = ["lr_a", "lr_b"]
    expected = closest_names("lr_", candidates)
    assert len(expected) == 2
    text = did_you_mean("lr_", candidates)
    assert text == f" Did you mean one of '{expected[0]}', '{expected[1]}'?"


def test_did_you_mean_is_empty_when_nothing_is_close() -> None:
    assert did_you_mean("Zebra", HOOK_NAMES) == ""


names = st.text(alphabet="abcdeABCDE_", min_size=1, max_size=8)


@settings(max_examples=100, deadline=None)
@given(names, st.lists(names, max_size=10), st.integers(min_value=1, max_value=5))
def test_closest_names_properties(name: str, candidates: list[str], n: int) -> None:
    result = closest_names(name, candidates, n)
    assert len(result) <= n
    assert len(set(result)) == len(result)
    assert set(result) <= set(candidates)
    assert name not in result
    case_variants = [c for c in candidates if c.lower() == name.lower() and c != name]
    if case_variants:
        assert result[0].lower() == name.lower()
    text = did_you_mean(name, candidates, n)
    assert (text == "") == (result == [])
    for suggestion in result:
        assert f"'{suggestion}'" in text


@pytest.mark.parametrize("name", ["train_cfg", "optim_wrapper", "param_scheduler"])
def test_closest_names_finds_a_dropped_letter(name: str) -> None:
    misspelled = name[:3] + name[4:]
    assert closest_names(misspelled, [name, "default_hooks", "visualizer"]) == [name]

"""file_client_args/backend_args: accepted for mmengine configs, never dropped silently."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from cadence.hooks import CheckpointHook, LoggerHook
from cadence.registry import HOOKS

HOOK_TYPES = (CheckpointHook, LoggerHook)


@pytest.mark.parametrize("hook_type", HOOK_TYPES)
@pytest.mark.parametrize("key", ["file_client_args", "backend_args"])
def test_a_non_empty_value_warns_naming_the_hook_and_the_key(hook_type: type, key: str) -> None:
    with pytest.warns(UserWarning) as record:
        hook_type(**{key: dict(backend="petrel")})
    messages = [str(w.message) for w in record]
    assert len(messages) == 1
    assert messages[0].startswith(f"{hook_type.__name__}: {key} is accepted for mmengine ")
    assert "not used yet" in messages[0] and "remote storage" in messages[0]
    assert record[0].filename == __file__  # points at the code that built the hook


@pytest.mark.parametrize("hook_type", HOOK_TYPES)
@pytest.mark.parametrize("value", [None, {}])
def test_an_empty_value_is_silent(hook_type: type, value: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hook_type(file_client_args=value, backend_args=value)


def test_both_keys_from_a_config_warn_once_each() -> None:
    cfg = dict(type="CheckpointHook", interval=1, file_client_args=dict(backend="disk"),
               backend_args=dict(backend="s3"))  # fmt: skip
    with pytest.warns(UserWarning) as record:
        HOOKS.build(cfg)
    keys = sorted(str(w.message).split(":")[1].split()[0] for w in record)
    assert keys == ["backend_args", "file_client_args"]

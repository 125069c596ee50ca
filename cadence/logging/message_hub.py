"""MessageHub: the scalars and runtime information parts of a run share.

Hooks write scalars (``train/loss``, ``train/lr``, ``val/accuracy``) into
:class:`HistoryBuffer` s and runtime information (``eta``, ``epoch``) as plain
values; the log processor and checkpointing read them back.
"""

from __future__ import annotations

import copy
import logging
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any

from ..utils.suggest import did_you_mean
from .history_buffer import HistoryBuffer, _is_tensor
from .instances import GlobalInstanceMixin
from .logger import print_log

_STATE_KEYS = ("log_scalars", "runtime_info", "resumed_keys")


class MessageHubArgumentError(TypeError, AssertionError):
    """A message hub was given a value of the wrong kind (mmengine asserts)."""


class MessageHubKeyError(KeyError, AssertionError):
    """A message hub was given a key it cannot place (mmengine asserts)."""


def _as_dict(name: str, value: Any) -> OrderedDict[str, Any]:
    if value is None:
        return OrderedDict()
    if isinstance(value, dict):
        return OrderedDict(value)
    raise TypeError(f"{name} must be a dict or None, got {type(value).__name__}")


def _plain_info(key: str, value: Any) -> Any:
    """A copy of ``value`` fit for a checkpoint: one-element tensors become numbers."""
    if _is_tensor(value):
        return value.item() if value.numel() == 1 else value.detach().cpu().clone()
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - anything uncopyable is kept by reference
        print_log(
            f"runtime info '{key}' cannot be copied; the state keeps a reference to it",
            logger="current",
            level=logging.WARNING,
        )
        return value


class MessageHub(GlobalInstanceMixin):
    """Holds log scalars and runtime information of one run, fetchable by name.

    Args:
        name: instance name (``MessageHub.get_instance(name)`` finds it).
        log_scalars: initial ``{key: HistoryBuffer}``.
        runtime_info: initial ``{key: value}``.
        resumed_keys: ``{key: bool}``, whether a key is saved by :meth:`state_dict`.
    """

    def __init__(
        self,
        name: str,
        log_scalars: dict[str, HistoryBuffer] | None = None,
        runtime_info: dict[str, Any] | None = None,
        resumed_keys: dict[str, bool] | None = None,
    ) -> None:
        self._log_scalars: OrderedDict[str, HistoryBuffer] = _as_dict("log_scalars", log_scalars)
        self._runtime_info: OrderedDict[str, Any] = _as_dict("runtime_info", runtime_info)
        self._resumed_keys: OrderedDict[str, bool] = _as_dict("resumed_keys", resumed_keys)
        for key, value in self._log_scalars.items():
            if not isinstance(value, HistoryBuffer):
                raise MessageHubArgumentError(
                    f"log_scalars['{key}'] must be a HistoryBuffer, got {type(value).__name__}"
                )
        for key in self._resumed_keys:
            if key not in self._log_scalars and key not in self._runtime_info:
                raise MessageHubKeyError(
                    f"resumed key '{key}' is neither in log_scalars nor runtime_info"
                )
        super().__init__(name)

    # ----------------------------------------------------------------- scalars
    def _mark_resumed(self, key: str, resumed: bool) -> None:
        previous = self._resumed_keys.get(key)
        if previous is None:
            self._resumed_keys[key] = bool(resumed)
        elif previous != resumed:
            raise ValueError(
                f"'{key}' was registered with resumed={previous}; it cannot change to {resumed}"
            )

    def update_scalar(self, key: str, value: Any, count: int = 1, resumed: bool = True) -> None:
        """Append ``value`` (a number, or a one-element tensor kept as is) to scalar ``key``.

        O(1): for a known key, two dict reads and one :meth:`HistoryBuffer.update`.
        """
        buffer = self._log_scalars.get(key)
        if buffer is None or self._resumed_keys.get(key) is not resumed:
            self._mark_resumed(key, resumed)
            if buffer is None:
                buffer = self._log_scalars[key] = HistoryBuffer()
        buffer.update(value, count)

    def scalar_writer(self, key: str, resumed: bool = True) -> Callable[[Any], None]:
        """A function appending a value to scalar ``key``: ``update_scalar(key, v)`` minus
        the lookups, for a hook that writes the same key every iteration.

        It stays valid for the life of this hub (loading a state updates buffers
        in place).
        """
        self._mark_resumed(key, resumed)
        buffer = self._log_scalars.get(key)
        if buffer is None:
            buffer = self._log_scalars[key] = HistoryBuffer()
        return buffer.append

    def number_writer(self, key: str, resumed: bool = True) -> Callable[[int | float], None]:
        """:meth:`scalar_writer` for values the caller guarantees are Python ``int`` or
        ``float``: the buffer's :meth:`~HistoryBuffer.number_appender`, no Python frame per
        value. The caller calls ``get_scalar(key).trim()`` every few thousand values."""
        self.scalar_writer(key, resumed)
        return self._log_scalars[key].number_appender()

    def update_scalars(self, log_dict: dict[str, Any], resumed: bool = True) -> None:
        """Update several scalars; a value may be ``dict(value=..., count=...)``."""
        if not isinstance(log_dict, dict):
            raise TypeError(f"log_dict must be a dict, got {type(log_dict).__name__}")
        for key, item in log_dict.items():
            if isinstance(item, dict):
                if "value" not in item:
                    raise MessageHubKeyError(
                        f"scalar '{key}' is a dict without 'value' (got keys {sorted(item)}); "
                        "expected dict(value=..., count=...)"
                    )
                self.update_scalar(key, item["value"], item.get("count", 1), resumed)
            else:
                self.update_scalar(key, item, 1, resumed)

    def get_scalar(self, key: str) -> HistoryBuffer:
        """The :class:`HistoryBuffer` of ``key`` (a reference, not a copy)."""
        buffer = self._log_scalars.get(key)
        if buffer is None:
            raise KeyError(
                f"no scalar '{key}' in message hub '{self.instance_name}'."
                f"{did_you_mean(key, self._log_scalars)}"
            )
        return buffer

    @property
    def log_scalars(self) -> OrderedDict[str, HistoryBuffer]:
        """All scalar buffers by key."""
        return self._log_scalars

    # ------------------------------------------------------------ runtime info
    def update_info(self, key: str, value: Any, resumed: bool = True) -> None:
        """Set runtime information ``key`` (overwrites)."""
        if self._resumed_keys.get(key) is not resumed:
            self._mark_resumed(key, resumed)
        self._runtime_info[key] = value

    def info_writer(self, key: str, resumed: bool = True) -> Callable[[Any], None]:
        """A function setting runtime information ``key`` (``update_info(key, v)`` with no
        Python frame of its own), valid for the life of this hub."""
        self._mark_resumed(key, resumed)
        return partial(self._runtime_info.__setitem__, key)

    def update_info_dict(self, info_dict: dict[str, Any], resumed: bool = True) -> None:
        """Set several runtime information entries."""
        if not isinstance(info_dict, dict):
            raise TypeError(f"info_dict must be a dict, got {type(info_dict).__name__}")
        for key, value in info_dict.items():
            self.update_info(key, value, resumed)

    def get_info(self, key: str, default: Any = None) -> Any:
        """Runtime information ``key``, or ``default`` when absent."""
        return self._runtime_info.get(key, default)

    def pop_info(self, key: str, default: Any = None) -> Any:
        """Remove and return runtime information ``key`` (``default`` when absent)."""
        return self._runtime_info.pop(key, default)

    def _load_buffer(self, key: str, loaded: HistoryBuffer) -> None:
        """Put ``loaded`` under ``key``, into the existing buffer object when there is one."""
        existing = self._log_scalars.get(key)
        if existing is None:
            self._log_scalars[key] = loaded
        else:
            existing.adopt(loaded)

    @property
    def runtime_info(self) -> OrderedDict[str, Any]:
        """All runtime information by key."""
        return self._runtime_info

    # ------------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """The resumed scalars (as plain lists), the resumed runtime information and the
        resumed flags. Checkpoints written where ``mmengine`` is cadence's alias hold the
        scalars as buffers instead, for mmengine (:mod:`cadence.checkpoint.portable`)."""
        scalars = {
            key: buffer.state_dict()
            for key, buffer in self._log_scalars.items()
            if self._resumed_keys.get(key, False)
        }
        info = {
            key: _plain_info(key, value)
            for key, value in self._runtime_info.items()
            if self._resumed_keys.get(key, False)
        }
        return {
            "log_scalars": scalars,
            "runtime_info": info,
            "resumed_keys": dict(self._resumed_keys),
        }

    def load_state_dict(self, state_dict: dict[str, Any] | MessageHub) -> None:
        """Load what :meth:`state_dict` saved (or copy everything from another hub)."""
        # containers and buffers are updated in place: writers handed out stay valid
        if isinstance(state_dict, MessageHub):
            for key in [k for k in self._log_scalars if k not in state_dict._log_scalars]:
                del self._log_scalars[key]  # a copy of everything: keys the other lacks go
            for key, buffer in state_dict._log_scalars.items():
                self._load_buffer(key, copy.deepcopy(buffer))
            self._runtime_info.clear()
            self._runtime_info.update(copy.deepcopy(state_dict._runtime_info))
            self._resumed_keys.clear()
            self._resumed_keys.update(state_dict._resumed_keys)
            return
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"expected a MessageHub state dict or a MessageHub, got {type(state_dict).__name__}"
            )
        missing = [key for key in _STATE_KEYS if key not in state_dict]
        if missing:
            raise KeyError(
                f"MessageHub state dict is missing {missing} (it has {sorted(state_dict)})"
            )
        for key, value in state_dict["log_scalars"].items():
            if isinstance(value, HistoryBuffer):
                self._load_buffer(key, copy.deepcopy(value))
            elif isinstance(value, dict):
                self._load_buffer(key, HistoryBuffer.from_state_dict(value))
            else:
                print_log(
                    f"scalar '{key}' in the loaded state is a {type(value).__name__}, not a "
                    "HistoryBuffer state; skipped",
                    logger="current",
                    level=logging.WARNING,
                )
        for key, value in state_dict["runtime_info"].items():
            self._runtime_info[key] = _plain_info(key, value)
        for key, resumed in state_dict["resumed_keys"].items():
            if key not in self._log_scalars and key not in self._runtime_info:
                print_log(
                    f"resumed key '{key}' has no saved value; skipped",
                    logger="current",
                    level=logging.WARNING,
                )
                continue
            self._resumed_keys[key] = bool(resumed)

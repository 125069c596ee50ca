"""Visualisation backends: where scalars, configs and images are recorded.

Backends create their output directories on first use, so building one
costs nothing until something is written.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from ..registry import VISBACKENDS
from .image import write_png


class BackendArgumentError(ValueError, AssertionError):
    """A backend was given an argument it cannot use (mmengine asserts: also an
    ``AssertionError``)."""


def to_json_value(value: Any) -> Any:
    """A JSON-friendly form of ``value``: tensors and numpy values become numbers or lists."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return value.item() if value.numel() == 1 else value.detach().cpu().tolist()
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, dict):
        return {key: to_json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    return value


def scalar_number(value: Any) -> float | int | None:
    """``value`` as a Python number when it is one scalar (bool, int, float, 1-element
    tensor or array), else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    plain = to_json_value(value)
    if isinstance(plain, list) and len(plain) == 1:  # one-element arrays
        plain = plain[0]
    if isinstance(plain, bool):
        return int(plain)
    if isinstance(plain, (int, float)):
        return plain
    return None


def split_step(scalar_dict: dict[str, Any], step: int) -> tuple[dict[str, Any], int]:
    """The scalars without a ``"step"`` entry, and the step (that entry wins over ``step``)."""
    if not isinstance(scalar_dict, dict):
        raise TypeError(f"scalar_dict must be a dict, got {type(scalar_dict).__name__}")
    if "step" not in scalar_dict:
        return scalar_dict, step
    values = dict(scalar_dict)
    given = values.pop("step")
    number = scalar_number(given)
    if not isinstance(number, int):
        raise TypeError(f"a 'step' entry in scalar_dict must be an int, got {given!r}")
    return values, number


def writable_dir(path: str) -> bool:
    """Whether ``path`` is an existing directory this process may write into."""
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


class BaseVisBackend:
    """What every backend offers; the default methods record nothing.

    A backend that writes to an experiment tracker says which tracker run it writes to
    with :meth:`state_dict` and continues that run after :meth:`load_state_dict`
    (the :class:`~cadence.visualization.Visualizer` keeps them in checkpoints).

    Args:
        save_dir: the directory this backend writes under.
    """

    #: Entries of :meth:`state_dict` that are directories: the Visualizer stores them
    #: relative to its work dir, so that a copied work dir continues in its own copy.
    state_dir_keys: tuple[str, ...] = ()

    def __init__(self, save_dir: str | os.PathLike[str]) -> None:
        self._save_dir = os.fspath(save_dir)
        self._env_ready = False

    @property
    def save_dir(self) -> str:
        """The directory this backend writes under."""
        return self._save_dir

    def _ensure_env(self) -> None:
        if not self._env_ready:
            self._init_env()
            self._env_ready = True

    def _init_env(self) -> None:
        """Prepare the output (create directories, open connections); runs on first write."""

    @property
    def experiment(self) -> Any:
        """The underlying writer object (the backend itself by default)."""
        self._ensure_env()
        return self

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the run's config."""

    def add_graph(self, model: Any, data_batch: Any = None, **kwargs: Any) -> None:
        """Record the model graph."""

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Record an image (HWC uint8 RGB after :func:`~.image.to_rgb_uint8`) at ``step``."""

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar at ``step``."""

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record several scalars at ``step``."""

    def close(self) -> None:
        """Flush and release whatever the backend holds."""

    def state_dict(self) -> dict[str, Any]:
        """Which tracker run this backend writes to (run id, log dir); empty when it has
        none yet or nothing to continue. Plain strings only: checkpoints store it."""
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the tracker run that ``state`` (from :meth:`state_dict`) names instead of
        starting a new one; a run given in the backend's own arguments wins."""


@VISBACKENDS.register_module()
class LocalVisBackend(BaseVisBackend):
    """Writes the config and JSON-lines scalar logs under ``save_dir``.

    Args:
        save_dir: output directory (created on first write).
        img_save_dir: subdirectory for images, written as ``<name>_<step>.png``.
        config_save_file: file name of the config copy (``.py``).
        scalar_save_file: file name of the scalar log (``.json``, one object per line).
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        img_save_dir: str = "vis_image",
        config_save_file: str = "config.py",
        scalar_save_file: str = "scalars.json",
    ) -> None:
        if not str(config_save_file).endswith(".py"):
            raise BackendArgumentError(
                f"config_save_file must end with .py, got {config_save_file!r}"
            )
        if not str(scalar_save_file).endswith(".json"):
            raise BackendArgumentError(
                f"scalar_save_file must end with .json, got {scalar_save_file!r}"
            )
        super().__init__(save_dir)
        self._img_save_dir = os.path.join(self._save_dir, img_save_dir)
        self._config_save_file = os.path.join(self._save_dir, config_save_file)
        self._scalar_save_file = os.path.join(self._save_dir, scalar_save_file)
        self._files: dict[str, IO[str]] = {}  # open scalar logs by path

    def _init_env(self) -> None:
        os.makedirs(self._save_dir, exist_ok=True)

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Write ``config.pretty_text`` (or ``str(config)``) to the config file."""
        self._ensure_env()
        text = getattr(config, "pretty_text", None)
        if not isinstance(text, str):
            text = str(config)
        with open(self._config_save_file, "w", encoding="utf-8") as file:
            file.write(text)

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Write ``image`` to ``<img_save_dir>/<name>_<step>.png``; a ``/`` in ``name``
        makes subdirectories."""
        path = os.path.normpath(os.path.join(self._img_save_dir, f"{name}_{step}.png"))
        root = os.path.normpath(self._img_save_dir)
        if os.path.isabs(name) or os.path.commonpath([root, path]) != root:
            raise ValueError(f"image name {name!r} would be written outside {root}")
        self._ensure_env()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_png(path, image)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Append ``{name: value, "step": step}`` as one JSON line."""
        self._ensure_env()
        self._append({name: to_json_value(value), "step": step}, self._scalar_save_file)

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Append the scalars plus ``"step"`` as one JSON line (also to ``file_path`` if given).

        A ``"step"`` already in ``scalar_dict`` is kept.
        """
        if not isinstance(scalar_dict, dict):
            raise TypeError(f"scalar_dict must be a dict, got {type(scalar_dict).__name__}")
        self._ensure_env()
        record = {key: to_json_value(value) for key, value in scalar_dict.items()}
        record.setdefault("step", step)
        if file_path is not None:
            if not str(file_path).endswith(".json"):
                raise BackendArgumentError(f"file_path must end with .json, got {file_path!r}")
            extra = os.path.join(self._save_dir, file_path)
            if os.path.abspath(extra) == os.path.abspath(self._scalar_save_file):
                raise BackendArgumentError(
                    f"file_path {file_path!r} is the scalar log itself; choose another name"
                )
            self._append(record, extra)
        self._append(record, self._scalar_save_file)

    def _append(self, record: dict[str, Any], path: str) -> None:
        """Write one JSON line, flushed; the file stays open for the next one."""
        file = self._files.get(path)
        if file is None or file.closed:
            file = self._files[path] = open(path, "a", encoding="utf-8")  # noqa: SIM115
        file.write(json.dumps(record) + "\n")
        file.flush()

    def close(self) -> None:
        """Close the scalar logs; a later write reopens them and appends."""
        files, self._files = self._files, {}
        for file in files.values():
            file.close()

"""Backends for the trackers mmengine 0.10.7 also writes to: ClearML, Neptune, DVCLive, Aim.

Each tracker's package is imported on the backend's first write (or the first read of
:attr:`experiment`); a missing one is an ``ImportError`` naming the ``pip install``.
Building a backend costs nothing and needs no package.
"""

from __future__ import annotations

import datetime
import os
from typing import Any

from ..registry import VISBACKENDS
from .image import to_rgb_uint8
from .vis_backend import BaseVisBackend, split_step, to_json_value
from .wandb_backend import config_as_dict


def _need(package: str, backend: str, pip_name: str | None = None) -> Any:
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise ImportError(
            f"{backend} needs the {package} package: pip install {pip_name or package}"
        ) from exc


def _files_under(folder: str, suffixes: tuple[str, ...], recursive: bool) -> list[str]:
    """Files in ``folder`` whose names end with one of ``suffixes`` (sorted paths)."""
    found: list[str] = []
    if not os.path.isdir(folder):
        return found
    for root, _dirs, files in os.walk(folder):
        found += [os.path.join(root, f) for f in files if f.endswith(suffixes)]
        if not recursive:
            break
    return sorted(found)


def _suffixes(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


class _TrackerBackend(BaseVisBackend):
    """A backend whose ``save_dir`` may be None (the tracker stores the records)."""

    def __init__(self, save_dir: str | os.PathLike[str] | None, init_kwargs: Any) -> None:
        if init_kwargs is not None and not isinstance(init_kwargs, dict):
            raise TypeError(f"init_kwargs must be a dict, got {type(init_kwargs).__name__}")
        super().__init__(os.curdir if save_dir is None else save_dir)
        self._given_dir = None if save_dir is None else os.fspath(save_dir)
        self._init_kwargs: dict[str, Any] = dict(init_kwargs or {})

    def add_scalars(
        self, scalar_dict: dict[str, Any], step: int = 0, file_path: str | None = None,
        **kwargs: Any,
    ) -> None:  # fmt: skip
        """Record each value with :meth:`add_scalar` (a ``"step"`` entry sets the step)."""
        values, step = split_step(scalar_dict, step)
        for key, value in values.items():
            self.add_scalar(key, value, step)


@VISBACKENDS.register_module()
class ClearMLVisBackend(_TrackerBackend):
    """Records to a ClearML task (``clearml.Task.init(**init_kwargs)``); on :meth:`close`
    the work dir's files ending with ``artifact_suffix`` are uploaded as artifacts."""

    def __init__(
        self,
        save_dir: str | os.PathLike[str] | None = None,
        init_kwargs: dict[str, Any] | None = None,
        artifact_suffix: str | tuple[str, ...] = (".py", ".pth"),
    ) -> None:
        super().__init__(save_dir, init_kwargs)
        self._artifact_suffix = _suffixes(artifact_suffix)
        self._clearml: Any = None
        self._task: Any = None
        self._logger: Any = None
        self._work_dir: str | None = None

    def _init_env(self) -> None:
        self._clearml = _need("clearml", "ClearMLVisBackend")
        self._task = self._clearml.Task.init(**self._init_kwargs)
        self._logger = self._task.get_logger()

    @property
    def experiment(self) -> Any:
        """The ``clearml`` module."""
        self._ensure_env()
        return self._clearml

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Connect the config to the task (and remember its ``work_dir`` for the artifacts)."""
        self._ensure_env()
        plain = config_as_dict(config)
        self._work_dir = plain.get("work_dir") if isinstance(plain.get("work_dir"), str) else None
        self._task.connect_configuration(plain)

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Report ``image`` (HWC RGB) as ``name`` at ``step``."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        self._logger.report_image(title=name, series=name, iteration=step, image=rgb)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Report one value as ``name`` at ``step``."""
        self._ensure_env()
        self._logger.report_scalar(
            title=name, series=name, value=to_json_value(value), iteration=step
        )

    def close(self) -> None:
        """Upload the work dir's artifacts and close the task."""
        if self._task is None:
            return
        for path in _files_under(self._work_dir or "", self._artifact_suffix, False):
            self._task.upload_artifact(os.path.basename(path), path)
        self._task.close()
        self._task = None
        self._env_ready = False


@VISBACKENDS.register_module()
class NeptuneVisBackend(_TrackerBackend):
    """Records to a Neptune run (``neptune.init_run(**init_kwargs)``; offline when no
    ``init_kwargs`` are given)."""

    def __init__(
        self,
        save_dir: str | os.PathLike[str] | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(save_dir, init_kwargs)
        self._neptune: Any = None

    def _init_env(self) -> None:
        neptune = _need("neptune", "NeptuneVisBackend", "-U neptune")
        self._neptune = neptune.init_run(**(self._init_kwargs or {"mode": "offline"}))

    @property
    def experiment(self) -> Any:
        """The Neptune run."""
        self._ensure_env()
        return self._neptune

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Upload the config's text as the run's ``config`` file."""
        self._ensure_env()
        from neptune.types import File

        text = getattr(config, "pretty_text", None)
        self._neptune["config"].upload(File.from_content(text if text else str(config)))

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Append ``image`` (HWC RGB) to the run's ``images`` series."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        from neptune.types import File

        self._neptune["images"].append(File.as_image(rgb / 255.0), name=name, step=step)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Append one value to the series ``name``."""
        self._ensure_env()
        self._neptune[name].append(to_json_value(value), step=step)

    def close(self) -> None:
        """Stop the run."""
        if self._neptune is not None:
            self._neptune.stop()
            self._neptune = None
            self._env_ready = False


@VISBACKENDS.register_module()
class DVCLiveVisBackend(_TrackerBackend):
    """Records with DVCLive (``dvclive.Live(dir=save_dir, **init_kwargs)``); on
    :meth:`close` the files under ``save_dir`` ending with ``artifact_suffix`` are logged
    as artifacts. Unlike mmengine, it runs no ``dvc init`` itself: in a folder that is no
    DVC repository, DVCLive writes plain files (``save_dvc_exp`` then warns)."""

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        artifact_suffix: str | tuple[str, ...] = (".json", ".py", "yaml"),
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(save_dir, init_kwargs)
        self._artifact_suffix = _suffixes(artifact_suffix)
        self._dvclive: Any = None

    def _init_env(self) -> None:
        live = _need("dvclive", "DVCLiveVisBackend").Live
        kwargs = dict(self._init_kwargs)
        kwargs.setdefault("dir", self._save_dir)
        kwargs.setdefault("save_dvc_exp", True)
        kwargs.setdefault("cache_images", True)
        self._dvclive = live(**kwargs)

    @property
    def experiment(self) -> Any:
        """The ``dvclive.Live`` object (for tables, plots and the like)."""
        self._ensure_env()
        return self._dvclive

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Log the config as DVC params (plain numbers, strings and lists)."""
        self._ensure_env()
        self._dvclive.log_params(to_json_value(config_as_dict(config)))

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log ``image`` (HWC RGB) as ``<name>.png``."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        self._dvclive.log_image(f"{name}.png", rgb)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Log one value as metric ``name`` at ``step``."""
        self._ensure_env()
        self._dvclive.step = step
        self._dvclive.log_metric(name, to_json_value(value))

    def close(self) -> None:
        """Log the artifacts and end the DVCLive session."""
        if self._dvclive is None:
            return
        for path in _files_under(self._save_dir, self._artifact_suffix, True):
            folder = os.path.dirname(os.path.relpath(path, self._save_dir))
            self._dvclive.log_artifact(path, folder)
        self._dvclive.end()
        self._dvclive = None
        self._env_ready = False


@VISBACKENDS.register_module()
class AimVisBackend(_TrackerBackend):
    """Records to an Aim run (``aim.Run(**init_kwargs)``); its ``experiment`` defaults to
    the last two folders of ``save_dir`` joined by ``_`` (a timestamp without one)."""

    def __init__(
        self,
        save_dir: str | os.PathLike[str] | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(save_dir, init_kwargs)
        self._aim_run: Any = None

    def _experiment_name(self) -> str:
        if self._given_dir is None:
            return datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
        parts = os.path.normpath(os.path.abspath(self._given_dir)).split(os.sep)
        return "_".join(parts[-2:])

    def _init_env(self) -> None:
        run = _need("aim", "AimVisBackend").Run
        kwargs = dict(self._init_kwargs)
        kwargs.setdefault("experiment", self._experiment_name())
        self._aim_run = run(**kwargs)

    @property
    def experiment(self) -> Any:
        """The ``aim.Run``."""
        self._ensure_env()
        return self._aim_run

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Store the config as the run's ``hparams``."""
        self._ensure_env()
        self._aim_run["hparams"] = to_json_value(config_as_dict(config))

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Track ``image`` (HWC RGB) as ``name`` at ``step``."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        from aim import Image

        self._aim_run.track(name=name, value=Image(rgb), step=step)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Track one value as ``name`` at ``step``."""
        self._ensure_env()
        self._aim_run.track(name=name, value=to_json_value(value), step=step)

    def close(self) -> None:
        """Close the run."""
        if self._aim_run is not None:
            self._aim_run.close()
            self._aim_run = None
            self._env_ready = False


__all__ = ["AimVisBackend", "ClearMLVisBackend", "DVCLiveVisBackend", "NeptuneVisBackend"]

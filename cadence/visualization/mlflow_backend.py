"""MLflow backend (``mlflow`` is imported on the first write)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

from ..registry import VISBACKENDS
from .image import to_rgb_uint8
from .vis_backend import BaseVisBackend, scalar_number, split_step, writable_dir
from .wandb_backend import config_as_dict

_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def flatten_config(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as one level of dotted keys; lists of dicts are indexed (``a.0.b``)."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            flat.update(flatten_config(value, name))
        elif isinstance(value, (list, tuple)) and any(isinstance(v, Mapping) for v in value):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    flat.update(flatten_config(item, f"{name}.{index}"))
                else:
                    flat[f"{name}.{index}"] = item
        else:
            flat[name] = value
    return flat


@VISBACKENDS.register_module()
class MLflowVisBackend(BaseVisBackend):
    """Logs metrics with their steps, the config (as params and ``config.py``) and
    images to an MLflow run; on close, uploads the work dir's logs and configs.

    Without ``tracking_uri`` the runs go to a SQLite store ``<save_dir>/mlflow.db``
    with artifacts in ``<save_dir>/mlartifacts`` (view them with
    ``mlflow ui --backend-store-uri sqlite:///<save_dir>/mlflow.db``).

    A resumed training run continues the MLflow run of the checkpoint (its id, and
    the local store's directory, are in :meth:`state_dict`), so the metric history
    runs on in one run; params keep the values first logged (MLflow never changes a
    param) and ``config.py`` holds the latest config. ``run_id`` (or ``MLFLOW_RUN_ID``)
    wins over the stored run. If the stored run cannot be continued (another store or
    experiment, deleted), a warning says why and a new run starts.

    Args:
        save_dir: directory of the default local store (created on first write).
        exp_name: experiment name; default ``'Default'`` with a ``tracking_uri``
            and ``'cadence'`` with the local store (whose ``Default`` experiment
            would keep artifacts in the current directory).
        run_name: the run's name.
        tags: tags of the run.
        params: params logged when the run starts.
        tracking_uri: an MLflow tracking URI (server, ``sqlite:///...``, ``file://...``).
        artifact_suffix: file endings uploaded from the config's ``work_dir`` on close.
        tracked_config_keys: top-level config keys logged as params (default all).
        artifact_location: artifact location of an experiment this backend creates.
        run_id: the id of an existing run to log into (instead of a new run).
    """

    state_dir_keys = ("store_dir",)

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        exp_name: str | None = None,
        run_name: str | None = None,
        tags: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        tracking_uri: str | None = None,
        artifact_suffix: str | tuple[str, ...] = (".json", ".log", ".py", "yaml"),
        tracked_config_keys: list[str] | tuple[str, ...] | None = None,
        artifact_location: str | None = None,
        run_id: str | None = None,
    ) -> None:
        super().__init__(save_dir)
        self._exp_name = exp_name
        self._run_name = run_name
        self._tags = dict(tags or {})
        self._params = dict(params or {})
        self._tracking_uri = tracking_uri
        self._artifact_suffix = (
            (artifact_suffix,) if isinstance(artifact_suffix, str) else tuple(artifact_suffix)
        )
        self._tracked_config_keys = tracked_config_keys
        self._artifact_location = artifact_location
        self._mlflow: Any = None
        self._given_run_id = run_id or None
        self._run_id: str | None = None
        self._experiment_id: str | None = None
        self._closed_run_id: str | None = None
        self._stored_run_id: str | None = None  # from a checkpoint (load_state_dict)
        self._continued = False  # the open run existed before (resumed or given)
        self._work_dir: str | None = None
        self._store_dir: str | None = None  # artifacts of the local store: not re-uploaded

    def _init_env(self) -> None:
        try:
            import mlflow
        except ImportError as exc:
            raise ImportError(
                "MLflowVisBackend needs the mlflow package: pip install mlflow  "
                "(or: pip install 'cadence[mlflow]')"
            ) from exc
        save_dir = os.path.abspath(self._save_dir)
        os.makedirs(save_dir, exist_ok=True)
        location = self._artifact_location
        if self._tracking_uri is None:
            mlflow.set_tracking_uri(f"sqlite:///{os.path.join(save_dir, 'mlflow.db')}")
            location = location or os.path.join(save_dir, "mlartifacts")
            self._store_dir = location
        else:
            mlflow.set_tracking_uri(self._tracking_uri)
        name = self._exp_name or ("cadence" if self._tracking_uri is None else "Default")
        if mlflow.get_experiment_by_name(name) is None:
            mlflow.create_experiment(name, artifact_location=location)
        mlflow.set_experiment(name)
        nested = mlflow.active_run() is not None
        if self._closed_run_id is not None:  # reopened after close(): continue that run
            mlflow.start_run(run_id=self._closed_run_id, nested=nested)
            self._mlflow = mlflow
            return
        run = None
        if self._given_run_id is not None:
            run = mlflow.start_run(run_id=self._given_run_id, nested=nested)
        elif self._stored_run_id is not None:
            run = self._continue_stored_run(mlflow, nested)
        self._continued = run is not None or bool(os.environ.get("MLFLOW_RUN_ID"))
        if run is None:
            run = mlflow.start_run(run_name=self._run_name, tags=self._tags or None, nested=nested)
        info = getattr(run, "info", None)
        self._run_id = getattr(info, "run_id", None)
        self._experiment_id = getattr(info, "experiment_id", None)
        if self._params:
            self._log_params(mlflow, self._params)
        self._mlflow = mlflow

    def _continue_stored_run(self, mlflow: Any, nested: bool) -> Any:
        """The run of the checkpoint, started again; None (with a warning saying why)
        when this store and experiment cannot continue it."""
        from mlflow.exceptions import MlflowException

        try:
            return mlflow.start_run(run_id=self._stored_run_id, nested=nested)
        except MlflowException as exc:
            warnings.warn(
                f"MLflowVisBackend: the resumed run {self._stored_run_id} (experiment "
                f"{self._experiment_id}) cannot be continued ({exc}); logging to a new run",
                stacklevel=4,
            )
            return None

    def _log_params(self, mlflow: Any, params: dict[str, Any]) -> None:
        """Log ``params``; into a run that existed before, only the names it lacks
        (MLflow params never change), with a warning naming those whose value differs."""
        if self._continued and self._run_id is not None:
            logged = mlflow.get_run(self._run_id).data.params
            changed = sorted(k for k, v in params.items() if k in logged and logged[k] != str(v))
            if changed:
                warnings.warn(
                    f"MLflowVisBackend: the continued run {self._run_id} keeps its first "
                    f"values of the params {changed} (MLflow params cannot change); "
                    "config.py holds the current config",
                    stacklevel=3,
                )
            params = {k: v for k, v in params.items() if k not in logged}
            if not params:
                return
        mlflow.log_params(params)

    @property
    def experiment(self) -> Any:
        """The ``mlflow`` module (its active run is this backend's run)."""
        self._ensure_env()
        return self._mlflow

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Log the (tracked) config keys as flat params and the config text as ``config.py``."""
        self._ensure_env()
        plain = config_as_dict(config)
        if self._tracked_config_keys is not None:
            missing = [key for key in self._tracked_config_keys if key not in plain]
            if missing:
                raise KeyError(
                    f"tracked_config_keys {missing} are not in the config (it has {sorted(plain)})"
                )
            plain = {key: plain[key] for key in self._tracked_config_keys}
        self._log_params(self._mlflow, flatten_config(plain))
        text = getattr(config, "pretty_text", None)
        self._mlflow.log_text(text if isinstance(text, str) else str(config), "config.py")
        work_dir = config_as_dict(config).get("work_dir")
        self._work_dir = os.fspath(work_dir) if work_dir else None

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log ``image``: as the artifact file ``name`` when it ends in .png/.jpg,
        else as the image series ``name`` at ``step``."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        if name.lower().endswith(_IMAGE_SUFFIXES):
            self._mlflow.log_image(rgb, artifact_file=name)
        else:
            self._mlflow.log_image(rgb, key=name, step=step)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Log one metric at ``step``; values that are not single numbers are skipped."""
        self.add_scalars({name: value}, step)

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Log the numeric entries as metrics at ``step`` (a ``"step"`` entry wins)."""
        values, step = split_step(scalar_dict, step)
        self._ensure_env()
        metrics = {}
        for key, value in values.items():
            number = scalar_number(value)
            if number is None:
                warnings.warn(
                    f"MLflowVisBackend: '{key}' is not a single number "
                    f"({type(value).__name__}); it is not recorded",
                    stacklevel=2,
                )
            else:
                metrics[key] = float(number)
        if metrics:
            self._mlflow.log_metrics(metrics, step=step)

    def _artifact_files(self) -> list[tuple[str, str]]:
        """(file, artifact dir) of the work dir's files with an artifact suffix."""
        if self._work_dir is None or not os.path.isdir(self._work_dir):
            return []
        store = None if self._store_dir is None else os.path.abspath(self._store_dir)
        found = []
        for root, _, names in os.walk(self._work_dir):
            if store is not None and os.path.commonpath([store, os.path.abspath(root)]) == store:
                continue  # the local store's own artifacts
            for name in sorted(names):
                if name.endswith(self._artifact_suffix):
                    path = os.path.join(root, name)
                    found.append((path, os.path.relpath(root, self._work_dir)))
        return found

    def close(self) -> None:
        """Upload the work dir's artifact files and end the run; a later write resumes it."""
        if self._mlflow is None:
            return
        for path, folder in self._artifact_files():
            self._mlflow.log_artifact(path, None if folder == "." else folder)
        self._mlflow.end_run()
        self._closed_run_id = self._run_id
        self._mlflow = None
        self._env_ready = False

    def state_dict(self) -> dict[str, Any]:
        """``{'run_id', 'experiment_id'}`` of the run written to (or to be continued), and
        ``'store_dir'``, the directory of the default local store, when there is no
        ``tracking_uri``; empty before any run."""
        run_id = self._run_id or self._stored_run_id
        if run_id is None:
            return {}
        state: dict[str, Any] = {"run_id": run_id, "experiment_id": self._experiment_id}
        if self._tracking_uri is None:
            state["store_dir"] = os.path.abspath(self._save_dir)
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the run ``state['run_id']`` from the next write (in the stored local
        store when there is no ``tracking_uri``; an open run is ended first), unless
        ``run_id`` or ``MLFLOW_RUN_ID`` name a run."""
        run_id = state.get("run_id")
        if not isinstance(run_id, str) or not run_id or run_id == self._run_id:
            return
        if self._given_run_id is not None or os.environ.get("MLFLOW_RUN_ID"):
            return
        store_dir = state.get("store_dir")
        if self._tracking_uri is None and not (
            isinstance(store_dir, str)
            and os.path.isfile(os.path.join(store_dir, "mlflow.db"))
            and writable_dir(store_dir)
        ):
            warnings.warn(
                f"MLflowVisBackend: the local store of the resumed run {run_id}, "
                f"{store_dir}, is gone or not writable; a new run starts in {self._save_dir}",
                stacklevel=2,
            )
            return
        if self._mlflow is not None:
            warnings.warn(
                f"MLflowVisBackend: run {self._run_id} was started before the resume; it is "
                f"ended and the next records go to the resumed run {run_id}",
                stacklevel=2,
            )
            self._mlflow.end_run()
            self._mlflow = None
            self._env_ready = False
        if self._tracking_uri is None and isinstance(store_dir, str):
            self._save_dir = store_dir
        self._run_id = self._closed_run_id = None
        self._stored_run_id = run_id
        experiment_id = state.get("experiment_id")
        self._experiment_id = experiment_id if isinstance(experiment_id, str) else None

"""Weights & Biases backend (``wandb`` is imported on the first write)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

from ..registry import VISBACKENDS
from .image import to_rgb_uint8
from .vis_backend import BaseVisBackend, split_step, to_json_value


def config_as_dict(config: Any) -> dict[str, Any]:
    """A plain dict of ``config`` (a Config, ConfigDict or mapping)."""
    to_dict = getattr(config, "to_dict", None)
    plain = to_dict() if callable(to_dict) else config
    if not isinstance(plain, dict):
        try:
            plain = dict(plain)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"a config must be a Config or a mapping, got {type(config).__name__}"
            ) from exc
    return plain


@VISBACKENDS.register_module()
class WandbVisBackend(BaseVisBackend):
    """Logs scalars, the config, images and the model to a wandb run.

    Steps are not sent: wandb needs them to grow, while validation metrics are
    stepped by epoch and training ones by iteration. Training records carry
    ``iter`` and ``epoch`` values to plot against instead (see
    ``define_metric_cfg``). For local-only runs set ``WANDB_MODE=offline``.

    A resumed training run continues the wandb run of the checkpoint (its id is in
    :meth:`state_dict`; ``wandb.init(id=..., resume='allow')``), and config values
    that changed since (``max_epochs``, ``resume``) may then change in the run's
    config. An id given in ``init_kwargs`` (or ``WANDB_RUN_ID``) wins over the stored one.

    Args:
        save_dir: default ``dir`` of ``wandb.init`` (created on first write).
        init_kwargs: keyword arguments of ``wandb.init`` (project, name, ...).
        define_metric_cfg: ``{metric: summary}`` (e.g. ``{'accuracy/top1': 'max'}``)
            or a list of ``wandb.define_metric`` keyword dicts.
        commit: passed to ``wandb.log``; False merges values into the next commit.
        log_code_name: name of the code artifact saved with the config.
        watch_kwargs: keyword arguments of ``wandb.watch`` used by ``add_graph``.
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        init_kwargs: dict[str, Any] | None = None,
        define_metric_cfg: dict[str, str] | list[dict[str, Any]] | None = None,
        commit: bool = True,
        log_code_name: str | None = None,
        watch_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if init_kwargs is not None and not isinstance(init_kwargs, dict):
            raise TypeError(f"init_kwargs must be a dict, got {type(init_kwargs).__name__}")
        if define_metric_cfg is not None and not isinstance(define_metric_cfg, (dict, list)):
            raise TypeError(
                "define_metric_cfg must be a dict {metric: summary} or a list of "
                f"define_metric keyword dicts, got {type(define_metric_cfg).__name__}"
            )
        super().__init__(save_dir)
        self._init_kwargs = dict(init_kwargs or {})
        self._define_metric_cfg = define_metric_cfg
        self._commit = commit
        self._log_code_name = log_code_name
        self._watch_kwargs = dict(watch_kwargs or {})
        self._wandb: Any = None
        self._run: Any = None
        self._resume_id: str | None = None  # the run to continue: closed or from a checkpoint
        self._continued = False  # the open run is one that existed before

    def _init_env(self) -> None:
        try:
            import wandb
        except ImportError as exc:
            raise ImportError(
                "WandbVisBackend needs the wandb package: pip install wandb  "
                "(or: pip install 'cadence[wandb]')"
            ) from exc
        os.makedirs(self._save_dir, exist_ok=True)
        kwargs = dict(self._init_kwargs)
        kwargs.setdefault("dir", self._save_dir)
        if self._resume_id is not None:  # reopened after close() or resumed: continue it
            kwargs.setdefault("id", self._resume_id)
            kwargs.setdefault("resume", "allow")
        self._continued = "id" in kwargs
        self._run = wandb.init(**kwargs)
        self._wandb = wandb
        cfg = self._define_metric_cfg
        if isinstance(cfg, dict):
            for metric, summary in cfg.items():
                wandb.define_metric(metric, summary=summary)
        elif isinstance(cfg, list):
            for index, item in enumerate(cfg):
                if not isinstance(item, dict):
                    raise TypeError(
                        f"define_metric_cfg[{index}] must be a dict of define_metric "
                        f"arguments, got {type(item).__name__}"
                    )
                wandb.define_metric(**item)

    @property
    def experiment(self) -> Any:
        """The ``wandb`` module (its current run is this backend's run)."""
        self._ensure_env()
        return self._wandb

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Store the config as the run's config and save the code as an artifact."""
        self._ensure_env()
        allow_change = bool(self._init_kwargs.get("allow_val_change", False)) or self._continued
        self._run.config.update(config_as_dict(config), allow_val_change=allow_change)
        self._run.log_code(name=self._log_code_name)

    def add_graph(self, model: Any, data_batch: Any = None, **kwargs: Any) -> None:
        """Watch ``model`` (gradients and parameters) with ``watch_kwargs``."""
        self._ensure_env()
        self._wandb.watch(model, **self._watch_kwargs)

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log ``image`` (HWC uint8 RGB) under ``name``."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        self._run.log({name: self._wandb.Image(rgb)}, commit=self._commit)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Log one value under ``name``."""
        self._ensure_env()
        self._run.log({name: to_json_value(value)}, commit=self._commit)

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Log all values in one ``wandb.log`` call (a ``"step"`` entry is dropped)."""
        values, _ = split_step(scalar_dict, step)
        self._ensure_env()
        self._run.log({key: to_json_value(v) for key, v in values.items()}, commit=self._commit)

    def close(self) -> None:
        """Finish the run (uploads what is pending unless offline); a later write resumes it."""
        if self._run is not None:
            self._resume_id = getattr(self._run, "id", None)
            self._run.finish()
            self._run = None
            self._env_ready = False

    def _user_run_id(self) -> str | None:
        return self._init_kwargs.get("id") or os.environ.get("WANDB_RUN_ID") or None

    def state_dict(self) -> dict[str, Any]:
        """``{'run_id': ...}``: the wandb run written to (or to be continued), if any."""
        run_id = getattr(self._run, "id", None) if self._run is not None else self._resume_id
        return {"run_id": run_id} if run_id else {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the run ``state['run_id']`` from the next write (an open run of
        another id is finished first), unless ``init_kwargs`` or ``WANDB_RUN_ID``
        name a run."""
        run_id = state.get("run_id")
        if not isinstance(run_id, str) or not run_id or self._user_run_id() is not None:
            return
        if self._run is not None:
            if getattr(self._run, "id", None) == run_id:
                return
            warnings.warn(
                f"WandbVisBackend: run {self._run.id} was started before the resume; it is "
                f"finished and the next records go to the resumed run {run_id}",
                stacklevel=2,
            )
            self.close()
        self._resume_id = run_id

"""``BaseInferencer``: mmengine's base class of the OpenMMLab projects' inferencers
(``DetInferencer``, ``ImageClassificationInferencer``...), for code written against it.

A subclass gives the pipeline, the visualisation and the post-processing; this class
loads the config (a file, a Config, a dict, or the one stored in the checkpoint), builds
the model with the checkpoint's weights (read without executing code) and runs
``preprocess -> forward -> visualize -> postprocess``. cadence's own
:class:`~cadence.inference.Predictor` is the simpler entry point for cadence models.
Model names of a project's metafile (``model='rtmdet_tiny_8xb32-300e_coco'``) are not
resolved: give a config file.
"""

from __future__ import annotations

import copy
import os
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import torch
from torch import nn

from ..checkpoint import load_state_dict_into, read_checkpoint
from ..config import Config, ConfigDict
from ..dataset.collate import pseudo_collate
from ..device.utils import get_device
from ..fileio import isdir, join_path, list_dir_or_file
from ..registry import FUNCTIONS, MODELS, VISUALIZERS
from ..registry.default_scope import DefaultScope

_STAGES = ("preprocess_kwargs", "forward_kwargs", "visualize_kwargs", "postprocess_kwargs")


class InferencerDefinitionError(TypeError, AssertionError):
    """An inferencer class whose stage keyword sets overlap (mmengine asserted)."""


class InferencerMeta(ABCMeta):
    """Checks at class creation that no keyword belongs to two stages."""

    def __init__(cls, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        sets = [getattr(cls, stage) for stage in _STAGES]
        if not all(isinstance(s, set) for s in sets):
            raise InferencerDefinitionError(f"Class define error! {cls.__name__}: {_STAGES} "
                                            "must be sets")  # fmt: skip
        if len(set().union(*sets)) != sum(len(s) for s in sets):
            raise InferencerDefinitionError(
                f"Class define error! {cls.__name__} should not define duplicated keys for "
                "`preprocess_kwargs`, `forward_kwargs`, `visualize_kwargs` and "
                "`postprocess_kwargs`."
            )


class BaseInferencer(metaclass=InferencerMeta):
    """Predictions (and their visualisation) of a trained model for raw inputs.

    Args:
        model: a config file, a Config/ConfigDict/dict, or None to use the config
            stored in ``weights``.
        weights: the checkpoint file (its ``state_dict`` is loaded).
        device: where the model runs (default: :func:`cadence.device.get_device`).
        scope: the registry scope (default: the current default scope's).
        show_progress: show a progress bar while predicting.
    """

    preprocess_kwargs: set[str] = set()
    forward_kwargs: set[str] = set()
    visualize_kwargs: set[str] = set()
    postprocess_kwargs: set[str] = set()

    def __init__(
        self,
        model: str | os.PathLike[str] | Config | ConfigDict | dict[str, Any] | None = None,
        weights: str | None = None,
        device: str | None = None,
        scope: str | None = None,
        show_progress: bool = True,
    ) -> None:
        if scope is None:
            current = DefaultScope.get_current_instance()
            scope = current.scope_name if current is not None else None
        self.scope = scope
        cfg: Any
        if isinstance(model, str | os.PathLike):
            if not os.path.isfile(model):
                raise FileNotFoundError(
                    f"model={os.fspath(model)!r} is not a config file (cadence does not look "
                    "model names up in a project's metafile: give the config's path)"
                )
            cfg = Config.fromfile(os.fspath(model))
        elif isinstance(model, Config | ConfigDict):
            cfg = copy.deepcopy(model)
        elif isinstance(model, dict):
            cfg = copy.deepcopy(ConfigDict(model))
        elif model is None:
            if weights is None:
                raise ValueError(
                    "If model is None, the weights must be specified since the config needs "
                    "to be loaded from the weights"
                )
            cfg = ConfigDict()
        else:
            raise TypeError(
                f"model must be a filepath or any ConfigType object, but got {type(model)}"
            )
        self.model = self._init_model(cfg, weights, device or get_device())
        self.pipeline = self._init_pipeline(cfg)
        self.collate_fn = self._init_collate(cfg)
        self.visualizer = self._init_visualizer(cfg)
        self.cfg = cfg
        self.show_progress = show_progress

    def __call__(
        self, inputs: Any, return_datasamples: bool = False, batch_size: int = 1, **kwargs: Any
    ) -> Any:
        """Predict, visualise and post-process ``inputs``; each keyword goes to the stage
        whose ``*_kwargs`` set names it."""
        pre, fwd, vis, post = self._dispatch_kwargs(**kwargs)
        ori_inputs = self._inputs_to_list(inputs)
        batches = self.preprocess(ori_inputs, batch_size=batch_size, **pre)
        if self.show_progress:
            from ..utils.progressbar import track_iter_progress

            batches = track_iter_progress(list(batches))
        preds: list[Any] = []
        for data in batches:
            preds.extend(self.forward(data, **fwd))
        visualization = self.visualize(ori_inputs, preds, **vis)
        return self.postprocess(preds, visualization, return_datasamples, **post)

    def _inputs_to_list(self, inputs: Any) -> list[Any]:
        """``inputs`` as a list; a folder's path becomes the paths of its files."""
        if isinstance(inputs, str) and isdir(inputs):
            inputs = [join_path(inputs, name) for name in list_dir_or_file(inputs, list_dir=False)]
        if not isinstance(inputs, list | tuple):
            inputs = [inputs]
        return list(inputs)

    def preprocess(self, inputs: Any, batch_size: int = 1, **kwargs: Any) -> Iterator[Any]:
        """Batches of ``batch_size`` inputs, each input through the pipeline, each batch
        through the collate function."""
        yield from map(self.collate_fn, self._get_chunk_data(map(self.pipeline, inputs),
                                                             batch_size))  # fmt: skip

    @torch.no_grad()
    def forward(self, inputs: Any, **kwargs: Any) -> Any:
        """The model's predictions for one batch (its ``test_step``)."""
        return self.model.test_step(inputs)  # type: ignore[operator]

    @abstractmethod
    def visualize(self, inputs: list[Any], preds: Any, show: bool = False, **kwargs: Any) -> Any:
        """The visualisation of ``preds`` (a subclass's)."""

    @abstractmethod
    def postprocess(
        self, preds: Any, visualization: Any, return_datasample: bool = False, **kwargs: Any
    ) -> Any:
        """The results returned to the caller (a subclass's)."""

    @abstractmethod
    def _init_pipeline(self, cfg: Any) -> Callable[[Any], Any]:
        """The function applied to each raw input (a subclass's)."""

    def _init_model(self, cfg: Any, weights: str | None, device: str = "cpu") -> nn.Module:
        """The model of ``cfg.model`` with ``weights`` loaded, in eval mode on ``device``.

        Without a model config, the config is the one stored in the checkpoint's
        ``meta.cfg`` (or ``message_hub.runtime_info.cfg``).
        """
        checkpoint = read_checkpoint(weights, map_location="cpu") if weights is not None else None
        if not cfg:
            if checkpoint is None:
                raise ValueError("no config given and no checkpoint to read one from")
            cfg.update(Config.fromstring(_stored_cfg(checkpoint, weights), ".py")._cfg_dict)
        if cfg.model.get("pretrained") is not None:
            del cfg.model.pretrained  # the checkpoint's weights replace them
        model = MODELS.build(cfg.model)
        model.cfg = cfg
        self._load_weights_to_model(model, checkpoint, cfg)
        model.to(device)
        model.eval()
        return model

    def _load_weights_to_model(
        self, model: nn.Module, checkpoint: dict[str, Any] | None, cfg: Any
    ) -> None:
        """Load ``checkpoint``'s weights into ``model`` (subclasses add meta information)."""
        if checkpoint is None:
            warnings.warn(
                "Checkpoint is not loaded, and the inference result is calculated by the "
                "randomly initialized model!",
                stacklevel=2,
            )
            return
        load_state_dict_into(model, checkpoint, False, ((r"^module\.", ""),))

    def _init_collate(self, cfg: Any) -> Callable[[Any], Any]:
        """The test dataloader's ``collate_fn`` (by name, in this scope), else
        :func:`pseudo_collate`."""
        try:
            name = cfg.test_dataloader.collate_fn
        except AttributeError:
            return pseudo_collate
        with FUNCTIONS.switch_scope_and_registry(self.scope) as registry:
            found = registry.get(name)
        return found if found is not None else pseudo_collate

    def _init_visualizer(self, cfg: Any) -> Any:
        """The visualizer of ``cfg.visualizer`` (None without one), under a fresh name
        when one of that name exists."""
        if "visualizer" not in cfg:
            return None
        stamp = str(datetime.timestamp(datetime.now()))
        name = cfg.visualizer.get("name", stamp)
        from ..visualization import Visualizer

        if Visualizer.check_instance_created(name):
            name = f"{name}-{stamp}"
        cfg.visualizer.name = name
        return VISUALIZERS.build(cfg.visualizer)

    def _get_chunk_data(self, inputs: Iterable[Any], chunk_size: int) -> Iterator[list[Any]]:
        """Lists of ``chunk_size`` items of ``inputs`` (the last may be shorter)."""
        chunk: list[Any] = []
        for item in inputs:
            chunk.append(item)
            if len(chunk) == chunk_size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def _dispatch_kwargs(self, **kwargs: Any) -> tuple[dict[str, Any], ...]:
        """``kwargs`` split into the preprocess, forward, visualize and postprocess ones."""
        stages = [getattr(self, stage) for stage in _STAGES]
        unknown = set(kwargs) - set().union(*stages)
        if unknown:
            raise ValueError(
                f"unknown argument {unknown} for `preprocess`, `forward`, `visualize` and "
                "`postprocess`"
            )
        return tuple({k: v for k, v in kwargs.items() if k in stage} for stage in stages)


def _stored_cfg(checkpoint: dict[str, Any], weights: str | None) -> str:
    """The config text a checkpoint carries."""
    hub = checkpoint.get("message_hub")
    if isinstance(hub, dict) and isinstance(hub.get("runtime_info"), dict):
        text = hub["runtime_info"].get("cfg")
        if isinstance(text, str):
            return text
    meta = checkpoint.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("cfg"), str):
        return meta["cfg"]
    raise ValueError(f"Cannot find the config in the checkpoint {weights}: give model=CONFIG")


__all__ = ["BaseInferencer", "InferencerMeta"]

"""``Predictor``: a trained model from a config and a checkpoint, ready for raw inputs.

Like detectron2's ``DefaultPredictor``: build the model, load its weights, put it
in eval mode on a device, then for each call apply the config's test-time
preprocessing (the test dataset's ``pipeline`` and the model's data
preprocessor) and return the model's predictions.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..checkpoint import (
    load_state_dict_into,
    read_checkpoint,
)
from ..checkpoint.pointer import resolve_checkpoint
from ..checkpoint.remote import fetch_url
from ..config import Config
from ..config.errors import ConfigKeyError
from ..fileio import is_url
from ..registry import FUNCTIONS, MODELS, TRANSFORMS, default_scope
from ..utils import did_you_mean

Transform = Callable[[Any], Any]

#: Key paths searched for the test-time pipeline, first match wins.
PIPELINE_PATHS = (
    "test_dataloader.dataset.pipeline",
    "test_dataloader.dataset.dataset.pipeline",  # dataset wrappers (RepeatDataset, ...)
    "val_dataloader.dataset.pipeline",
    "test_pipeline",
)


def _lookup(cfg: Config | Mapping[str, Any], path: str) -> Any:
    """The value at a dotted key path, or None when a key on the way is missing."""
    node: Any = cfg
    for key in path.split("."):
        if not isinstance(node, (Config, Mapping)) or key not in node:
            return None
        node = node[key]
    return node


def build_transforms(steps: Sequence[Any], key_path: str) -> list[Transform]:
    """Each pipeline step built from ``TRANSFORMS`` (a callable is kept as it is)."""
    transforms: list[Transform] = []
    for index, step in enumerate(steps):
        if callable(step):
            transforms.append(step)
        else:
            transforms.append(TRANSFORMS.build(step, key_path=f"{key_path}.{index}"))
    return transforms


def _function(name: str) -> Callable[..., Any]:
    fn = FUNCTIONS.get(name)
    if fn is None:
        raise ConfigKeyError(
            f"test_dataloader.collate_fn: no function '{name}' in the FUNCTIONS registry."
            + did_you_mean(name, FUNCTIONS.module_dict),
            key="test_dataloader.collate_fn",
        )
    return fn


def build_collate(spec: Any) -> Callable[[list[Any]], Any]:
    """The test dataloader's collate function (``default_collate`` when it sets none)."""
    if spec is None:
        return _function("default_collate")
    if isinstance(spec, str):
        return _function(spec)
    if callable(spec):
        return spec
    if isinstance(spec, Mapping) and "type" in spec:
        args = dict(spec)
        fn = args.pop("type")
        fn = _function(fn) if isinstance(fn, str) else fn
        return functools.partial(fn, **args) if args else fn
    raise ConfigKeyError(
        f"test_dataloader.collate_fn must be a name, a callable or dict(type=...), got {spec!r}",
        key="test_dataloader.collate_fn",
    )


class Predictor:
    """Predictions of a trained model for raw inputs, with the config's test-time preprocessing.

    ``Predictor(cfg, checkpoint)(x)`` returns the prediction for one input and
    ``predictor([x1, x2])`` a list of predictions, as the model's
    ``test_step`` returns them (``forward(..., mode='predict')``).

    Each input goes through, in order: the test dataset's ``pipeline`` (when the
    config has one; a non-dict input ``x`` enters it as ``{input_key: x}``, as
    a dataset's raw sample would), the test dataloader's collate function, and
    the model's data preprocessor. Without a pipeline a non-dict input becomes
    ``dict(inputs=x)``.

    Args:
        cfg: a :class:`~cadence.config.Config` or the path of a config file.
        checkpoint: a checkpoint file written by any strategy (its
            ``state_dict``, or the file itself, holds the full weights; a DDP
            ``module.`` prefix is stripped), or a work dir whose
            ``last_checkpoint`` names one.
        device: where the model runs; default ``cuda`` when available, else ``cpu``.
        input_key: the key a non-dict input takes in the pipeline's input dict.
        strict: require the checkpoint's keys to match the model's exactly.
    """

    def __init__(
        self,
        cfg: Config | str | os.PathLike[str],
        checkpoint: str | os.PathLike[str],
        device: str | torch.device | None = None,
        input_key: str = "img",
        strict: bool = True,
    ) -> None:
        self.cfg = cfg if isinstance(cfg, Config) else Config.fromfile(os.fspath(cfg))
        if "model" not in self.cfg:
            raise ConfigKeyError("the config has no 'model' to build a Predictor", key="model")
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.input_key = input_key
        path = resolve_checkpoint(checkpoint, self.cfg.get("work_dir"))
        #: the checkpoint file read (a work dir's pointer target; a URL downloaded)
        self.checkpoint = fetch_url(path) if is_url(path) else path
        with default_scope(self.cfg.get("default_scope")):
            self.model = self._build_model(strict)
            self.pipeline_path = next((p for p in PIPELINE_PATHS if _lookup(self.cfg, p)), None)
            steps = _lookup(self.cfg, self.pipeline_path) if self.pipeline_path else []
            self.transforms = build_transforms(steps, self.pipeline_path or "pipeline")
            self.collate = build_collate(_lookup(self.cfg, "test_dataloader.collate_fn"))

    def _build_model(self, strict: bool) -> nn.Module:
        model = MODELS.build(self.cfg.model, key_path="model")
        if not hasattr(model, "test_step"):
            from ..model import as_cadence_model

            model = as_cadence_model(model)
        checkpoint = read_checkpoint(self.checkpoint)
        load_state_dict_into(model, checkpoint, strict, ((r"^module\.", ""),), self.checkpoint)
        model.to(self.device)
        model.eval()
        return model

    def preprocess(self, inputs: Any) -> dict[str, Any] | Any:
        """One raw input as the dataset would yield it (pipeline applied)."""
        if not self.transforms:
            return inputs if isinstance(inputs, Mapping) else {"inputs": torch.as_tensor(inputs)}
        sample = dict(inputs) if isinstance(inputs, Mapping) else {self.input_key: inputs}
        for transform in self.transforms:
            sample = transform(sample)
            if sample is None:
                raise ValueError(
                    f"a transform of {self.pipeline_path} ({type(transform).__name__}) "
                    "dropped the input (returned None)"
                )
        return sample

    def predict(self, batch: Sequence[Any]) -> list[Any]:
        """Predictions for a list of raw inputs."""
        samples = [self.preprocess(x) for x in batch]
        with torch.inference_mode():
            outputs = self.model.test_step(self.collate(samples))  # type: ignore[operator]
        return list(outputs)

    def __call__(self, inputs: Any) -> Any:
        """The prediction for one input, or a list of predictions for a list of inputs."""
        if isinstance(inputs, list):
            return self.predict(inputs) if inputs else []
        return self.predict([inputs])[0]

    def __repr__(self) -> str:
        model = type(self.model).__name__
        return f"Predictor({model} from {self.checkpoint!r} on {self.device})"

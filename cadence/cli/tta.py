"""``cadence test --tta``: rewrite a config for test-time augmentation.

As the OpenMMLab codebases' ``tools/test.py --tta`` do: the model becomes the
config's ``tta_model`` wrapping the original ``model`` (as its ``module``), and
the test dataset's ``pipeline`` becomes ``tta_pipeline`` (whose ``TestTimeAug``
step gives every sample as several views).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The config keys ``--tta`` needs, with what each must hold.
TTA_KEYS = {
    "tta_model": "the TTA model config, e.g. dict(type='MyTTAModel'), which wraps `model`",
    "tta_pipeline": "the test pipeline with a TestTimeAug step",
}


def apply_tta(cfg: Any) -> None:
    """Wrap ``cfg.model`` in ``cfg.tta_model`` and give the test dataset ``cfg.tta_pipeline``.

    The dataset is ``test_dataloader.dataset``, or the innermost ``dataset`` of a
    wrapper (``RepeatDataset`` and the like). A missing key is a
    :class:`~cadence.config.ConfigError` naming it.
    """
    from ..config import ConfigError

    for key, expected in TTA_KEYS.items():
        if cfg.get(key) is None:
            raise ConfigError(f"--tta needs '{key}' in the config: {expected}", key=key)
    if not isinstance(cfg.tta_model, Mapping):
        raise ConfigError(
            f"'tta_model' must be a model config dict, got {type(cfg.tta_model).__name__}",
            key="tta_model",
        )
    if cfg.get("model") is None:
        raise ConfigError("--tta wraps 'model', which the config does not set", key="model")
    dataset = _test_dataset(cfg)
    wrapped = dict(cfg.tta_model.items())
    wrapped["module"] = cfg.model
    cfg.model = wrapped
    dataset.pipeline = cfg.tta_pipeline


def _test_dataset(cfg: Any) -> Any:
    """The innermost dataset config of ``test_dataloader``."""
    from ..config import ConfigError

    path = "test_dataloader.dataset"
    loader = cfg.get("test_dataloader")
    dataset = loader.get("dataset") if isinstance(loader, Mapping) else None
    if not isinstance(dataset, Mapping):
        raise ConfigError(f"--tta sets the pipeline of '{path}', which the config lacks", key=path)
    while isinstance(dataset.get("dataset"), Mapping):
        dataset = dataset["dataset"]
    return dataset

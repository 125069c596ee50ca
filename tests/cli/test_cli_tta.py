"""``cadence test --tta``: the config rewrite the OpenMMLab ``tools/test.py --tta`` scripts do."""

from __future__ import annotations

import pytest

from cadence.cli.tta import apply_tta
from cadence.config import Config, ConfigError

PIPELINE = [dict(type="Load"), dict(type="Pack")]
TTA_PIPELINE = [dict(type="Load"), dict(type="TestTimeAug", transforms=[[dict(type="Pack")]])]


def config(**extra):
    return Config(dict(
        model=dict(type="Net", depth=3),
        test_dataloader=dict(batch_size=2, dataset=dict(type="Set", pipeline=PIPELINE)),
        tta_model=dict(type="NetTTA", merge="mean"),
        tta_pipeline=TTA_PIPELINE,
        **extra,
    ))  # fmt: skip


def test_model_is_wrapped_and_the_test_pipeline_replaced():
    cfg = config()
    apply_tta(cfg)
    assert cfg.model.to_dict() == dict(type="NetTTA", merge="mean",
                                       module=dict(type="Net", depth=3))  # fmt: skip
    assert cfg.test_dataloader.dataset.pipeline == TTA_PIPELINE
    assert cfg.test_dataloader.batch_size == 2


def test_the_innermost_dataset_of_a_wrapper_gets_the_pipeline():
    cfg = config()
    inner = cfg.test_dataloader.dataset
    cfg.test_dataloader.dataset = dict(type="RepeatDataset", times=2, dataset=inner)
    apply_tta(cfg)
    assert cfg.test_dataloader.dataset.dataset.pipeline == TTA_PIPELINE
    assert "pipeline" not in cfg.test_dataloader.dataset


@pytest.mark.parametrize("missing", ["tta_model", "tta_pipeline"])
def test_a_missing_tta_key_is_a_config_error_naming_it(missing):
    cfg = config()
    cfg.pop(missing)
    with pytest.raises(ConfigError, match=f"'{missing}'") as info:
        apply_tta(cfg)
    assert info.value.key == missing


def test_a_config_without_test_dataset_is_a_config_error():
    cfg = config()
    cfg.pop("test_dataloader")
    with pytest.raises(ConfigError, match="test_dataloader.dataset"):
        apply_tta(cfg)

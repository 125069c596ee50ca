"""mmsegmentation 1.2.2's own tools/train.py and tools/test.py on cadence, unmodified.

``unet/unet-s5-d16_fcn_4xb4-40k_chase-db1-128x128`` (iteration-based; shrunk with
``--cfg-options``: 32-pixel crops, 8 base channels, a few iterations) on a synthetic
CHASE_DB1 written in its on-disk layout (``images/{training,validation}/*.png`` and the
``*_1stHO.png`` annotations): train -> val -> checkpoint -> resume -> test through door (b),
and the first iterations through ``cadence train`` (door a), with the same losses.
mmseg imports ``mmcv.ops``; the test stands in for compiled mmcv (tests/compat/standins).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from openmmlab_runs import DATA, DOOR, losses, project_config, run

TOOLS = DATA / "mmseg" / "tools"
CONFIG = "unet/unet-s5-d16_fcn_4xb4-40k_chase-db1-128x128.py"


def _write_chase_db1(root: Path) -> None:
    import cv2

    rng = np.random.default_rng(0)
    for split, count in (("training", 2), ("validation", 1)):
        for folder in ("images", "annotations"):
            (root / folder / split).mkdir(parents=True)
        for i in range(count):
            image = rng.integers(0, 256, size=(40, 48, 3), dtype=np.uint8)
            vessels = (rng.random((40, 48)) > 0.8).astype(np.uint8)
            cv2.imwrite(str(root / "images" / split / f"Image_{i:02d}.png"), image)
            cv2.imwrite(str(root / "annotations" / split / f"Image_{i:02d}_1stHO.png"), vessels)


def _options(data: Path, iters: int) -> list[str]:
    loaders = ("train_dataloader", "val_dataloader", "test_dataloader")
    roots = ["train_dataloader.dataset.dataset.data_root", "val_dataloader.dataset.data_root",
             "test_dataloader.dataset.data_root"]  # fmt: skip
    return [
        "--cfg-options", *(f"{key}={data}" for key in roots),
        *(f"{loader}.num_workers=0" for loader in loaders),
        *(f"{loader}.persistent_workers=False" for loader in loaders),
        "train_dataloader.batch_size=2", f"train_cfg.max_iters={iters}",
        "train_cfg.val_interval=2", "default_hooks.checkpoint.interval=2",
        "default_hooks.logger.interval=1", "randomness.seed=0",
        "model.data_preprocessor.size=(32,32)", "model.test_cfg.crop_size=(32,32)",
        "model.test_cfg.stride=(24,24)", "model.backbone.base_channels=8",
        "model.decode_head.in_channels=8", "model.decode_head.channels=8",
        "model.auxiliary_head.in_channels=16", "model.auxiliary_head.channels=8",
        "train_dataloader.dataset.dataset.pipeline.2.scale=(48,40)",
        "train_dataloader.dataset.dataset.pipeline.3.crop_size=(32,32)",
        "val_dataloader.dataset.pipeline.1.scale=(48,40)",
        "test_dataloader.dataset.pipeline.1.scale=(48,40)",
    ]  # fmt: skip


@pytest.mark.slow
def test_mmseg_tools_train_resume_test_and_cadence_train(tmp_path: Path) -> None:
    data = tmp_path / "CHASE_DB1"
    _write_chase_db1(data)
    cfg = str(project_config("mmseg", CONFIG))
    work = tmp_path / "work"

    first = run(tmp_path, *DOOR, str(TOOLS / "train.py"), cfg, "--work-dir", str(work),
                *_options(data, 2))  # fmt: skip
    assert (work / "iter_2.pth").is_file() and re.search(r"Iter\(val\).*mDice: [0-9.]+", first)
    resumed = run(tmp_path, *DOOR, str(TOOLS / "train.py"), cfg, "--work-dir", str(work),
                  "--resume", *_options(data, 3))  # fmt: skip
    assert "Resumed from" in resumed and (work / "iter_3.pth").is_file()
    assert re.search(r"Iter\(train\) \[3/3\]", resumed) and "Iter(train) [2/3]" not in resumed
    tested = run(tmp_path, *DOOR, str(TOOLS / "test.py"), cfg, str(work / "iter_3.pth"),
                 "--work-dir", str(tmp_path / "test"), *_options(data, 3))  # fmt: skip
    assert re.search(r"Iter\(test\).*mDice: [0-9.]+", tested)

    cli = tmp_path / "cli"
    run(tmp_path, "-m", "cadence", "train", cfg, "--work-dir", str(cli), *_options(data, 2))
    door_b = losses(work)
    assert len(door_b) == 3 and losses(cli) == door_b[:2]  # one engine: the same numbers

"""mmdetection 3.3.0's own tools/train.py and tools/test.py on cadence, unmodified.

``rtmdet/rtmdet_tiny_8xb32-300e_coco`` (with its EMAHook and PipelineSwitchHook; shrunk
with ``--cfg-options``: 64-pixel images, two classes, no pretrained backbone) on a tiny
COCO written in its on-disk layout (``annotations/instances_*2017.json``, ``train2017/``,
``val2017/``): train -> val (CocoMetric, through nms) -> checkpoint -> resume (the pipeline
switches in the resumed epoch) -> test through door (b), and the first epoch through
``cadence train`` (door a) with the same losses. Without compiled mmcv both doors end in
one paragraph naming the import and what to install, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from openmmlab_runs import DATA, DOOR, losses, project_config, run

TOOLS = DATA / "mmdet" / "tools"
CONFIG = "rtmdet/rtmdet_tiny_8xb32-300e_coco.py"


def _write_coco(root: Path) -> None:
    import cv2

    rng = np.random.default_rng(0)
    (root / "annotations").mkdir(parents=True)
    categories = [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}]
    for split, count in (("train2017", 4), ("val2017", 2)):
        (root / split).mkdir()
        images, annotations = [], []
        for i in range(count):
            name = f"{i:012d}.jpg"
            cv2.imwrite(str(root / split / name), rng.integers(0, 256, (48, 64, 3), np.uint8))
            images.append({"id": i + 1, "file_name": name, "width": 64, "height": 48})
            for category in categories:
                x, y, w, h = (float(v) for v in rng.integers((0, 0, 8, 8), (30, 20, 30, 25)))
                annotations.append({"id": len(annotations) + 1, "image_id": i + 1,
                                    "category_id": category["id"], "bbox": [x, y, w, h],
                                    "area": w * h, "iscrowd": 0})  # fmt: skip
        coco = {"images": images, "annotations": annotations, "categories": categories}
        (root / "annotations" / f"instances_{split}.json").write_text(json.dumps(coco))


def _options(data: Path, epochs: int) -> list[str]:
    loaders = ("train_dataloader", "val_dataloader", "test_dataloader")
    ann = f"{data}/annotations/instances_val2017.json"
    train = "train_dataloader.dataset.pipeline"
    switch = "custom_hooks.1.switch_pipeline"
    return [
        "--cfg-options",
        *(f"{loader}.dataset.data_root={data}/" for loader in loaders),
        *(f"{loader}.num_workers=0" for loader in loaders),
        *(f"{loader}.persistent_workers=False" for loader in loaders),
        *(f"{loader}.batch_size=2" for loader in loaders),
        *(f"{loader}.dataset.metainfo.classes=(person,car)" for loader in loaders),
        f"val_evaluator.ann_file={ann}", f"test_evaluator.ann_file={ann}",
        f"train_cfg.max_epochs={epochs}", "train_cfg.val_interval=1",
        "train_cfg.dynamic_intervals=[(1,1)]", "default_hooks.logger.interval=1",
        "randomness.seed=0", "model.backbone.init_cfg=None", "model.bbox_head.num_classes=2",
        # untrained boxes are degenerate: keep them, so that nms and CocoMetric have work
        "model.test_cfg.min_bbox_size=-1",
        f"{train}.2.img_scale=(64,64)", f"{train}.3.scale=(128,128)",
        f"{train}.4.crop_size=(64,64)", f"{train}.7.size=(64,64)",
        f"{train}.8.img_scale=(64,64)", "custom_hooks.1.switch_epoch=1",
        f"{switch}.2.scale=(64,64)", f"{switch}.3.crop_size=(64,64)", f"{switch}.6.size=(64,64)",
        *(f"{loader}.dataset.pipeline.1.scale=(64,64)" for loader in loaders[1:]),
        *(f"{loader}.dataset.pipeline.2.size=(64,64)" for loader in loaders[1:]),
    ]  # fmt: skip


@pytest.mark.slow
def test_mmdet_tools_train_resume_test_and_cadence_train(tmp_path: Path) -> None:
    data = tmp_path / "coco"
    _write_coco(data)
    cfg = str(project_config("mmdet", CONFIG))
    work = tmp_path / "work"

    first = run(tmp_path, *DOOR, str(TOOLS / "train.py"), cfg, "--work-dir", str(work),
                *_options(data, 1))  # fmt: skip
    assert (work / "epoch_1.pth").is_file() and "coco/bbox_mAP_50: " in first
    resumed = run(tmp_path, *DOOR, str(TOOLS / "train.py"), cfg, "--work-dir", str(work),
                  "--resume", *_options(data, 2))  # fmt: skip
    assert "Resumed from" in resumed and "Switch pipeline now!" in resumed
    assert (work / "epoch_2.pth").is_file() and "Epoch(train) [2][2/2]" in resumed
    tested = run(tmp_path, *DOOR, str(TOOLS / "test.py"), cfg, str(work / "epoch_2.pth"),
                 "--work-dir", str(tmp_path / "test"), *_options(data, 2))  # fmt: skip
    assert "Epoch(test)" in tested and "coco/bbox_mAP: " in tested

    cli = tmp_path / "cli"
    run(tmp_path, "-m", "cadence", "train", cfg, "--work-dir", str(cli), *_options(data, 1))
    door_b = losses(work)
    assert len(door_b) == 4 and losses(cli) == door_b[:2]  # one engine: the same numbers


@pytest.mark.slow
def test_without_compiled_mmcv_both_doors_say_what_to_install(tmp_path: Path) -> None:
    cfg = str(project_config("mmdet", CONFIG))
    for args in ((*DOOR, str(TOOLS / "train.py"), cfg), ("-m", "cadence", "train", cfg)):
        output = run(tmp_path, *args, "--work-dir", str(tmp_path / "w"), compiled_mmcv=False,
                     expect=2)  # fmt: skip
        assert "Traceback" not in output
        paragraph = output.strip().splitlines()[-1]
        assert paragraph.startswith("cadence: error: the import at ")
        assert "from mmcv.ops" in paragraph and "mmcv-lite" in paragraph
        assert "pip install mmcv==2.1.0" in paragraph and "mmcv._ext" in paragraph

"""``cadence check`` passes configs of mmdet, mmseg and mmpretrain that a user would pick.

The configs are the projects' own (in their wheels), unmodified; one interpreter checks
them all, so each project is imported once. Training them end to end (train, resume,
test through the projects' own tools) is ``benchmarks/openmmlab_configs.py``: a few
minutes, too long for the suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openmmlab_runs import project_config, run

CONFIGS = [
    ("mmdet", "retinanet/retinanet_r18_fpn_1x_coco.py"),
    ("mmdet", "fcos/fcos_r50-caffe_fpn_gn-head_1x_coco.py"),
    ("mmdet", "yolox/yolox_tiny_8xb8-300e_coco.py"),
    ("mmdet", "faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py"),
    ("mmseg", "pspnet/pspnet_r18-d8_4xb2-80k_cityscapes-512x1024.py"),
    ("mmseg", "deeplabv3/deeplabv3_r18-d8_4xb2-80k_cityscapes-512x1024.py"),
    ("mmseg", "segformer/segformer_mit-b0_8xb2-160k_ade20k-512x512.py"),
    ("mmpretrain", "resnet/resnet50_8xb16_cifar100.py"),
    ("mmpretrain", "mobilenet_v2/mobilenet-v2_8xb32_in1k.py"),
    ("mmpretrain", "deit/deit-tiny_4xb256_in1k.py"),
]

_CHECK_ALL = """
import sys
from cadence.cli import main
for config in sys.argv[1:]:
    print("exit", main(["check", config]), config, flush=True)
"""


@pytest.mark.slow
def test_cadence_check_passes_the_projects_configs(tmp_path: Path) -> None:
    configs = [str(project_config(package, relative)) for package, relative in CONFIGS]
    output = run(tmp_path, "-c", _CHECK_ALL, *configs)
    exits = [line for line in output.splitlines() if line.startswith("exit ")]
    assert exits == [f"exit 0 {config}" for config in configs], output[-4000:]
    assert output.count("config OK: ") == len(configs)
    # a component nobody can build here is named, not hidden: Faster R-CNN's RoIAlign
    assert "'RoIAlign' is not registered" in output

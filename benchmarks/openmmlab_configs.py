"""Other configs of mmdet, mmseg and mmpretrain through their own tools, on cadence.

For each config of :data:`TRIALS` (ones a user would pick, beyond the three of
``tests/compat``): write a few samples in its dataset's on-disk layout (the writers of
``tests/compat``, plus ImageNet, Cityscapes, ADE20K and CIFAR-100 here), then run the
project's unmodified ``tools/train.py`` (train -> val -> checkpoint), ``tools/train.py
--resume`` (one more epoch or iteration) and ``tools/test.py`` on that checkpoint, each in
a fresh interpreter under ``python -m cadence.compat.mmengine``, with the compiled-mmcv
stand-in of ``tests/compat/standins`` (nms only) and the config shrunk by
``--cfg-options`` (tiny images, batch 2, no pretrained weights, no workers).

Prints one line per config (each step's exit status and seconds; the last line of the
output of a failed step) and writes ``results/openmmlab_configs.json``: per config 1
(every step passed) or 0. A failure here is a finding: the note of the change says whose
it is (mmdet 3.3.0's own ``SSDHead`` bug fails on mmengine too; a config that needs a
compiled mmcv op beyond nms cannot run on mmcv-lite).

    python benchmarks/openmmlab_configs.py [NAME ...]     # ~10 min on 2 idle cores
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bench_results import figure, write

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "tests" / "compat"
STANDINS = COMPAT / "standins"
LOADERS = ("train_dataloader", "val_dataloader", "test_dataloader")


def _image(rng: np.random.Generator, shape: tuple[int, ...], high: int = 256) -> np.ndarray:
    return rng.integers(0, high, shape, np.uint8)


def write_coco(root: Path) -> None:
    sys.path[:0] = [str(COMPAT), str(ROOT / "tests")]  # test_mmdet's own imports
    import test_mmdet

    test_mmdet._write_coco(root)


def write_imagenet(root: Path) -> None:
    """``train/<wnid>/*.JPEG``, ``val/...`` and ``meta/{train,val}.txt``."""
    import cv2

    rng = np.random.default_rng(0)
    (root / "meta").mkdir(parents=True)
    for split, count in (("train", 4), ("val", 2)):
        lines = []
        for i in range(count):
            folder = root / split / f"n{i:08d}"
            folder.mkdir(parents=True)
            cv2.imwrite(str(folder / f"{split}_{i}.JPEG"), _image(rng, (72, 80, 3)))
            lines.append(f"n{i:08d}/{split}_{i}.JPEG {i}")
        (root / "meta" / f"{split}.txt").write_text("\n".join(lines) + "\n")


def write_cityscapes(root: Path) -> None:
    """``leftImg8bit/{train,val}/<city>/*_leftImg8bit.png`` and the ``gtFine`` train ids."""
    import cv2

    rng = np.random.default_rng(0)
    for split, count in (("train", 2), ("val", 1)):
        images, labels = root / "leftImg8bit" / split / "aachen", root / "gtFine" / split / "aachen"
        images.mkdir(parents=True)
        labels.mkdir(parents=True)
        for i in range(count):
            stem = f"aachen_{i:06d}_000019"
            cv2.imwrite(str(images / f"{stem}_leftImg8bit.png"), _image(rng, (64, 128, 3)))
            cv2.imwrite(
                str(labels / f"{stem}_gtFine_labelTrainIds.png"), _image(rng, (64, 128), 19)
            )


def write_ade20k(root: Path) -> None:
    """``images/{training,validation}/*.jpg`` and ``annotations/.../*.png``."""
    import cv2

    rng = np.random.default_rng(0)
    for split, count in (("training", 2), ("validation", 1)):
        for folder in ("images", "annotations"):
            (root / folder / split).mkdir(parents=True)
        for i in range(count):
            stem = f"ADE_{split}_{i:08d}"
            cv2.imwrite(str(root / "images" / split / f"{stem}.jpg"), _image(rng, (64, 80, 3)))
            cv2.imwrite(
                str(root / "annotations" / split / f"{stem}.png"), _image(rng, (64, 80), 151)
            )


def write_cifar100(root: Path) -> None:
    """``cifar-100-python/{train,test,meta}`` (python pickles, as the dataset ships)."""
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for split, count in (("train", 4), ("test", 2)):
        batch = {"fine_labels": list(range(count)), "data": _image(rng, (count, 3072)),
                 "filenames": [f"{i}.png" for i in range(count)]}  # fmt: skip
        (folder / split).write_bytes(pickle.dumps(batch))
    (folder / "meta").write_bytes(pickle.dumps({"fine_label_names": [f"c{i}" for i in range(100)]}))


Options = Callable[[Path, int], list[str]]


@dataclass(frozen=True)
class Trial:
    """One config: its project, path under the project's configs, data writer, options
    (given the data folder and the epochs or iterations to train), the length of the first
    run and of the resumed one, and the checkpoint's name pattern."""

    project: str
    config: str
    writer: Callable[[Path], None]
    options: Options
    first: int = 1
    resumed: int = 2
    checkpoint: str = "epoch_{}.pth"


def _detection(data: Path, epochs: int, wrapped: bool = False) -> list[str]:
    ann = f"{data}/annotations/instances_val2017.json"
    train = "train_dataloader.dataset.dataset" if wrapped else "train_dataloader.dataset"
    datasets = (train, "val_dataloader.dataset", "test_dataloader.dataset")
    return [
        *(f"{d}.data_root={data}/" for d in datasets),
        *(f"{d}.metainfo.classes=(person,car)" for d in datasets),
        f"val_evaluator.ann_file={ann}", f"test_evaluator.ann_file={ann}",
        f"train_cfg.max_epochs={epochs}", "train_cfg.val_interval=1",
    ]  # fmt: skip


def _small_detection(data: Path, epochs: int) -> list[str]:
    return [
        *_detection(data, epochs), "model.backbone.init_cfg=None",
        "model.test_cfg.min_bbox_size=-1", "train_dataloader.dataset.pipeline.2.scale=(128,96)",
        "val_dataloader.dataset.pipeline.1.scale=(128,96)",
        "test_dataloader.dataset.pipeline.1.scale=(128,96)",
    ]  # fmt: skip


def _segmentation(data: Path, iters: int, scale: str) -> list[str]:
    return [
        *(f"{loader}.dataset.data_root={data}" for loader in LOADERS),
        f"train_cfg.max_iters={iters}", "train_cfg.val_interval=2",
        "default_hooks.checkpoint.interval=2", "model.data_preprocessor.size=(64,64)",
        f"train_dataloader.dataset.pipeline.2.scale={scale}",
        "train_dataloader.dataset.pipeline.3.crop_size=(64,64)",
        f"val_dataloader.dataset.pipeline.1.scale={scale}",
        f"test_dataloader.dataset.pipeline.1.scale={scale}",
    ]  # fmt: skip


def _classification(data: Path, epochs: int) -> list[str]:
    return [*(f"{loader}.dataset.data_root={data}" for loader in LOADERS),
            f"train_cfg.max_epochs={epochs}"]  # fmt: skip


TRIALS: dict[str, Trial] = {
    "retinanet_r18_fpn_1x_coco": Trial(
        "mmdet", "retinanet/retinanet_r18_fpn_1x_coco.py", write_coco,
        lambda d, n: [*_small_detection(d, n), "model.bbox_head.num_classes=2"]),
    "fcos_r50-caffe_fpn_gn-head_1x_coco": Trial(
        "mmdet", "fcos/fcos_r50-caffe_fpn_gn-head_1x_coco.py", write_coco,
        lambda d, n: [*_small_detection(d, n), "model.bbox_head.num_classes=2"]),
    "yolox_tiny_8xb8-300e_coco": Trial(
        "mmdet", "yolox/yolox_tiny_8xb8-300e_coco.py", write_coco,
        lambda d, n: [*_detection(d, n, wrapped=True), "model.bbox_head.num_classes=2",
                      "img_scale=(64,64)"]),
    "ssdlite_mobilenetv2-scratch_8xb24-600e_coco": Trial(
        "mmdet", "ssd/ssdlite_mobilenetv2-scratch_8xb24-600e_coco.py", write_coco,
        lambda d, n: [*_detection(d, n, wrapped=True), "model.bbox_head.num_classes=2",
                      "train_dataloader.dataset.times=1"]),
    "faster-rcnn_r50_fpn_1x_coco": Trial(
        "mmdet", "faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py", write_coco,
        lambda d, n: [*_small_detection(d, n), "model.roi_head.bbox_head.num_classes=2"]),
    "pspnet_r18-d8_4xb2-80k_cityscapes-512x1024": Trial(
        "mmseg", "pspnet/pspnet_r18-d8_4xb2-80k_cityscapes-512x1024.py", write_cityscapes,
        lambda d, n: [*_segmentation(d, n, "(128,64)"), "model.pretrained=None"],
        2, 3, "iter_{}.pth"),
    "deeplabv3_r18-d8_4xb2-80k_cityscapes-512x1024": Trial(
        "mmseg", "deeplabv3/deeplabv3_r18-d8_4xb2-80k_cityscapes-512x1024.py", write_cityscapes,
        lambda d, n: [*_segmentation(d, n, "(128,64)"), "model.pretrained=None"],
        2, 3, "iter_{}.pth"),
    "segformer_mit-b0_8xb2-160k_ade20k-512x512": Trial(
        "mmseg", "segformer/segformer_mit-b0_8xb2-160k_ade20k-512x512.py", write_ade20k,
        lambda d, n: [*_segmentation(d, n, "(80,64)"), "model.backbone.init_cfg=None"],
        2, 3, "iter_{}.pth"),
    "resnet50_8xb16_cifar100": Trial(
        "mmpretrain", "resnet/resnet50_8xb16_cifar100.py", write_cifar100, _classification),
    "mobilenet-v2_8xb32_in1k": Trial(
        "mmpretrain", "mobilenet_v2/mobilenet-v2_8xb32_in1k.py", write_imagenet,
        lambda d, n: [*_classification(d, n), "train_dataloader.dataset.pipeline.1.scale=64",
                      "val_dataloader.dataset.pipeline.1.scale=72",
                      "val_dataloader.dataset.pipeline.2.crop_size=64",
                      "test_dataloader.dataset.pipeline.1.scale=72",
                      "test_dataloader.dataset.pipeline.2.crop_size=64"]),
    # its cosine schedule begins at epoch 20: the runs end before, so the warm-up ends at 1
    "deit-tiny_4xb256_in1k": Trial(
        "mmpretrain", "deit/deit-tiny_4xb256_in1k.py", write_imagenet,
        lambda d, n: [*_classification(d, n), "param_scheduler.0.end=1",
                      "param_scheduler.1.begin=1"], 2, 3),
}  # fmt: skip

#: The CIFAR-100 writer cannot reproduce the dataset's md5 sums; this module drops the check.
_NO_CHECKSUMS = """from mmpretrain.datasets import CIFAR100
CIFAR100.train_list = [[n, None] for n, _ in CIFAR100.train_list]
CIFAR100.test_list = [[n, None] for n, _ in CIFAR100.test_list]
CIFAR100.meta = {**CIFAR100.meta, 'md5': None}
"""


def _config(trial: Trial, folder: Path) -> Path:
    spec = importlib.util.find_spec(trial.project)  # found, not imported: it imports mmengine
    if spec is None or not spec.origin:
        raise SystemExit(f"{trial.project} is not installed (requirements/openmmlab.txt)")
    config = Path(spec.origin).parent / ".mim" / "configs" / trial.config
    if trial.project != "mmpretrain":
        return config
    # mmpretrain does not import mmcv.ops; torchvision's Python part needs its nms op
    imports = ["torchvision_nms_standin"]
    if trial.writer is write_cifar100:
        (folder / "cifar_checksums.py").write_text(_NO_CHECKSUMS)
        imports.append("cifar_checksums")
    wrapped = folder / "config.py"
    wrapped.write_text(f"_base_ = [{str(config)!r}]\ncustom_imports = dict(imports={imports!r})\n")
    return wrapped


def _run(folder: Path, args: list[str], log: Path) -> tuple[int, str, float]:
    paths = [str(ROOT), str(STANDINS / "compiled_mmcv"), str(STANDINS), str(folder)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "cadence.compat.mmengine", *args], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=1800)  # fmt: skip
    output = done.stdout + done.stderr
    log.write_text(output)
    return done.returncode, output, time.perf_counter() - start


def run_trial(name: str, root: Path) -> tuple[bool, str]:
    """Train, resume and test one config; return (passed, its line of the report)."""
    trial = TRIALS[name]
    folder = root / name
    folder.mkdir(parents=True)
    data = folder / "data"
    trial.writer(data)
    config = str(_config(trial, folder))
    tools = COMPAT / "data" / trial.project / "tools"
    work = folder / "work"
    common = [*(f"{loader}.num_workers=0" for loader in LOADERS),
              *(f"{loader}.persistent_workers=False" for loader in LOADERS),
              *(f"{loader}.batch_size=2" for loader in LOADERS),
              "default_hooks.logger.interval=1", "randomness.seed=0"]  # fmt: skip
    steps = [
        ("train", [str(tools / "train.py"), config, "--work-dir", str(work)], trial.first),
        ("resume", [str(tools / "train.py"), config, "--work-dir", str(work), "--resume"],
         trial.resumed),
        ("test", [str(tools / "test.py"), config,
                  str(work / trial.checkpoint.format(trial.resumed)),
                  "--work-dir", str(folder / "test")], trial.resumed),
    ]  # fmt: skip
    report = []
    for step, args, length in steps:
        options = ["--cfg-options", *common, *trial.options(data, length)]
        code, output, seconds = _run(folder, [*args, *options], folder / f"{step}.log")
        report.append(f"{step} {'ok' if code == 0 else f'exit {code}'} {seconds:.0f} s")
        if step == "resume" and code == 0 and "Resumed from" not in output:
            code = 1
            report[-1] += " (did not resume)"
        if code != 0:
            last = [line for line in output.strip().splitlines() if line.strip()][-1:]
            return False, f"{name}: {', '.join(report)}: {last[0][:300] if last else ''}"
    return True, f"{name}: {', '.join(report)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"configs (default: all of {', '.join(TRIALS)})")
    parser.add_argument("--keep", action="store_true", help="keep the work folders")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(TRIALS))
    if unknown:
        parser.error(f"unknown configs {unknown}; known: {', '.join(TRIALS)}")
    root = Path(tempfile.mkdtemp(prefix="cadence-openmmlab-configs-"))
    figures = {}
    try:
        for name in args.names or list(TRIALS):
            passed, line = run_trial(name, root)
            print(line, flush=True)
            figures[name] = figure([1.0 if passed else 0.0], "passed", better="higher")
    finally:
        if args.keep:
            print(f"work folders kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    write("openmmlab_configs", figures)


if __name__ == "__main__":
    main()

"""mmpretrain 1.2.0's own tools/train.py and tools/test.py on cadence, unmodified.

``resnet/resnet18_8xb16_cifar10`` (shrunk with ``--cfg-options``) on a synthetic CIFAR-10
written in its on-disk format (the python pickle batches): train -> val -> checkpoint ->
resume -> test through door (b), and one epoch through door (a) with the same seed and
the same losses. The two scripts are mmpretrain's, kept in tests/compat/data with their
licence. mmpretrain, mmcv-lite and torchvision are installed as the README's test
command does (requirements/openmmlab.txt, ``--no-deps``).
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fresh_python import run_python

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tests" / "compat" / "data" / "mmpretrain" / "tools"
STANDINS = ROOT / "tests" / "compat" / "standins"


def _write_cifar10(root: Path) -> None:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for index, name in enumerate(names):
        n = 4 if name == "test_batch" else 2
        batch = {
            "batch_label": name,
            "labels": [(index * 2 + i) % 10 for i in range(n)],
            "data": rng.integers(0, 256, size=(n, 3072), dtype=np.uint8),
            "filenames": [f"{name}_{i}.png" for i in range(n)],
        }
        (folder / name).write_bytes(pickle.dumps(batch))
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
               "ship", "truck"]  # fmt: skip
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": classes}))


def _config(tmp_path: Path) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("mmpretrain")  # found, not imported (it imports mmengine)
    assert spec is not None and spec.origin, "mmpretrain is not installed (see README)"
    base = Path(spec.origin).parent / ".mim" / "configs" / "resnet"
    # The synthetic batches cannot have CIFAR-10's md5 sums; this module drops the check.
    (tmp_path / "cifar_checksums.py").write_text(
        "from mmpretrain.datasets import CIFAR10\n"
        "CIFAR10.train_list = [[n, None] for n, _ in CIFAR10.train_list]\n"
        "CIFAR10.test_list = [[n, None] for n, _ in CIFAR10.test_list]\n"
        "CIFAR10.meta = {**CIFAR10.meta, 'md5': None}\n"
    )
    cfg = tmp_path / "resnet18_cifar10_tiny.py"
    cfg.write_text(
        f"_base_ = [{str(base / 'resnet18_8xb16_cifar10.py')!r}]\n"
        "custom_imports = dict(imports=['torchvision_nms_standin', 'cifar_checksums'])\n"
    )
    return cfg


def _options(data: Path, epochs: int) -> list[str]:
    loaders = ("train_dataloader", "val_dataloader", "test_dataloader")
    return [
        "--cfg-options",
        *(f"{loader}.dataset.data_root={data}" for loader in loaders),
        *(f"{loader}.num_workers=0" for loader in loaders),
        "train_dataloader.batch_size=5", "val_dataloader.batch_size=4",
        "test_dataloader.batch_size=4", f"train_cfg.max_epochs={epochs}",
        "default_hooks.logger.interval=1", "randomness.seed=0",
    ]  # fmt: skip


def _run(tmp_path: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(STANDINS), str(tmp_path)])}
    if args[:2] == ("-m", "torch.distributed.run"):  # torchrun itself: a process of its own
        result = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=600)  # fmt: skip
    else:
        result = run_python(args, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _losses(output: str) -> list[str]:
    return re.findall(r"Epoch\(train\)\s+\[\d+\]\[\d+/\d+\].*?\bloss: ([0-9.]+)", output)


@pytest.mark.slow
def test_mmpretrain_tools_train_resume_test_and_cadence_train(tmp_path: Path) -> None:
    data = tmp_path / "cifar10"
    _write_cifar10(data)
    cfg = _config(tmp_path)
    door = ["-m", "cadence.compat.mmengine"]
    work = tmp_path / "work"

    first = _run(tmp_path, *door, str(TOOLS / "train.py"), str(cfg), "--work-dir", str(work),
                 *_options(data, 1))  # fmt: skip
    assert (work / "epoch_1.pth").is_file() and "accuracy/top1" in first
    resumed = _run(tmp_path, *door, str(TOOLS / "train.py"), str(cfg), "--work-dir", str(work),
                   "--resume", *_options(data, 2))  # fmt: skip
    assert "Resumed from" in resumed and (work / "epoch_2.pth").is_file()
    assert len(_losses(first)) == 2 and len(_losses(resumed)) == 2
    tested = _run(tmp_path, *door, str(TOOLS / "test.py"), str(cfg), str(work / "epoch_2.pth"),
                  "--work-dir", str(tmp_path / "test"), *_options(data, 2))  # fmt: skip
    assert re.search(r"Epoch\(test\).*accuracy/top1: [0-9.]+", tested)

    cli = _run(tmp_path, "-m", "cadence", "train", str(cfg), "--work-dir",
               str(tmp_path / "cli"), *_options(data, 1))  # fmt: skip
    assert _losses(cli) == _losses(first)  # door (a) and door (b): one engine, same numbers


@pytest.mark.slow
@pytest.mark.dist
def test_mmpretrain_tools_train_under_torchrun_with_two_processes(tmp_path: Path) -> None:
    """The projects' ``dist_train.sh`` way: ``torchrun ... tools/train.py CONFIG --launcher
    pytorch``, here through door (b) with 2 gloo processes; the checkpoint it writes is
    tested by ``tools/test.py`` in one process."""
    from cadence.dist.testing import free_port

    data = tmp_path / "cifar10"
    _write_cifar10(data)
    cfg = _config(tmp_path)
    work = tmp_path / "work"
    torchrun = ["-m", "torch.distributed.run", "--nproc-per-node", "2",
                "--master-port", str(free_port())]  # fmt: skip
    trained = _run(tmp_path, *torchrun, "-m", "cadence.compat.mmengine", str(TOOLS / "train.py"),
                   str(cfg), "--work-dir", str(work), "--launcher", "pytorch",
                   *_options(data, 1), "env_cfg.dist_cfg.backend=gloo")  # fmt: skip
    # 10 training images, 5 per batch on each of 2 ranks: one iteration per epoch
    assert "Epoch(train) [1][1/1]" in trained and "Epoch(train) [1][2/2]" not in trained
    assert re.search(r"world.size\W+2\b", trained, re.IGNORECASE), trained[-3000:]
    assert (work / "epoch_1.pth").is_file()
    tested = _run(tmp_path, "-m", "cadence.compat.mmengine", str(TOOLS / "test.py"), str(cfg),
                  str(work / "epoch_1.pth"), "--work-dir", str(tmp_path / "test"),
                  *_options(data, 1))  # fmt: skip
    assert re.search(r"Epoch\(test\).*accuracy/top1: [0-9.]+", tested)

"""Checkpoints both ways between cadence and mmengine 0.10.7.

``data/mmengine/`` holds checkpoints written by the real mmengine 0.10.7
(``benchmarks/mmengine_reference/record.py``, the run of ``tests/mmengine_toy.py``) and
the globals their pickles name. That mmengine resumes cadence's checkpoints without a
warning is checked in mmengine's venv (``benchmarks/mmengine_reference/resume_in_mmengine.py``);
here: what such a checkpoint holds.
"""

from __future__ import annotations

import collections
import io
import json
import os
import pickletools
import shutil
import warnings
import zipfile

import mmengine_toy
import numpy as np
import pytest
import torch

from cadence.checkpoint import CheckpointError
from cadence.checkpoint.files import safe_torch_load
from cadence.logging import HistoryBuffer

DATA = os.path.join(os.path.dirname(__file__), "data", "mmengine")


def pickle_globals(path: str) -> set[str]:
    with zipfile.ZipFile(path) as archive:
        data = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if "UNICODE" in op.name:
            strings.append(arg)
        elif op.name == "GLOBAL":
            found.add(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL":
            found.add(f"{strings[-2]}.{strings[-1]}")
    return found


def test_an_mmengine_checkpoint_loads_with_its_history_as_cadences():
    path = os.path.join(DATA, "epoch_1.pth")
    with open(os.path.join(DATA, "globals.json")) as f:
        assert pickle_globals(path) == set(json.load(f)["epoch_1.pth"])  # what was recorded
    checkpoint = safe_torch_load(path)
    loss = checkpoint["message_hub"]["log_scalars"]["train/loss"]
    assert type(loss) is HistoryBuffer and len(loss) == 8  # one epoch of 8 iterations
    with open(os.path.join(os.path.dirname(DATA), "..", "..", "runner", "data",
                           "mmengine_losses.json")) as f:  # fmt: skip
        logged = json.load(f)["runs"]["epoch/num_workers=0"]["losses"][:8]
    assert loss.data[0].tolist() == [float.fromhex(terms["loss"]) for terms in logged]
    assert checkpoint["meta"]["dataset_meta"] == {"classes": ("low", "mid", "high")}


def test_anything_else_such_a_checkpoint_could_name_is_refused():
    blob = io.BytesIO()
    torch.save({"x": collections.OrderedDict.fromkeys}, blob)  # pickled as getattr(cls, name)
    with pytest.raises(CheckpointError, match="refused"):
        safe_torch_load(io.BytesIO(blob.getvalue()))
    blob = io.BytesIO()
    torch.save({"x": np.array([object()], dtype=object)}, blob)  # an object array
    with pytest.raises(CheckpointError, match="refused"):
        safe_torch_load(io.BytesIO(blob.getvalue()))


def test_load_from_an_mmengine_checkpoint_loads_its_weights(tmp_path):
    path = os.path.join(DATA, "epoch_1.pth")
    weights = safe_torch_load(path)["state_dict"]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        recorded = mmengine_toy.run("epoch", str(tmp_path), 0, load_from=path, train_cfg=dict(
            by_epoch=True, max_epochs=1, val_interval=3))  # fmt: skip
    assert [i for i, _ in recorded] == list(range(8))  # weights only: from the start
    assert any("no manifest" in str(w.message) for w in seen)
    assert weights["fc1.weight"].shape == (8, 4)


def test_resume_of_an_mmengine_checkpoint_continues(tmp_path):
    path = os.path.join(DATA, "epoch_1.pth")
    recorded = mmengine_toy.run("epoch", str(tmp_path), 0, resume=path)
    assert [i for i, _ in recorded] == list(range(8, 24))  # epochs 2 and 3
    saved = safe_torch_load(str(tmp_path / "epoch_3.pth"))["message_hub"]["log_scalars"]
    assert len(saved["train/loss"]["values"]) == 24  # mmengine's 8 values and 16 new ones


def test_resume_true_in_an_mmengine_work_dir_resumes_unverified_with_one_warning(tmp_path):
    work_dir = tmp_path / "work"
    work_dir.mkdir()
    shutil.copy(os.path.join(DATA, "iter_10.pth"), work_dir / "iter_10.pth")
    (work_dir / "last_checkpoint").write_text(str(work_dir / "iter_10.pth"))  # as mmengine
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        recorded = mmengine_toy.run("iter", str(work_dir), 0, resume=True)
    assert [i for i, _ in recorded] == list(range(10, 20))
    unverified = [w for w in seen if "no manifest" in str(w.message)]
    assert len(unverified) == 1 and "iter_10.pth" in str(unverified[0].message)


@pytest.fixture
def door():
    """``mmengine`` is cadence's alias in this process (OpenMMLab code runs here)."""
    from cadence.compat import alias

    alias.install()
    __import__("mmengine")
    yield
    alias.uninstall()


def test_a_plain_cadence_checkpoint_is_plain_data(tmp_path):
    mmengine_toy.run("epoch", str(tmp_path), 0, train_cfg=dict(
        by_epoch=True, max_epochs=1, val_interval=3))  # fmt: skip
    path = str(tmp_path / "epoch_1.pth")
    allowed = ("torch.", "collections.", "_codecs.", "builtins.", "__builtin__.")
    assert all(n.startswith(allowed) for n in pickle_globals(path))
    checkpoint = torch.load(path, weights_only=True)  # no allow-list needed
    assert checkpoint["message_hub"]["log_scalars"]["train/loss"]["values"]


def test_a_cadence_checkpoint_names_only_what_mmengine_can_unpickle(tmp_path, door):
    mmengine_toy.run("epoch", str(tmp_path), 0, train_cfg=dict(
        by_epoch=True, max_epochs=1, val_interval=3))  # fmt: skip
    path = str(tmp_path / "epoch_1.pth")
    names = pickle_globals(path)
    assert not [n for n in names if n.startswith("cadence")]
    mmengine = {"mmengine.logging.history_buffer.HistoryBuffer"}
    allowed = ("torch.", "collections.", "_codecs.", "numpy.", "builtins.", "__builtin__.")
    assert mmengine <= names and all(n in mmengine or n.startswith(allowed) for n in names)
    checkpoint = safe_torch_load(path)
    assert checkpoint["meta"]["dataset_meta"] == {"classes": ("low", "mid", "high")}
    buffer = checkpoint["message_hub"]["log_scalars"]["train/loss"]
    state = buffer.__getstate__()  # the fields the pickle holds, mmengine's
    assert sorted(state) == ["_count_history", "_log_history", "max_length"]
    assert isinstance(state["_log_history"], np.ndarray) and state["_log_history"].shape == (8,)

"""cadence.utils.dl_utils: torch version, environment report, norm checks, images, timing."""

from __future__ import annotations

import logging
import multiprocessing as mp
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn

from cadence.utils.dl_utils import (
    TORCH_VERSION,
    TimeCounter,
    collect_env,
    has_batch_norm,
    is_norm,
    set_multi_processing,
    tensor2imgs,
    torch_meshgrid,
)


def test_torch_version_and_collect_env():
    assert TORCH_VERSION == torch.__version__
    env = collect_env()
    assert list(env)[:4] == ["sys.platform", "Python", "CUDA available", "numpy_random_seed"]
    assert env["PyTorch"] == torch.__version__
    assert env["CUDA available"] == torch.cuda.is_available()
    assert "cadence" in env and isinstance(env["PyTorch compiling details"], str)


def test_norm_checks():
    assert is_norm(nn.BatchNorm2d(2)) and is_norm(nn.GroupNorm(1, 2)) and is_norm(nn.LayerNorm(2))
    assert is_norm(nn.InstanceNorm1d(2)) and not is_norm(nn.Linear(2, 2))
    assert not is_norm(nn.BatchNorm2d(2), exclude=nn.BatchNorm2d)
    assert not is_norm(nn.LayerNorm(2), exclude=(nn.GroupNorm, nn.LayerNorm))
    with pytest.raises(TypeError):
        is_norm(nn.LayerNorm(2), exclude="LayerNorm")  # type: ignore[arg-type]
    assert has_batch_norm(nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.BatchNorm1d(2))))
    assert not has_batch_norm(nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2)))


def test_tensor2imgs_unnormalises_and_swaps_to_bgr():
    batch = torch.zeros(2, 3, 4, 5)
    batch[:, 0] = 1.0  # red channel
    images = tensor2imgs(batch, mean=(10, 20, 30), std=(2, 2, 2))
    assert len(images) == 2 and images[0].shape == (4, 5, 3)
    # RGB (1*2+10, 0*2+20, 0*2+30) in BGR order
    np.testing.assert_allclose(images[0][0, 0], [30, 20, 12])
    gray = tensor2imgs(torch.ones(1, 1, 2, 2), to_bgr=False)
    assert gray[0].shape == (2, 2, 1)
    with pytest.raises(ValueError, match="to_bgr=False"):
        tensor2imgs(torch.ones(1, 1, 2, 2))
    with pytest.raises(ValueError, match="4-d"):
        tensor2imgs(torch.ones(3, 2, 2))


def test_meshgrid_uses_ij_indexing():
    xs, ys = torch_meshgrid(torch.arange(2), torch.arange(3))
    assert xs.shape == (2, 3) and xs[1, 0] == 1 and ys[0, 2] == 2


def test_set_multi_processing(monkeypatch):
    previous = mp.get_start_method(allow_none=True)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            set_multi_processing(mp_start_method="spawn", distributed=True)
        messages = " ".join(str(w.message) for w in record)
        assert "OMP_NUM_THREADS" in messages and "MKL_NUM_THREADS" in messages
        assert mp.get_start_method() == "spawn"
        import os

        assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"
        with pytest.warns(UserWarning, match="force set to `fork`"):
            set_multi_processing(mp_start_method="fork")
    finally:
        mp.set_start_method(previous, force=True)


def test_time_counter_reports_after_warmup(caplog):
    logger = logging.getLogger("cadence-test-timecounter")
    counter = TimeCounter(log_interval=2, warmup_interval=1, tag="cadence-test-tag", logger=logger)
    assert TimeCounter(tag="cadence-test-tag") is counter  # one counter per tag
    with caplog.at_level(logging.INFO, logger=logger.name):
        for _ in range(3):
            with counter:
                pass
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1
    assert messages[0].startswith("[cadence-test-tag]-time per run averaged in the past 2 runs:")


def test_time_counter_as_decorator_prints(capsys):
    @TimeCounter(warmup_interval=1)
    def work(x):
        return x + 1

    assert [work(i) for i in range(3)] == [1, 2, 3]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "work]-time per run averaged in the past 2 runs" in lines[1]


def test_is_jit_tracing_is_true_only_under_trace():
    from cadence.utils.dl_utils import is_jit_tracing

    seen = []

    def fn(x):
        seen.append(is_jit_tracing())
        return x * 2

    assert not is_jit_tracing()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # newer torch deprecates jit.trace
        torch.jit.trace(fn, torch.ones(1), check_trace=False)
    assert seen == [True]


def test_load_url_downloads_once_into_model_dir(tmp_path):
    from cadence.utils.dl_utils import load_url, mmcv_full_available

    source = tmp_path / "weights.pth"
    torch.save({"w": torch.arange(3)}, source)
    loaded = load_url(source.as_uri(), model_dir=str(tmp_path / "hub"))
    assert torch.equal(loaded["w"], torch.arange(3))
    assert (tmp_path / "hub" / "weights.pth").is_file()
    assert mmcv_full_available() is False  # mmcv is not a cadence dependency


def test_time_counter_refuses_what_mmengine_asserts():
    with pytest.raises(AssertionError, match="warmup_interval must be >= 1"):
        TimeCounter(warmup_interval=0)
    with pytest.raises(AssertionError, match="needs tag="), TimeCounter():
        pass

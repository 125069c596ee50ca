"""default_setup: what a run logs and saves when it starts (detectron2's default_setup)."""

from __future__ import annotations

import io
import logging
import shlex
import sys
import textwrap

import pytest
import torch
from runner_double import StandInRunner

from cadence.config import Config
from cadence.dist.testing import run_distributed
from cadence.runner import Runner
from cadence.runner.setup import _seed_line, highlight_python, log_code
from cadence.strategies.env import set_random_seed

BASE = """
model = dict(type='ToyClassifier', hidden=16)
train_dataloader = dict(
    batch_size=16,
    dataset=dict(type='Blobs', n=32, seed=0),
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'))
train_cfg = dict(by_epoch=True, max_epochs=1)
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.05))
"""

EXPERIMENT = """
_base_ = ['./base.py']
# raw-file-marker: comments exist only in the file as written
work_dir = {work_dir!r}
optim_wrapper = dict(optimizer=dict(lr=0.01))
randomness = dict(seed=5, diff_rank_seed=True)
env_cfg = dict(cudnn_benchmark=True)
default_hooks = dict(checkpoint=None)
"""


@pytest.fixture
def restore_cudnn():
    before = torch.backends.cudnn.benchmark
    yield
    torch.backends.cudnn.benchmark = before


def _run_from_file(tmp_path) -> tuple[Runner, str]:
    (tmp_path / "base.py").write_text(BASE)
    path = tmp_path / "exp.py"
    path.write_text(EXPERIMENT.format(work_dir=str(tmp_path / "work")))
    runner = Runner.from_cfg(Config.fromfile(str(path)))
    runner.train()
    log = next((tmp_path / "work").glob("*/*.log")).read_text()
    return runner, log


def test_start_of_run_is_logged_and_the_resolved_config_saved(tmp_path, restore_cudnn):
    runner, log = _run_from_file(tmp_path)
    assert "Rank 0 of world size 1 (local rank 0), device cpu" in log
    assert "Environment:" in log and "PyTorch" in log and torch.__version__ in log
    assert f"Command line: {shlex.join(sys.argv)}" in log
    assert "Seed: 5 (rank 0 uses 5: diff_rank_seed)" in log
    assert "cudnn_benchmark: True" in log and torch.backends.cudnn.benchmark
    # the file as written (its comment survives), then the full resolved config
    assert f"Config file {tmp_path / 'exp.py'}:" in log
    assert "# raw-file-marker" in log and "_base_ = ['./base.py']" in log
    full = log.split("Config:\n", 1)[1]
    assert "dict(type='SGD', lr=0.01)" in full.replace('"', "'")
    assert "\x1b[" not in log  # a log file gets no terminal colours
    saved = Config.fromfile(str(tmp_path / "work" / "exp.py"))
    assert saved.optim_wrapper.optimizer.lr == 0.01
    assert saved.model.hidden == 16  # merged from the base file
    assert "Full config saved to" in log


def test_config_text_is_highlighted_only_for_terminals():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    logger = logging.getLogger("cadence-test-default-setup")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    tty, plain = Tty(), io.StringIO()
    handlers = [logging.StreamHandler(tty), logging.StreamHandler(plain)]
    for handler in handlers:
        logger.addHandler(handler)
    try:
        log_code(logger, "Config:", "lr = 0.1  # comment\n")
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
    assert plain.getvalue() == "Config:\nlr = 0.1  # comment\n\n"
    assert "\x1b[" in tty.getvalue() and "\x1b[" in highlight_python("x = 1")
    stripped = "".join(
        part.split("m", 1)[1] if i else part for i, part in enumerate(tty.getvalue().split("\x1b["))
    )
    assert textwrap.dedent(stripped).startswith("Config:\nlr = 0.1  # comment")


def test_each_rank_logs_and_uses_its_own_seed():
    runner = StandInRunner(seed=7, rank=3, randomness_cfg=dict(seed=7, diff_rank_seed=True))
    assert _seed_line(runner).startswith("Seed: 7 (rank 3 uses 10: diff_rank_seed)")
    same = StandInRunner(seed=7, rank=3, randomness_cfg=dict(seed=7))
    assert _seed_line(same).startswith("Seed: 7    deterministic: False")
    # and the seeding itself: rank 3 of a diff_rank_seed run draws from seed 10
    assert set_random_seed(7, diff_rank_seed=True, rank=3) == 7
    assert torch.initial_seed() == 10


def _start_two_ranks(work_dir: str) -> dict:
    from runner_toys import Blobs, ToyClassifier

    from cadence.registry import DATASETS, MODELS

    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
    cfg = Config.fromstring(BASE, ".py")
    cfg.merge_from_dict(
        dict(
            work_dir=work_dir, launcher="pytorch", strategy=dict(type="DDPStrategy"),
            randomness=dict(seed=5, diff_rank_seed=True), default_hooks=dict(checkpoint=None),
        )
    )  # fmt: skip
    runner = Runner.from_cfg(cfg)
    runner.train()
    return dict(rank=runner.rank, seed=torch.initial_seed(), line=_seed_line(runner))


@pytest.mark.dist
def test_two_ranks_seed_with_their_rank(tmp_path):
    results = run_distributed(_start_two_ranks, str(tmp_path), timeout=120)
    for rank, result in enumerate(results):
        assert result["rank"] == rank
        assert result["seed"] == 5 + rank  # torch's generator was seeded per rank
        assert result["line"].startswith(f"Seed: 5 (rank {rank} uses {5 + rank}")


def test_a_run_saves_its_config_as_its_pretty_text(tmp_path, restore_cudnn):
    runner, log = _run_from_file(tmp_path)
    saved = (tmp_path / "work" / "exp.py").read_text()
    assert saved == runner.cfg.pretty_text and "lr=0.01" in saved

"""`cadence train ... --launcher pytorch` under torchrun, for real (2 processes, gloo)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cadence.dist.testing import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")
SMALL = [
    "train_cfg.max_epochs=1", "train_dataloader.dataset.num_samples=512",
    "val_dataloader.dataset.num_samples=256", "train_cfg.val_interval=1",
]  # fmt: skip


def torchrun(
    *args: str, env: dict[str, str] | None = None, timeout: int = 240
) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", *args]
    merged = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=merged
    )


@pytest.mark.dist
def test_train_under_torchrun_with_two_processes(tmp_path):
    out = torchrun(
        "--nproc_per_node", "2", "--master_port", str(free_port()), "-m", "cadence", "train",
        CONFIG, "--launcher", "pytorch", "--work-dir", str(tmp_path), *SMALL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-4000:]
    log = next(tmp_path.glob("*/*.log")).read_text()
    assert "DDPStrategy" in log and "world size 2" in log
    assert "Epoch(val) [1]" in log
    assert (tmp_path / "epoch_1.pth").exists()


@pytest.mark.dist
def test_a_failing_rank_stops_the_job_with_its_traceback(tmp_path):
    (tmp_path / "boom_hook.py").write_text(
        textwrap.dedent("""
        from cadence.hooks import Hook
        from cadence.registry import HOOKS

        @HOOKS.register_module()
        class BoomOnRankOne(Hook):
            def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
                if runner.rank == 1 and runner.iter == 2:
                    raise RuntimeError("rank one exploded at iteration 2")
    """)
    )
    (tmp_path / "boom.py").write_text(
        textwrap.dedent(f"""
        _base_ = [{CONFIG!r}]
        custom_imports = dict(imports=["examples.blobs.blobs", "boom_hook"])
        custom_hooks = [dict(type="BoomOnRankOne")]
        env_cfg = dict(dist_cfg=dict(timeout=60))
    """)
    )
    out = torchrun(
        "--nproc_per_node", "2", "--master_port", str(free_port()), "-m", "cadence", "train",
        str(tmp_path / "boom.py"), "--launcher", "pytorch", "--work-dir", str(tmp_path / "w"),
        *SMALL, env={"PYTHONPATH": str(tmp_path)}, timeout=200,
    )  # fmt: skip
    assert out.returncode != 0
    assert "rank one exploded at iteration 2" in out.stderr


@pytest.mark.dist
@pytest.mark.slow
def test_nproc_relaunches_itself_under_torchrun(tmp_path):
    cmd = [sys.executable, "-m", "cadence", "train", CONFIG, "--nproc", "2",
           "--work-dir", str(tmp_path), *SMALL]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    log = next(tmp_path.glob("*/*.log")).read_text()
    assert "DDPStrategy" in log and "world size 2" in log
    assert "Epoch(val) [1]" in log
    assert (tmp_path / "epoch_1.pth").exists()

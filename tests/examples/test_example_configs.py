"""Every config of the examples passes `cadence check` (types and arguments) and loads."""

from __future__ import annotations

import glob
import os
import sys

import pytest
from example_runner import ROOT

sys.path.insert(0, ROOT)
pytest.importorskip("sklearn")  # the `examples` extra; CI installs it with `test`

# Register the examples' components before the registries' per-test snapshot.
import examples.custom_hook_and_loop.components  # noqa: E402, F401
import examples.digits.digits  # noqa: E402, F401
import examples.gan.gan  # noqa: E402, F401
from cadence.cli.config_check import check_config  # noqa: E402
from cadence.config import Config  # noqa: E402

EXAMPLES = ("digits", "custom_hook_and_loop", "distributed", "gan")
CONFIGS = sorted(
    path
    for name in EXAMPLES
    for path in glob.glob(os.path.join(ROOT, "examples", name, "configs", "*.py"))
)


def test_each_example_has_a_top_level_config():
    assert {os.path.relpath(p, ROOT).split(os.sep)[1] for p in CONFIGS} == set(EXAMPLES)


@pytest.mark.parametrize("path", CONFIGS, ids=[os.path.basename(p) for p in CONFIGS])
def test_config_passes_the_checker(path):
    checker = check_config(Config.fromfile(path))
    assert checker.problems == [], "\n".join(map(str, checker.problems))
    assert checker.checked > 10


def _dry_run_cases() -> list[str]:
    """Every example config but the config tour's (a tour of config syntax whose model its
    run.py registers) and the FSDP and DeepSpeed variants of the DDP config: they differ
    from it only by the strategy, which costs 4 s (FSDP) and 20 s (DeepSpeed's import and
    engine) on one process; the DDP case runs the same world-of-one path."""
    paths = {*CONFIGS, *glob.glob(os.path.join(ROOT, "examples", "*", "configs", "*.py"))}
    skipped = ("_fsdp.py", "_deepspeed.py")
    return sorted(p for p in paths if "config_tour" not in p and not p.endswith(skipped))


DRY_RUN_CASES = _dry_run_cases()


@pytest.mark.parametrize("path", DRY_RUN_CASES, ids=[os.path.basename(p) for p in DRY_RUN_CASES])
def test_config_passes_a_dry_run_and_writes_nothing(path, tmp_path):
    from cadence.cli.common import load_config
    from cadence.cli.dry_run import dry_run

    cfg = load_config(path)
    work_dir = tmp_path / "work_dir"
    cfg.work_dir = str(work_dir)
    for mode in ("train", "val", "test"):  # small batches: the dry run stays cheap
        if cfg.get(f"{mode}_dataloader") is not None:
            cfg[f"{mode}_dataloader"]["batch_size"] = 4
    lines = dry_run(cfg).lines()
    assert any(line.startswith("train step: ") for line in lines), lines
    assert any(line.startswith("val step: ") for line in lines), lines
    assert lines[-1] == f"nothing was written to the work_dir ({work_dir})"
    assert not work_dir.exists()

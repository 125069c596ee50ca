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


def _dry_run_cases() -> list:
    """Every example config but the config tour's (a tour of config syntax whose model its
    run.py registers); FSDP and DeepSpeed (seconds each, on one process) are marked slow."""
    paths = {*CONFIGS, *glob.glob(os.path.join(ROOT, "examples", "*", "configs", "*.py"))}
    cases = []
    for path in sorted(paths):
        if os.sep + "config_tour" + os.sep in path:
            continue
        slow = path.endswith(("_fsdp.py", "_deepspeed.py"))
        marks = [pytest.mark.slow] if slow else []
        cases.append(pytest.param(path, marks=marks, id=os.path.basename(path)))
    return cases


@pytest.mark.parametrize("path", _dry_run_cases())
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

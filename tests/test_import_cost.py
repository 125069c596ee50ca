"""Importing cadence's config and registry stays cheap: no heavy or optional packages."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "yapf", "rich", "yaml", "numpy", "deepspeed", "tensorboard", "wandb", "mlflow")


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_cadence_imports_nothing_heavy():
    loaded = _modules_after("import cadence")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_config_and_registry_import_without_torch_or_formatters():
    loaded = _modules_after(
        "from cadence.config import Config, DictAction\nfrom cadence.registry import MODELS"
    )
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_loading_a_config_does_not_import_the_dump_formatter(tmp_path):
    cfg = tmp_path / "c.py"
    cfg.write_text("model = dict(type='Net', depth=3)\n")
    loaded = _modules_after(f"from cadence.config import Config\nConfig.fromfile({str(cfg)!r})")
    assert "yapf" not in loaded and "torch" not in loaded


#: Optional or heavy packages that importing the runner must not pull in.
OPTIONAL_FOR_RUNNER = (
    "deepspeed", "tensorboard", "wandb", "mlflow", "matplotlib", "sklearn", "sympy", "rich",
    "yapf", "pandas", "scipy", "PIL",
)  # fmt: skip


def test_importing_the_runner_pulls_in_no_optional_package():
    loaded = _modules_after("from cadence.runner import Runner\nimport cadence\ncadence.Runner")
    assert "torch" in loaded  # the probe really imported the runner
    assert not loaded & set(OPTIONAL_FOR_RUNNER), sorted(loaded & set(OPTIONAL_FOR_RUNNER))


def test_building_a_runner_pulls_in_no_optional_package(tmp_path):
    code = (
        "from cadence.runner import Runner\n"
        f"Runner(model=dict(type='Net'), work_dir={str(tmp_path)!r})"
    )
    loaded = _modules_after(code)
    assert not loaded & set(OPTIONAL_FOR_RUNNER), sorted(loaded & set(OPTIONAL_FOR_RUNNER))


def test_importing_the_runner_leaves_the_packages_a_run_builds_for_later():
    # the config loader, checkpoints, optimizers and loops are imported when a runner is built
    loaded = _modules_after("from cadence.runner import Runner")
    later = {"cadence.config.loader", "cadence.checkpoint", "cadence.optim", "cadence.loops"}
    assert "cadence.runner.runner" in loaded
    assert not loaded & later, sorted(loaded & later)

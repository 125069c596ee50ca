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

"""The mmengine alias behind the doors: same module objects, mmengine's version, no hijack."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def test_import_door_shares_cadence_modules_and_reports_mmengine_version() -> None:
    code = textwrap.dedent(
        """
        import sys
        import cadence.compat.mmengine
        import mmengine, mmengine.registry, mmengine.runner.checkpoint, cadence
        from mmengine.utils import digit_version
        from mmengine.model import constant_init, kaiming_init
        from mmengine.utils.dl_utils.parrots_wrapper import _BatchNorm
        from mmengine.optim.scheduler.param_scheduler import _ParamScheduler
        from mmengine.runner import CheckpointLoader, autocast
        from mmengine.fileio import BaseStorageBackend
        from mmengine.evaluator.metric import _to_cpu
        from mmengine.model.base_model.data_preprocessor import BaseDataPreprocessor
        assert sys.modules['mmengine.registry'] is sys.modules['cadence.registry']
        assert mmengine.registry.MODELS is cadence.registry.MODELS
        assert mmengine.Config is cadence.Config
        assert mmengine.__version__ == '0.10.7', mmengine.__version__
        assert cadence.__version__ != '0.10.7'
        assert digit_version(mmengine.__version__) >= digit_version('0.8.3')
        from mmengine.version import __version__ as v
        assert v == '0.10.7'
        print('ok')
        """
    )
    result = _python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_every_mapped_mmengine_module_imports_and_cadence_stays_intact() -> None:
    code = textwrap.dedent(
        """
        import importlib
        import cadence.compat.mmengine
        from cadence.compat.module_map import MODULE_MAP
        import cadence.runner, cadence.model
        runner_cls = cadence.runner.Runner
        for name, target in MODULE_MAP.items():
            if target is not None:
                assert importlib.import_module(name) is importlib.import_module(target), name
        assert cadence.runner.Runner is runner_cls
        print(sum(t is not None for t in MODULE_MAP.values()), len(MODULE_MAP))
        """
    )
    result = _python("-c", code)
    assert result.returncode == 0, result.stderr
    provided, listed = map(int, result.stdout.split())
    assert listed == 151 and provided >= 120


def test_plain_import_of_mmengine_is_not_hijacked() -> None:
    # no door: `mmengine` is whatever is installed (nothing here), never cadence
    result = _python("-c", "import cadence, cadence.registry; import mmengine")
    assert result.returncode != 0
    assert "No module named 'mmengine'" in result.stderr


def test_script_door_runs_the_script_as_main_with_its_argv(tmp_path: Path) -> None:
    script = tmp_path / "tool.py"
    script.write_text(
        "import sys, mmengine.registry, cadence.registry\n"
        "assert mmengine.registry.MODELS is cadence.registry.MODELS\n"
        "import helper\n"  # the script's folder is on sys.path, as under `python tool.py`
        "print(__name__, sys.argv[1:], sys.argv[0].endswith('tool.py'), helper.X)\n"
    )
    (tmp_path / "helper.py").write_text("X = 7\n")
    result = _python("-m", "cadence.compat.mmengine", str(script), "a", "--b", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "__main__ ['a', '--b', '1'] True 7"


def test_script_door_reports_an_mmengine_module_cadence_lacks_in_one_paragraph(
    tmp_path: Path,
) -> None:
    script = tmp_path / "tool.py"
    script.write_text("import os\nfrom mmengine._strategy.colossalai import ColossalAIStrategy\n")
    result = _python("-m", "cadence.compat.mmengine", str(script))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "'mmengine._strategy.colossalai'" in result.stderr and f"{script}:2" in result.stderr


def test_script_door_reports_a_missing_downstream_package(tmp_path: Path) -> None:
    script = tmp_path / "tool.py"
    script.write_text("import mmengine\nimport mmnotinstalled.apis\n")
    result = _python("-m", "cadence.compat.mmengine", str(script))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "'mmnotinstalled'" in result.stderr and "not installed" in result.stderr

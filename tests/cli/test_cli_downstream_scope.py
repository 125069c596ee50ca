"""Door (a): `cadence` on a config whose default_scope names a downstream package."""

from __future__ import annotations

from pathlib import Path

import pytest

from cadence.cli import main
from cadence.compat.alias import uninstall


@pytest.fixture(autouse=True)
def _no_alias_afterwards():  # type: ignore[no-untyped-def]
    yield
    uninstall()  # the door installed it in this test process


def test_missing_scope_package_is_one_paragraph_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "det.py"
    cfg.write_text("default_scope = 'mmnotinstalled'\nmodel = dict(type='RTMDet')\n")
    assert main(["check", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "default_scope" in err and "'mmnotinstalled' is not installed" in err
    assert "Traceback" not in err and err.count("\n") == 1

"""A ``cadence/`` folder in the working directory that is not the package is named."""

from __future__ import annotations

import os

import cadence
from cadence.cli import main
from cadence.cli.common import shadowing_folder


def test_a_cadence_folder_in_the_working_directory_is_named(tmp_path, monkeypatch, capsys):
    (tmp_path / "cadence").mkdir()
    (tmp_path / "cfg.py").write_text("lr = 0.1\n")
    monkeypatch.chdir(tmp_path)
    assert shadowing_folder() == str(tmp_path / "cadence")
    assert main(["print-config", "cfg.py"]) == 0
    err = capsys.readouterr().err
    assert f"the folder {tmp_path / 'cadence'} shadows the cadence package" in err
    assert "Rename the folder or run from another directory." in err


def test_the_package_itself_and_other_folders_are_not_reported(tmp_path):
    assert shadowing_folder(os.path.dirname(os.path.dirname(cadence.__file__))) is None
    assert shadowing_folder(str(tmp_path)) is None  # no cadence/ there

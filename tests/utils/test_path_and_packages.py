"""Path helpers, package queries and imports from strings."""

from __future__ import annotations

import json
import os
import os.path as osp
from pathlib import Path

import pytest

from cadence.utils import (
    check_file_exist,
    fopen,
    get_installed_path,
    get_object_from_string,
    import_modules_from_strings,
    is_abs,
    is_filepath,
    is_installed,
    mkdir_or_exist,
    scandir,
    symlink,
)


def test_filepath_checks(tmp_path):
    assert is_filepath("a") and is_filepath(Path("a")) and not is_filepath(1)
    assert is_abs("/x") and is_abs("s3://bucket/x") and not is_abs("rel/x")
    file = tmp_path / "f.txt"
    file.write_text("hi")
    with fopen(str(file)) as f:
        assert f.read() == "hi"
    with fopen(file) as f:
        assert f.read() == "hi"
    with pytest.raises(ValueError):
        fopen(1)  # type: ignore[arg-type]
    check_file_exist(file)
    with pytest.raises(FileNotFoundError, match='file ".*nope" does not exist'):
        check_file_exist(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="^missing:"):
        check_file_exist(tmp_path, "missing: {}")  # a directory is not a file


def test_mkdir_or_exist_and_symlink(tmp_path):
    target = tmp_path / "a" / "b"
    mkdir_or_exist(target)
    mkdir_or_exist(str(target))  # exists: no error
    assert target.is_dir()
    mkdir_or_exist("")  # nothing to do
    (tmp_path / "src1").write_text("1")
    (tmp_path / "src2").write_text("2")
    link = tmp_path / "link"
    symlink("src1", link)
    symlink("src2", link)  # overwrite=True by default
    assert link.read_text() == "2"
    with pytest.raises(FileExistsError):
        symlink("src1", link, overwrite=False)


def test_scandir(tmp_path):
    for name in ("a.py", "b.TXT", ".hidden.py", "sub/c.py", "sub/deep/d.txt"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    assert sorted(scandir(tmp_path)) == ["a.py", "b.TXT"]
    assert sorted(scandir(str(tmp_path), ".py", recursive=True)) == [
        "a.py",
        osp.join("sub", "c.py"),
    ]
    assert sorted(scandir(tmp_path, (".txt",), recursive=True, case_sensitive=False)) == [
        "b.TXT", osp.join("sub", "deep", "d.txt")]  # fmt: skip
    with pytest.raises(TypeError, match="suffix"):
        list(scandir(tmp_path, [".py"]))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dir_path"):
        list(scandir(1))  # type: ignore[arg-type]


def test_installed_packages():
    assert is_installed("torch") and is_installed("json")  # a distribution, a stdlib module
    assert not is_installed("no_such_pkg_cadence_x")
    assert get_installed_path("numpy") == osp.dirname(__import__("numpy").__file__)
    with pytest.raises(Exception, match="no_such_pkg_cadence_x"):
        get_installed_path("no_such_pkg_cadence_x")


def test_import_modules_from_strings():
    assert import_modules_from_strings(None) is None
    assert import_modules_from_strings("json") is json
    assert import_modules_from_strings(["os.path", "json"]) == [os.path, json]
    with pytest.raises(ImportError, match="no_such_mod_x"):
        import_modules_from_strings(["no_such_mod_x"])
    with pytest.warns(UserWarning, match="no_such_mod_x failed to import"):
        assert import_modules_from_strings(
            ["json", "no_such_mod_x"], allow_failed_imports=True
        ) == [json, None]
    with pytest.raises(TypeError):
        import_modules_from_strings(("json",))  # type: ignore[arg-type]


def test_get_object_from_string():
    import collections.abc

    assert get_object_from_string("os.path") is os.path
    assert get_object_from_string("json.JSONDecoder.decode") is json.JSONDecoder.decode
    assert get_object_from_string("collections.abc.Sequence") is collections.abc.Sequence
    assert get_object_from_string("json.no_such_thing") is None
    assert get_object_from_string("no_such_mod_x.y") is None


def test_call_command_raises_on_failure():
    import subprocess
    import sys

    from cadence.utils import call_command

    call_command([sys.executable, "-c", "pass"])
    with pytest.raises(subprocess.CalledProcessError):
        call_command([sys.executable, "-c", "raise SystemExit(3)"])

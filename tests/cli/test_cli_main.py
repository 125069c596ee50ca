"""The ``cadence`` command as a whole: help everywhere, ``python -m cadence``, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cadence.cli import build_parser, main

# Each subcommand and options its --help must list.
COMMANDS = {
    "train": ["--resume", "--amp", "--auto-scale-lr", "--seed", "--deterministic", "--launcher",
              "--nproc", "--num-gpus", "--cfg-options", "--work-dir"],
    "val": ["--launcher", "--nproc", "--cfg-options", "--work-dir"],
    "test": ["--out", "--launcher", "--nproc", "--num-gpus", "--cfg-options", "--work-dir"],
    "check": ["--cfg-options"],
    "list": ["--scope", "--config"],
    "print-config": ["--provenance", "--format", "--cfg-options"],
    "plot": ["--keys"],
    "publish": ["IN_CKPT", "OUT_FILE"],
    "lr-find": ["--start-lr", "--end-lr", "--steps", "--smooth", "--diverge", "--work-dir",
                "--cfg-options"],
    "sweep": ["--param", "--trials", "--metric", "--direction", "--storage", "--study-name",
              "--resume", "--prune", "--work-dir", "--cfg-options"],
}  # fmt: skip


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_every_subcommand_is_known():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_of_each_subcommand_lists_its_options(command, capsys):
    assert run([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: cadence {command}")
    for option in COMMANDS[command]:
        assert option in out, option


def test_top_level_help_names_every_command(capsys):
    assert run(["--help"]) == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert command in out


def test_python_dash_m_cadence_runs_the_same_command(tmp_path):
    (tmp_path / "c.py").write_text("model = dict(type='Nope')\n")
    cmd = [sys.executable, "-m", "cadence", "print-config", str(tmp_path / "c.py"),
           "--format", "json"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout) == {"model": {"type": "Nope"}}
    check = subprocess.run(
        [sys.executable, "-m", "cadence", "check", str(tmp_path / "c.py")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert check.returncode == 2
    assert "error: model.type" in check.stdout and "'Nope' is not registered" in check.stdout


def test_registry_error_is_one_paragraph_and_debug_shows_the_traceback(tmp_path, capsys):
    argv = ["list", "no-such-registry"]
    assert run(argv) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err
    from cadence.cli import CliError

    with pytest.raises(CliError, match="no-such-registry"):
        main(["--debug", *argv])
    with pytest.raises(CliError, match="no-such-registry"):  # after the subcommand too
        main([*argv, "--debug"])
    assert run(argv) == 2  # and without it, still one paragraph


def test_resume_followed_by_an_override_is_not_a_checkpoint_path(tmp_path):
    from cadence.cli.run import build_config

    config = tmp_path / "c.py"
    config.write_text("model = dict(type='X')\nlr = 0.1\n")
    args = build_parser().parse_args(["train", str(config), "--resume", "lr=0.5"])
    cfg = build_config(args)
    assert cfg.resume is True and cfg.get("load_from") is None and cfg.lr == 0.5
    args = build_parser().parse_args(["train", str(config), "--resume", str(config)])
    assert build_config(args).load_from == str(config)  # an existing file stays a path


def test_importing_the_command_line_imports_no_other_part_of_cadence():
    probe = "import sys, json\nimport cadence.cli\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    ours = [m for m in loaded if m.startswith("cadence.") and not m.startswith("cadence.cli")]
    assert ours == ["cadence._exports", "cadence.version"]  # the top-level name table


def test_building_the_parser_imports_nothing_heavy():
    probe = (
        "import sys, json\nfrom cadence.cli import build_parser\nbuild_parser()\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    heavy = {"torch", "numpy", "yapf", "rich", "yaml", "matplotlib", "optuna"}
    assert not loaded & heavy, sorted(loaded & heavy)


def test_installed_script_finds_custom_imports_of_the_current_directory(tmp_path, monkeypatch):
    """The console script has no cwd on sys.path; `cadence check` must still find custom_imports."""
    import sys

    pkg = tmp_path / "mymods_cwd_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from torch import nn\n"
        "from cadence.registry import MODELS\n"
        "@MODELS.register_module()\n"
        "class CwdProbeNet(nn.Module):\n"
        "    def __init__(self, width=2):\n"
        "        super().__init__()\n"
    )
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "cfg.py").write_text(
        "custom_imports = dict(imports=['mymods_cwd_probe'])\n"
        "model = dict(type='CwdProbeNet', width=3)\n"
    )
    monkeypatch.chdir(tmp_path)
    path = [p for p in sys.path if p not in ("", str(tmp_path))]
    monkeypatch.setattr(sys, "path", path)
    from cadence.cli import main

    assert main(["check", "configs/cfg.py"]) == 0
    assert str(tmp_path) in sys.path
    sys.modules.pop("mymods_cwd_probe", None)

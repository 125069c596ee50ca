"""tests/fresh_python.py: ``python ARGS`` forked from a process that imported torch."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from fresh_python import run_python
from signal_runs import alive


def test_exit_codes_are_the_interpreters(tmp_path):
    assert run_python(["-c", "import sys; sys.exit(3)"]).returncode == 3
    assert run_python(["-c", "pass"]).returncode == 0
    failed = run_python(["-c", "raise ValueError('boom')"])
    assert failed.returncode == 1
    assert "Traceback (most recent call last)" in failed.stderr
    assert "ValueError: boom" in failed.stderr
    message = run_python(["-c", "import sys; sys.exit('no config')"])
    assert (message.returncode, message.stderr.strip()) == (1, "no config")
    killed = run_python(["-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    assert killed.returncode == -9


def test_environment_directory_path_sitecustomize_argv_and_exit_handlers(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "helper_mod.py").write_text("VALUE = 'from PYTHONPATH'\n")
    (tmp_path / "pkg" / "sitecustomize.py").write_text("import os; os.environ['SITE'] = 'ran'\n")
    script = tmp_path / "script.py"
    script.write_text(
        "import atexit, os, sys, helper_mod\n"
        "atexit.register(lambda: print('at exit', flush=True))\n"
        "print(__name__, sys.argv, os.getcwd(), os.environ['ONLY_HERE'], helper_mod.VALUE,\n"
        "      os.environ['SITE'])\n"
    )
    env = {"PATH": os.environ["PATH"], "ONLY_HERE": "yes", "PYTHONPATH": str(tmp_path / "pkg")}
    result = run_python([str(script), "a", "b"], env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"__main__ {[str(script), 'a', 'b']} {tmp_path} yes from PYTHONPATH ran",
        "at exit",
    ]
    module = run_python(["-m", "json.tool", "--compact"], cwd=tmp_path)  # reads /dev/null
    assert module.returncode == 1 and "Expecting value" in module.stderr


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[19])
    except FileNotFoundError:
        return None


def test_dataloader_workers_die_with_a_killed_child(tmp_path):
    """Workers start as a fresh interpreter starts them (fork), not through the fork
    server, whose children outlived their killed parent. A worker counts as running only
    while its pid is the same process (the suite starts many: pids, 32768 here, are
    reused) and not a zombie."""
    script = tmp_path / "kid.py"
    script.write_text(
        "import os, signal\n"
        "from torch.utils.data import DataLoader\n"
        "it = iter(DataLoader(list(range(8)), batch_size=2, num_workers=2))\n"
        "next(it)\n"
        "stats = [open(f'/proc/{w.pid}/stat').read().rsplit(')', 1)[1].split()\n"
        "         for w in it._workers]\n"
        "print(*[f'{w.pid}:{s[19]}' for w, s in zip(it._workers, stats)], flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = run_python([str(script)], cwd=tmp_path, timeout=120)
    assert result.returncode == -9, result.stderr[-2000:]
    workers = [tuple(int(v) for v in word.split(":")) for word in result.stdout.split()]
    assert len(workers) == 2

    def running() -> list[int]:
        return [pid for pid, start in workers if alive(pid) and _start_time(pid) == start]

    deadline = time.monotonic() + 30
    while running() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not running()


def test_a_timeout_kills_the_child():
    with pytest.raises(subprocess.TimeoutExpired):
        run_python(["-c", "import time; time.sleep(60)"], timeout=1)


def test_options_of_python_itself_are_refused():
    with pytest.raises(ValueError, match="-m MODULE, -c CODE or a script"):
        run_python(["-X", "importtime", "-c", "pass"])

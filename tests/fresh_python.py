"""``python ARGS`` in a fresh process that has already imported torch (for tests).

:func:`run_python` is ``subprocess.run([sys.executable, *args], ...)`` with the
process forked from the fork server of :func:`cadence.dist.testing.fork_context`
(started once per test process; it imported torch, ``torch._dynamo``, which the first
optimizer imports, and ``cadence.runner``): each run saves the 2-4 CPU-s of those
imports, which were most of a short CLI run's cost. The child is a real process of its
own (its pid, exit status and signals are its own, ``SIGKILL`` gives ``-9``); it gets
the environment, working directory and ``PYTHONPATH`` asked for (and the
``sitecustomize`` that the path brings), runs ``-m MODULE``,
``-c CODE`` or a script as ``__main__`` with ``sys.argv`` set as Python sets it, and
ends as the interpreter does: uncaught exceptions through ``sys.excepthook`` (exit 1),
``SystemExit`` as Python reads it, then the non-daemon threads joined and the
``atexit`` handlers run.

Not for a test of what an import does, of the interpreter's start or of arguments to
``python`` itself: those keep ``subprocess``.
"""

from __future__ import annotations

import atexit
import importlib.util
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from cadence.dist.testing import fork_context


def run_python(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python *args``; return its exit code and its stdout and stderr as text."""
    args = [str(a) for a in args]
    if not args or args[0] not in ("-m", "-c") and args[0].startswith("-"):
        raise ValueError(f"run_python takes -m MODULE, -c CODE or a script, not {args[:1]}")
    environment = dict(os.environ if env is None else env)
    folder = os.fspath(cwd) if cwd is not None else os.getcwd()
    with tempfile.TemporaryDirectory(prefix="fresh_python_") as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        process = fork_context().Process(
            target=_child, args=(args, environment, folder, out, err), daemon=False
        )
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired([sys.executable, *args], timeout or 0)
        with (
            open(out, encoding="utf-8", errors="replace") as o,
            open(err, encoding="utf-8", errors="replace") as e,
        ):
            stdout, stderr = o.read(), e.read()
    return subprocess.CompletedProcess(
        [sys.executable, *args], int(process.exitcode), stdout, stderr
    )


def _child(args: list[str], env: dict[str, str], cwd: str, out: str, err: str) -> None:
    """The forked process: become ``python *args`` and exit as it would."""
    for fd, path in ((1, out), (2, err)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    # a fork server's children start processes with it by default; a fresh interpreter
    # starts them with the platform's default (DataLoader workers: fork, on Linux)
    multiprocessing.set_start_method(None, force=True)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if args[0] == "-m":
        sys.argv, first = [args[1], *args[2:]], cwd  # run_module sets argv[0] to the file
    elif args[0] == "-c":
        sys.argv, first = ["-c", *args[2:]], ""
    else:
        sys.argv, first = list(args), os.path.dirname(os.path.abspath(args[0]))
    sys.path[:0] = [first, *extra]
    code = 0
    try:
        _run_sitecustomize(extra)
        if args[0] == "-m":
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        elif args[0] == "-c":
            exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    finally:
        code = _finish(code)
    os._exit(code)


def _run_sitecustomize(extra: list[str]) -> None:
    """Import a ``sitecustomize`` that ``PYTHONPATH`` brings, as the interpreter's start
    does (the fork server started without that path)."""
    for folder in extra:
        path = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(path):
            sys.modules.pop("sitecustomize", None)
            spec = importlib.util.spec_from_file_location("sitecustomize", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
            return


def _exit_code(value: Any) -> int:
    """The exit status Python gives ``sys.exit(value)``."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish(code: int) -> int:
    """The interpreter's shutdown: join non-daemon threads, run ``atexit``, flush."""
    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = _exit_code(exc.code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code

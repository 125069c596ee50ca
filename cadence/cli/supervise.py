"""Stay in charge of the processes ``--nproc`` started: relay stop signals, wait, report.

``cadence train --nproc N`` runs torchrun in a session of its own, so that a
signal to this command's process group (Ctrl-C, ``kill -TERM -PGID``) reaches
this process only, and relays each stop signal it gets *once* to the ranks
(torchrun's children) directly, rather than to torchrun:

* torchrun, told to stop, SIGKILLs its ranks 30 s later (a long checkpoint
  save is cut short) and then exits 1 with a traceback even when every rank
  saved; ranks that stop by themselves leave torchrun to exit with their code;
* when no rank can be found (no ``/proc``, or the ranks are not started yet),
  the signal goes to torchrun, which relays it (not SIGUSR1, which torchrun
  may not handle: that one is dropped with a message).

This process waits for torchrun whatever it receives, so it never exits while
the job lives, and exits with torchrun's code (``128 + N`` if it died of
signal ``N``). A second signal is relayed too: the ranks' preemption hook
takes it as "stop now".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from types import TracebackType
from typing import Any

#: The signals relayed to the ranks.
RELAYED_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1")


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from ``/proc``; empty where there is none)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return sorted(found)


class SignalRelay:
    """While in its ``with`` block, relay the stop signals this process gets to the ranks
    (the children of the launcher given to :meth:`attach`), or to the launcher itself
    when it has none yet; signals that come before :meth:`attach` are relayed then."""

    def __init__(self) -> None:
        self.launcher: subprocess.Popen[Any] | None = None
        self.signals = [getattr(signal, n) for n in RELAYED_SIGNALS if hasattr(signal, n)]
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalRelay:
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def attach(self, launcher: subprocess.Popen[Any]) -> None:
        """Relay to ``launcher``'s children from now on (and what came before)."""
        self.launcher = launcher
        for signum in self.received:
            self._relay(signum)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        if self.launcher is not None:
            self._relay(signum)

    def _relay(self, signum: int) -> None:
        if self.launcher is None or self.launcher.poll() is not None:
            return
        ranks = child_pids(self.launcher.pid)
        usr1 = signum == getattr(signal, "SIGUSR1", None)
        targets = ranks or ([] if usr1 else [self.launcher.pid])
        for pid in targets:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass
        if not targets:
            said = "dropped: no rank has started yet"
        elif ranks:
            said = f"passed on to the ranks (pids {', '.join(map(str, ranks))})"
        else:
            said = "passed on to torchrun"
        name = signal.Signals(signum).name
        if targets and len(self.received) == 1:
            saves = "save and " if name in ("SIGTERM", "SIGUSR1") else ""
            said += f"; waiting for them to {saves}exit (a second signal stops them at once)"
        try:
            print(f"cadence: {name} {said}", file=sys.stderr, flush=True)
        except OSError:  # no terminal any more (SIGHUP): the ranks got the signal all the same
            pass


def exit_code(returncode: int) -> int:
    """A shell-style exit code: ``128 + N`` for a process killed by signal ``N``."""
    return 128 - returncode if returncode < 0 else returncode


def launch_and_supervise(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` in a session of its own, relaying stop signals to its children
    until it ends; its exit code."""
    with SignalRelay() as relay:
        launcher = subprocess.Popen(command, env=env, start_new_session=True)
        relay.attach(launcher)
        returncode = launcher.wait()
    return exit_code(returncode)

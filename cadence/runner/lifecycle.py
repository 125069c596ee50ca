"""How long what the strategy sets up (process group, engine) lives.

The first ``train()``, ``val()``, ``test()`` or ``runner.model`` sets the strategy
up; the group then stays alive across further calls (``train()`` then
``test()`` reuse it: re-creating a group under torchrun is fragile and costs a
rendezvous) and is released

* at once, without a barrier, when one of those calls raises: a failed rank
  must not wait for its peers, and leaving makes their collectives fail fast;
* at process exit otherwise (after a barrier, unless an uncaught exception is
  ending the program), before the interpreter tears down the modules a live
  gloo group still uses;
* or earlier by ``runner.close()``.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import weakref
from collections.abc import Iterator
from typing import Protocol


class Closable(Protocol):
    """What the lifecycle needs of a runner: a way to release its strategy."""

    def close(self, *, barrier: bool = True) -> None: ...


def register_exit_release(runner: Closable) -> None:
    """Release ``runner``'s strategy at process exit if the runner is still alive."""
    atexit.register(_release_at_exit, weakref.ref(runner))


def _release_at_exit(ref: weakref.ref[Closable]) -> None:
    runner = ref()
    if runner is None:
        return
    ending_on_error = getattr(sys, "last_value", None) is not None  # set for uncaught errors
    try:
        runner.close(barrier=not ending_on_error)
    except Exception as exc:  # a peer that already left fails the barrier; exit anyway
        print(f"cadence: releasing the process group at exit failed: {exc}", file=sys.stderr)


@contextlib.contextmanager
def released_on_error(runner: Closable) -> Iterator[None]:
    """Run the body; if it raises, release the strategy without a barrier, then re-raise."""
    done = False
    try:
        yield
        done = True
    finally:
        if not done:
            try:
                runner.close(barrier=False)
            except Exception as exc:  # the body's error is the one to report
                print(f"cadence: releasing the process group failed: {exc}", file=sys.stderr)


__all__ = ["register_exit_release", "released_on_error"]

"""Progress bars for loops over tasks, drawn with rich (mmengine's ``ProgressBar``/``track_*``).

rich is imported when a bar starts, never when this module is imported. On a
terminal the bar redraws in place; written to a file (or any non-terminal
stream) it appears once, in its final state, when the bar closes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import IO, Any

from .timer import Timer


class ProgressBar:
    """A bar for ``task_num`` tasks (``0``: unknown count), advanced with :meth:`update`.

    It closes by itself when the count reaches ``task_num``; call :meth:`close`
    (or use it as a context manager) when the count is unknown or the loop stops early.
    """

    def __init__(
        self,
        task_num: int = 0,
        bar_width: int = 50,
        start: bool = True,
        file: IO[str] | None = None,
        description: str = "",
    ) -> None:
        self.task_num = task_num
        self.bar_width = bar_width
        self.file = sys.stdout if file is None else file
        self.description = description
        self.completed = 0
        self.timer: Timer | None = None
        self._progress: Any = None
        self._task: Any = None
        if start:
            self.start()

    def start(self) -> None:
        """Show the bar and start its clock (again, if it was started before)."""
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.close()
        columns: list[Any] = [TextColumn("{task.description}")]
        if self.task_num > 0:
            columns += [
                BarColumn(bar_width=self.bar_width),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]} task/s,"),
                TextColumn("elapsed:"),
                TimeElapsedColumn(),
                TextColumn("ETA:"),
                TimeRemainingColumn(),
            ]
        else:
            columns += [
                TextColumn("completed: {task.completed},"),
                TextColumn("{task.fields[rate]} task/s, elapsed:"),
                TimeElapsedColumn(),
            ]
        console = Console(file=self.file)
        self._progress = Progress(*columns, console=console, auto_refresh=False)
        total = self.task_num if self.task_num > 0 else None
        self._task = self._progress.add_task(self.description, total=total, rate="0.0")
        self._progress.start()
        self.completed = 0
        self.timer = Timer()

    def update(self, num_tasks: int = 1) -> None:
        """Count ``num_tasks`` more finished tasks and redraw."""
        if self._progress is None:
            self.start()
        self.completed += num_tasks
        elapsed = self.timer.since_start() if self.timer is not None else 0.0
        rate = f"{self.completed / elapsed:.1f}" if elapsed > 0 else "0.0"
        self._progress.update(self._task, completed=self.completed, rate=rate)
        self._progress.refresh()
        if 0 < self.task_num <= self.completed:
            self.close()

    def close(self) -> None:
        """Draw the final state and release the console (idempotent)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _split_tasks(tasks: Any) -> tuple[Iterable[Any], int]:
    """``(iterable, count)`` from a sized iterable or an ``(iterable, count)`` pair."""
    if isinstance(tasks, tuple) and len(tasks) == 2 and isinstance(tasks[1], int):
        if not isinstance(tasks[0], Iterable):
            raise TypeError(f"the first element of tasks must be iterable, got {type(tasks[0])}")
        return tasks[0], tasks[1]
    if isinstance(tasks, Iterable) and isinstance(tasks, Sized):
        return tasks, len(tasks)
    raise TypeError(
        f'"tasks" must be a sized iterable or a tuple (iterable, task_num), got {type(tasks)}'
    )


def track_progress(
    func: Callable[..., Any],
    tasks: Any,
    bar_width: int = 50,
    file: IO[str] | None = None,
    **kwargs: Any,
) -> list[Any]:
    """``[func(task, **kwargs) for task in tasks]`` with a progress bar."""
    iterable, task_num = _split_tasks(tasks)
    results = []
    with ProgressBar(task_num, bar_width, file=file) as bar:
        for task in iterable:
            results.append(func(task, **kwargs))
            bar.update()
    return results


def track_iter_progress(
    tasks: Any, bar_width: int = 50, file: IO[str] | None = None
) -> Iterator[Any]:
    """Yield the tasks one by one, advancing a progress bar after each."""
    iterable, task_num = _split_tasks(tasks)
    with ProgressBar(task_num, bar_width, file=file) as bar:
        for task in iterable:
            yield task
            bar.update()


def track_parallel_progress(
    func: Callable[[Any], Any],
    tasks: Any,
    nproc: int,
    initializer: Callable[..., Any] | None = None,
    initargs: tuple[Any, ...] | None = None,
    bar_width: int = 50,
    chunksize: int = 1,
    skip_first: bool = False,
    keep_order: bool = True,
    file: IO[str] | None = None,
) -> list[Any]:
    """``func`` over the tasks in a pool of ``nproc`` processes, with a progress bar.

    ``keep_order=False`` returns results as they finish; ``skip_first`` leaves the
    first ``nproc * chunksize`` results (process start-up) out of the rate.
    """
    iterable, task_num = _split_tasks(tasks)
    skipped = nproc * chunksize if skip_first else 0
    bar = ProgressBar(task_num - skipped, bar_width, start=not skip_first, file=file)
    from multiprocessing import Pool

    results = []
    with Pool(nproc, initializer, initargs or ()) as pool:
        mapper = pool.imap if keep_order else pool.imap_unordered
        for result in mapper(func, iterable, chunksize):
            results.append(result)
            if len(results) < skipped:
                continue
            if len(results) == skipped:
                bar.start()
                continue
            bar.update()
    bar.close()
    return results


class _Call:
    """``func`` applied to one task: a tuple or list is its positional arguments (as
    mmengine's ``track_progress_rich``). A class, so that pool workers can unpickle it."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func

    def __call__(self, task: Any) -> Any:
        return self.func(*(task if isinstance(task, tuple | list) else (task,)))


def track_progress_rich(
    func: Callable[..., Any],
    tasks: Iterable[Any] = (),
    task_num: int | None = None,
    nproc: int = 1,
    chunksize: int = 1,
    description: str = "Processing",
    color: str = "blue",
) -> list[Any]:
    """``func`` over the tasks (in ``nproc`` processes when above 1) with a described bar.

    A task that is a tuple or list is unpacked into ``func``'s arguments; no tasks and
    ``task_num=N`` call ``func()`` N times. Results keep the order of the tasks.
    ``task_num`` is needed when ``tasks`` has no ``len``. ``color`` is accepted for
    compatibility; the bar uses rich's default style.
    """
    if not callable(func):
        raise TypeError("func must be a callable object")
    if not isinstance(tasks, Iterable):
        raise TypeError(f"tasks must be an iterable object, but got {type(tasks)}")
    if isinstance(tasks, Sized):
        if len(tasks) == 0:
            if task_num is None:
                raise ValueError("If tasks is an empty iterable, task_num must be set")
            tasks = [()] * task_num
        elif task_num is not None and task_num != len(tasks):
            raise ValueError(f"task_num ({task_num}) does not match the length of tasks "
                             f"({len(tasks)})")  # fmt: skip
        task_num = len(tasks)
    if nproc <= 0:
        raise ValueError("nproc must be a positive number")
    call = _Call(func)
    results: list[Any] = []
    with ProgressBar(task_num or 0, description=description) as bar:
        if nproc == 1:
            for task in tasks:
                results.append(call(task))
                bar.update()
        else:
            from multiprocessing import Pool

            with Pool(nproc) as pool:
                for result in pool.imap(call, tasks, chunksize):
                    results.append(result)
                    bar.update()
    return results

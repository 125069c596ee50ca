"""Rich progress bars with mmengine's ProgressBar/track_* interface."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from cadence.utils import (
    ProgressBar,
    track_iter_progress,
    track_progress,
    track_progress_rich,
)


def _square(x):
    return x * x


def test_progress_bar_counts_and_draws_its_final_state():
    out = io.StringIO()
    bar = ProgressBar(3, bar_width=10, file=out)
    bar.update()
    bar.update(2)
    assert bar.completed == 3
    text = out.getvalue()
    assert "3/3" in text and "task/s" in text and "━" in text


def test_progress_bar_with_unknown_count_draws_on_close():
    out = io.StringIO()
    with ProgressBar(file=out) as bar:
        for _ in range(4):
            bar.update()
    assert "completed: 4" in out.getvalue()


def test_track_progress_returns_results_in_order():
    out = io.StringIO()
    assert track_progress(_square, [1, 2, 3], file=out) == [1, 4, 9]
    assert "3/3" in out.getvalue()
    out = io.StringIO()
    assert track_progress(lambda x, k: x + k, (iter([1, 2]), 2), file=out, k=10) == [11, 12]
    assert "2/2" in out.getvalue()
    with pytest.raises(TypeError, match="tasks"):
        track_progress(_square, iter([1]), file=io.StringIO())


def test_track_iter_progress_yields_every_task():
    out = io.StringIO()
    assert list(track_iter_progress(["a", "b"], file=out)) == ["a", "b"]
    assert "2/2" in out.getvalue()


def test_track_parallel_progress_in_two_processes():
    """In a fresh interpreter: the pool forks its workers, and a fork of this pytest worker
    (which has threads: the S3 server's, a sweep's heartbeat) can inherit a held lock and
    hang, as any fork of a threaded process can."""
    script = textwrap.dedent(
        """
        import io
        from cadence.utils import track_parallel_progress

        def square(x):
            return x * x

        out = io.StringIO()
        assert track_parallel_progress(square, [1, 2, 3, 4], nproc=2, file=out) == [1, 4, 9, 16]
        assert "4/4" in out.getvalue()
        unordered = track_parallel_progress(square, [1, 2, 3], 2, keep_order=False,
                                            skip_first=True, file=io.StringIO())
        assert sorted(unordered) == [1, 4, 9]
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_track_progress_rich(capsys):
    assert track_progress_rich(_square, [1, 2, 3], description="Squares") == [1, 4, 9]
    assert track_progress_rich(_square, iter([2, 3]), task_num=2) == [4, 9]
    assert "Squares" in capsys.readouterr().out
    assert track_progress_rich(_square, iter([1])) == [1]  # no length, no count: as mmengine
    assert track_progress_rich(divmod, [(7, 2), [9, 4]]) == [(3, 1), (2, 1)]  # tuples unpacked
    assert track_progress_rich(lambda: "x", task_num=2) == ["x", "x"]  # no tasks: func() N times
    with pytest.raises(ValueError, match="task_num must be set"):
        track_progress_rich(_square)
    with pytest.raises(ValueError, match="does not match"):
        track_progress_rich(_square, [1, 2], task_num=3)
    with pytest.raises(ValueError, match="nproc"):
        track_progress_rich(_square, [1], nproc=0)
    with pytest.raises(TypeError):
        track_progress_rich(_square, 3)  # type: ignore[arg-type]

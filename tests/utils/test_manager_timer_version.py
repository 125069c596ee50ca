"""ManagerMixin, Timer/check_time and digit_version/get_git_hash."""

from __future__ import annotations

import re
import time

import pytest

from cadence.utils import (
    ManagerMeta,
    ManagerMixin,
    Timer,
    TimerError,
    check_time,
    digit_version,
    get_git_hash,
)


class Hub(ManagerMixin):
    def __init__(self, name: str = "", size: int = 0):
        super().__init__(name)
        self.size = size


def test_manager_instances_by_name_and_latest_created():
    Hub._instance_dict.clear()
    with pytest.raises(RuntimeError, match="get_instance"):
        Hub.get_current_instance()
    a = Hub.get_instance("a", size=3)
    b = Hub.get_instance("b")
    assert a.instance_name == "a" and a.size == 3
    assert Hub.get_instance("a") is a  # fetched, not created again
    assert Hub.get_current_instance() is b  # the latest created, even after fetching a
    assert Hub.check_instance_created("b") and not Hub.check_instance_created("c")
    with pytest.warns(UserWarning, match="already exists"):
        Hub.get_instance("a", size=9)
    assert a.size == 3
    Hub(name="direct")  # constructing directly does not register
    assert not Hub.check_instance_created("direct")


def test_each_managed_class_has_its_own_table_and_needs_a_name():
    class Other(ManagerMixin):
        def __init__(self, name: str = ""):
            super().__init__(name)

    Other.get_instance("x")
    assert not Hub.check_instance_created("x") and Other.check_instance_created("x")
    with pytest.raises(AssertionError, match="name"):

        class NoName(metaclass=ManagerMeta):
            def __init__(self, size: int):
                pass


class FakeClock:
    """Seconds that move only when a test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_timer():
    clock = FakeClock()
    timer = Timer(clock=clock)
    assert timer.is_running
    clock.now += 2.5
    assert timer.since_last_check() == 2.5
    clock.now += 1.0
    assert timer.since_last_check() == 1.0
    assert timer.since_start() == 3.5
    stopped = Timer(start=False)
    with pytest.raises(TimerError):
        stopped.since_start()


def test_timer_reads_the_wall_clock_by_default():
    timer = Timer()
    time.sleep(0.02)
    assert timer.since_last_check() >= 0.015


def test_timer_context_prints_the_elapsed_time(capsys):
    clock = FakeClock()
    with Timer(print_tmpl="took {:.1f} s", clock=clock):
        clock.now += 1.25
    assert capsys.readouterr().out == "took 1.2 s\n"


def test_check_time():
    assert check_time("cadence-test-timer") == 0
    time.sleep(0.01)
    assert check_time("cadence-test-timer") >= 0.005


def test_digit_version_orders_as_pep440():
    assert digit_version("1.2") == (1, 2, 0, 0, 0, 0)
    assert digit_version("1.2.3.4.5") == (1, 2, 3, 4, 0, 0)
    assert digit_version("2.1.0rc1") == (2, 1, 0, 0, -1, 1)
    assert digit_version("2.1.0b2") == (2, 1, 0, 0, -2, 2)
    assert digit_version("2.1.0.post3") == (2, 1, 0, 0, 1, 3)
    assert digit_version("2.1.0+cu121") == (2, 1, 0, 0, 0, 0)
    assert digit_version("1.0", length=2) == (1, 0, 0, 0)
    ordered = ["1.0.dev1", "1.0a1", "1.0b1", "1.0rc1", "1.0", "1.0.post1", "1.1"]
    assert sorted(ordered, key=digit_version) == ordered
    with pytest.raises(ValueError, match="not-a-version"):
        digit_version("not-a-version")


def test_get_git_hash(tmp_path, monkeypatch):
    sha = get_git_hash()  # the test runs inside the cadence checkout (or not: then 'unknown')
    assert sha == "unknown" or re.fullmatch(r"[0-9a-f]{40}", sha)
    monkeypatch.chdir(tmp_path)  # not a git checkout
    assert get_git_hash(fallback="none") == "none"
    assert get_git_hash(digits=7) == "unknown"

"""Generic staging of remote folders (cadence.fileio.staging), without the checkpoint layer."""

from __future__ import annotations

import os

from cadence.fileio.staging import StagingArea, stage_url


def test_a_staged_file_goes_up_and_comes_back(tmp_path):
    area = StagingArea(root=str(tmp_path / "stage"))
    run = area.stage("memory://cadence-staging-test/run")
    assert os.path.dirname(run) == str(tmp_path / "stage")
    path = os.path.join(run, "scalars.json")
    assert area.remote(path) == "memory://cadence-staging-test/run/scalars.json"
    assert stage_url(area, "memory://cadence-staging-test/run/scalars.json") == path
    assert stage_url(area, "local/file.json") == "local/file.json"
    os.makedirs(run)
    with open(path, "w") as f:
        f.write("{}")
    area.push_file(path)
    os.remove(path)
    assert area.pull_file(path) and open(path).read() == "{}"
    assert not area.pull_file(os.path.join(run, "absent.json"))
    assert not area.pull_file(str(tmp_path / "plain.json"))  # not staged: nothing to pull


def test_only_files_changed_since_their_last_upload_go_up_again(tmp_path):
    area = StagingArea(root=str(tmp_path / "stage"))
    run = area.stage("memory://cadence-staging-test/changed")
    os.makedirs(run)
    log, config = os.path.join(run, "run.log"), os.path.join(run, "config.py")
    for path in (log, config):
        with open(path, "w") as f:
            f.write("one\n")
    assert area.push_changed([log, config]) == [log, config]
    assert area.push_changed([log, config]) == []  # nothing changed
    with open(log, "a") as f:
        f.write("two\n")
    assert area.push_changed([log, config]) == [log]
    os.remove(log)
    assert area.pull_file(log) and open(log).read() == "one\ntwo\n"


def test_downloads_into_a_folder_hold_its_lock_file(tmp_path):
    area = StagingArea(root=str(tmp_path / "stage"))
    folder = str(tmp_path / "stage" / "new")
    with area.exclusive(folder):
        assert os.path.isfile(os.path.join(folder, ".cadence-fetch.lock"))

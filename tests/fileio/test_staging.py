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

"""``run.json``: one record per start of training, appended on resume (#22 item 7)."""

from __future__ import annotations

import json
import os
import subprocess

import numpy
import pytest
import torch
from runner_toys import log_text, toy_config, train_counting


def git(repo, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """The cwd is a git checkout with one commit and an uncommitted change."""
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "train.py").write_text("lr = 0.1\n")
    git(repo, "add", "train.py")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    (repo / "train.py").write_text("lr = 0.2\n")
    (repo / "notes.txt").write_text("untracked\n")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("CADENCE_UNRELATED", "x")
    return repo


def records(work_dir) -> list[dict]:
    with open(os.path.join(work_dir, "run.json")) as file:
        return json.load(file)


def test_a_run_records_versions_code_environment_seed_and_model_size(tmp_path, checkout):
    runner, _ = train_counting(toy_config(tmp_path / "work", 1))
    table = (tmp_path / "work" / "model_summary.txt").read_text().splitlines()
    # ToyClassifier: backbone Linear(8, 32) + BatchNorm1d(32), head Linear(32, 4)
    assert [line.split()[:3] for line in table if line.startswith(("backbone", "head"))] == [
        ["backbone", "Sequential", "352"], ["head", "Linear", "132"]]  # fmt: skip
    assert "ToyClassifier: 484 parameters (484 trainable)" in log_text(runner)
    # the first step's model FLOPs, batch 16: three times the forward's 2*16*(8*32 + 32*4)
    assert runner.message_hub.runtime_info["flops_per_step"] == 3 * 2 * 16 * (8 * 32 + 32 * 4)
    (record,) = records(runner.work_dir)
    assert record["versions"]["torch"] == torch.__version__
    assert record["world_size"] == 1 and record["seed"] == 3  # toy_config's seed
    assert record["git"]["commit"] == git(checkout, "rev-parse", "HEAD")
    assert record["git"]["dirty"] is True and record["git"]["untracked"] == ["notes.txt"]
    diff = (tmp_path / "work" / record["git"]["diff_file"]).read_text()
    assert "-lr = 0.1" in diff and "+lr = 0.2" in diff
    assert record["env"]["NCCL_DEBUG"] == "INFO" and record["env"]["OMP_NUM_THREADS"] == "3"
    assert "CADENCE_UNRELATED" not in record["env"]
    assert f"numpy=={numpy.__version__}" in record["packages"]
    assert record["start"] == {"epoch": 0, "iter": 0} and record["resumed"] is False


def test_a_resumed_run_appends_a_record(tmp_path, checkout):
    git(checkout, "checkout", "--", "train.py")  # a clean tree: no diff file
    first, _ = train_counting(toy_config(tmp_path / "work", 1))
    before = records(first.work_dir)
    second, _ = train_counting(toy_config(tmp_path / "work", 2, resume=True))
    after = records(second.work_dir)
    assert after[0] == before[0] and len(after) == 2
    assert after[1]["resumed"] is True and after[1]["start"] == {"epoch": 1, "iter": 4}
    assert after[0]["git"]["dirty"] is False and after[0]["git"]["diff_file"] is None
    assert not list((tmp_path / "work").glob("*.diff"))


def test_an_unreadable_record_file_is_kept_aside(tmp_path, checkout):
    work = tmp_path / "work"
    work.mkdir()
    (work / "run.json").write_text("{not json")
    with pytest.warns(UserWarning, match="not a list of run records"):
        train_counting(toy_config(work, 1))
    assert len(records(work)) == 1
    (aside,) = work.glob("run.json.unreadable-*")
    assert aside.read_text() == "{not json"


def test_the_git_probe_reads_the_facts_on_its_own_thread(checkout):
    from cadence.runner.run_record import GitProbe, git_state

    probe = GitProbe(str(checkout))
    facts, diff = probe.result()
    assert (facts, diff) == git_state(str(checkout))
    assert facts["commit"] == git(checkout, "rev-parse", "HEAD") and "train.py" in diff

"""``cadence publish IN_CKPT OUT_FILE``: a release copy of a checkpoint, its hash in its name."""

from __future__ import annotations

import hashlib
import os

import torch

from cadence.cli import main


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_publish_prints_the_final_path_with_the_hash_in_its_name(tmp_path, capsys):
    weights = {"layer.weight": torch.arange(6.0).reshape(2, 3), "layer.bias": torch.ones(2)}
    source = tmp_path / "epoch_3.pth"
    torch.save({"state_dict": weights, "optimizer": {"state": {}}, "meta": {"epoch": 3}}, source)
    assert run(["publish", str(source), str(tmp_path / "release" / "model.pth")]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert os.path.isfile(printed)
    assert os.path.dirname(os.path.abspath(printed)) == str(tmp_path / "release")
    with open(printed, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    assert digest[:8] in os.path.basename(printed)
    published = torch.load(printed, weights_only=True)
    state = published.get("state_dict", published)
    assert state.keys() == weights.keys()
    assert all(torch.equal(state[k], weights[k]) for k in weights)


def test_publish_of_a_missing_checkpoint_is_one_line(tmp_path, capsys):
    assert run(["publish", str(tmp_path / "missing.pth"), str(tmp_path / "out.pth")]) != 0
    err = capsys.readouterr().err
    assert "missing.pth" in err and "Traceback" not in err


def test_publish_of_a_checkpoint_without_weights_is_one_line(tmp_path, capsys):
    source = tmp_path / "odd.pth"
    torch.save({"meta": {"epoch": 1}, "note": "no weights here"}, source)
    assert run(["publish", str(source), str(tmp_path / "out.pth")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cadence: error: cannot publish") and "state_dict" in err
    assert len(err.strip().splitlines()) == 1

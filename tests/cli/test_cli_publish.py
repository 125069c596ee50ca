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


def test_publish_safetensors_and_torch_with_the_config_beside_them(tmp_path, capsys):
    from safetensors.torch import load_file, safe_open

    weights = {"layer.weight": torch.arange(6.0).reshape(2, 3), "tied": torch.ones(2)}
    weights["alias"] = weights["tied"]  # shared storage: safetensors needs its own copy
    source = tmp_path / "epoch_3.pth"
    meta = {"epoch": 3, "iter": 30, "cfg": "model = dict(type='Net')\n"}
    torch.save({"state_dict": weights, "optimizer": {"state": {}}, "meta": meta}, source)
    out = str(tmp_path / "rel" / "model.pth")
    assert run(["publish", str(source), out, "--format", "both"]) == 0
    torch_file, st_file = capsys.readouterr().out.strip().splitlines()[-2:]
    assert torch_file.endswith(".pth") and st_file.endswith(".safetensors")
    loaded = load_file(st_file)
    assert loaded.keys() == weights.keys()
    assert all(torch.equal(loaded[k], weights[k]) for k in weights)
    with safe_open(st_file, "pt") as f:
        assert f.metadata()["epoch"] == "3" and f.metadata()["iter"] == "30"
    digest = hashlib.sha256(open(st_file, "rb").read()).hexdigest()
    assert os.path.basename(st_file) == f"model-{digest[:8]}.safetensors"
    for published in (torch_file, st_file):  # the run's config beside each file
        assert open(os.path.splitext(published)[0] + ".py").read() == meta["cfg"]
        assert os.path.isfile(published + ".manifest.json")


def test_publish_consolidates_fsdp_shards_when_the_file_has_no_full_weights(tmp_path, capsys):
    import torch.distributed.checkpoint as dcp

    from cadence.checkpoint import atomic_torch_save

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    source = str(tmp_path / "epoch_1.pth")
    dcp.save({"model": model.state_dict()}, checkpoint_id=source + ".dcp", no_dist=True)
    atomic_torch_save({"sharded": ".dcp", "meta": {"epoch": 1, "iter": 4}}, source)
    assert run(["publish", source, str(tmp_path / "m.pth")]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    state = torch.load(out, weights_only=True)["state_dict"]
    assert state.keys() == model.state_dict().keys()
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())

"""The commands that read or write checkpoints take bucket URLs: ``cadence test``/``val``
(checkpoint and work dir), ``cadence publish`` (input and output) and the Predictor."""

from __future__ import annotations

import os
import pickle

import pytest
import torch
from blobs_reference import hand_scores

from cadence.checkpoint import read_checkpoint
from cadence.checkpoint.files import MANIFEST_SUFFIX
from cadence.cli import main

pytestmark = pytest.mark.slow
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")
TEST_SIZE = 40


def run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def names(s3, url: str) -> list[str]:
    return sorted(p.rsplit("/", 1)[-1] for p in s3.fs().find(url))


@pytest.fixture
def model(blobs):
    torch.manual_seed(5)
    return blobs.MLPClassifier(in_dim=16, hidden=128, num_classes=8, dropout=0.1)


@pytest.fixture
def released(tmp_path, s3, model, capsys) -> str:
    """A training checkpoint in the bucket, published to the bucket by the CLI: its URL."""
    local = tmp_path / "epoch_3.pth"
    torch.save(
        {
            "state_dict": model.state_dict(),
            "optimizer": {"state": {}},
            "meta": {"epoch": 3, "cfg": "model = dict(type='MLPClassifier')\n"},
        },
        local,
    )
    bucket = s3.bucket()
    s3.fs().put_file(str(local), f"{bucket}/run/epoch_3.pth")  # no manifest: unverified
    capsys.readouterr()
    assert run(["publish", f"{bucket}/run/epoch_3.pth", f"{bucket}/release/model.pth"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed.startswith(f"{bucket}/release/model-") and printed.endswith(".pth")
    return printed


def test_publish_reads_and_writes_the_bucket_with_manifest_and_config(s3, released, model):
    folder = released.rsplit("/", 1)[0]
    stem = released.rsplit("/", 1)[1][: -len(".pth")]
    expected_names = [f"{stem}.pth", f"{stem}.py", f"{stem}.pth{MANIFEST_SUFFIX}"]
    assert names(s3, folder) == sorted(expected_names)
    assert b"MLPClassifier" in s3.fs().cat_file(f"{folder}/{stem}.py")
    # a fresh machine fetches it, and the manifest verifies the bytes before reading
    os.environ["CADENCE_STAGING_DIR"] = os.environ["CADENCE_STAGING_DIR"] + "_b"
    from cadence.checkpoint.remote import fetch_url

    state = read_checkpoint(fetch_url(released))["state_dict"]
    expected = model.state_dict()
    assert state.keys() == expected.keys()
    assert all(torch.equal(state[k], expected[k]) for k in expected)
    assert "optimizer" not in read_checkpoint(fetch_url(released))


def test_cadence_test_takes_a_checkpoint_url_and_writes_its_work_dir_to_the_bucket(
    tmp_path, s3, released, model, blobs, capsys
):
    work = s3.bucket() + "/eval"
    out = tmp_path / "preds.pkl"
    argv = ["test", CONFIG, released, "--work-dir", work, "--out", str(out),
            f"test_dataloader.dataset.num_samples={TEST_SIZE}"]  # fmt: skip
    assert run(argv) == 0, capsys.readouterr().err
    assert "accuracy/top1" in capsys.readouterr().out
    with open(out, "rb") as f:
        results = pickle.load(f)
    _, expected = hand_scores(blobs, model, TEST_SIZE)
    torch.testing.assert_close(torch.stack([r["pred_score"] for r in results]), expected,
                               rtol=0, atol=1e-6)  # fmt: skip
    uploaded = names(s3, work)
    assert any(n.endswith(".log") for n in uploaded), uploaded  # the test run's log
    assert not os.path.exists("s3:") and not (tmp_path / "s3:").exists()


def test_cadence_val_of_a_missing_checkpoint_url_is_one_line(s3, blobs, capsys):
    missing = s3.bucket() + "/run/epoch_9.pth"
    assert run(["val", CONFIG, missing, "--work-dir", s3.bucket() + "/eval"]) == 2
    err = capsys.readouterr().err
    assert err == f"cadence: error: CHECKPOINT {missing}: no such checkpoint file\n"


def test_the_predictor_takes_a_bucket_work_dir(s3, released, model, blobs):
    from cadence.inference import Predictor

    run_url = released.rsplit("/", 1)[0]
    s3.fs().pipe_file(f"{run_url}/last_checkpoint", released.rsplit("/", 1)[1].encode())
    os.environ["CADENCE_STAGING_DIR"] = os.environ["CADENCE_STAGING_DIR"] + "_c"
    predictor = Predictor(CONFIG, run_url, device="cpu")
    points = blobs.BlobsDataset(num_samples=6, dim=16, num_classes=8, noise=3.0, split_seed=2)
    got = predictor([{"inputs": p, "data_samples": torch.tensor(0)} for p in points.points])
    _, expected = hand_scores(blobs, model, 6)
    torch.testing.assert_close(torch.stack([p["pred_score"] for p in got]), expected,
                               rtol=0, atol=1e-6)  # fmt: skip

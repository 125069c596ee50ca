"""``cadence train|val|test``: ``test --out`` dumps predictions; ``--nproc`` re-launches."""

from __future__ import annotations

import os
import pickle
import textwrap

import pytest
import torch
from blobs_reference import hand_scores

from cadence.cli import main
from cadence.cli import run as run_module
from cadence.cli.launch import child_argv, inside_launched_process, torchrun_command
from cadence.cli.run import with_dump_results

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")
TEST_SIZE = 50


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture
def checkpoint(tmp_path, blobs):
    """Weights of a freshly initialised blobs MLP, saved as a checkpoint."""
    torch.manual_seed(3)
    model = blobs.MLPClassifier(in_dim=16, hidden=128, num_classes=8, dropout=0.1)
    path = tmp_path / "weights.pth"
    torch.save({"state_dict": model.state_dict(), "meta": {}}, path)
    return path, model


def test_test_with_out_dumps_every_prediction(tmp_path, checkpoint, blobs, capsys):
    path, model = checkpoint
    out = tmp_path / "results" / "preds.pkl"
    argv = ["test", CONFIG, str(path), "--work-dir", str(tmp_path / "w"), "--out", str(out),
            f"test_dataloader.dataset.num_samples={TEST_SIZE}"]  # fmt: skip
    assert run(argv) == 0
    assert "accuracy/top1" in capsys.readouterr().out  # the config's own metric still runs
    with open(out, "rb") as f:
        results = pickle.load(f)

    labels, expected = hand_scores(blobs, model, TEST_SIZE)
    assert len(results) == TEST_SIZE
    assert [r["gt_label"] for r in results] == labels
    assert torch.allclose(torch.stack([r["pred_score"] for r in results]), expected, atol=1e-6)


def test_a_missing_checkpoint_is_one_line_before_any_work(tmp_path, capsys):
    missing = tmp_path / "epoch_9.pth"
    assert run(["val", CONFIG, str(missing), "--work-dir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err == f"cadence: error: CHECKPOINT {missing}: no such checkpoint file\n"
    assert run(["train", CONFIG, "--resume", str(tmp_path), "--work-dir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cadence: error: --resume {tmp_path}: no such checkpoint file (a folder")
    assert not (tmp_path / "w").exists()  # refused before the runner made its work dir


def test_out_with_named_test_sets_writes_one_file_per_set(tmp_path, checkpoint, blobs, capsys):
    path, model = checkpoint
    config = tmp_path / "two_sets.py"
    config.write_text(
        textwrap.dedent(f"""\
        _base_ = {CONFIG!r}
        _loader = dict(batch_size=16, sampler=dict(type="DefaultSampler", shuffle=False),
                       collate_fn=dict(type="default_collate"))
        _data = dict(type="BlobsDataset", split_seed=2, dim=16, num_classes=8)
        test_dataloader = dict(
            _delete_=True,
            near=dict(dataset=dict(num_samples=30, noise=3.0, **_data), **_loader),
            far=dict(dataset=dict(num_samples=20, noise=6.0, **_data), **_loader),
        )
        """)
    )
    out = tmp_path / "preds.pkl"
    argv = ["test", str(config), str(path), "--work-dir", str(tmp_path / "w"), "--out", str(out)]
    assert run(argv) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "near/accuracy/top1" in printed and "far/accuracy/top1" in printed
    assert not out.exists()
    for name, size, noise in (("near", 30, 3.0), ("far", 20, 6.0)):
        with open(tmp_path / f"preds.{name}.pkl", "rb") as f:
            results = pickle.load(f)
        labels, expected = hand_scores(blobs, model, size, noise)
        assert len(results) == size
        assert [r["gt_label"] for r in results] == labels
        got = torch.stack([r["pred_score"] for r in results])
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)


def test_out_must_be_a_pickle_file(tmp_path, capsys):
    assert run(["test", CONFIG, "w.pth", "--out", str(tmp_path / "preds.json")]) == 2
    assert ".pkl or .pickle" in capsys.readouterr().err


def test_out_is_only_offered_by_test(capsys):
    assert run(["val", CONFIG, "w.pth", "--out", "x.pkl"]) == 2
    capsys.readouterr()


DUMP = {"type": "DumpResults", "out_file_path": "p.pkl"}


@pytest.mark.parametrize(
    ("evaluator", "expected"),
    [
        (None, [DUMP]),
        ({"type": "Accuracy"}, [{"type": "Accuracy"}, DUMP]),
        ([{"type": "A"}, {"type": "B"}], [{"type": "A"}, {"type": "B"}, DUMP]),
        ({"metrics": {"type": "A"}}, {"metrics": [{"type": "A"}, DUMP]}),
        (
            {"type": "Evaluator", "metrics": [{"type": "A"}]},
            {"type": "Evaluator", "metrics": [{"type": "A"}, DUMP]},
        ),
    ],
)
def test_dump_results_is_appended_to_every_evaluator_shape(evaluator, expected):
    assert with_dump_results(evaluator, "p.pkl") == expected


def test_child_command_drops_nproc_and_runs_under_the_pytorch_launcher():
    argv = ["--debug", "train", "c.py", "--nproc", "2", "--launcher=none", "--amp", "a.b=1"]
    assert child_argv(argv) == ["--debug", "train", "c.py", "--amp", "a.b=1",
                                "--launcher", "pytorch"]  # fmt: skip
    assert child_argv(["test", "c.py", "w.pth", "--num-gpus=4"]) == [
        "test", "c.py", "w.pth", "--launcher", "pytorch",
    ]  # fmt: skip
    cmd = torchrun_command(3, ["val", "c.py", "w.pth", "--nproc", "3"])
    assert cmd[1:3] == ["-m", "torch.distributed.run"]
    assert cmd[cmd.index("--nproc_per_node") + 1] == "3"
    assert cmd[cmd.index("-m", 3):] == ["-m", "cadence", "val", "c.py", "w.pth",
                                        "--launcher", "pytorch"]  # fmt: skip


def test_inside_launched_process():
    assert inside_launched_process({"RANK": "0", "LOCAL_RANK": "0"})
    assert not inside_launched_process({"PATH": "/bin"})


def test_nproc_relaunches_once_the_config_loads(monkeypatch, tmp_path, blobs):
    for name in ("RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    calls = []
    monkeypatch.setattr(run_module, "relaunch", lambda n, argv: calls.append((n, argv)) or 7)
    monkeypatch.chdir(ROOT)
    argv = ["train", CONFIG, "--num-gpus", "2", "train_cfg.max_epochs=1"]
    assert run(argv) == 7  # the children's exit code
    assert calls == [(2, argv)]
    (tmp_path / "bad.py").write_text("model = dict(type=\n")
    assert run(["train", str(tmp_path / "bad.py"), "--nproc", "2"]) == 2  # reported here
    assert len(calls) == 1


@pytest.mark.parametrize("value", ["0", "two"])
def test_nproc_must_be_a_positive_number(value, capsys):
    assert run(["train", CONFIG, "--nproc", value]) == 2
    assert "--nproc" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["val", "test"])
def test_overrides_may_follow_the_checkpoint_directly(mode):
    from cadence.cli import build_parser

    args, extra = build_parser().parse_known_args([mode, "c.py", "w.pth", "a=1", "b.c=2"])
    assert (args.config, args.checkpoint, args.overrides, extra) == (
        "c.py", "w.pth", ["a=1", "b.c=2"], [],
    )  # fmt: skip


def _files(folder):
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


def test_val_and_test_leave_the_training_run_untouched(tmp_path, blobs, capsys):
    work = tmp_path / "run"
    small = [f"work_dir={work}", "train_dataloader.dataset.num_samples=128",
             "val_dataloader.dataset.num_samples=64", "test_dataloader.dataset.num_samples=64",
             "train_cfg.max_epochs=2", "train_cfg.val_interval=1",
             "default_hooks.checkpoint.interval=1"]  # fmt: skip
    assert run(["train", CONFIG, *small]) == 0
    before = _files(work)
    assert "best_checkpoint" in before and "mlp_8xb64_blobs.py" in before
    for mode in ("val", "test"):
        assert run([mode, CONFIG, str(work / "epoch_1.pth"), *small]) == 0
        assert "accuracy/top1" in capsys.readouterr().out
    after = _files(work)
    assert {k: v for k, v in after.items() if k in before} == before  # byte-identical
    added = sorted({k.split(os.sep)[0] for k in after if k not in before})
    assert added == ["test", "val"]
    logs = [k for k in after if k.startswith("val" + os.sep) and k.endswith(".log")]
    assert len(logs) == 1 and len(logs[0].split(os.sep)) == 3  # val/<timestamp>/<ts>.log


SHORT_RUN = [
    "train_cfg.max_epochs=1",
    "train_dataloader.dataset.num_samples=128",
    "val_dataloader.dataset.num_samples=64",
    "test_dataloader.dataset.num_samples=64",
]


def test_a_default_work_dir_run_prints_lines_within_100_columns_and_its_pointer_names_work(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the default work dir: work_dirs/<config>/<timestamp>/...
    assert run(["train", CONFIG, *SHORT_RUN]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("plot: `cadence plot ") for line in lines)
    assert [line for line in lines if len(line) > 100] == []
    work = os.path.join("work_dirs", "mlp_8xb64_blobs")
    with open(os.path.join(work, "last_checkpoint")) as f:
        name = f.read()  # relative to the work dir: `$(cat work_dirs/.../last_checkpoint)`
    assert not os.path.exists(name)
    for checkpoint in (name, work):  # the pointer's name, and the work dir itself
        assert run(["test", CONFIG, checkpoint, *SHORT_RUN]) == 0, checkpoint
        assert "accuracy/top1" in capsys.readouterr().out
    assert run(["train", CONFIG, "--resume", name, "train_cfg.max_epochs=2", *SHORT_RUN[1:]]) == 0
    assert "resumed: continuing at epoch 2 of 2" in capsys.readouterr().out
    assert run(["publish", work, "release.pth"]) == 0
    assert os.path.basename(capsys.readouterr().out.strip()).startswith("release-")


def test_a_refused_checkpoint_is_one_paragraph_in_cadences_words(tmp_path, capsys, blobs):
    import argparse

    from cadence.checkpoint import atomic_torch_save

    model = blobs.MLPClassifier(in_dim=16, hidden=128, num_classes=8, dropout=0.1)
    path = tmp_path / "odd.pth"
    atomic_torch_save({"state_dict": model.state_dict(), "meta": {},
                       "args": argparse.Namespace(lr=0.1)}, str(path))  # fmt: skip
    work = tmp_path / "w"
    from cadence.utils.exit_codes import ExitCode

    unusable = int(ExitCode.CHECKPOINT_UNVERIFIABLE)
    assert run(["test", CONFIG, str(path), "--work-dir", str(work), *SHORT_RUN]) == unusable
    err = capsys.readouterr().err
    assert err.startswith(f"cadence: error: checkpoint '{path}' was refused: ")
    assert "`argparse.Namespace`" in err and "nothing in it was executed" in err
    assert len(err.strip().splitlines()) == 1
    assert "two options" not in err and "\x1b" not in err
    logs = "".join(p.read_text() for p in work.rglob("*.log"))
    assert "two options" not in logs and "\x1b" not in logs

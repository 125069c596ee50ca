"""A process SIGKILLed at any moment of a save leaves the previous checkpoint intact and the
``last_checkpoint`` pointer valid; the run resumes from it and ends bit-identical."""

from __future__ import annotations

import os
import textwrap

import pytest
import torch
from fresh_python import run_python

from cadence.checkpoint import verify_checkpoint
from cadence.runner import find_latest_checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {here!r})
    import torch
    from runner_toys import Blobs, ToyClassifier
    from cadence.config import Config
    from cadence.registry import DATASETS, MODELS
    from cadence.checkpoint import manager
    from cadence.runner import Runner

    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
    mode, work, target = sys.argv[1:4]

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    if mode == "write":  # killed when half of the target's bytes are written
        import io
        real_save, current = manager.atomic_torch_save, [""]

        def save(obj, filename, *args, **kwargs):
            current[0] = filename
            return real_save(obj, filename, *args, **kwargs)

        manager.atomic_torch_save = save
        real_torch_save = torch.save

        def torch_save(obj, f, *args, **kwargs):
            if not current[0].endswith(target):
                return real_torch_save(obj, f, *args, **kwargs)
            buffer = io.BytesIO()
            real_torch_save(obj, buffer)
            f.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
            f.flush()
            die()

        torch.save = torch_save
    elif mode == "pointer":  # killed after the file is in place, before the pointer moves
        real_pointer = manager.write_last_checkpoint

        def pointer(work_dir, path, *args, **kwargs):
            if path.endswith(target):
                die()
            real_pointer(work_dir, path, *args, **kwargs)

        manager.write_last_checkpoint = pointer
    elif mode == "rotate":  # killed while deleting the old checkpoint
        manager.remove_checkpoint = lambda path: die()

    cfg = Config(dict(
        model=dict(type="ToyClassifier"),
        work_dir=work,
        train_dataloader=dict(
            batch_size=16, dataset=dict(type="Blobs", n=64, seed=0),
            sampler=dict(type="InfiniteSampler", shuffle=True),
            collate_fn=dict(type="default_collate")),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=6),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9)),
        default_hooks=dict(checkpoint=dict(
            type="CheckpointHook", interval=2, by_epoch=False, max_keep_ckpts=1)),
        log_processor=dict(by_epoch=False),
        randomness=dict(seed=3),
        resume=mode == "resume",
    ))
    runner = Runner.from_cfg(cfg)
    runner.train()
    torch.save(runner.model.state_dict(), os.path.join(work, "final.pt"))
    print("RESUMED", runner.message_hub.get_info("resumed_from", ""))
    """
)


def run(tmp_path, mode, work, target="iter_4.pth"):
    script = tmp_path / "crash_case.py"
    script.write_text(SCRIPT.format(here=HERE))
    return run_python([str(script), mode, str(work), target], timeout=120)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    done = run(tmp, "none", tmp / "work")
    assert done.returncode == 0, done.stderr[-3000:]
    return torch.load(tmp / "work" / "final.pt", weights_only=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "survivor", "new_file_complete"),
    [
        ("write", "iter_2.pth", False),
        ("pointer", "iter_2.pth", True),
        ("rotate", "iter_4.pth", True),
    ],
)
def test_kill_during_a_save_keeps_a_valid_checkpoint(
    tmp_path, uninterrupted, mode, survivor, new_file_complete
):
    work = tmp_path / "work"
    killed = run(tmp_path, mode, work)
    assert killed.returncode == -9, killed.stderr[-3000:]
    latest = find_latest_checkpoint(str(work))
    assert latest == str(work / survivor)
    assert verify_checkpoint(latest) is not None
    assert (work / "iter_2.pth").is_file()  # never deleted before the pointer moved on
    if new_file_complete:
        assert verify_checkpoint(str(work / "iter_4.pth")) is not None
    else:
        assert not (work / "iter_4.pth").exists()

    resumed = run(tmp_path, "resume", work)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    logs = "".join(p.read_text() for p in work.glob("*/*.log"))
    assert f"Resumed from {latest}" in logs
    final = torch.load(work / "final.pt", weights_only=True)
    for key, value in uninterrupted.items():
        assert torch.equal(final[key], value), key
    assert sorted(p.name for p in work.glob("iter_*.pth")) == ["iter_6.pth"]

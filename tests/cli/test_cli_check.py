"""``cadence check CONFIG``: every type and argument validated, all problems at once."""

from __future__ import annotations

import os
import textwrap

import pytest

from cadence.cli import main
from cadence.evaluator import BaseMetric
from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, HOOKS, METRICS, MODELS, TRANSFORMS


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture(autouse=True)
def toys():
    """A model, dataset, transform, metric and hook registered by name (per test)."""

    @MODELS.register_module()
    class CheckNet(BaseModel):
        def __init__(
            self, depth: int, width: int = 8, backbone=None, norm=None, data_preprocessor=None
        ):
            super().__init__(data_preprocessor=data_preprocessor)

    @MODELS.register_module()
    class CheckBackbone:
        def __init__(self, stages: int = 4) -> None:
            pass

    @MODELS.register_module()
    class CheckNorm:
        def __init__(self, num_features: int, eps: float = 1e-5) -> None:
            pass

    @DATASETS.register_module()
    class CheckSet:
        def __init__(self, size: int, pipeline=()) -> None:
            pass

    @TRANSFORMS.register_module()
    class CheckResize:
        def __init__(self, scale: int) -> None:
            pass

    @METRICS.register_module()
    class CheckMetric(BaseMetric):
        default_prefix = "check"

        def __init__(self, topk: int = 1, **kwargs) -> None:
            super().__init__(**kwargs)

        def process(self, data_batch, data_samples):
            pass

        def compute_metrics(self, results):
            return {}

    @HOOKS.register_module()
    class CheckHook(Hook):
        def __init__(self, every: int = 1) -> None:
            pass


CLEAN = """\
model = dict(type='CheckNet', depth=3, backbone=dict(type='CheckBackbone', stages=2))
train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='CheckSet', size=8, pipeline=[dict(type='CheckResize', scale=2)]))
val_dataloader = dict(
    batch_size=4, sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type='CheckSet', size=8))
val_evaluator = dict(type='Evaluator', metrics=[dict(type='CheckMetric', topk=2)])
train_cfg = dict(by_epoch=True, max_epochs=2, val_interval=1)
val_cfg = dict()
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9))
param_scheduler = [dict(type='MultiStepLR', milestones=[1], gamma=0.1)]
default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=1), logger=None)
custom_hooks = [dict(type='CheckHook', every=2, priority='LOW')]
visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')])
log_processor = dict(window_size=5)
"""
# model, backbone, dataset, sampler, collate_fn, transform, dataset, sampler,
# evaluator, metric, train loop, val loop, wrapper, optimizer, scheduler,
# checkpoint hook, custom hook, visualizer, backend, log processor
CLEAN_COMPONENTS = 20


def write(tmp_path, text, name="cfg.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def line_of(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def suggests(line, name):
    """Whether ``line`` offers ``name`` as a did-you-mean suggestion."""
    return "Did you mean" in line and f"'{name}'" in line.split("Did you mean", 1)[1]


def problem_lines(out):
    return [line for line in out.splitlines() if line.startswith(("error:", "warning:"))]


def test_clean_config_is_ok_and_counts_its_components(tmp_path, capsys):
    assert run(["check", write(tmp_path, CLEAN)]) == 0
    out = capsys.readouterr().out
    assert problem_lines(out) == []
    assert out.strip().splitlines()[-1] == f"config OK: {CLEAN_COMPONENTS} components checked"


def test_three_mistakes_are_all_reported_with_key_paths_and_suggestions(tmp_path, capsys):
    bad = CLEAN.replace("type='CheckNet'", "type='CheckNte'")
    bad = bad.replace("lr=0.1, momentum=0.9", "lr=0.1, momentun=0.9")
    bad = bad.replace("type='CheckHook'", "type='CheckHok'")
    path = write(tmp_path, bad)
    assert run(["check", path]) == 2
    out = capsys.readouterr().out
    lines = problem_lines(out)
    assert len(lines) == 3, out
    where = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    model, optim, hook = lines
    assert model.startswith(f"error: model.type ({where}:{line_of(bad, 'CheckNte')})")
    assert "'CheckNte' is not registered in registry 'model'" in model
    assert suggests(model, "CheckNet")
    assert optim.startswith(f"error: optim_wrapper.optimizer.momentun ({where}:")
    assert "SGD takes no argument 'momentun'" in optim and suggests(optim, "momentum")
    assert hook.startswith(f"error: custom_hooks.0.type ({where}:{line_of(bad, 'CheckHok')})")
    assert "registry 'hook'" in hook and suggests(hook, "CheckHook")
    # the unknown model and hook are not counted, nor the backbone inside the unknown model
    assert (
        out.strip()
        .splitlines()[-1]
        .endswith(f"3 problem(s) in {CLEAN_COMPONENTS - 3} components checked")
    )


def test_problems_in_every_part_of_the_config(tmp_path, capsys):
    bad = (
        CLEAN.replace("batch_size=4,\n    num_workers", "batch_sise=4,\n    num_workers")
        .replace("type='DefaultSampler', shuffle=True", "type='DefaultSampeler', shuffle=True")
        .replace("type='CheckResize', scale=2", "type='CheckResize', scael=2")
        .replace("type='CheckMetric', topk=2", "type='CheckMetrik', topk=2")
        .replace("by_epoch=True, max_epochs=2", "by_epoch=False, max_epochs=2")
        .replace("milestones=[1], gamma", "milestones=[1], gama")
        .replace("type='CheckpointHook', interval=1", "type='CheckpointHook', intervall=1")
        .replace("type='LocalVisBackend'", "type='LocalBackend'")
        .replace("window_size=5", "windowsize=5")
    )
    assert run(["check", write(tmp_path, bad)]) == 2
    lines = problem_lines(capsys.readouterr().out)
    expected = {
        "train_dataloader.batch_sise": "'batch_size'",
        "train_dataloader.sampler.type": "'DefaultSampler'",
        "train_dataloader.dataset.pipeline.0.scael": "'scale'",
        "train_dataloader.dataset.pipeline.0": "CheckResize needs argument(s) 'scale'",
        "val_evaluator.metrics.0.type": "'CheckMetric'",
        "train_cfg.max_epochs": "IterBasedTrainLoop takes no argument 'max_epochs'",
        "train_cfg": "IterBasedTrainLoop needs argument(s) 'max_iters'",
        "param_scheduler.0.gama": "'gamma'",
        "default_hooks.checkpoint.intervall": "'interval'",
        "visualizer.vis_backends.0.type": "'LocalVisBackend'",
        "log_processor.windowsize": "'window_size'",
    }
    assert len(lines) == len(expected), "\n".join(lines)
    for key, needle in expected.items():
        found = [x for x in lines if x.startswith(f"error: {key} (")]
        assert len(found) == 1 and needle in found[0], (key, lines)


def test_missing_required_argument(tmp_path, capsys):
    assert run(["check", write(tmp_path, CLEAN.replace("depth=3, ", ""))]) == 2
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("error: model (") and "CheckNet needs argument(s) 'depth'" in line


def test_nested_types_in_a_model(tmp_path, capsys):
    misspelled = CLEAN.replace("type='CheckBackbone', stages=2", "type='CheckBackbon', stages=2")
    assert run(["check", write(tmp_path, misspelled)]) == 2
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("error: model.backbone.type (") and "'CheckBackbone'" in line

    wrong_arg = CLEAN.replace("type='CheckBackbone', stages=2", "type='CheckBackbone', stage=2")
    assert run(["check", write(tmp_path, wrong_arg)]) == 2
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("error: model.backbone.stage (") and "'stages'" in line

    # an owner passes more arguments to the parts it builds: only unknown ones are errors
    norm = CLEAN.replace("stages=2)", "stages=2), norm=dict(type='CheckNorm', eps=0.1)")
    assert run(["check", write(tmp_path, norm)]) == 0
    capsys.readouterr()
    norm = CLEAN.replace("stages=2)", "stages=2), norm=dict(type='CheckNorm', esp=0.1)")
    assert run(["check", write(tmp_path, norm)]) == 2
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("error: model.norm.esp (") and suggests(line, "eps")

    foreign = CLEAN.replace("type='CheckBackbone', stages=2", "type='ZZQQXX', stages=2")
    assert run(["check", write(tmp_path, foreign)]) == 0  # unknown, not a misspelling
    out = capsys.readouterr().out
    (line,) = problem_lines(out)
    assert line.startswith("warning: model.backbone.type (") and "not checked" in line
    assert "config OK" in out


def test_cfg_options_fix_and_their_provenance(tmp_path, capsys):
    path = write(tmp_path, CLEAN.replace("depth=3", "deph=3"))
    assert run(["check", path, "--cfg-options", "model.depth=3"]) == 2
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("error: model.deph (")
    assert run(["check", path, "model.deph=[]", "model.depth=3"]) == 2  # still there
    capsys.readouterr()
    bad_override = ["check", write(tmp_path, CLEAN), "--cfg-options", "model.depht=3"]
    assert run(bad_override) == 2
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("error: model.depht (--cfg-options)")


def test_optim_wrapper_per_sub_model_and_scheduler_per_optimizer(tmp_path, capsys):
    text = CLEAN.replace(
        "optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9))",
        "optim_wrapper = dict(gen=dict(optimizer=dict(type='Adam', lr=0.1)),\n"
        "                     disc=dict(optimizer=dict(type='Adma', lr=0.1)))",
    ).replace(
        "param_scheduler = [dict(type='MultiStepLR', milestones=[1], gamma=0.1)]",
        "param_scheduler = dict(gen=[dict(type='LinearLR', start_factor=0.5)],\n"
        "                       disc=dict(type='ConstantLR', factr=0.5))",
    )
    assert run(["check", write(tmp_path, text)]) == 2
    lines = problem_lines(capsys.readouterr().out)
    assert [x.split(" (")[0] for x in lines] == [
        "error: optim_wrapper.disc.optimizer.type",
        "error: param_scheduler.disc.factr",
    ]
    assert "'Adam'" in lines[0] and "'factor'" in lines[1]


def test_unknown_top_level_key_close_to_a_runner_key_is_a_warning(tmp_path, capsys):
    assert run(["check", write(tmp_path, CLEAN + "custom_hook = []\n")]) == 0
    (line,) = problem_lines(capsys.readouterr().out)
    assert line.startswith("warning: custom_hook (") and "'custom_hooks'" in line


def test_broken_config_file_is_one_paragraph(tmp_path, capsys):
    assert run(["check", write(tmp_path, "model = dict(type=\n")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cadence: error:") and "Traceback" not in err


def test_the_blobs_example_passes(capsys, blobs):
    config = os.path.join("examples", "blobs", "configs", "mlp_8xb64_blobs.py")
    assert run(["check", config]) == 0
    assert "config OK" in capsys.readouterr().out

"""``cadence check`` with several validation sets, validation loss, resume_policy and
skip_nonfinite: each set checked under its own key path, sets that do not pair up reported."""

from __future__ import annotations

from test_cli_check import CLEAN, problem_lines, run, toys, write  # noqa: F401 (toys: fixture)

SETS = CLEAN.replace(
    """val_dataloader = dict(
    batch_size=4, sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type='CheckSet', size=8))""",
    """_loader = dict(batch_size=4, sampler=dict(type='DefaultSampler', shuffle=False),
               dataset=dict(type='CheckSet', size=8))
val_dataloader = dict(clean=_loader, noisy=dict(_loader, dataset=dict(type='CheckSet', size=8)))""",
).replace("val_cfg = dict()", "val_cfg = dict(compute_loss=True)")
SETS = SETS.replace("max_epochs=2, val_interval=1)", "max_epochs=2, resume_policy='stretch')")
SETS = SETS.replace("momentum=0.9))", "momentum=0.9), skip_nonfinite=True, max_consecutive=3)")


def test_named_sets_and_the_new_options_pass(tmp_path, capsys):
    assert "noisy=dict(" in SETS and "skip_nonfinite" in SETS  # the replacements took
    assert run(["check", write(tmp_path, SETS)]) == 0
    assert problem_lines(capsys.readouterr().out) == []


def test_each_set_is_checked_and_evaluators_must_name_the_same_sets(tmp_path, capsys):
    bad = SETS.replace("dataset=dict(type='CheckSet', size=8)))", "dataset=dict(type='CheckSet')))")
    bad = bad.replace(
        "val_evaluator = dict(type='Evaluator', metrics=[dict(type='CheckMetric', topk=2)])",
        "val_evaluator = dict(clean=dict(type='CheckMetric'), nosy=dict(type='CheckMetric'))",
    )
    assert run(["check", write(tmp_path, bad)]) == 2
    lines = problem_lines(capsys.readouterr().out)
    assert any(
        line.startswith("error: val_evaluator") and "missing noisy; unknown nosy" in line
        for line in lines
    ), lines
    assert any("val_dataloader.noisy.dataset" in line and "size" in line for line in lines), lines


def test_a_bad_resume_policy_is_reported(tmp_path, capsys):
    bad = SETS.replace("resume_policy='stretch'", "resume_policy='grow'")
    assert run(["check", write(tmp_path, bad)]) == 2
    lines = problem_lines(capsys.readouterr().out)
    assert any(
        "train_cfg.resume_policy" in line and "'keep' or 'stretch'" in line for line in lines
    ), lines

"""``cadence check``: unknown arguments inside ``custom_hooks`` items, including the ones a
hook passes on to what it builds (EMAHook's ``**kwargs`` go to its averaged model)."""

from __future__ import annotations

import os

from cadence.cli.config_check import check_config
from cadence.config import Config

CONFIG = """\
model = dict(type='ToyModel')
custom_hooks = [
    dict(type='EmptyCacheHook', after_eopch=True),
    dict(type='EMAHook', momentun=0.01, priority='ABOVE_NORMAL'),
    dict(type='EMAHook', ema_type='StochasticWeightAverage', momentum=0.01),
]
"""


def test_unknown_arguments_in_custom_hooks_name_key_origin_and_closest_name(tmp_path):
    path = tmp_path / "cfg.py"
    path.write_text(CONFIG)
    problems = [p for p in check_config(Config.fromfile(str(path))).errors
                if p.key.startswith("custom_hooks")]  # fmt: skip
    where = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    assert [str(p) for p in problems] == [
        f"error: custom_hooks.0.after_eopch ({where}:3): EmptyCacheHook takes no argument "
        "'after_eopch'. Did you mean one of 'after_epoch', 'after_iter', 'before_epoch'?",
        f"error: custom_hooks.1.momentun ({where}:4): ExponentialMovingAverage takes no "
        "argument 'momentun'. Did you mean 'momentum'?",
        f"error: custom_hooks.2.momentum ({where}:5): StochasticWeightAverage takes no "
        "argument 'momentum'. It takes: model, interval, device, update_buffers.",
    ]

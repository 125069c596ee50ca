"""Loaded at interpreter start-up when this folder is on PYTHONPATH (tests only).

It stands in for an mmcv build with compiled ops (mmcv_ops_standin): mmdet's and mmseg's
tools import ``mmcv.ops`` before reading the config, so a ``custom_imports`` entry would be
too late. Only the tests that run those tools put this folder on the path.
"""

import mmcv_ops_standin  # noqa: F401

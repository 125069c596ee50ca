# Copyright (c) toyproj authors. All rights reserved.
"""toyproj: a small OpenMMLab-style project (classify 2-d points)."""
from .datasets import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .evaluation import *  # noqa: F401,F403
from .models import *  # noqa: F401,F403
from .version import __version__  # noqa: F401

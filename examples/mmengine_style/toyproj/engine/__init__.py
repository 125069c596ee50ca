# Copyright (c) toyproj authors. All rights reserved.
from .hooks import *  # noqa: F401,F403

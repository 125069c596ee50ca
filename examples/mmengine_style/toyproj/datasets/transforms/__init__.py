# Copyright (c) toyproj authors. All rights reserved.
from .formatting import PackPointInputs
from .processing import RandomJitter

__all__ = ['PackPointInputs', 'RandomJitter']

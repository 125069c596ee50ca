# Copyright (c) toyproj authors. All rights reserved.
from .accuracy import PointAccuracy

__all__ = ['PointAccuracy']

# Copyright (c) toyproj authors. All rights reserved.
from .point_dataset import PointDataset
from .transforms import *  # noqa: F401,F403

__all__ = ['PointDataset']

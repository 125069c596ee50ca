# Copyright (c) toyproj authors. All rights reserved.
from .toynet import ToyNet

__all__ = ['ToyNet']

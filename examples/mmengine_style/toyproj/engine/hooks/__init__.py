# Copyright (c) toyproj authors. All rights reserved.
from .loss_trend_hook import LossTrendHook

__all__ = ['LossTrendHook']

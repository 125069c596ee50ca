# Copyright (c) toyproj authors. All rights reserved.
__version__ = '0.1.0'

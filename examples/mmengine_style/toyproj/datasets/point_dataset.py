# Copyright (c) toyproj authors. All rights reserved.
from typing import List

from cadence.dataset import BaseDataset

from toyproj.registry import DATASETS


@DATASETS.register_module()
class PointDataset(BaseDataset):
    """2-d points, each with a class label.

    The annotation file is in the OpenMMLab 2.0 format::

        {
            "metainfo": {"classes": ["left", "right"]},
            "data_list": [{"point": [x, y], "gt_label": 0}, ...]
        }
    """

    METAINFO = dict(classes=('left', 'right'))

    def parse_data_info(self, raw_data_info: dict) -> dict:
        data_info = dict(raw_data_info)
        data_info['point'] = [float(v) for v in raw_data_info['point']]
        data_info['gt_label'] = int(raw_data_info['gt_label'])
        return data_info

    def get_cat_ids(self, idx: int) -> List[int]:
        """The category id of the ``idx``-th sample."""
        return [self.get_data_info(idx)['gt_label']]

# Copyright (c) toyproj authors. All rights reserved.
import numpy as np
import torch
from cadence.transforms import BaseTransform
from cadence.structures import BaseDataElement, LabelData

from toyproj.registry import TRANSFORMS


@TRANSFORMS.register_module()
class PackPointInputs(BaseTransform):
    """Pack the point and its label into ``inputs`` and ``data_samples``.

    Required Keys:

    - point
    - gt_label (optional)
    - sample_idx (optional)

    Added Keys:

    - inputs (torch.Tensor): the point, shape ``(2, )``.
    - data_samples (BaseDataElement): ``gt_label`` as a :obj:`LabelData`.
    """

    meta_keys = ('sample_idx', )

    def transform(self, results: dict) -> dict:
        packed_results = dict()
        packed_results['inputs'] = torch.from_numpy(
            np.asarray(results['point'], dtype=np.float32))

        data_sample = BaseDataElement()
        if 'gt_label' in results:
            data_sample.gt_label = LabelData(
                label=torch.tensor([results['gt_label']]))
        data_sample.set_metainfo(
            {k: results[k]
             for k in self.meta_keys if k in results})
        packed_results['data_samples'] = data_sample
        return packed_results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(meta_keys={self.meta_keys})'

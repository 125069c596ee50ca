# Copyright (c) toyproj authors. All rights reserved.
from typing import List, Optional, Sequence

from cadence.evaluator import BaseMetric
from cadence.logging import MMLogger

from toyproj.registry import METRICS


@METRICS.register_module()
class PointAccuracy(BaseMetric):
    """Top-1 accuracy in percent, reported as ``accuracy/top1``.

    Args:
        collect_device (str): Device used to collect results across ranks,
            'cpu' or 'gpu'. Defaults to 'cpu'.
        prefix (str, optional): The prefix of the metric names. Defaults to
            ``default_prefix``.
    """

    default_prefix: Optional[str] = 'accuracy'

    def __init__(self,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        """Keep the predicted and the true label of each sample.

        The evaluator hands the outputs of ``model.val_step`` over as dicts.
        """
        for data_sample in data_samples:
            self.results.append(
                dict(
                    pred=int(data_sample['pred_label']['label'][0]),
                    gt=int(data_sample['gt_label']['label'][0])))

    def compute_metrics(self, results: List[dict]) -> dict:
        logger: MMLogger = MMLogger.get_current_instance()
        correct = sum(result['pred'] == result['gt'] for result in results)
        top1 = 100.0 * correct / len(results)
        logger.info(f'{correct} of {len(results)} points classified correctly')
        return dict(top1=top1)

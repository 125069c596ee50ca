# Copyright (c) toyproj authors. All rights reserved.
from typing import Dict, List, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from cadence.model import BaseModel
from cadence.structures import BaseDataElement, LabelData

from toyproj.registry import MODELS


@MODELS.register_module()
class ToyNet(BaseModel):
    """A two-layer perceptron that classifies 2-d points.

    Args:
        hidden_channels (int): Width of the hidden layer. Defaults to 16.
        num_classes (int): Number of classes. Defaults to 2.
        data_preprocessor (dict, optional): The data preprocessor config.
        init_cfg (dict, optional): The weight initialization config.
    """

    def __init__(self,
                 hidden_channels: int = 16,
                 num_classes: int = 2,
                 data_preprocessor: Optional[dict] = None,
                 init_cfg: Optional[dict] = None):
        super().__init__(
            data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.num_classes = num_classes
        self.backbone = nn.Sequential(
            nn.Linear(2, hidden_channels), nn.ReLU(inplace=True))
        self.head = nn.Linear(hidden_channels, num_classes)

    def forward(self,
                inputs: Union[torch.Tensor, List[torch.Tensor]],
                data_samples: Optional[List[BaseDataElement]] = None,
                mode: str = 'tensor'):
        """The unified entry for a forward process in both training and test.

        - "tensor": Forward the whole network and return the logits.
        - "loss": Forward and return a dict of losses.
        - "predict": Forward and return the predictions, a list of
          :obj:`BaseDataElement` with ``pred_label``.
        """
        if isinstance(inputs, (list, tuple)):
            inputs = torch.stack(inputs)
        logits = self.head(self.backbone(inputs))
        if mode == 'tensor':
            return logits
        elif mode == 'loss':
            return self.loss(logits, data_samples)
        elif mode == 'predict':
            return self.predict(logits, data_samples)
        else:
            raise RuntimeError(f'Invalid mode "{mode}".')

    def loss(self, logits: torch.Tensor,
             data_samples: List[BaseDataElement]) -> Dict[str, torch.Tensor]:
        labels = torch.cat([ds.gt_label.label for ds in data_samples])
        return dict(loss_cls=F.cross_entropy(logits, labels.to(logits.device)))

    def predict(
        self,
        logits: torch.Tensor,
        data_samples: Optional[List[BaseDataElement]] = None
    ) -> List[BaseDataElement]:
        scores = F.softmax(logits, dim=1)
        if data_samples is None:
            data_samples = [BaseDataElement() for _ in range(len(logits))]
        for data_sample, score in zip(data_samples, scores):
            data_sample.pred_label = LabelData(
                label=score.argmax(keepdim=True).detach(),
                score=score.detach())
        return data_samples

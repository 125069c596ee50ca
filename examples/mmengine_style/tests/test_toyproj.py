# Copyright (c) toyproj authors. All rights reserved.
import copy
import json
import os.path as osp
from unittest import TestCase

import numpy as np
import torch
from cadence.config import Config
from cadence.structures import BaseDataElement, LabelData
from cadence.testing import RunnerTestCase

from toyproj.datasets import PackPointInputs, PointDataset, RandomJitter
from toyproj.engine.hooks import LossTrendHook
from toyproj.evaluation import PointAccuracy
from toyproj.models import ToyNet

PROJECT_ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
DATA_ROOT = osp.join(PROJECT_ROOT, 'data', 'points')
CONFIG = osp.join(PROJECT_ROOT, 'configs', 'toynet',
                  'toynet_1xb8-4e_points.py')


def _sample(label, pred=None):
    data_sample = BaseDataElement()
    data_sample.gt_label = LabelData(label=torch.tensor([label]))
    if pred is not None:
        data_sample.pred_label = LabelData(label=torch.tensor([pred]))
    return data_sample


class TestPointDataset(TestCase):

    def test_reads_the_annotation_file(self):
        dataset = PointDataset(
            data_root=DATA_ROOT, ann_file='annotations/val.json')
        with open(osp.join(DATA_ROOT, 'annotations', 'val.json')) as f:
            raw = json.load(f)['data_list']
        self.assertEqual(len(dataset), 32)
        # the class attribute METAINFO wins over the file's metainfo
        self.assertEqual(dataset.metainfo['classes'], ('left', 'right'))
        info = dataset.get_data_info(3)
        self.assertEqual(info['point'], raw[3]['point'])
        self.assertEqual(info['sample_idx'], 3)
        self.assertEqual(dataset.get_cat_ids(3), [raw[3]['gt_label']])

    def test_pipeline_packs_inputs_and_data_samples(self):
        dataset = PointDataset(
            data_root=DATA_ROOT,
            ann_file='annotations/val.json',
            pipeline=[PackPointInputs()])
        item = dataset[5]
        raw = dataset.get_data_info(5)
        self.assertEqual(item['inputs'].tolist(),
                         torch.tensor(raw['point']).tolist())
        self.assertEqual(item['data_samples'].gt_label.label.tolist(),
                         [raw['gt_label']])
        self.assertEqual(item['data_samples'].sample_idx, 5)


class TestTransforms(TestCase):

    def test_random_jitter(self):
        self.assertEqual(
            RandomJitter(std=0.)(dict(point=[1., 2.]))['point'].tolist(),
            [1., 2.])
        np.random.seed(0)
        moved = RandomJitter(std=0.1)(dict(point=[1., 2.]))['point']
        self.assertFalse(np.allclose(moved, [1., 2.]))
        self.assertTrue(np.allclose(moved, [1., 2.], atol=0.5))
        with self.assertRaises(AssertionError):
            RandomJitter(std=-1)

    def test_pack_without_label(self):
        packed = PackPointInputs()(dict(point=np.array([0.5, -0.5])))
        self.assertEqual(packed['inputs'].dtype, torch.float32)
        self.assertNotIn('gt_label', packed['data_samples'])


class TestToyNet(TestCase):

    def test_loss_and_predict(self):
        model = ToyNet(hidden_channels=4)
        inputs = [torch.tensor([1., 1.]), torch.tensor([-1., -1.])]
        losses = model(inputs, [_sample(1), _sample(0)], mode='loss')
        self.assertEqual(set(losses), {'loss_cls'})
        self.assertGreater(losses['loss_cls'].item(), 0)
        preds = model(inputs, [_sample(1), _sample(0)], mode='predict')
        for pred in preds:
            self.assertAlmostEqual(pred.pred_label.score.sum().item(), 1.,
                                   places=5)
            self.assertEqual(pred.pred_label.label.item(),
                             pred.pred_label.score.argmax().item())
        self.assertEqual(model(torch.stack(inputs)).shape, (2, 2))


class TestPointAccuracy(TestCase):

    def test_evaluate(self):
        metric = PointAccuracy()
        samples = [_sample(0, 0), _sample(1, 0), _sample(1, 1), _sample(0, 0)]
        metric.process(None, [s.to_dict() for s in samples])
        self.assertEqual(metric.evaluate(4), {'accuracy/top1': 75.0})


class TestLossTrendHook(RunnerTestCase):

    def test_with_runner(self):
        cfg = copy.deepcopy(self.epoch_based_cfg)
        cfg.default_scope = 'toyproj'
        cfg.train_cfg.max_epochs = 1
        cfg.custom_hooks = [
            dict(type='LossTrendHook', interval=2, window_size=2)
        ]
        runner = self.build_runner(cfg)
        hook = [h for h in runner.hooks if isinstance(h, LossTrendHook)][0]
        runner.train()
        # 12 samples, batch size 3: 4 iterations, updated after 2 and 4
        losses = runner.message_hub.get_scalar('train/loss').data[0]
        expected = min(losses[:2].mean(), losses[2:4].mean())
        self.assertAlmostEqual(
            runner.message_hub.get_info('best_smoothed_loss'), expected,
            places=5)
        self.assertIs(hook.visualizer, runner.visualizer)
        with open(osp.join(runner.log_dir, 'vis_data', 'scalars.json')) as f:
            steps = [
                json.loads(line)['step'] for line in f
                if 'smoothed_loss' in line
            ]
        self.assertEqual(steps, [2, 4])

    def test_registered_after_construction(self):
        cfg = copy.deepcopy(self.epoch_based_cfg)
        cfg.train_cfg.max_epochs = 1
        runner = self.build_runner(cfg)
        hook = LossTrendHook(interval=1)
        runner.register_hook(hook)
        runner.train()
        self.assertIs(hook.message_hub, runner.message_hub)
        self.assertEqual(
            runner.message_hub.get_info('best_smoothed_loss'),
            hook.best_loss)


class TestToyNetConfig(RunnerTestCase):

    def test_train_from_config(self):
        cfg = Config.fromfile(CONFIG)
        cfg.work_dir = self.temp_dir.name
        cfg.train_dataloader.dataset.data_root = DATA_ROOT
        cfg.val_dataloader.dataset.data_root = DATA_ROOT
        cfg.train_cfg.max_epochs = 2
        runner = self.build_runner(cfg)
        runner.train()
        metrics = runner.val_loop.run()
        self.assertGreaterEqual(metrics['accuracy/top1'], 90.0)
        self.assertTrue(osp.isfile(osp.join(self.temp_dir.name,
                                            'epoch_2.pth')))

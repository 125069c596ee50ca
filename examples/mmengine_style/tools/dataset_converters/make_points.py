# Copyright (c) toyproj authors. All rights reserved.
"""Write the annotation files of the toy point dataset.

Two Gaussian blobs, class 0 around (-1, -1) and class 1 around (1, 1).

Example:
    python tools/dataset_converters/make_points.py data/points
"""
import argparse
import os.path as osp

import numpy as np
from cadence.fileio import dump
from cadence.utils import mkdir_or_exist


def parse_args():
    parser = argparse.ArgumentParser(
        description='Generate the annotation files of the point dataset')
    parser.add_argument('out_dir', help='the data root to write into')
    parser.add_argument('--num-train', type=int, default=64)
    parser.add_argument('--num-val', type=int, default=32)
    parser.add_argument('--seed', type=int, default=0)
    return parser.parse_args()


def make_split(rng: np.random.Generator, num: int) -> dict:
    labels = np.arange(num) % 2
    centers = np.where(labels[:, None] == 1, 1.0, -1.0)
    points = centers + rng.normal(0.0, 0.5, size=(num, 2))
    data_list = [
        dict(point=[round(float(x), 4), round(float(y), 4)], gt_label=int(lbl))
        for (x, y), lbl in zip(points, labels)
    ]
    return dict(metainfo=dict(classes=['left', 'right']), data_list=data_list)


def main():
    args = parse_args()
    rng = np.random.default_rng(args.seed)
    ann_dir = osp.join(args.out_dir, 'annotations')
    mkdir_or_exist(ann_dir)
    for split, num in (('train', args.num_train), ('val', args.num_val)):
        dump(make_split(rng, num), osp.join(ann_dir, f'{split}.json'))
        print(f'{split}: {num} points')


if __name__ == '__main__':
    main()

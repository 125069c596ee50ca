#!/usr/bin/env python3
"""Benchmark: how fast are OpenMMLab-style config trees loaded?

Generates, in a temporary directory, N experiment configs laid out like a
real mmdet project, each at the end of a five-level ``_base_`` chain::

    experiments/exp_NNN.py              level 5 (the file that is loaded)
      variants/exp_NNN_b.py             level 4: _delete_, `_base_.x` maths
        variants/exp_NNN_a.py           level 3: list replacement, {{_base_.x}}
          families/family_K.py          level 2: picks the four bases
            _base_/models/*.py          level 1: ~115 lines each
            _base_/datasets/*.py        level 1: ~85 lines each
            _base_/schedules/*.py       level 1: ~50 lines each
            _base_/default_runtime.py   level 1: ~50 lines

Every experiment is then loaded with ``cadence.config.Config.fromfile``
(after one warm-up round) for several rounds, and the median round is
reported as configs/s (experiment files loaded per second), ms per config
and source files/s (every file of the chain counted). When mmengine is
importable in this interpreter, or when ``--mmengine-python`` names an
interpreter that has it, the same corpus is timed with
``mmengine.config.Config.fromfile`` and the ratio
``cadence configs/s / mmengine configs/s`` is printed.

Only the standard library is needed, plus cadence and/or mmengine for the
loaders that are timed.

Examples::

    python benchmarks/config_load.py
    python benchmarks/config_load.py --n 100 --rounds 7 \\
        --mmengine-python /tmp/mmvenv/bin/python --verify
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from string import Template

N_MODELS = 3
N_DATASETS = 3
N_SCHEDULES = 2
EXPERIMENTS_PER_FAMILY = 5

# --------------------------------------------------------------------------
# Templates. `$name` / `${name}` are filled in by string.Template; braces are
# left alone, so `{{_base_.x}}` can be written as is.
# --------------------------------------------------------------------------

RUNTIME = """\
# Runtime settings shared by every experiment.
default_scope = 'mmdet'

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=3),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='DetVisualizationHook', draw=False,
                       interval=50, show=False))

env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'),
)

vis_backends = [
    dict(type='LocalVisBackend'),
    dict(type='TensorboardVisBackend', save_dir='tb_logs'),
]
visualizer = dict(
    type='DetLocalVisualizer',
    vis_backends=vis_backends,
    name='visualizer',
    line_width=2,
    alpha=0.8)
log_processor = dict(
    type='LogProcessor',
    window_size=50,
    by_epoch=True,
    custom_cfg=[
        dict(data_src='loss', log_name='loss_large_window',
             method_name='mean', window_size=100),
    ])

log_level = 'INFO'
load_from = None
resume = False

randomness = dict(seed=None, deterministic=False, diff_rank_seed=False)

# Pre-computed helper values used by some experiments.
num_gpus = 8
samples_per_gpu = 2
world_batch_size = num_gpus * samples_per_gpu
"""

MODEL = """\
# Two-stage detector family, variant $k.
norm_cfg = dict(type='$norm', requires_grad=True)
model = dict(
    type='FasterRCNN',
    data_preprocessor=dict(
        type='DetDataPreprocessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        pad_size_divisor=32),
    backbone=dict(
        type='ResNet',
        depth=$depth,
        num_stages=4,
        out_indices=(0, 1, 2, 3),
        frozen_stages=1,
        norm_cfg=norm_cfg,
        norm_eval=True,
        style='pytorch',
        init_cfg=dict(type='Pretrained',
                      checkpoint='torchvision://resnet$depth')),
    neck=dict(
        type='FPN',
        in_channels=[256, 512, 1024, 2048],
        out_channels=$channels,
        num_outs=5),
    rpn_head=dict(
        type='RPNHead',
        in_channels=$channels,
        feat_channels=$channels,
        anchor_generator=dict(
            type='AnchorGenerator',
            scales=[8],
            ratios=[0.5, 1.0, 2.0],
            strides=[4, 8, 16, 32, 64]),
        bbox_coder=dict(
            type='DeltaXYWHBBoxCoder',
            target_means=[.0, .0, .0, .0],
            target_stds=[1.0, 1.0, 1.0, 1.0]),
        loss_cls=dict(
            type='CrossEntropyLoss', use_sigmoid=True, loss_weight=1.0),
        loss_bbox=dict(type='L1Loss', loss_weight=1.0)),
    roi_head=dict(
        type='StandardRoIHead',
        bbox_roi_extractor=dict(
            type='SingleRoIExtractor',
            roi_layer=dict(type='RoIAlign', output_size=7, sampling_ratio=0),
            out_channels=$channels,
            featmap_strides=[4, 8, 16, 32]),
        bbox_head=dict(
            type='Shared2FCBBoxHead',
            in_channels=$channels,
            fc_out_channels=1024,
            roi_feat_size=7,
            num_classes=80,
            bbox_coder=dict(
                type='DeltaXYWHBBoxCoder',
                target_means=[0., 0., 0., 0.],
                target_stds=[0.1, 0.1, 0.2, 0.2]),
            reg_class_agnostic=False,
            loss_cls=dict(
                type='CrossEntropyLoss', use_sigmoid=False, loss_weight=1.0),
            loss_bbox=dict(type='$bbox_loss', loss_weight=1.0))),
    # model training and testing settings
    train_cfg=dict(
        rpn=dict(
            assigner=dict(
                type='MaxIoUAssigner',
                pos_iou_thr=0.7,
                neg_iou_thr=0.3,
                min_pos_iou=0.3,
                match_low_quality=True,
                ignore_iof_thr=-1),
            sampler=dict(
                type='RandomSampler',
                num=256,
                pos_fraction=0.5,
                neg_pos_ub=-1,
                add_gt_as_proposals=False),
            allowed_border=-1,
            pos_weight=-1,
            debug=False),
        rpn_proposal=dict(
            nms_pre=2000,
            max_per_img=1000,
            nms=dict(type='nms', iou_threshold=0.7),
            min_bbox_size=0),
        rcnn=dict(
            assigner=dict(
                type='MaxIoUAssigner',
                pos_iou_thr=0.5,
                neg_iou_thr=0.5,
                min_pos_iou=0.5,
                match_low_quality=False,
                ignore_iof_thr=-1),
            sampler=dict(
                type='RandomSampler',
                num=512,
                pos_fraction=0.25,
                neg_pos_ub=-1,
                add_gt_as_proposals=True),
            pos_weight=-1,
            debug=False)),
    test_cfg=dict(
        rpn=dict(
            nms_pre=1000,
            max_per_img=1000,
            nms=dict(type='nms', iou_threshold=0.7),
            min_bbox_size=0),
        rcnn=dict(
            score_thr=0.05,
            nms=dict(type='nms', iou_threshold=0.5),
            max_per_img=100)))
"""

DATASET = """\
# Detection data settings, variant $k.
dataset_type = '$dataset_type'
data_root = 'data/$data_dir/'
backend_args = None
image_scale = ($scale_w, $scale_h)

train_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='Resize', scale=image_scale, keep_ratio=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PhotoMetricDistortion', brightness_delta=32,
         contrast_range=(0.5, 1.5), saturation_range=(0.5, 1.5),
         hue_delta=18),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile', backend_args=backend_args),
    dict(type='Resize', scale=image_scale, keep_ratio=True),
    # If you don't have a gt annotation, delete the pipeline
    dict(type='LoadAnnotations', with_bbox=True),
    dict(
        type='PackDetInputs',
        meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape',
                   'scale_factor'))
]
train_dataloader = dict(
    batch_size=2,
    num_workers=2,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    batch_sampler=dict(type='AspectRatioBatchSampler'),
    dataset=dict(
        type='RepeatDataset',
        times=$repeat,
        dataset=dict(
            type=dataset_type,
            data_root=data_root,
            ann_file='annotations/train.json',
            data_prefix=dict(img='train/'),
            filter_cfg=dict(filter_empty_gt=True, min_size=32),
            pipeline=train_pipeline,
            backend_args=backend_args)))
val_dataloader = dict(
    batch_size=1,
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/val.json',
        data_prefix=dict(img='val/'),
        test_mode=True,
        pipeline=test_pipeline,
        backend_args=backend_args))
test_dataloader = dict(
    batch_size=1,
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/test.json',
        data_prefix=dict(img='test/'),
        test_mode=True,
        pipeline=test_pipeline,
        backend_args=backend_args))

val_evaluator = dict(
    type='CocoMetric',
    ann_file=data_root + 'annotations/val.json',
    metric=['bbox'],
    format_only=False,
    classwise=$classwise,
    backend_args=backend_args)
test_evaluator = dict(
    type='CocoMetric',
    ann_file=data_root + 'annotations/test.json',
    metric=['bbox'],
    format_only=True,
    outfile_prefix='./work_dirs/$data_dir/test',
    backend_args=backend_args)
"""

SCHEDULE = """\
# Epoch-based schedule, variant $k.
max_epochs = $epochs
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=max_epochs,
                 val_interval=1)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

param_scheduler = [
    dict(
        type='LinearLR', start_factor=0.001, by_epoch=False, begin=0,
        end=500),
    dict(
        type='MultiStepLR',
        begin=0,
        end=max_epochs,
        by_epoch=True,
        milestones=[$m1, $m2],
        gamma=0.1)
]

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=$lr, momentum=0.9, weight_decay=0.0001),
    paramwise_cfg=dict(
        norm_decay_mult=0.0,
        bias_decay_mult=0.0,
        custom_keys={
            'backbone': dict(lr_mult=0.1),
            'neck': dict(lr_mult=1.0),
            'rpn_head': dict(decay_mult=1.0),
        }),
    clip_grad=None)

# Default setting for scaling LR automatically
#   - `enable` means enable scaling LR automatically or not by default.
#   - `base_batch_size` = (8 GPUs) x (2 samples per GPU).
auto_scale_lr = dict(enable=False, base_batch_size=16)

custom_hooks = [
    dict(type='NumClassCheckHook'),
    dict(
        type='EMAHook',
        ema_type='ExpMomentumEMA',
        momentum=0.0002,
        update_buffers=True,
        priority=49),
]
"""

FAMILY = """\
_base_ = [
    '../_base_/models/model_$m.py',
    '../_base_/datasets/dataset_$d.py',
    '../_base_/schedules/schedule_$s.py',
    '../_base_/default_runtime.py',
]
model = dict(roi_head=dict(bbox_head=dict(num_classes=$num_classes)))
train_dataloader = dict(batch_size=$batch_size, num_workers=4)
default_hooks = dict(logger=dict(interval=$log_interval))
"""

LEVEL3 = """\
_base_ = '../families/family_$f.py'

# Longer schedule: the parent's list is replaced, not merged.
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0,
         end=$warmup),
    dict(type='MultiStepLR', begin=0, end={{_base_.max_epochs}},
         by_epoch=True, milestones=[$m1, $m2], gamma=0.1),
]
val_evaluator = dict(metric=['bbox', 'proposal'])
test_evaluator = {{_base_.val_evaluator}}
auto_scale_lr = dict(enable=True)
"""

LEVEL4 = """\
_base_ = ['./exp_${i}_a.py']

model = dict(
    backbone=dict(
        _delete_=True,
        type='ResNeXt',
        depth=_base_.model.backbone.depth,
        groups=$groups,
        base_width=4,
        num_stages=4,
        out_indices=(0, 1, 2, 3),
        frozen_stages=1,
        norm_cfg=dict(type='BN', requires_grad=True),
        style='pytorch'),
    neck=dict(out_channels=_base_.model.neck.out_channels))
optim_wrapper = dict(
    optimizer=dict(lr=_base_.optim_wrapper.optimizer.lr * $lr_scale),
    clip_grad=dict(_delete_=True, max_norm=35, norm_type=2))
train_pipeline = _base_.train_pipeline[:-1] + [
    dict(type='RandomErasing', n_patches=(0, $patches), ratio=(0, 0.2)),
    dict(type='PackDetInputs'),
]
"""

LEVEL5 = """\
_base_ = '../variants/exp_${i}_b.py'

train_dataloader = dict(
    dataset=dict(dataset=dict(pipeline={{_base_.train_pipeline}})))
test_dataloader = dict(dataset=dict(ann_file='annotations/test_$i.json'))
default_hooks = dict(
    checkpoint=dict(interval=$ckpt, save_best='coco/bbox_mAP'),
    visualization=dict(_delete_=True, type='DetVisualizationHook',
                       draw=True, interval=$vis))
work_dir = './work_dirs/exp_$i'
"""


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def generate_corpus(root, n):
    """Write the corpus under ``root``; return the experiment paths."""
    _write(os.path.join(root, "_base_", "default_runtime.py"), RUNTIME)
    for k in range(N_MODELS):
        _write(
            os.path.join(root, "_base_", "models", f"model_{k}.py"),
            Template(MODEL).substitute(
                k=k,
                depth=(50, 101, 152)[k],
                norm=("BN", "SyncBN", "GN")[k],
                channels=(256, 256, 128)[k],
                bbox_loss=("L1Loss", "SmoothL1Loss", "GIoULoss")[k],
            ),
        )
    for k in range(N_DATASETS):
        _write(
            os.path.join(root, "_base_", "datasets", f"dataset_{k}.py"),
            Template(DATASET).substitute(
                k=k,
                dataset_type=("CocoDataset", "LVISV1Dataset", "CityscapesDataset")[k],
                data_dir=("coco", "lvis_v1", "cityscapes")[k],
                scale_w=(1333, 1333, 2048)[k],
                scale_h=(800, 800, 1024)[k],
                repeat=(1, 2, 8)[k],
                classwise=(False, True, True)[k],
            ),
        )
    for k in range(N_SCHEDULES):
        _write(
            os.path.join(root, "_base_", "schedules", f"schedule_{k}.py"),
            Template(SCHEDULE).substitute(
                k=k, epochs=(12, 24)[k], m1=(8, 16)[k], m2=(11, 22)[k], lr=(0.02, 0.01)[k]
            ),
        )
    n_families = max(1, (n + EXPERIMENTS_PER_FAMILY - 1) // EXPERIMENTS_PER_FAMILY)
    for f in range(n_families):
        _write(
            os.path.join(root, "families", f"family_{f}.py"),
            Template(FAMILY).substitute(
                m=f % N_MODELS,
                d=(f // N_MODELS) % N_DATASETS,
                s=f % N_SCHEDULES,
                num_classes=(80, 1203, 8)[(f // N_MODELS) % N_DATASETS],
                batch_size=2 + f % 3,
                log_interval=50 + 10 * (f % 4),
            ),
        )
    experiments = []
    for e in range(n):
        i = f"{e:03d}"
        _write(
            os.path.join(root, "variants", f"exp_{i}_a.py"),
            Template(LEVEL3).substitute(
                f=e // EXPERIMENTS_PER_FAMILY,
                warmup=250 + 50 * (e % 5),
                m1=6 + e % 3,
                m2=10 + e % 2,
            ),
        )
        _write(
            os.path.join(root, "variants", f"exp_{i}_b.py"),
            Template(LEVEL4).substitute(
                i=i, groups=(32, 64)[e % 2], lr_scale=(0.5, 1.0, 2.0)[e % 3], patches=3 + e % 4
            ),
        )
        path = os.path.join(root, "experiments", f"exp_{i}.py")
        _write(path, Template(LEVEL5).substitute(i=i, ckpt=1 + e % 3, vis=25 * (1 + e % 4)))
        experiments.append(path)
    return experiments


def corpus_stats(root):
    files = lines = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".py"):
                files += 1
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    lines += sum(1 for _ in f)
    return files, lines


# Each experiment reads 8 files: itself, two variants, a family, 4 bases.
FILES_PER_EXPERIMENT = 8


def _digest(value):
    """A digest of a to_dict() result that tells tuples from lists."""

    def enc(v):
        if isinstance(v, dict):
            return {"d": [[enc(k), enc(x)] for k, x in v.items()]}
        if isinstance(v, tuple):
            return {"t": [enc(x) for x in v]}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if v is None or isinstance(v, (bool, int, float, str)):
            return [type(v).__name__, v]
        return ["object", repr(v)]

    text = json.dumps(enc(value), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def time_loader(loader, experiments, rounds, warmup=1, verify=False):
    """Load the experiments ``warmup + rounds`` times with ``loader``.

    ``loader`` is ``'cadence'`` or ``'mmengine'``. Returns a dict with the
    seconds of each timed round, the loader's version and, with
    ``verify``, a digest of each experiment's ``to_dict()``.
    """
    if loader == "cadence":
        import cadence
        from cadence.config import Config

        version = getattr(cadence, "__version__", "?")
    elif loader == "mmengine":
        import mmengine
        from mmengine.config import Config

        version = mmengine.__version__
    else:
        raise ValueError(loader)

    # mmengine logs a line per config in some situations; keep it quiet.
    import logging

    logging.disable(logging.WARNING)
    try:
        for _ in range(warmup):
            for path in experiments:
                Config.fromfile(path)
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            for path in experiments:
                Config.fromfile(path)
            times.append(time.perf_counter() - start)
        digests = None
        if verify:
            digests = [_digest(Config.fromfile(path).to_dict()) for path in experiments]
    finally:
        logging.disable(logging.NOTSET)
    return dict(
        loader=loader,
        version=str(version),
        python=platform.python_version(),
        times=times,
        digests=digests,
    )


def time_in_subprocess(python, loader, corpus, experiments, rounds, warmup, verify):
    cmd = [
        python,
        os.path.abspath(__file__),
        "--worker",
        loader,
        "--corpus",
        corpus,
        "--n",
        str(len(experiments)),
        "--rounds",
        str(rounds),
        "--warmup",
        str(warmup),
    ]
    if verify:
        cmd.append("--verify")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"cannot run {python}: {e}") from e
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    # The result is the last line; loaders may print before it.
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _importable(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _experiment_paths(corpus, n):
    return [os.path.join(corpus, "experiments", f"exp_{e:03d}.py") for e in range(n)]


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Time Config.fromfile on a generated OpenMMLab-style "
        "corpus (cadence, and mmengine when available)."
    )
    parser.add_argument("--n", type=int, default=50, help="number of experiments (50)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (1)")
    parser.add_argument(
        "--mmengine-python",
        metavar="PATH",
        help="interpreter with mmengine installed; the mmengine timing "
        "runs in a subprocess with it on the same corpus",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="also check that cadence and mmengine give the same to_dict()",
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="write the corpus to DIR and keep it (default: a temporary directory that is removed)",
    )
    parser.add_argument("--worker", choices=["cadence", "mmengine"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.n < 1 or args.rounds < 1 or args.warmup < 0:
        parser.error("--n and --rounds must be >= 1, --warmup >= 0")

    if args.worker:  # subprocess mode: time one loader, print JSON
        result = time_loader(
            args.worker,
            _experiment_paths(args.corpus, args.n),
            args.rounds,
            args.warmup,
            args.verify,
        )
        print(json.dumps(result))
        return 0

    if args.keep:
        corpus = os.path.abspath(args.keep)
        if os.path.exists(corpus):
            shutil.rmtree(corpus)
        os.makedirs(corpus)
        cleanup = None
    else:
        corpus = tempfile.mkdtemp(prefix="cadence-config-bench-")
        cleanup = corpus
    try:
        experiments = generate_corpus(corpus, args.n)
        files, lines = corpus_stats(corpus)
        print(
            f"corpus: {args.n} experiments with 5-level _base_ chains, "
            f"{files} files, {lines} lines" + (f" ({corpus})" if args.keep else "")
        )
        print(f"rounds: {args.rounds} timed (median reported), {args.warmup} warm-up")

        results = []
        if _importable("cadence"):
            results.append(
                time_loader("cadence", experiments, args.rounds, args.warmup, args.verify)
            )
        else:
            print("cadence is not importable here: skipped")
        if args.mmengine_python:
            try:
                results.append(
                    time_in_subprocess(
                        args.mmengine_python,
                        "mmengine",
                        corpus,
                        experiments,
                        args.rounds,
                        args.warmup,
                        args.verify,
                    )
                )
            except RuntimeError as e:
                print(f"mmengine timing failed: {e}", file=sys.stderr)
                return 2
        elif _importable("mmengine"):
            results.append(
                time_loader("mmengine", experiments, args.rounds, args.warmup, args.verify)
            )
        else:
            print(
                "mmengine is not importable here and --mmengine-python was not given: no comparison"
            )
        if not results:
            print("nothing to time")
            return 1

        print()
        header = (
            f"{'loader':<10}{'version':<10}{'python':<9}"
            f"{'configs/s':>11}{'ms/config':>11}{'src files/s':>13}"
            f"{'best ms/cfg':>13}"
        )
        print(header)
        print("-" * len(header))
        rate = {}
        for r in results:
            median = statistics.median(r["times"])
            best = min(r["times"])
            rate[r["loader"]] = args.n / median
            print(
                f"{r['loader']:<10}{r['version']:<10}{r['python']:<9}"
                f"{args.n / median:>11.1f}"
                f"{1000 * median / args.n:>11.2f}"
                f"{FILES_PER_EXPERIMENT * args.n / median:>13.1f}"
                f"{1000 * best / args.n:>13.2f}"
            )
        if "cadence" in rate and "mmengine" in rate:
            print(
                f"\nratio cadence/mmengine (configs/s): {rate['cadence'] / rate['mmengine']:.2f}x"
            )

        status = 0
        if args.verify:
            by = {r["loader"]: r["digests"] for r in results}
            if "cadence" in by and "mmengine" in by:
                bad = [
                    os.path.basename(p)
                    for p, a, b in zip(experiments, by["cadence"], by["mmengine"])
                    if a != b
                ]
                if bad:
                    print(f"verify: {len(bad)} experiments differ: {', '.join(bad[:10])}")
                    status = 1
                else:
                    print(f"verify: all {args.n} to_dict() results match")
            else:
                print("verify: needs both cadence and mmengine")
        return status
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

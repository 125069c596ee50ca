#!/usr/bin/env python3
"""Regenerate the mmengine reference dicts for the OpenMMLab parity test.

Run with an interpreter that has mmengine installed (not cadence's)::

    /tmp/mmvenv/bin/python tests/config/make_mmengine_expected.py
    /tmp/mmvenv/bin/python tests/config/make_mmengine_expected.py --check

For every experiment listed in ``EXPERIMENTS`` below this loads the config
with ``mmengine.config.Config.fromfile``, encodes ``cfg.to_dict()`` with
``_mmengine_json.encode`` and writes
``data/openmmlab_expected/<name>.json``. ``--check`` writes nothing and exits
non-zero when a committed file differs from what would be written.

Environment used while loading (the parity test sets exactly the same):

* ``CADENCE_TEST_ROOT`` is removed from the environment, so
  ``{{$CADENCE_TEST_ROOT:/data/default}}`` expands to its default;
* ``CADENCE_TEST_NUM=7`` is set, so ``{{'$CADENCE_TEST_NUM:4'}}`` expands to
  ``7`` rather than to its default ``4``.

The corpus is loaded twice, in place and from a copy in a temporary
directory (which is how the parity test loads it). Both results must be
identical once the corpus directory is replaced by ``<CORPUS>``; this proves
that no machine-specific path leaks into the expected files.

The pure-Python configs under ``data/openmmlab_pure`` import ``read_base``
from ``mmengine.config``; the parity test rewrites that import to
``cadence.config`` in its copy of the corpus.
"""

import argparse
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / 'data'
EXPECTED_DIR = DATA_DIR / 'openmmlab_expected'
CORPUS_SUBDIRS = ('openmmlab', 'openmmlab_pure')

# Environment the configs are loaded under: names to set and names to unset.
ENV_SET = {'CADENCE_TEST_NUM': '7'}
ENV_UNSET = ('CADENCE_TEST_ROOT', )

# name -> config path relative to DATA_DIR. Everything else in the corpus is
# a base file that only makes sense through these experiments.
EXPERIMENTS = {
    # mmdet-like, `_base_` chains up to five levels deep
    'faster-rcnn_r50_fpn_1x_coco':
    'openmmlab/faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py',
    'faster-rcnn_r101_fpn_1x_coco':
    'openmmlab/faster_rcnn/faster-rcnn_r101_fpn_1x_coco.py',
    'faster-rcnn_r101_fpn_2x_coco':
    'openmmlab/faster_rcnn/faster-rcnn_r101_fpn_2x_coco.py',
    'faster-rcnn_x101-64x4d_fpn_2x_coco':
    'openmmlab/faster_rcnn/faster-rcnn_x101-64x4d_fpn_2x_coco.py',
    'faster-rcnn_r50_fpn_ohem-amp_1x_coco':
    'openmmlab/faster_rcnn/faster-rcnn_r50_fpn_ohem-amp_1x_coco.py',
    'faster-rcnn_r50_fpn_1x_coco_local':
    'openmmlab/faster_rcnn/faster-rcnn_r50_fpn_1x_coco_local.py',
    # mmpretrain-like
    'resnet50_8xb32_in1k': 'openmmlab/resnet/resnet50_8xb32_in1k.py',
    'resnet101_8xb32_in1k': 'openmmlab/resnet/resnet101_8xb32_in1k.py',
    'resnet50_8xb32-coslr_in1k':
    'openmmlab/resnet/resnet50_8xb32-coslr_in1k.py',
    'resnet50_8xb32_in1k_tuned':
    'openmmlab/resnet/resnet50_8xb32_in1k_tuned.py',
    'resnet50_b32x8_imagenet': 'openmmlab/resnet/resnet50_b32x8_imagenet.py',
    # mmseg-like, with JSON and YAML bases and experiments
    'upernet_r50_4xb4-80k_ade20k-512x512':
    'openmmlab/upernet/upernet_r50_4xb4-80k_ade20k-512x512.py',
    'upernet_r101_4xb4-80k_ade20k-512x512':
    'openmmlab/upernet/upernet_r101_4xb4-80k_ade20k-512x512.py',
    'upernet_r50_4xb4-160k_ade20k-512x512_json':
    'openmmlab/upernet/upernet_r50_4xb4-160k_ade20k-512x512.json',
    'upernet_r101_4xb2-40k_ade20k-512x512_yaml':
    'openmmlab/upernet/upernet_r101_4xb2-40k_ade20k-512x512.yaml',
    # pure-Python style (`with read_base():`)
    'pure_resnet18_8xb16_cifar10':
    'openmmlab_pure/resnet/resnet18_8xb16_cifar10.py',
    'pure_resnet34_8xb16_cifar10':
    'openmmlab_pure/resnet/resnet34_8xb16_cifar10.py',
    'pure_resnet34_8xb16_cifar10_adamw':
    'openmmlab_pure/resnet/resnet34_8xb16_cifar10_adamw.py',
    'pure_resnet18_8xb16_cifar10_linear-neck':
    'openmmlab_pure/resnet/resnet18_8xb16_cifar10_linear-neck.py',
}


def _load_encoder():
    spec = importlib.util.spec_from_file_location(
        'cadence_tests_mmengine_json', HERE / '_mmengine_json.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mj = _load_encoder()


def _set_env():
    for name in ENV_UNSET:
        os.environ.pop(name, None)
    os.environ.update(ENV_SET)


def _load_all(data_dir, strict=True):
    """Load every experiment under ``data_dir``; return name -> record."""
    import mmengine
    from mmengine.config import Config

    prefixes = mj.corpus_prefixes(data_dir)
    records = {}
    for name, rel in EXPERIMENTS.items():
        path = os.path.join(os.path.abspath(data_dir), rel)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            cfg = Config.fromfile(path)
        deprecations = [
            mj.normalise_str(str(w.message), prefixes) for w in caught
            if issubclass(w.category, DeprecationWarning)
            and 'will be deprecated' in str(w.message)
        ]
        records[name] = {
            'name': name,
            'config': rel,
            'mmengine_version': mmengine.__version__,
            'python_version': platform.python_version(),
            'env': {
                'set': dict(ENV_SET),
                'unset': list(ENV_UNSET)
            },
            'deprecation_warnings': deprecations,
            'cfg': mj.encode(cfg.to_dict(), prefixes, strict=strict),
        }
    return records


def _dumps(record):
    return json.dumps(record, indent=2, allow_nan=False) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--check',
        action='store_true',
        help='compare with the committed files instead of writing them')
    args = parser.parse_args(argv)

    try:
        import mmengine  # noqa: F401
    except ImportError:
        sys.exit('mmengine is not importable by this interpreter; run this '
                 'script with the reference venv (e.g. /tmp/mmvenv/bin/python)')

    _set_env()
    in_place = _load_all(DATA_DIR)
    with tempfile.TemporaryDirectory(prefix='cadence-parity-') as tmp:
        for sub in CORPUS_SUBDIRS:
            shutil.copytree(DATA_DIR / sub, Path(tmp) / sub)
        copied = _load_all(tmp)
    for name in EXPERIMENTS:
        diffs = mj.compare(in_place[name], copied[name])
        if diffs:
            sys.exit(f'{name}: result depends on the corpus location:\n  ' +
                     '\n  '.join(diffs))

    EXPECTED_DIR.mkdir(exist_ok=True)
    stale = []
    for name, record in in_place.items():
        target = EXPECTED_DIR / f'{name}.json'
        text = _dumps(record)
        if args.check:
            if not target.exists() or target.read_text() != text:
                stale.append(target.name)
        else:
            target.write_text(text)
    known = {f'{name}.json' for name in EXPERIMENTS}
    extra = sorted(p.name for p in EXPECTED_DIR.glob('*.json')
                   if p.name not in known)
    if args.check:
        if stale or extra:
            print('out of date: ' + ', '.join(stale + extra))
            return 1
        print(f'{len(EXPERIMENTS)} expected files are up to date')
        return 0
    for name in extra:
        (EXPECTED_DIR / name).unlink()
    print(f'wrote {len(in_place)} files to {EXPECTED_DIR} '
          f'(mmengine {in_place[next(iter(in_place))]["mmengine_version"]})')
    return 0


if __name__ == '__main__':
    sys.exit(main())

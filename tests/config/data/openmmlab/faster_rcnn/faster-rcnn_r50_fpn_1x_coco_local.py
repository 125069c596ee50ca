# A machine-local variant: data location and loader sizes come from the
# environment, output and checkpoint paths are derived from this file's name.
_base_ = './faster-rcnn_r50_fpn_1x_coco.py'

data_root = '{{$CADENCE_TEST_ROOT:/data/default}}/coco/'

train_dataloader = dict(
    batch_size={{'$CADENCE_TEST_NUM:4'}},
    num_workers={{'$CADENCE_TEST_NUM:4'}},
    dataset=dict(data_root=data_root))
val_dataloader = dict(
    num_workers={{'$CADENCE_TEST_NUM:4'}},
    dataset=dict(data_root=data_root))
test_dataloader = val_dataloader

work_dir = './work_dirs/{{fileBasenameNoExtension}}'
load_from = '{{ fileDirname }}/../checkpoints/faster_rcnn_r50_fpn_1x_coco.pth'
experiment = dict(
    config_file='{{fileBasename}}',
    config_ext='{{fileExtname}}',
    config_dir='{{fileDirname}}',
    tag='{{fileBasenameNoExtension}}-seed0')

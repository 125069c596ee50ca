# A tiny box-regression task on generated 32x32 images, each with one bright rectangle.
#   cadence train examples/detection_toy/config.py
#   cadence test examples/detection_toy/config.py work_dirs/detection_toy/epoch_12.pth --tta
# (from the repository root). The annotation files are written under data_root on first use.
custom_imports = dict(
    imports=[
        "examples.detection_toy.data",
        "examples.detection_toy.model",
        "examples.detection_toy.evaluation",
    ],
    allow_failed_imports=False,
)
default_scope = "cadence"
work_dir = "./work_dirs/detection_toy"
data_root = "work_dirs/detection_toy/data/"
img_size = 32

train_pipeline = [
    dict(type="RenderToyImage"),
    dict(type="ToyRandomFlip", prob=0.5),
    dict(type="PackToyInputs"),
]
test_pipeline = [dict(type="RenderToyImage"), dict(type="PackToyInputs")]
# `cadence test ... --tta`: every image is tested flipped and as it is; the TTA model
# mirrors the flipped view's box back and averages the two.
tta_pipeline = [
    dict(type="RenderToyImage"),
    dict(
        type="TestTimeAug",
        transforms=[
            [dict(type="ToyRandomFlip", prob=1.0), dict(type="ToyRandomFlip", prob=0.0)],
            [dict(type="PackToyInputs")],
        ],
    ),
]
tta_model = dict(type="ToyFlipTTAModel")


def _loader(split, num_samples, seed, pipeline, shuffle, batch_size):
    return dict(
        batch_size=batch_size,
        num_workers=0,
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        collate_fn=dict(type="default_collate"),
        dataset=dict(
            type="ToyBoxDataset",
            data_root=data_root,
            ann_file=f"{split}.json",
            num_samples=num_samples,
            generate_seed=seed,
            img_size=img_size,
            pipeline=pipeline,
            test_mode=split != "train",
        ),
    )


train_dataloader = _loader("train", 1024, 1, train_pipeline, True, 32)
val_dataloader = _loader("val", 128, 2, test_pipeline, False, 64)
test_dataloader = _loader("test", 256, 3, test_pipeline, False, 64)
val_evaluator = dict(type="ToyBoxIoU")
test_evaluator = val_evaluator

model = dict(type="ToyBoxRegressor", channels=8, img_size=img_size)
optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="Adam", lr=1e-2))
param_scheduler = [dict(type="CosineAnnealingLR", T_max=12, by_epoch=True, begin=0, end=12,
                        convert_to_iter_based=True)]  # fmt: skip
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=12, val_interval=4)
val_cfg = dict()
test_cfg = dict()

# Validation draws its first images with the true (green) and predicted (red) box into
# <work_dir>/<timestamp>/vis_data/vis_image/.
visualizer = dict(type="ToyBoxVisualizer", vis_backends=[dict(type="LocalVisBackend")])
custom_hooks = [dict(type="ToyVisualizationHook", max_images=4)]
default_hooks = dict(
    runtime_info=dict(type="RuntimeInfoHook"),
    timer=dict(type="IterTimerHook"),
    logger=dict(type="LoggerHook", interval=16),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", interval=4, max_keep_ckpts=1),
)
randomness = dict(seed=0)
env_cfg = dict(cudnn_benchmark=False)

model = dict(
    type="DigitsCNN",
    channels=32,
    num_classes=10,
    # Normalise pixels (0..16) on the model's device, for training and inference alike.
    data_preprocessor=dict(type="ImgDataPreprocessor", mean=[4.9], std=[6.0]),
)

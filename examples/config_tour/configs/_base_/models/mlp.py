model = dict(
    type="TourMLP",
    in_features=64,
    hidden=dict(width=128, depth=2, dropout=0.1),
    num_classes=10,
)

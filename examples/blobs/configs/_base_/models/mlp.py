model = dict(type="MLPClassifier", in_dim=16, hidden=128, num_classes=8, dropout=0.1)

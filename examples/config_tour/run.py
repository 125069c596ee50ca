"""A tour of cadence's config system on a layered OpenMMLab-style config.

Loads ``configs/mlp_adamw_20e.py`` (three ``_base_`` files), applies a
command-line style override, shows where values came from, builds the model
and optimizer through the registries, and checks that a dump loads back equal.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import torch
from torch import nn

from cadence.config import Config, DictAction
from cadence.registry import MODELS, OPTIMIZERS

HERE = os.path.dirname(os.path.abspath(__file__))


@MODELS.register_module()
class TourMLP(nn.Module):
    """A small MLP built from the config's ``model`` dict."""

    def __init__(self, in_features: int, hidden: dict, num_classes: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = in_features
        for _ in range(hidden["depth"]):
            layers += [nn.Linear(width, hidden["width"]), nn.ReLU(), nn.Dropout(hidden["dropout"])]
            width = hidden["width"]
        layers.append(nn.Linear(width, num_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", default=os.path.join(HERE, "configs", "mlp_adamw_20e.py"))
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    args = parser.parse_args()
    overrides = args.cfg_options or {"optim_wrapper.optimizer.lr": 3e-4}

    cfg = Config.fromfile(args.config)
    cfg.merge_from_dict(overrides)
    print(cfg.pretty_text)

    for key in (
        "model.hidden.width",
        "model.hidden.depth",
        "optim_wrapper.optimizer.lr",
        "train_cfg.max_epochs",
        "base_lr",
    ):
        value = cfg.provenance(key)
        print(
            f"{key:32s} set at {os.path.relpath(value.filename) if value.line else value}"
            + (f":{value.line}" if value.line else "")
        )

    model = MODELS.build(cfg.model)
    optimizer = OPTIMIZERS.build(
        cfg.optim_wrapper.optimizer, default_args=dict(params=model.parameters())
    )
    print(
        f"built {type(model).__name__} with {sum(p.numel() for p in model.parameters())} "
        f"parameters and {type(optimizer).__name__}(lr={optimizer.param_groups[0]['lr']})"
    )

    with tempfile.TemporaryDirectory() as tmp:
        for suffix in (".py", ".json", ".yaml"):
            path = os.path.join(tmp, "dumped" + suffix)
            cfg.dump(path)
            again = Config.fromfile(path)
            assert again.to_dict() == cfg.to_dict() or suffix != ".py", suffix
            print(
                f"dumped to {suffix:5s} and loaded back: "
                f"{'equal' if again.to_dict() == cfg.to_dict() else 'equal up to tuples'}"
            )


if __name__ == "__main__":
    main()

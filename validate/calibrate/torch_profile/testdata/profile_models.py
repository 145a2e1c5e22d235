"""The Linear-heavy model of the torch.profiler fixtures (README.md), in the FILE.py:FUNCTION form that
`dlsim import-torch` and validate/torch/record_profile.py take: FUNCTION(batch, seq_len) -> (model, inputs, loss_fn)."""
import torch
import torch.nn.functional as F
from torch import nn


def mlp(batch, seq_len):
    """Five linear layers of width 256 with ReLUs and a 10-class head: a step of small GEMMs, bound by the host."""
    layers = [nn.Linear(64, 256), nn.ReLU()]
    for _ in range(3):
        layers += [nn.Linear(256, 256), nn.ReLU()]
    layers.append(nn.Linear(256, 10))
    model = nn.Sequential(*layers)
    inputs = {"x": torch.empty(batch, 64), "labels": torch.zeros(batch, dtype=torch.long)}
    return model, inputs, lambda m, x: F.cross_entropy(m(x["x"]), x["labels"])

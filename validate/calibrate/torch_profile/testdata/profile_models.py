"""The models of the torch.profiler fixtures (README.md), in the FILE.py:FUNCTION form that
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


class _Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.permute(x, self.dims)


class _StochasticDepth(nn.Module):
    """torchvision.ops.StochasticDepth's "row" mode, as ConvNeXt trains with it: empty, bernoulli_, div_, mul."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        survival = 1.0 - self.p
        noise = torch.empty([x.shape[0]] + [1] * (x.ndim - 1), dtype=x.dtype, device=x.device)
        noise = noise.bernoulli_(survival)
        noise.div_(survival)
        return x * noise


class _ConvNeXtBlock(nn.Module):
    """torchvision's CNBlock: depthwise conv, the permutes around LayerNorm and the two Linears, GELU, layer scale,
    stochastic depth, the residual."""

    def __init__(self, dim):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(dim, dim, 7, padding=3, groups=dim), _Permute([0, 2, 3, 1]),
                                   nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                                   _Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), 1e-6))
        self.stochastic_depth = _StochasticDepth(0.1)

    def forward(self, x):
        return x + self.stochastic_depth(self.layer_scale * self.block(x))


def convnext_mobilenet_v3_ops(batch, seq_len):
    """The ops of ConvNeXt's and MobileNet-V3's steps that a trace names otherwise than the recording: a ConvNeXt
    block (permutes, stochastic depth), then MobileNet-V3's in-place Hardswish, a squeeze-excitation's Hardsigmoid
    and its classifier's in-place Dropout. 8x8 images, 16 channels."""
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), _ConvNeXtBlock(16), nn.Hardswish(inplace=True),
                          nn.AdaptiveAvgPool2d(1), nn.Hardsigmoid(), nn.Flatten(1), nn.Linear(16, 16),
                          nn.Hardswish(inplace=True), nn.Dropout(p=0.2, inplace=True), nn.Linear(16, 4))
    inputs = {"x": torch.empty(batch, 3, 8, 8), "labels": torch.zeros(batch, dtype=torch.long)}
    return model, inputs, lambda m, x: F.cross_entropy(m(x["x"]), x["labels"])

#!/usr/bin/env python3
"""Ground truth for dlsim's CNN builders, measured with PyTorch (Debian's python3-torch 1.13 and
python3-torchvision 0.14, CPU).

For every CNN of dlsim's zoo and each batch size it records:
  params          learnable parameters (elements), from model.parameters()
  fwd_macs        multiply-accumulates of the Conv2d and Linear modules in one forward pass (forward hooks:
                  output elements x input channels per group x kernel area; output elements x in_features)
  saved_bytes     bytes of the distinct storages autograd saves for backward during one training-mode
                  forward pass plus cross-entropy loss, via torch.autograd.graph.saved_tensors_hooks, each
                  storage counted once, excluding parameters, buffers (batch-norm running statistics), the
                  input batch and the labels.

Usage: validate/torch/torch_reference_cnn.py [--out workloads/testdata/torch_cnn.json] [--models a,b] [--batches 1,4,32]
"""
import argparse
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


def cifar_alexnet():
    # SINGA's cuda-convnet-style CIFAR-10 AlexNet (see workloads/cnn_cifar.cc).
    return nn.Sequential(
        nn.Conv2d(3, 32, 5, padding=2), nn.MaxPool2d(3, 2, 1), nn.ReLU(inplace=True), nn.LocalResponseNorm(3),
        nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(inplace=True), nn.AvgPool2d(3, 2, 1), nn.LocalResponseNorm(3),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(inplace=True), nn.AvgPool2d(3, 2, 1),
        nn.Flatten(), nn.Linear(1024, 10))


def cifar_vgg16():
    layers, c_in = [], 3
    for si, stage in enumerate([[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]]):
        for li, c in enumerate(stage):
            layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(inplace=True)]
            if li + 1 < len(stage):
                layers.append(nn.Dropout(0.3 if si == 0 else 0.4))
            c_in = c
        layers.append(nn.MaxPool2d(2, 2))
    layers += [nn.Flatten(), nn.Dropout(0.5), nn.Linear(512, 512), nn.BatchNorm1d(512), nn.ReLU(inplace=True),
               nn.Dropout(0.5), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


class CifarBlock(nn.Module):
    def __init__(self, c_in, c, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c_in, c, 3, stride, 1), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c)
        self.short = nn.Sequential(nn.Conv2d(c_in, c, 1, stride), nn.BatchNorm2d(c)) if stride != 1 else None

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)), inplace=True)))
        y += x if self.short is None else self.short(x)
        return F.relu(y, inplace=True)


def cifar_resnet20():
    layers, c_in = [nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(inplace=True)], 16
    for st, c in enumerate([16, 32, 64]):
        for i in range(3):
            layers.append(CifarBlock(c_in, c, 2 if st > 0 and i == 0 else 1))
            c_in = c
    layers += [nn.AvgPool2d(8, 8), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


M = torchvision.models
MODELS = {
    "alexnet": (lambda: M.alexnet(), 224),
    "vgg16": (lambda: M.vgg16(), 224),
    "vgg19": (lambda: M.vgg19(), 224),
    "resnet18": (lambda: M.resnet18(), 224),
    "resnet50": (lambda: M.resnet50(), 224),
    "resnet101": (lambda: M.resnet101(), 224),
    "resnet152": (lambda: M.resnet152(), 224),
    "googlenet": (lambda: M.googlenet(aux_logits=False, init_weights=False), 224),
    "inception_v3": (lambda: M.inception_v3(aux_logits=False, init_weights=False), 299),
    "densenet121": (lambda: M.densenet121(), 224),
    "mobilenet_v2": (lambda: M.mobilenet_v2(), 224),
    "squeezenet1_1": (lambda: M.squeezenet1_1(), 224),
    "cifar-alexnet": (cifar_alexnet, 32),
    "cifar-vgg16": (cifar_vgg16, 32),
    "cifar-resnet20": (cifar_resnet20, 32),
}
CIFAR = {"cifar-alexnet", "cifar-vgg16", "cifar-resnet20"}


def storage_key(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def measure(model, size, batch):
    model.train()
    macs = [0]

    def conv_hook(m, inp, out):
        macs[0] += out.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]

    def linear_hook(m, inp, out):
        macs[0] += out.numel() * m.in_features

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))

    x = torch.randn(batch, 3, size, size)
    y = torch.randint(0, 10, (batch,))
    excluded = {storage_key(t)[0] for t in list(model.parameters()) + list(model.buffers()) + [x, y]}
    saved = {}

    def pack(t):
        ptr, nbytes = storage_key(t)
        if ptr not in excluded:
            saved[ptr] = max(nbytes, saved.get(ptr, 0))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = F.cross_entropy(model(x), y)
    total = sum(saved.values())
    for h in hooks:
        h.remove()
    del loss
    return macs[0], total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="workloads/testdata/torch_cnn.json")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,4,32", help="batch sizes of the ImageNet models (CIFAR nets: 100)")
    args = ap.parse_args()
    torch.manual_seed(0)
    result = {"torch": torch.__version__, "torchvision": torchvision.__version__, "device": "cpu", "models": {}}
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit(f"unknown model '{name}'; valid: {', '.join(MODELS)}")
        build, size = MODELS[name]
        model = build()
        entry = {"image_size": size, "params": sum(p.numel() for p in model.parameters()), "batches": {}}
        batches = [100] if name in CIFAR else [int(b) for b in args.batches.split(",")]
        for b in batches:
            macs, saved = measure(model, size, b)
            entry["batches"][str(b)] = {"fwd_macs": macs, "saved_bytes": saved}
            print(f"{name:15s} batch {b:4d} params {entry['params']:>11d} macs {macs:>15d} saved {saved:>13d}",
                  flush=True)
        result["models"][name] = entry
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

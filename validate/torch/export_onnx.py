#!/usr/bin/python3
"""Exports the torchvision CNNs (and dlsim's reference transformers) to ONNX for dlsim's importer tests.

Models are exported as they train: training=TrainingMode.TRAINING keeps BatchNormalization and Dropout nodes
(an eval-mode export folds BN into the convolutions and drops dropout), and do_constant_folding is off for
the same reason. The batch axis is dynamic, so Reshape targets are computed from Shape ops and the importer
can override the batch size. With --no-params (the default for the committed files) weights are left out of
the file and appear as graph inputs with their shapes (export_params=False): the files stay tiny.

Usage:
  validate/torch/export_onnx.py --out workloads/testdata/onnx                   # the CNNs, without weights
  validate/torch/export_onnx.py --out /tmp/dlsim-onnx --with-params squeezenet1_1
  validate/torch/export_onnx.py --out workloads/testdata/onnx --transformers    # bert-base (seq 128), gpt2-small (1024)
"""
import argparse
import os
import sys

import torch
import torchvision

CNNS = {
    "alexnet": lambda: torchvision.models.alexnet(),
    "vgg16": lambda: torchvision.models.vgg16(),
    "vgg19": lambda: torchvision.models.vgg19(),
    "resnet18": lambda: torchvision.models.resnet18(),
    "resnet50": lambda: torchvision.models.resnet50(),
    "resnet101": lambda: torchvision.models.resnet101(),
    "resnet152": lambda: torchvision.models.resnet152(),
    # dlsim's zoo builds them without the auxiliary classifiers (and without ImageNet input re-scaling).
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=False),
    "inception_v3": lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=False),
    "densenet121": lambda: torchvision.models.densenet121(),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(),
}


def export(model, example, path, with_params, opset, input_name):
    model.train()
    torch.onnx.export(model, (example,), path, export_params=with_params,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=opset, input_names=[input_name], output_names=["output"],
                      dynamic_axes={input_name: {0: "batch"}})
    print(f"{path}: {os.path.getsize(path)} bytes", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for the .onnx files")
    ap.add_argument("--with-params", action="store_true", help="keep the weights as initializers")
    ap.add_argument("--transformers", action="store_true", help="also export bert-base and gpt2-small")
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("models", nargs="*", help="CNN names (default: all)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    suffix = "_with_params" if args.with_params else ""
    names = args.models or ([] if args.transformers else list(CNNS))
    for name in names:
        if name not in CNNS:
            sys.exit(f"unknown model {name}; known: {', '.join(CNNS)}")
        size = 299 if name == "inception_v3" else 224
        export(CNNS[name](), torch.randn(1, 3, size, size), os.path.join(args.out, name + suffix + ".onnx"),
               args.with_params, args.opset, "input")
    if args.transformers:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import torch_reference_transformers as ref
        # Opset 17 has LayerNormalization; GELU is still decomposed (Div, Erf, Add, Mul, Mul / Tanh form).
        for name, cls, cfg, seq in [("bert-base", ref.Bert, ref.BERT_BASE, 128),
                                    ("gpt2-small", ref.GPT2LM, ref.GPT2_SMALL, 1024)]:
            ids = torch.randint(1, cfg["vocab"], (1, seq))
            export(cls(cfg), ids, os.path.join(args.out, name + suffix + ".onnx"), args.with_params, 17,
                   "input_ids")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch on a real GPU beside dlsim's `pytorch-caching` pool: peak reserved, peak allocated, iteration time.

Reads the JSON that validate/torch/torch_gpu_ground_truth.py wrote on the GPU machine, simulates every (model, batch)
it holds with the same optimizer (ResNet-50: SGD momentum; BERT-base: Adam, seq 128) and pool
`pytorch-caching`, once with each hardware file, and prints a Markdown table.

  results/validation/torch_comparison.py --torch results/validation/h100-sxm/torch_gpu.json [--json OUT]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from studies.dlsim import Dlsim  # noqa: E402  (the studies' one runner of dlsim)

DLSIM = Dlsim(os.path.join(ROOT, "build", "bin", "dlsim"), ROOT, 1)
HW = [("calibrated", "h100-sxm"), ("datasheet", "h100-sxm-datasheet")]


def simulate(model, batch, hw):
    optimizer = "adam" if model == "bert-base" else "sgd-momentum"
    e = {"model": model, "batch": batch, "hw": hw, "pool": "pytorch-caching", "swap": "none", "concurrency": "serial",
         "iterations": 3, "optimizer": optimizer}
    if model == "bert-base":
        e["seq_len"] = 128
    return DLSIM.json(["run"], e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch", required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    with open(args.torch) as f:
        gt = json.load(f)
    rows = []
    for r in gt["runs"]:
        if "error" in r:
            continue
        sims = {label: simulate(r["model"], r["batch"], hw) for label, hw in HW}
        rows.append({"model": r["model"], "batch": r["batch"], "optimizer_impl": r["optimizer_impl"],
                     "torch_reserved": r["max_memory_reserved"], "torch_allocated": r["max_memory_allocated"],
                     "torch_ms": r["iteration_ms_median"],
                     "sim_reserved": sims["calibrated"]["peak_reserved_bytes"],
                     "sim_live": sims["calibrated"]["peak_live_bytes"],
                     "sim_ms": {k: v["iteration_time_us"] / 1000 for k, v in sims.items()}})
    env = gt["environment"]
    print(f"PyTorch {env['torch']} (CUDA {env['cuda']}, cuDNN {env['cudnn']}) on {env['device']}; "
          f"cudnn.benchmark={env['cudnn_benchmark']}, TF32 for convolutions {env['allow_tf32_cudnn']}, "
          f"for matmuls {env['allow_tf32_matmul']}.\n")
    print("| model | batch | optimizer | PyTorch reserved | dlsim reserved | error % | PyTorch allocated | "
          "dlsim live | error % | PyTorch ms | dlsim ms (calibrated) | dlsim ms (datasheet) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        er = (x["sim_reserved"] - x["torch_reserved"]) / x["torch_reserved"] * 100
        ea = (x["sim_live"] - x["torch_allocated"]) / x["torch_allocated"] * 100
        print(f"| {x['model']} | {x['batch']} | {x['optimizer_impl']} | {x['torch_reserved']:,} | "
              f"{x['sim_reserved']:,} | {er:+.1f} | {x['torch_allocated']:,} | {x['sim_live']:,} | {ea:+.1f} | "
              f"{x['torch_ms']:.2f} | {x['sim_ms']['calibrated']:.2f} | {x['sim_ms']['datasheet']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()

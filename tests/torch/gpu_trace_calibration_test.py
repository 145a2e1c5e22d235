#!/usr/bin/python3
"""ctest: `dlsim calibrate --torch-profile` on a real GPU trace brings the step it was fitted on to its measured
device time.

  gpu_trace_calibration_test.py DLSIM_BINARY

The trace is ResNet-18's training step at batch 32 on a lent H200 (results/fidelity/data/h200-2026-11-27b/:
torch.profiler with CUDA activities, PyTorch 2.11; the whole step's CUDA-graph replay measured 7.40 ms). Calibrated
from `h200`, dlsim's cuda-graph step of the zoo's resnet18 at batch 32 must come within 3 % of that replay: each
corrected kernel class's total is its measured total, so what is left is the ops no kernel of the trace was matched
to and the device's fixed cost, which calibrate does not scale. Needs no GPU and no torch (gzip only).
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "results", "fidelity", "data", "h200-2026-11-27b")


def main():
    dlsim = sys.argv[1]
    profiles = json.load(open(os.path.join(DATA, "step-profiles.json"), encoding="utf-8"))["records"]
    replay_ms = next(r["graph_replay_ms_median"] for r in profiles if r["case"] == "resnet18-b32")
    with tempfile.TemporaryDirectory(prefix="dlsim-gpu-trace-") as tmp:
        trace = os.path.join(tmp, "resnet18-b32.json")
        with gzip.open(os.path.join(DATA, "traces", "resnet18-b32.json.gz"), "rb") as src, open(trace, "wb") as dst:
            dst.write(src.read())
        exp = os.path.join(tmp, "exp.yaml")
        # The measured step's SGD had weight decay 1e-4 (torch_step_profile.py): its fourth foreach pass is in the
        # trace, and the experiment runs it too.
        base = {"model": "resnet18", "batch": 32, "pool": "pytorch-caching", "swap": "none", "concurrency": "serial",
                "iterations": 2, "weight_decay": 1e-4}
        with open(exp, "w", encoding="utf-8") as f:
            json.dump(dict(base, hw="h200"), f)
        out = os.path.join(tmp, "calibrated.yaml")
        r = subprocess.run([dlsim, "calibrate", "--torch-profile", trace, "--experiment", exp, "--hw", "h200",
                            "--out", out], capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            sys.exit(f"FAILED: calibrate exited {r.returncode}: {r.stderr}")
        if "kernel_model class conv_fwd.tf32.spatial" not in r.stdout:
            sys.exit(f"FAILED: the GPU trace's kernels corrected no convolution class:\n{r.stdout}")
        graph = os.path.join(tmp, "graph.yaml")
        with open(graph, "w", encoding="utf-8") as f:
            json.dump(dict(base, hw=out, launch="cuda-graph"), f)
        r = subprocess.run([dlsim, "run", graph, "--json"], capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            sys.exit(f"FAILED: dlsim run exited {r.returncode}: {r.stderr}")
        got_ms = json.loads(r.stdout)["iteration_time_us"] / 1000.0
    err = got_ms / replay_ms - 1
    print(f"resnet18 b32 cuda-graph step, calibrated on its H200 trace: {got_ms:.3f} ms against the measured "
          f"replay {replay_ms:.3f} ms ({100 * err:+.1f} %)")
    if abs(err) > 0.03:
        sys.exit("FAILED: more than 3 % from the measured replay")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""ctest: validate/torch/torch_step_profile.py reads its cases (torchvision CNNs and Hugging Face LLMs) and refuses
bad ones with a message naming the case, before it touches a GPU; without one it says so and exits 3.

The measurement itself needs a GPU (results/fidelity/data/*/README.md say how the committed runs were taken); the
child's CPU path runs here when the Python has torchvision (a ResNet-18 step at batch 2 on 64-pixel images is not
one of its cases, so the child is driven directly).
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "validate", "torch", "torch_step_profile.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import torch_step_profile as tsp  # noqa: E402  (imports no torch at module level)


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)


def main():
    c = tsp.parse_case("resnet50:32")
    check(c == {"spec": "torchvision:resnet50", "batch": 32, "seq_len": 0, "precision": "fp32",
                "optimizer": "sgd-momentum", "case": "resnet50-b32"}, f"torchvision case parsed as {c}")
    c = tsp.parse_case("hf:workloads/testdata/llama_configs/gpt2.config.json:8:1024:mixed-bf16:adamw")
    check(c["spec"] == "hf:workloads/testdata/llama_configs/gpt2.config.json" and c["batch"] == 8
          and c["seq_len"] == 1024 and c["precision"] == "mixed-bf16" and c["optimizer"] == "adamw"
          and c["case"] == "gpt2-b8-s1024-mixed-bf16", f"hf case parsed as {c}")
    for bad, says in (("hf:x.json:8:1024:fp64:adamw", "PRECISION"), ("hf:x.json:8:1024", "expected hf:"),
                      ("hf:x.json:eight:1024:fp32:adamw", "eight"), ("resnet50", "MODEL:BATCH"), ("resnet50:0", "MODEL:BATCH")):
        try:
            tsp.parse_case(bad)
            check(False, f"'{bad}' was accepted")
        except ValueError as e:
            check(says in str(e), f"'{bad}': the message '{e}' lacks '{says}'")
    for m in tsp.DEFAULT_CASES.split(","):
        tsp.parse_case(m)  # the default list parses

    p = subprocess.run([sys.executable, SCRIPT, "--out", "/dev/null", "--cases", "resnet50:32,hf:a.json:1:8:fp16:sgd"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "hf:a.json:1:8:fp16:sgd" in p.stderr, f"bad --cases: exit {p.returncode}, {p.stderr}")

    try:
        import torch
    except ImportError:
        print("torch_step_profile_test: parsing checked; the rest skipped: %s has no torch" % sys.executable)
        return 0
    if not torch.cuda.is_available():
        p = subprocess.run([sys.executable, SCRIPT, "--out", "/dev/null", "--cases", "resnet18:2"],
                           capture_output=True, text=True)
        check(p.returncode == 3 and "no GPU" in p.stderr, f"without a GPU: exit {p.returncode}, {p.stderr}")
    try:
        import torchvision  # noqa: F401
    except ImportError:
        print("torch_step_profile_test: the CPU child skipped: no torchvision")
        return 0
    p = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--child", "resnet18:2", "--warmup", "1",
                        "--timed", "2", "--profiled", "1"], capture_output=True, text=True, cwd=ROOT)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    check(p.returncode == 0 and lines, f"the CPU child failed: exit {p.returncode}\n{p.stderr[-2000:]}")
    rec = json.loads(lines[-1])
    check(rec["case"] == "resnet18-b2" and rec["eager_steps"] == 2 and rec["eager_wall_ms_median"] > 0,
          f"the CPU child's record: {rec}")
    if torch.autograd.kineto_available():  # Debian's 1.13 has no Kineto: its trace holds no aten ops
        check(any(op[0] in ("aten::convolution", "aten::conv2d") for op in rec["host_top_ops"]),
              f"no convolution among the host's top ops: {rec['host_top_ops'][:5]}")
    print("torch_step_profile_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

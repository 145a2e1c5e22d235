#!/usr/bin/python3
"""ctest: validate/torch/hf_capture_path.py shows transformers' static mask path under a forced capture flag.

  hf_capture_path_test.py

results/fidelity/llm-steps.md explains the LLMs' CUDA-graph replays by it: while a stream captures, a causal LM
called without an attention mask passes SDPA a boolean mask and no is_causal, and a GQA model (Qwen2.5) repeats its
key and value instead of passing enable_gqa. This checks that the script still finds that, for GPT-2 and Qwen2.5,
with the installed transformers. The Python is $DLSIM_PYTHON, else the one running this script; exits 77 (ctest:
skipped), saying why, when that Python has no torch or no transformers (Debian's python3 has no transformers).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "validate", "torch", "hf_capture_path.py")
CONFIGS = os.path.join(ROOT, "workloads", "testdata", "llama_configs")


def main():
    python = os.environ.get("DLSIM_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import torch, transformers"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("skipped: %s has no torch or no transformers (set DLSIM_PYTHON to a Python with PyTorch 2.x and "
              "transformers 5)" % python)
        return 77
    qwen, gpt2 = os.path.join(CONFIGS, "Qwen2.5-0.5B.config.json"), os.path.join(CONFIGS, "gpt2.config.json")
    p = subprocess.run([python, SCRIPT, qwen, gpt2], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("FAILED (exit %d)\n%s%s" % (p.returncode, p.stdout, p.stderr))
    lines = p.stdout.splitlines()
    calls = {}
    for i, line in enumerate(lines):
        if line.endswith(".config.json:"):
            calls[os.path.basename(line[:-1])] = (lines[i + 1], lines[i + 2])
    failures = []
    for name in ("Qwen2.5-0.5B.config.json", "gpt2.config.json"):
        if name not in calls:
            failures.append("%s: no output" % name)
            continue
        eager, capturing = calls[name]
        if "mask None" not in eager or "is_causal True" not in eager:
            failures.append("%s eager: expected no mask and is_causal: %s" % (name, eager))
        if "mask (2, 1, 64, 64) bool" not in capturing or "is_causal False" not in capturing:
            failures.append("%s capturing: expected a (2, 1, 64, 64) bool mask and no is_causal: %s"
                            % (name, capturing))
    q_eager, q_capturing = calls.get("Qwen2.5-0.5B.config.json", ("", ""))
    if "k (2, 2, 64, 64)" not in q_eager or "enable_gqa True" not in q_eager:
        failures.append("Qwen eager: expected 2 key heads and enable_gqa: %s" % q_eager)
    if "k (2, 14, 64, 64)" not in q_capturing or "enable_gqa False" not in q_capturing:
        failures.append("Qwen capturing: expected the key repeated to 14 heads, no enable_gqa: %s" % q_capturing)
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures) + "\n" + p.stdout)
    print("hf_capture_path_test: ok (%s)" % lines[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())

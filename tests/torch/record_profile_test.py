#!/usr/bin/python3
"""ctest: validate/torch/record_profile.py records a trace that `dlsim calibrate --torch-profile` matches and fits.

  record_profile_test.py DLSIM_BINARY

The Python that records is $DLSIM_PYTHON (as for dlsim import-torch), else the one running this script (Debian's
python3). The trace is of the front end's tiny MLP at batch 2 on the CPU
(frontend/torch/testdata/tiny_steps.py:tiny_mlp), and the graph it is matched to is the same step recorded by dlsim
import-torch (workloads/testdata/torch_steps/tiny_mlp.torchstep.json, recorded with PyTorch 1.13: a profile and a
step recorded by different PyTorch versions still match op for op). Exits 77 (ctest: skipped), saying why, when that Python has no torch or its profiler has
no Kineto (Debian's torch 1.13 is built without it, and its legacy profiler records no shapes).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECORD = os.path.join(ROOT, "validate", "torch", "record_profile.py")


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("FAILED (exit %d): %s\n%s%s" % (p.returncode, " ".join(args), p.stdout, p.stderr))
    return p.stdout


def main():
    dlsim = sys.argv[1]
    python = os.environ.get("DLSIM_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import torch.profiler as p, torch.autograd as a; "
                            "print(int(a.kineto_available()))"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("skipped: %s has no torch (set DLSIM_PYTHON to a Python with PyTorch 2.x)" % python)
        return 77
    if probe.stdout.strip() != "1":
        print("skipped: %s's torch profiler has no Kineto, so its traces hold no shapes (set DLSIM_PYTHON "
              "to a Python with PyTorch 2.x)" % python)
        return 77
    with tempfile.TemporaryDirectory(prefix="dlsim-record-profile-") as tmp:
        trace = os.path.join(tmp, "tiny.trace.json")
        run(python, RECORD, "frontend/torch/testdata/tiny_steps.py:tiny_mlp", "--batch", "2", "--steps", "2",
            "--timed", "5", "--threads", "1", "--out", trace)
        exp = os.path.join(tmp, "tiny.yaml")
        with open(exp, "w") as f:
            f.write("model: %s\nbatch: 2\nhw: h100-sxm\npool: pytorch-caching\nswap: none\nconcurrency: serial\n"
                    % os.path.join(ROOT, "workloads", "testdata", "torch_steps", "tiny_mlp.torchstep.json"))
        out = os.path.join(tmp, "fitted.yaml")
        report = run(dlsim, "calibrate", "--torch-profile", trace, "--experiment", exp,
                     "--hw", "configs/hw/h100-sxm-pytorch.yaml", "--out", out)
        for want in ("2 step(s)", "unmatched trace ops: 0 of", "the profiler's overhead factor"):
            if want not in report:
                sys.exit("FAILED: the report lacks %r:\n%s" % (want, report))
        with open(out) as f:
            text = f.read()
        if "base: h100-sxm-pytorch" not in text or "pytorch_eager:" not in text:
            sys.exit("FAILED: the written file lacks its base or section:\n" + text)
        run(dlsim, "run", exp, "--json")  # the experiment runs (its own hw): the graph is sound
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

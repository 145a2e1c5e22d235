#!/usr/bin/python3
"""ctest: validate/torch/kernel_sweep.py's CPU dry run writes a sweep that `dlsim fit-kernels` reads and fits.

  kernel_sweep_test.py DLSIM_BINARY

The zoo's shapes come from the binary (`dlsim fit-kernels --shapes-of resnet18 --batch 1`), the sweep runs on the
CPU with Debian's python3-torch (one timing per record: it checks the tool and the file, it measures nothing), and
the fit writes a hardware file from configs/hw/h200-datasheet.yaml that `dlsim run` then uses. Exits 77 (ctest: skipped),
saying why, when torch is not installed.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SWEEP = os.path.join(ROOT, "validate", "torch", "kernel_sweep.py")


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("FAILED (exit %d): %s\n%s%s" % (p.returncode, " ".join(args), p.stdout, p.stderr))
    return p.stdout


def main():
    dlsim = sys.argv[1]
    try:
        import torch  # noqa: F401
    except ImportError:
        print("skipped: python3-torch is not installed (scripts/install-deps.sh installs it)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        shapes, sweep = os.path.join(tmp, "shapes.json"), os.path.join(tmp, "sweep.json")
        hw, report = os.path.join(tmp, "cpu-fitted.yaml"), os.path.join(tmp, "fit.md")
        run(dlsim, "fit-kernels", "--shapes-of", "resnet18", "--batch", "1", "--out", shapes)
        run(sys.executable, SWEEP, "--device", "cpu", "--dry-run", "--shapes", shapes, "--random", "6",
            "--random-gemms", "6", "--random-sdpa", "2", "--sdpa-fp32", "--max-seconds", "240", "--out", sweep)
        with open(sweep) as f:
            doc = json.load(f)
        ops = {r["op"] for r in doc["records"]}
        for op in ("conv_fwd", "conv_dgrad", "conv_wgrad", "gemm", "add", "softmax", "layernorm", "batchnorm_fwd"):
            assert op in ops, "the dry run wrote no %s record" % op
        assert any(r.get("src") == "model:resnet18" for r in doc["records"]), "no layer of the zoo's resnet18"
        if hasattr(torch.nn.functional, "scaled_dot_product_attention"):  # PyTorch 2.x: attention, fp32 beside bf16
            sdpa = {r["dtype"] for r in doc["records"] if r["op"] in ("sdpa_fwd", "sdpa_fwd_bwd")}
            assert sdpa == {"bfloat16", "float32"}, "--sdpa-fp32 wrote attention in %s" % sorted(sdpa)
        assert doc["meta"]["torch"] == torch.__version__
        out = run(dlsim, "fit-kernels", sweep, "--hw", "h200-datasheet", "--out", hw, "--report", report)
        assert "kernel classes" in out, out
        with open(hw) as f:
            assert "kernel_model:\n" in f.read()
        exp = os.path.join(tmp, "exp.yaml")
        with open(exp, "w") as f:
            f.write("model: resnet18\nbatch: 2\nhw: %s\npool: cnmem\nswap: none\nconcurrency: serial\n" % hw)
        got = json.loads(run(dlsim, "run", exp, "--json"))
        assert got["kernel_model"] == "fitted", got["kernel_model"]
    print("ok: the dry run's %d records fit into a hardware file dlsim runs" % len(doc["records"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

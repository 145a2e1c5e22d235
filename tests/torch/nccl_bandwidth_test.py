#!/usr/bin/python3
"""ctest: validate/torch/nccl_bandwidth.py and fsdp_step.py on two gloo CPU processes, and what dlsim makes of them.

  nccl_bandwidth_test.py [DLSIM]

The scripts are meant for a machine of several GPUs (issue 32, item 5); here they run their CPU path, which is the
same code but for the timer (a host clock instead of CUDA events) and the backend (gloo instead of NCCL):

  nccl_bandwidth.py  --backend gloo --device cpu, 2 ranks, 8 B to 4 KiB, 20 s at most: the JSON has its machine and
                     method fields; every row's algbw is bytes / time and its busbw algbw x nccl-tests' factor for 2
                     ranks (1 for all-reduce, 1/2 for all-gather and reduce-scatter); sizes double from 8 B and are
                     whole elements of every rank; all-reduce and all-gather are measured (gloo before PyTorch 2
                     has no reduce-scatter: that cell is listed as skipped, with the reason). With DLSIM:
                     `dlsim fit-interconnect` refuses the file (a CPU run), and with --allow-cpu writes a hardware
                     file with the three keys in range, on which `dlsim run` simulates DDP of ResNet-18 on 2
                     ranks with its all-reduces priced.
  fsdp_step.py       2 ranks, the tiny Llama, 2 timed steps: fsdp-step.json (per rank a positive step time, the
                     layout), the config, the profiler trace (JSON with traceEvents) and the experiment YAML, which
                     `dlsim run` simulates (exit 0). Where the Python has no FSDP2 (Debian's 1.13) the script
                     must say so and exit 3; the test then says it skipped that half.

The Python is $DLSIM_PYTHON, else the one running this; exits 77 (ctest: skipped), saying why, when it has no torch
with gloo.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TORCH = os.path.join(ROOT, "validate", "torch")


def close(a, b, rel=0.01, abs_=1.5e-4):
    return abs(a - b) <= rel * abs(b) + abs_


def check_bandwidth(record, failures):
    for key in ("command", "date", "devices", "versions", "method", "env", "results", "truncated", "skipped"):
        if key not in record:
            failures.append("bandwidth: no %r field" % key)
    if (record.get("format"), record.get("version")) != ("dlsim-nccl-bandwidth", 1):
        failures.append("bandwidth: format/version %s/%s" % (record.get("format"), record.get("version")))
    if (record.get("backend"), record.get("device"), record.get("timer")) != ("gloo", "cpu", "host-clock"):
        failures.append("bandwidth: backend/device/timer %s" % [record.get(k) for k in ("backend", "device", "timer")])
    if (record.get("world_size"), record.get("gpus_per_node"), record.get("nodes")) != (2, 2, 1):
        failures.append("bandwidth: world %s" % [record.get(k) for k in ("world_size", "gpus_per_node", "nodes")])
    if "torch" not in record.get("versions", {}):
        failures.append("bandwidth: no torch version")
    factors = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5}
    seen = {}
    for i, r in enumerate(record.get("results", [])):
        algbw = r["bytes"] / (r["time_us"] * 1e-6) / 1e9
        if not close(r["algbw_gb_s"], algbw):
            failures.append("row %d: algbw %s, bytes / time %s" % (i, r["algbw_gb_s"], algbw))
        if not close(r["busbw_gb_s"], r["algbw_gb_s"] * factors[r["collective"]]):
            failures.append("row %d: busbw %s is not algbw x %s" % (i, r["busbw_gb_s"], factors[r["collective"]]))
        if r["bytes"] % (4 * r["ranks"]) or r["count"] * 4 != r["bytes"]:
            failures.append("row %d: %d bytes are not whole float32 elements of %d ranks" % (i, r["bytes"], r["ranks"]))
        if not r["time_us_min"] <= r["time_us"] <= r["time_us_max"]:
            failures.append("row %d: median %s outside [min, max]" % (i, r["time_us"]))
        seen.setdefault(r["collective"], []).append(r["bytes"])
    for c, sizes in seen.items():
        if sizes[0] != 8 or any(b != 2 * a for a, b in zip(sizes, sizes[1:])):
            failures.append("%s: sizes %s do not double from 8 B" % (c, sizes))
    for c in ("all_reduce", "all_gather"):
        if c not in seen:
            failures.append("no %s measured" % c)
    skipped = {s["collective"]: s["reason"] for s in record.get("skipped", [])}
    if "reduce_scatter" not in seen and not skipped.get("reduce_scatter"):
        failures.append("reduce_scatter neither measured nor skipped with a reason")
    return sorted(seen)


def run(cmd, timeout):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def check_fit(dlsim, path, out, failures):
    p = run([dlsim, "fit-interconnect", "--nccl", path, "--hw", "h100-sxm", "--out", os.path.join(out, "x.yaml")], 60)
    if p.returncode != 2 or "not NCCL on GPUs" not in p.stderr:
        failures.append("fit-interconnect took a CPU run: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    hw = os.path.join(out, "gloo-links.yaml")
    p = run([dlsim, "fit-interconnect", "--nccl", path, "--hw", "h100-sxm", "--out", hw, "--allow-cpu"], 120)
    if p.returncode != 0:
        failures.append("fit-interconnect --allow-cpu: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        return
    with open(hw) as f:
        text = f.read()
    # Which values gloo's few microsecond-to-millisecond points give is not the test's business (its sizes are
    # latency-bound, and loopback is no NVLink); that the fit wrote the three keys within their ranges is.
    keys = {line.split(":")[0].strip(): float(line.split(":")[1]) for line in text.splitlines()
            if line.strip().split(":")[0] in ("base_latency_us", "latency_us", "bus_efficiency")}
    if sorted(keys) != ["base_latency_us", "bus_efficiency", "latency_us"] or not 0 < keys["bus_efficiency"] <= 1 \
            or min(keys["base_latency_us"], keys["latency_us"]) < 0 or "leave-one-out" not in p.stdout:
        failures.append("the fit of gloo's points:\n%s%s" % (p.stdout, text))
    # The file loads and prices DDP's all-reduces: a two-rank run of a small CNN on it.
    exp = os.path.join(out, "exp-ddp-on-gloo-links.yaml")
    with open(exp, "w") as f:
        f.write("model: resnet18\nbatch: 2\nhw: gloo-links.yaml\npool: pytorch-caching\nswap: none\n"
                "concurrency: serial\niterations: 1\nparallel: {dp: 2}\n")
    p = run([dlsim, "run", exp, "--json"], 300)
    res = json.loads(p.stdout) if p.returncode == 0 else {}
    if res.get("parallel") != "dp=2" or not res.get("collectives", {}).get("all_reduce", {}).get("time_us", 0) > 0:
        failures.append("dlsim run of DDP on the fitted file: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))


def check_fsdp(python, dlsim, out, failures):
    p = run([python, os.path.join(TORCH, "fsdp_step.py"), "--backend", "gloo", "--device", "cpu", "--out-dir", out,
             "--warmup", "1", "--steps", "2", "--max-seconds", "240"], 600)
    if p.returncode == 3 and "no FSDP2 fully_shard" in p.stdout:
        print("fsdp step skipped, as the script says: %s" % p.stdout.strip()[:300])
        return
    if p.returncode != 0:
        failures.append("fsdp_step.py: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr[-3000:]))
        return
    with open(os.path.join(out, "fsdp-step.json")) as f:
        rec = json.load(f)
    if (rec["format"], rec["version"], rec["world_size"], rec["layout"]["fsdp"]) != ("dlsim-fsdp-step", 1, 2, 2):
        failures.append("fsdp-step.json: %s" % [rec["format"], rec["version"], rec["world_size"], rec["layout"]])
    if len(rec["ranks"]) != 2 or not all(r["step_ms_median"] > 0 for r in rec["ranks"]):
        failures.append("fsdp-step.json ranks: %s" % rec["ranks"])
    with open(os.path.join(out, rec["ranks"][0]["profiler_trace"])) as f:
        if not json.load(f).get("traceEvents"):
            failures.append("the profiler trace has no events")
    if dlsim:
        p = run([dlsim, "run", os.path.join(out, "fsdp-step-experiment.yaml"), "--json"], 300)
        res = json.loads(p.stdout) if p.returncode == 0 else {}
        if not str(res.get("parallel", "")).startswith("fsdp=2") or "all_gather" not in res.get("collectives", {}):
            failures.append("dlsim run on the step's experiment: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        else:
            print("dlsim: the step's experiment simulates %s, iteration %.1f ms"
                  % (res["parallel"], res.get("iteration_time_us", 0) / 1e3))
    print("fsdp step: %s, step %.1f ms on rank 0" % (rec["model"]["implementation"], rec["ranks"][0]["step_ms_median"]))


def main():
    dlsim = sys.argv[1] if len(sys.argv) > 1 else None
    python = os.environ.get("DLSIM_PYTHON", sys.executable)
    probe = run([python, "-c", "import torch, torch.distributed as d; "
                 "assert d.is_available() and d.is_gloo_available()"], 120)
    if probe.returncode != 0:
        print("skipped: %s has no torch with torch.distributed and gloo (Debian: python3-torch; or set "
              "DLSIM_PYTHON)" % python)
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "nccl-gloo.json")
        p = run([python, os.path.join(TORCH, "nccl_bandwidth.py"), "--backend", "gloo", "--device", "cpu",
                 "--out", path, "--max-bytes", "4K", "--max-seconds", "20", "--reps", "3"], 600)
        if p.returncode != 0:
            sys.exit("FAILED: nccl_bandwidth.py exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr[-3000:]))
        with open(path) as f:
            measured = check_bandwidth(json.load(f), failures)
        if dlsim:
            check_fit(dlsim, path, out, failures)
        check_fsdp(python, dlsim, os.path.join(out, "fsdp"), failures)
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures))
    print("nccl_bandwidth_test: ok (measured %s)" % ", ".join(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())

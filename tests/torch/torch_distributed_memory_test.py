#!/usr/bin/python3
"""ctest: validate/torch/torch_distributed_memory.py's smallest case (MLP, world 2) against hand-worked arithmetic.

  torch_distributed_memory_test.py

The script is the reference dlsim's DDP/FSDP memory per GPU is to be checked against (issue 32), so its numbers are
checked here against what the rules give by hand for Linear(256, 1024) -> ReLU -> Linear(1024, 257), float32:

  DDP   every rank holds all 526,593 parameters (2,106,372 bytes), as many gradient bytes and twice that in AdamW
        state. Step 1 reduces one bucket of everything (no bucketing before DDP has seen the backward order);
        step 2's rebuilt buckets follow the gradient-ready order: fc2's weight and bias (1,053,700 bytes) pass the
        first bucket's 1 MiB cap and close it, fc1's (1,052,672 bytes) fill the second, far below 25 MiB.
  FSDP2 each parameter is split on dim 0 in chunks of ceil(rows / 2); every rank's storage holds a whole chunk
        (padded), its tensor only its rows: fc2's 257 rows give rank 0 129 and rank 1 128 in 129 rows of storage.
        Gradients likewise; AdamW's state is made like the local tensor, so unpadded. Inside a unit's forward its
        parameters are whole, in all-gather storage of 2 chunks each.

The Python is $DLSIM_PYTHON, else the one running this; exits 77 (ctest: skipped), saying why, when it has no torch
or no gloo. Where it has no fully_shard (Debian's 1.13) the FSDP half is skipped and says so. The output must also
equal the committed fixture of the same PyTorch version, if there is one (reruns are byte-identical).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "validate", "torch", "torch_distributed_memory.py")
FIXTURES = os.path.join(ROOT, "validate", "torch", "testdata", "distributed_memory")
F32 = 4
SHAPES = {"fc1.weight": (1024, 256), "fc1.bias": (1024,), "fc2.weight": (257, 1024), "fc2.bias": (257,)}
MIB = 1 << 20


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def nbytes(names):
    return sum(numel(SHAPES[n]) * F32 for n in names)


def shard(shape, rank, world):
    """(local bytes, storage bytes) of rank's dim-0 chunk: chunks of ceil(rows / world) rows, the last ones short."""
    rows, rest = shape[0], numel(shape[1:])
    chunk = -(-rows // world)
    mine = max(0, min(chunk, rows - rank * chunk))
    return mine * rest * F32, chunk * rest * F32


def check_ddp(record, failures):
    total = nbytes(SHAPES)
    assert nbytes(["fc2.weight", "fc2.bias"]) >= MIB, "fc2 alone must pass DDP's 1 MiB first-bucket cap"
    if record["total_param_bytes"] != total:
        failures.append("ddp: total parameter bytes %d, by hand %d" % (record["total_param_bytes"], total))
    for r in record["ranks"]:
        got1 = [(b["bytes"], sorted(b["parameters"])) for b in r["buckets_step1"]]
        if got1 != [(total, sorted(SHAPES))]:
            failures.append("ddp rank %d step 1: buckets %s, by hand one of %d bytes" % (r["rank"], got1, total))
        want2 = [(nbytes(["fc2.weight", "fc2.bias"]), ["fc2.bias", "fc2.weight"]),
                 (nbytes(["fc1.weight", "fc1.bias"]), ["fc1.bias", "fc1.weight"])]
        got2 = [(b["bytes"], sorted(b["parameters"])) for b in r["buckets_step2"]]
        if got2 != want2:
            failures.append("ddp rank %d step 2: buckets %s, by hand %s" % (r["rank"], got2, want2))
        for what in ("param_bytes", "grad_bytes"):
            if r[what] != {"logical": total, "storage": total}:
                failures.append("ddp rank %d: %s %s, by hand %d" % (r["rank"], what, r[what], total))
        for key in ("exp_avg", "exp_avg_sq"):
            if r["optimizer_state_bytes"][key]["logical"] != total:
                failures.append("ddp rank %d: AdamW %s %s, by hand %d"
                                % (r["rank"], key, r["optimizer_state_bytes"][key], total))


def check_fsdp(record, failures):
    world = record["world_size"]
    for r in record["ranks"]:
        rank, local_sum, storage_sum = r["rank"], 0, 0
        for p in r["parameters"]:
            local_b, storage_b = shard(SHAPES[p["name"]], rank, world)
            local_sum, storage_sum = local_sum + local_b, storage_sum + storage_b
            got = (p["local_bytes"], p["storage_bytes"], p["grad_local_bytes"])
            if got != (local_b, storage_b, local_b):
                failures.append("fsdp rank %d %s: (local, storage, grad) bytes %s, by hand %s"
                                % (rank, p["name"], got, (local_b, storage_b, local_b)))
        if r["param_bytes"] != {"logical": local_sum, "storage": storage_sum}:
            failures.append("fsdp rank %d: parameter bytes %s, by hand %d logical, %d storage"
                            % (rank, r["param_bytes"], local_sum, storage_sum))
        if r["grad_bytes"] != {"logical": local_sum, "storage": storage_sum}:
            failures.append("fsdp rank %d: gradient bytes %s, by hand %d logical, %d storage"
                            % (rank, r["grad_bytes"], local_sum, storage_sum))
        for key in ("exp_avg", "exp_avg_sq"):
            if r["optimizer_state_bytes"][key] != {"logical": local_sum, "storage": local_sum}:
                failures.append("fsdp rank %d: AdamW %s %s, by hand %d (unpadded)"
                                % (rank, key, r["optimizer_state_bytes"][key], local_sum))
        for unit in ("fc1", "fc2"):
            names = [unit + ".weight", unit + ".bias"]
            storage = sum(world * shard(SHAPES[n], 0, world)[1] for n in names)
            want = {"logical": nbytes(names), "storage": storage}
            if r["unsharded_per_unit"].get(unit) != want:
                failures.append("fsdp rank %d unit %s: unsharded %s, by hand %s"
                                % (rank, unit, r["unsharded_per_unit"].get(unit), want))


def main():
    python = os.environ.get("DLSIM_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import torch, torch.distributed as d; "
                            "assert d.is_available() and d.is_gloo_available()"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("skipped: %s has no torch with torch.distributed and gloo (Debian: python3-torch; or set "
              "DLSIM_PYTHON)" % python)
        return 77
    failures, checked = [], []
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([python, SCRIPT, "--models", "mlp", "--layouts", "ddp,fsdp", "--worlds", "2",
                            "--out-dir", out], capture_output=True, text=True, cwd=ROOT, timeout=600)
        if p.returncode != 0:
            sys.exit("FAILED (exit %d)\n%s%s" % (p.returncode, p.stdout, p.stderr))
        for line in p.stdout.splitlines():
            if line.startswith("skipping"):
                print(line[:300])
        for name in sorted(os.listdir(out)):
            with open(os.path.join(out, name)) as f:
                text = f.read()
            record = json.loads(text)
            (check_ddp if record["layout"] == "ddp" else check_fsdp)(record, failures)
            checked.append(name)
            fixture = os.path.join(FIXTURES, name)
            if os.path.exists(fixture):
                with open(fixture) as f:
                    if f.read() != text:
                        failures.append("%s differs from the committed fixture %s" % (name, fixture))
    if not any("-ddp-" in n for n in checked):
        failures.append("no DDP record written: %s" % checked)
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures))
    print("torch_distributed_memory_test: ok (%s)" % ", ".join(checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())

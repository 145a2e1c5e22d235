#!/usr/bin/python3
"""NCCL's all-reduce, all-gather and reduce-scatter bandwidth by size, as nccl-tests measures it, for dlsim's links.

  nccl_bandwidth.py --out FILE.json [--world N] [--group-sizes 2,4,8] [--min-bytes 8] [--max-bytes 2G]
                    [--collectives all_reduce,all_gather,reduce_scatter] [--dtype float32] [--max-seconds 120]
                    [--backend nccl|gloo --device cuda|cpu]

Issue 32 prices a collective with an alpha-beta model (hw/collective_model.h) whose latencies and bus efficiencies
come from the hardware file's `interconnect:` section; `dlsim fit-interconnect --nccl FILE.json` fits them to what
this writes. It launches its own ranks: under torchrun (RANK, WORLD_SIZE, LOCAL_WORLD_SIZE set: one process per
GPU, across nodes too) it is one of them; otherwise it spawns --world processes on this machine (default: every
visible GPU; 2 with --device cpu) joined on a free localhost port.

For each group size g (the first g ranks: on several nodes, whole nodes of contiguous ranks), collective and size
S (nccl-tests' -b/-e/-f: from --min-bytes doubling to --max-bytes, rounded down to a multiple of g elements) it
runs --warmup calls, then --reps repetitions of `iters` back-to-back calls timed with CUDA events on the current
stream (a host clock after the calls with --device cpu). iters is --iters or fewer for large sizes (about 20 ms a
repetition, at least 1). A repetition's time per call is averaged over the group's ranks, as nccl-tests does
(-a 1), and the median of the repetitions is recorded, with their min and max. S follows nccl-tests: the
all-reduce buffer, the WHOLE gathered array for all-gather and reduce-scatter (g x the per-rank part).
algbw = S / t and busbw = algbw x 2(g-1)/g (all-reduce) or (g-1)/g (all-gather, reduce-scatter): the rate each
rank's link sustains (nccl-tests doc/PERFORMANCE.md).

Bounded by --max-seconds: the time is shared out among the (group, collective) cells still to run, and a cell
stops growing its size once the next (twice as large) would pass its share; every cell runs its smallest size.
The file says where each cell stopped (`truncated`). Device memory bounds --max-bytes to a quarter of the GPU's.

The JSON (format dlsim-nccl-bandwidth, version 1): the command, the UTC date, backend, device, timer, dtype, the
world size, nodes and GPUs per node, each rank's device name, the driver, torch, CUDA and NCCL versions, the NCCL_*
environment (NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE change what is measured), and `results`: one row per
(collective, ranks, bytes) with time_us (median), time_us_min/max, algbw_gb_s and busbw_gb_s (GB = 1e9 B), iters,
reps and api ("tensor": all_gather_into_tensor / reduce_scatter_tensor, what FSDP2 calls; "list": the per-rank-list
calls, for gloo before PyTorch 2, which has no tensor form). A cell the backend cannot run at all (gloo before
PyTorch 2 has no reduce-scatter) is listed under `skipped` with the backend's words. A gloo/CPU run (the CTest
check) is marked so, and dlsim fit-interconnect refuses it unless told.
"""
import argparse
import datetime
import json
import os
import platform
import queue as queue_mod
import socket
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

FORMAT, VERSION = "dlsim-nccl-bandwidth", 1
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
TARGET_REP_S = 0.02  # a repetition's length for large sizes: events resolve ~0.5 us, so 20 ms is plenty


def parse_bytes(text):
    """'8', '64K', '2G' (powers of 1024, as nccl-tests reads -b/-e)."""
    t = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    try:
        n = int(float(t[:-1] if scale > 1 else t) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError("not a size: %r (e.g. 8, 64K, 2G)" % text)
    if n < 1:
        raise argparse.ArgumentTypeError("a size must be at least 1 byte, got %r" % text)
    return n


def bus_factor(collective, n):
    return 2.0 * (n - 1) / n if collective == "all_reduce" else (n - 1) / n


def sizes(min_bytes, max_bytes, g, elt):
    """nccl-tests' sizes: doubling from min to max, each a whole number of g elements (at least g)."""
    out, s = [], min_bytes
    while s <= max_bytes:
        b = max(g, (s // elt) // g * g) * elt
        if not out or b != out[-1]:
            out.append(b)
        s *= 2
    return out


class Timer:
    """Times `iters` calls: CUDA events on the current stream, or the host clock after the calls (CPU)."""

    def __init__(self, device):
        self.cuda = device == "cuda"

    def run(self, fn, iters):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / iters
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        return (time.perf_counter() - t0) / iters


def make_call(collective, nbytes, g, dtype, device, group, api):
    """The call for one size: buffers allocated once, reused by every iteration (as nccl-tests). api "tensor": the
    flat-tensor calls (all_gather_into_tensor, reduce_scatter_tensor) FSDP2 makes; "list": the per-rank-list calls,
    for a backend without the former (gloo before PyTorch 2)."""
    elt = torch.tensor([], dtype=dtype).element_size()
    count = nbytes // elt
    if collective == "all_reduce":
        buf = torch.ones(count, dtype=dtype, device=device)
        return lambda: dist.all_reduce(buf, group=group)
    part = count // g
    big = torch.ones(count, dtype=dtype, device=device)
    small = torch.ones(part, dtype=dtype, device=device)
    chunks = list(big.chunk(g))
    if collective == "all_gather":
        if api == "tensor":
            return lambda: dist.all_gather_into_tensor(big, small, group=group)
        return lambda: dist.all_gather(chunks, small, group=group)
    if api == "tensor":
        return lambda: dist.reduce_scatter_tensor(small, big, group=group)
    return lambda: dist.reduce_scatter(small, chunks, group=group)


def pick_api(collective, g, dtype, device, group, in_group):
    """(api, None) for the first call form this backend runs, or (None, why); every rank of the world agrees."""
    choice, why = 0, []
    if in_group:
        for i, api in enumerate(("tensor", "list")):
            if collective == "all_reduce" and api == "list":
                break
            try:
                make_call(collective, g * 4, g, dtype, device, group, api)()
                choice = i + 1
                break
            except (RuntimeError, AttributeError, NotImplementedError) as e:
                why.append("%s: %s" % (api, str(e).splitlines()[0] if str(e) else type(e).__name__))
    agreed = group_reduce([choice if in_group else 99], device, None, dist.ReduceOp.MIN)[0]
    if agreed in (1, 2):
        return ("tensor", "list")[int(agreed) - 1], None
    return None, "; ".join(why) or "another rank could not run it"


def world_flag(value, device):
    """Rank 0's decision, broadcast over the world (every rank must take the same branch)."""
    t = torch.tensor([float(value)], device=device)
    dist.broadcast(t, 0)
    return t.item()


def group_reduce(values, device, group, op):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=op, group=group)
    return t.tolist()


def measure_cell(args, collective, g, group, in_group, deadline, timer, rows, device):
    """One (collective, group size) cell: sizes ascending until the next would pass `deadline` (rank 0 decides)."""
    dtype = DTYPES[args.dtype]
    elt = torch.tensor([], dtype=dtype).element_size()
    last_s, truncated = None, False
    api, why = pick_api(collective, g, dtype, device, group, in_group)
    if api is None:
        return "skipped: " + why
    for nbytes in sizes(args.min_bytes, args.max_bytes, g, elt):
        # Rank 0 predicts the next size's cost from the last (bandwidth-bound: about twice) and stops if it passes.
        go = 1.0
        if dist.get_rank() == 0 and last_s is not None:
            go = 0.0 if time.monotonic() + 2.2 * last_s > deadline else 1.0
        if world_flag(go, device) == 0.0:
            truncated = True
            break
        t0 = time.monotonic()
        if in_group:
            call = make_call(collective, nbytes, g, dtype, device, group, api)
            for _ in range(args.warmup):
                call()
            probe = group_reduce([timer.run(call, 1)], device, group, dist.ReduceOp.MAX)[0]
            iters = max(1, min(args.iters, int(TARGET_REP_S / max(probe, 1e-9))))
            reps = [timer.run(call, iters) for _ in range(args.reps)]
            mean = [v / g for v in group_reduce(reps, device, group, dist.ReduceOp.SUM)]
            mean.sort()
            med = mean[len(mean) // 2] if len(mean) % 2 else 0.5 * (mean[len(mean) // 2 - 1] + mean[len(mean) // 2])
            del call
            if dist.get_rank() == 0:
                algbw = nbytes / med / 1e9
                rows.append({"collective": collective, "api": api, "ranks": g, "bytes": nbytes, "count": nbytes // elt,
                             "time_us": round(med * 1e6, 3), "time_us_min": round(mean[0] * 1e6, 3),
                             "time_us_max": round(mean[-1] * 1e6, 3), "algbw_gb_s": round(algbw, 4),
                             "busbw_gb_s": round(algbw * bus_factor(collective, g), 4), "iters": iters,
                             "reps": args.reps})
        if device == "cuda":
            torch.cuda.synchronize()
        last_s = time.monotonic() - t0
    return "truncated" if truncated else None


def versions(device):
    v = {"torch": torch.__version__, "python": platform.python_version(), "cuda": torch.version.cuda,
         "nccl": None, "driver": None}
    try:
        nccl = torch.cuda.nccl.version()
        v["nccl"] = ".".join(str(x) for x in nccl) if isinstance(nccl, tuple) else str(nccl)
    except Exception:  # a build without NCCL (the CPU wheels)
        pass
    if device == "cuda":
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20).stdout.split()
            v["driver"] = out[0] if out else None
        except Exception:
            pass
    return v


def run_rank(args, rank, world, local_world):
    device = args.device
    if device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank % local_world)))
    else:
        torch.set_num_threads(1)
    dist.init_process_group(args.backend, rank=rank, world_size=world)
    try:
        names = [None] * world
        dist.all_gather_object(names, torch.cuda.get_device_name() if device == "cuda" else platform.machine())
        groups = [g for g in (args.group_sizes or [world]) if 2 <= g <= world]
        groups = [g for g in groups if g <= local_world or g % local_world == 0]
        timer, rows, truncated, skipped = Timer(device), [], [], []
        cells = [(g, c) for g in groups for c in args.collectives]
        start = time.monotonic()
        for i, (g, c) in enumerate(cells):
            group = dist.new_group(list(range(g))) if g < world else None  # every rank joins new_group
            remaining = args.max_seconds - (time.monotonic() - start)
            deadline = time.monotonic() + remaining / (len(cells) - i)
            ended = measure_cell(args, c, g, group, rank < g, deadline, timer, rows, device)
            if ended == "truncated":
                truncated.append({"collective": c, "ranks": g})
            elif ended:
                skipped.append({"collective": c, "ranks": g, "reason": ended[len("skipped: "):]})
                if rank == 0:
                    print("%s over %d ranks %s" % (c, g, ended))
        elapsed = time.monotonic() - start
        if rank != 0:
            return None
        record = {
            "format": FORMAT, "version": VERSION, "script": "validate/torch/nccl_bandwidth.py",
            "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "backend": args.backend, "device": device,
            "timer": "cuda-events" if device == "cuda" else "host-clock",
            "dtype": args.dtype, "world_size": world, "gpus_per_node": local_world, "nodes": world // local_world,
            "devices": names, "versions": versions(device),
            "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
            "method": {"warmup": args.warmup, "iters": args.iters, "reps": args.reps,
                       "rank_reduction": "mean over the group's ranks (nccl-tests -a 1)", "statistic": "median",
                       "min_bytes": args.min_bytes, "max_bytes": args.max_bytes, "factor": 2,
                       "group_sizes": groups},
            "budget_s": args.max_seconds, "elapsed_s": round(elapsed, 2), "truncated": truncated,
            "skipped": skipped, "results": rows,
        }
        return record
    finally:
        dist.destroy_process_group()


def write(record, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


def spawned(rank, world, port, args, q):
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "LOCAL_RANK": str(rank)})
    try:
        q.put((rank, run_rank(args, rank, world, world), None))
    except Exception:
        import traceback
        q.put((rank, None, traceback.format_exc()))
        raise


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args, world, target=spawned):
    """Runs `world` ranks of `target` (rank, world, port, args, queue) on this machine; returns rank 0's record
    (raises with every rank's error). fsdp_step.py launches its ranks through this too."""
    ctx = mp.get_context("spawn")
    q, port = ctx.Queue(), free_port()
    procs = [ctx.Process(target=target, args=(r, world, port, args, q)) for r in range(world)]
    for p in procs:
        p.start()
    done, record, errors, grace = set(), None, [], float("inf")
    wait = args.max_seconds + 120 + 30 * world  # start-up and the largest size's overrun
    limit = time.monotonic() + wait
    try:
        # After the first error, a few seconds for the others: the rank that failed first says why, the others
        # only that their peer went away.
        while len(done) < world and time.monotonic() < limit and (not errors or time.monotonic() < grace):
            try:
                rank, rec, err = q.get(timeout=2)
            except queue_mod.Empty:
                dead = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0) and r not in done]
                if dead and not errors:
                    errors.append("rank(s) %s exited with %s" % (dead, [procs[r].exitcode for r in dead]))
                    grace = time.monotonic() + 5
                continue
            done.add(rank)
            if err:
                errors.append("rank %d:\n%s" % (rank, err))
                grace = min(grace, time.monotonic() + 5)
            elif rank == 0:
                record = rec
        if len(done) < world and not errors:
            errors.append("ranks %s did not finish in %.0f s" % (sorted(set(range(world)) - done), wait))
    finally:
        for p in procs:
            p.join(timeout=30 if not errors else 1)
            if p.is_alive():
                p.terminate()
                p.join()
    if errors:
        errors.sort(key=lambda e: "Connection closed" in e or "exited with" in e)
        raise RuntimeError("\n".join(errors))
    return record


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the JSON to write (rank 0)")
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--world", type=int, default=0, help="ranks to spawn (0: every GPU; 2 on the CPU)")
    ap.add_argument("--group-sizes", default="", help="comma-separated group sizes (default: the world)")
    ap.add_argument("--collectives", default=",".join(COLLECTIVES))
    ap.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("--min-bytes", type=parse_bytes, default=8)
    ap.add_argument("--max-bytes", type=parse_bytes, default=None, help="default 2G (CUDA), 1M (CPU)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20, help="calls per repetition (fewer for large sizes)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=120, help="the measurement's wall-time budget")
    args = ap.parse_args(argv)
    args.collectives = [c for c in args.collectives.split(",") if c]
    for c in args.collectives:
        if c not in COLLECTIVES:
            ap.error("--collectives: unknown %r; valid: %s" % (c, ", ".join(COLLECTIVES)))
    try:
        args.group_sizes = [int(g) for g in args.group_sizes.split(",") if g]
    except ValueError:
        ap.error("--group-sizes: integers, comma-separated, got %r" % args.group_sizes)
    if min(args.warmup, args.iters - 1, args.reps - 1) < 0 or args.max_seconds <= 0:
        ap.error("--warmup >= 0, --iters >= 1, --reps >= 1 and --max-seconds > 0")
    if args.backend == "nccl" and args.device != "cuda":
        ap.error("--backend nccl runs on --device cuda")
    if not dist.is_available():
        print("nccl_bandwidth.py: this PyTorch (%s) has no torch.distributed" % torch.__version__)
        return 3
    if args.device == "cuda" and not torch.cuda.is_available():
        print("nccl_bandwidth.py: no GPU visible (torch %s); --backend gloo --device cpu runs on the CPU"
              % torch.__version__)
        return 3
    if args.max_bytes is None:
        args.max_bytes = 2 << 30 if args.device == "cuda" else 1 << 20
    if args.device == "cuda":  # an all-gather holds S + S/g: keep both inside a quarter of the GPU
        cap = torch.cuda.get_device_properties(0).total_memory // 4
        if args.max_bytes > cap:
            print("--max-bytes %d lowered to %d (a quarter of the GPU's memory)" % (args.max_bytes, cap))
            args.max_bytes = cap
    if args.min_bytes > args.max_bytes:
        ap.error("--min-bytes is above --max-bytes")
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun: one of its processes
        world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
        record = run_rank(args, rank, world, int(os.environ.get("LOCAL_WORLD_SIZE", world)))
    else:
        world = args.world or (torch.cuda.device_count() if args.device == "cuda" else 2)
        if world < 2:
            print("nccl_bandwidth.py: a collective needs 2 ranks or more; %d %s visible"
                  % (world, "GPU" if args.device == "cuda" else "rank"))
            return 3
        rank, record = 0, spawn(args, world)
    if rank == 0:
        write(record, args.out)
        for r in record["results"][-3:]:
            print("%-14s %3d ranks %12d B %10.1f us  busbw %8.2f GB/s"
                  % (r["collective"], r["ranks"], r["bytes"], r["time_us"], r["busbw_gb_s"]))
        print("wrote %s: %d rows in %.1f s%s" % (args.out, len(record["results"]), record["elapsed_s"],
                                                 ", truncated: %s" % record["truncated"] if record["truncated"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

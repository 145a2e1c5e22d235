#!/usr/bin/env python3
"""A PyTorch reference for what a user would gain from stream concurrency (issue 30): the measured step time and
memory of torchvision Inception-v3, GoogLeNet and ResNet-50 trained in fp32 with SGD (momentum 0.9), run plainly
(`serial`) and with the concurrent schedules of torch_concurrency_schedules.py (`branch-streams` for the inception
models, `dgrad-wgrad` for ResNet-50), each in eager mode and captured whole into a CUDA graph.

Per (model, batch, schedule, mode) it records the iteration time (median and min; eager: host clock around each
step plus torch.cuda.synchronize(), and CUDA-event device time; graph: CUDA events around each replay), the peak
reserved and allocated memory after warm-up (eager measured before any capture; graph separately), the number of
streams, and whether the first step's loss, output and gradient norm match the serial schedule's within 1e-3
relative (same seed, same weights); graph rows also compare the first replay's loss with the serial eager loss of
the same step. A failed capture is recorded as that row's result.

Usage (GPU):  torch_concurrency_reference.py --out results.json [--cases inception_v3:8,resnet50:32]
              [--schedules serial,branch-streams] [--modes eager,graph] [--warmup 5 --iters 20]
              [--max-seconds 150] [--child-timeout 90] [--no-isolate]
Usage (CPU check that the rewrites compute the plain model's function):
              torch_concurrency_reference.py --device cpu --dry-run
"""
import argparse
import datetime
import gc
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
    import torch.nn.functional as F
    import torchvision
except ImportError as e:  # a clear message instead of a traceback when the environment lacks PyTorch
    sys.exit("torch_concurrency_reference.py needs torch and torchvision: %s" % e)

from torch_concurrency_schedules import StreamKit, apply_schedule

DEFAULT_CASES = "inception_v3:8,inception_v3:32,googlenet:32,resnet50:32"
SCHEDULES_OF = {"inception_v3": ["serial", "branch-streams"], "googlenet": ["serial", "branch-streams"],
                "resnet50": ["serial", "dgrad-wgrad"]}
IMAGE_SIZE = {"inception_v3": 299, "googlenet": 224, "resnet50": 224}
# Small images for the CPU dry run: the smallest sizes that keep every layer's output non-empty (Inception-v3
# needs at least 75x75) while keeping the run to seconds on two cores.
DRY_IMAGE_SIZE = {"inception_v3": 80, "googlenet": 64, "resnet50": 64}
MATCH_RTOL = 1e-3
SEED = 0


def build_model(name):
    """The torchvision model, its weights drawn from SEED so every schedule starts from the same weights."""
    torch.manual_seed(SEED)
    models = torchvision.models
    try:
        if name == "inception_v3":
            return models.inception_v3(weights=None, aux_logits=False, init_weights=False)
        if name == "googlenet":
            return models.googlenet(weights=None, aux_logits=False, init_weights=False)
        if name == "resnet50":
            return models.resnet50(weights=None)
    except TypeError as e:
        raise RuntimeError("torchvision %s lacks the weights=None builder API (needs >= 0.13): %s"
                           % (torchvision.__version__, e))
    raise ValueError("unknown model %r (known: %s)" % (name, ", ".join(SCHEDULES_OF)))


class Trainer:
    """One model under one schedule with its optimizer and a static random batch made on the device."""

    def __init__(self, model_name, batch, schedule, device, image_size):
        self.device = device
        self.kit = StreamKit(device)
        model = build_model(model_name)
        self.streams = apply_schedule(model, schedule, self.kit)
        self.model = model.to(device).train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        gen = torch.Generator(device=device)
        gen.manual_seed(SEED + 1)
        self.x = torch.randn(batch, 3, image_size, image_size, generator=gen, device=device)
        self.y = torch.randint(0, 1000, (batch,), generator=gen, device=device)

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        out = self.model(self.x)
        loss = F.cross_entropy(out, self.y)
        loss.backward()
        self.opt.step()
        return loss, out

    def checked_first_step(self):
        """The first step from SEED (dropout draws the same masks in every schedule), summarised for the
        comparison with serial; the gradients survive opt.step() until the next zero_grad."""
        torch.manual_seed(SEED)
        loss, out = self.step()
        grads = [p.grad for p in self.model.parameters() if p.grad is not None]
        grad_norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))
        return {"loss": loss.item(), "out_abs_sum": out.double().abs().sum().item(), "grad_norm": grad_norm.item()}

    def close(self):
        del self.model, self.opt, self.x, self.y
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def _summary(values):
    return (round(statistics.median(values), 4), round(min(values), 4)) if values else (None, None)


def _memory():
    return {"max_reserved_bytes": torch.cuda.max_memory_reserved(),
            "max_allocated_bytes": torch.cuda.max_memory_allocated()}


def measure_eager(t, warmup, iters):
    row = {"first_step": t.checked_first_step()}
    losses = [row["first_step"]["loss"]]
    for _ in range(warmup - 1):
        losses.append(t.step()[0].detach())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    host_ms, events = [], []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        loss, _ = t.step()
        end.record()
        torch.cuda.synchronize()
        host_ms.append((time.perf_counter() - t0) * 1e3)
        events.append((start, end))
        losses.append(loss.detach())
    row["host_ms_median"], row["host_ms_min"] = _summary(host_ms)
    row["device_ms_median"], row["device_ms_min"] = _summary([s.elapsed_time(e) for s, e in events])
    row.update(_memory())
    # Losses of every step, so graph rows can compare their first replay with the same step taken eagerly.
    row["loss_trace"] = [float(v) for v in losses]
    return row


def measure_graph(t, warmup, iters):
    # Warm-up on a side stream before capture, as PyTorch's CUDA-graph documentation prescribes (lazy state such
    # as the momentum buffers and cuDNN handles must exist before capture).
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        row = {"first_step": t.checked_first_step()}
        for _ in range(warmup - 1):
            t.step()
    torch.cuda.current_stream().wait_stream(warm)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            static_loss, _ = t.step()
        torch.cuda.synchronize()
    except Exception as e:  # a capture that fails is this row's result, not the end of the run
        row["status"] = "capture-failed"
        row["error"] = "%s: %s" % (type(e).__name__, str(e).strip()[:2000])
        return row
    graph.replay()
    torch.cuda.synchronize()
    row["first_replay_loss"] = static_loss.item()
    host_ms, events = [], []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        host_ms.append((time.perf_counter() - t0) * 1e3)
        events.append((start, end))
    row["host_ms_median"], row["host_ms_min"] = _summary(host_ms)
    row["device_ms_median"], row["device_ms_min"] = _summary([s.elapsed_time(e) for s, e in events])
    row.update(_memory())
    del graph
    return row


def run_case(model_name, batch, schedule, modes, args, emit=None):
    """All modes of one (model, batch, schedule): eager first, so its memory is measured before any capture; each
    mode on a freshly built model (same weights) after the allocator's cache is emptied. emit(row) is called as
    each mode finishes, so a child that dies later still hands back its finished rows."""
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = False  # PyTorch's default, stated so the run does not depend on it
    size = args.image_size or IMAGE_SIZE[model_name]
    rows = []
    for mode in [m for m in ("eager", "graph") if m in modes]:
        row = {"model": model_name, "batch": batch, "schedule": schedule, "mode": mode, "image_size": size}
        t = None
        try:
            t = Trainer(model_name, batch, schedule, device, size)
            row["streams"] = t.streams
            row.update((measure_eager if mode == "eager" else measure_graph)(t, args.warmup, args.iters))
            row.setdefault("status", "ok")
        except Exception as e:
            row["status"] = "error"
            row["error"] = "%s: %s" % (type(e).__name__, str(e).strip()[:2000])
        finally:
            try:
                if t is not None:
                    t.close()
            except Exception as e:  # a failed capture can leave the CUDA context unusable; keep the row
                row["cleanup_error"] = "%s: %s" % (type(e).__name__, str(e).strip()[:500])
        rows.append(row)
        if emit:
            emit(row)
    return rows


def run_child(case, args, timeout):
    """One (model, batch, schedule) in a fresh process of this script, so it starts with an empty allocator."""
    model_name, batch, schedule = case
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "%s:%d:%s" % case, "--modes", ",".join(args.modes),
           "--warmup", str(args.warmup), "--iters", str(args.iters), "--device", args.device]
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    base = {"model": model_name, "batch": batch, "schedule": schedule}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        stdout, why = done.stdout, "child exited %d: %s" % (done.returncode, done.stderr.strip()[-2000:])
        status = "error"
    except subprocess.TimeoutExpired as e:
        stdout, why, status = e.stdout or "", "child exceeded %.0f s" % timeout, "timeout"
        if isinstance(stdout, bytes):
            stdout = stdout.decode(errors="replace")
    # The child prints one JSON line per finished mode; modes it did not finish get the reason it stopped.
    rows = [json.loads(ln)["row"] for ln in stdout.splitlines() if ln.startswith('{"row"')]
    finished = {r["mode"] for r in rows}
    return rows + [dict(base, mode=m, status=status, error=why) for m in args.modes if m not in finished]


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def add_serial_checks(rows):
    """Marks each row with whether its first step matches the serial schedule's (same model and batch; the serial
    row of the same mode, else of the other mode: the first step is the same eager step in both modes)."""
    serial = {(r["model"], r["batch"], r["mode"]): r for r in rows
              if r["schedule"] == "serial" and "first_step" in r}
    for r in rows:
        if "first_step" not in r:
            continue
        key = (r["model"], r["batch"])
        ref = serial.get(key + (r["mode"],)) or serial.get(key + ("graph" if r["mode"] == "eager" else "eager",))
        r["matches_serial"] = None
        if ref is not None:
            diffs = {k: _rel(r["first_step"][k], ref["first_step"][k]) for k in ref["first_step"]}
            r["first_step_rel_diff_vs_serial"] = diffs
            r["matches_serial"] = all(d <= MATCH_RTOL for d in diffs.values())
        eager_ref = serial.get(key + ("eager",))
        if "first_replay_loss" in r and eager_ref and len(eager_ref.get("loss_trace", [])) > r["warmup"]:
            # The first replay is step `warmup` (0-based) of a fresh model; dropout masks come from the
            # generator's offset, which replays advance as eager steps do, so the two should agree.
            d = _rel(r["first_replay_loss"], eager_ref["loss_trace"][r["warmup"]])
            r["replay_rel_diff_vs_serial_eager"] = d
            r["replay_matches_serial_eager"] = d <= MATCH_RTOL


def meta_block():
    meta = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "argv": sys.argv, "python": sys.version.split()[0], "torch": torch.__version__,
            "torchvision": torchvision.__version__, "cudnn": torch.backends.cudnn.version(),
            "cuda_runtime": torch.version.cuda, "device_name": None, "driver": None}
    if torch.cuda.is_available():
        meta["device_name"] = torch.cuda.get_device_name(0)
        try:
            meta["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                            capture_output=True, text=True, timeout=20).stdout.strip() or None
        except (OSError, subprocess.SubprocessError) as e:
            meta["driver"] = "unknown (%s)" % e
    return meta


def write_out(path, meta, rows):
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)  # a run killed mid-write keeps the previous complete file


def print_table(rows):
    print("%-13s %5s %-15s %-6s %10s %10s %9s %9s %7s %s" % ("model", "batch", "schedule", "mode", "host_ms",
          "device_ms", "resv_MiB", "alloc_MiB", "streams", "matches_serial / status"))
    for r in rows:
        mib = lambda k: "%.0f" % (r[k] / 2**20) if r.get(k) is not None else "-"
        note = r.get("status", "?")
        if r.get("status") == "ok":
            note = "match=%s" % r.get("matches_serial")
            if "replay_matches_serial_eager" in r:
                note += " replay_match=%s" % r["replay_matches_serial_eager"]
        elif r.get("error"):
            note += ": " + r["error"].splitlines()[0][:80]
        print("%-13s %5s %-15s %-6s %10s %10s %9s %9s %7s %s" % (r["model"], r["batch"], r["schedule"], r["mode"],
              r.get("host_ms_median", "-"), r.get("device_ms_median", "-"), mib("max_reserved_bytes"),
              mib("max_allocated_bytes"), r.get("streams", "-"), note))


def parse_cases(text):
    cases = []
    for item in text.split(","):
        name, _, batch = item.strip().partition(":")
        if name not in SCHEDULES_OF or not batch.isdigit() or int(batch) < 1:
            print("--cases: bad item %r (want MODEL:BATCH, MODEL one of %s)" % (item, ", ".join(SCHEDULES_OF)),
                  file=sys.stderr)
            sys.exit(2)  # bad input
        cases.append((name, int(batch)))
    return cases


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=DEFAULT_CASES, help="MODEL:BATCH list (default %(default)s)")
    p.add_argument("--schedules", default=None, help="comma list; default: every schedule that applies to a model")
    p.add_argument("--modes", default="eager,graph")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--out", default=None, help="JSON file, rewritten after every case")
    p.add_argument("--max-seconds", type=float, default=None, help="skip the cases left when this is exceeded")
    p.add_argument("--child-timeout", type=float, default=90.0, help="seconds per isolated case")
    p.add_argument("--isolate", dest="isolate", action="store_true", default=True)
    p.add_argument("--no-isolate", dest="isolate", action="store_false")
    p.add_argument("--device", default="cuda")
    p.add_argument("--image-size", type=int, default=None, help="override every model's image size")
    p.add_argument("--dry-run", action="store_true", help="1 step per schedule at batch 2, compare with serial")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    if not args.modes or any(m not in ("eager", "graph") for m in args.modes):
        p.error("--modes: want a comma list of eager, graph")
    if args.warmup < 1 or args.iters < 1:
        p.error("--warmup and --iters must be at least 1 (the first warm-up step is the checked step)")
    if args.schedules is not None:
        args.schedules = [s for s in args.schedules.split(",") if s]
        known = {s for ss in SCHEDULES_OF.values() for s in ss}
        bad = [s for s in args.schedules if s not in known]
        if bad:
            p.error("--schedules: unknown %s (known: %s)" % (", ".join(bad), ", ".join(sorted(known))))
    return args


def main(argv):
    args = parse_args(argv)
    cases = parse_cases(args.cases)
    if args.dry_run:
        from torch_concurrency_dry_run import dry_run
        return dry_run(args, cases, SCHEDULES_OF, DRY_IMAGE_SIZE, build_model)
    if not args.device.startswith("cuda"):
        print("--device %s: timing needs a CUDA device; use --dry-run for the CPU check" % args.device,
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("no CUDA device: use --device cpu --dry-run for the CPU check", file=sys.stderr)
        return 3
    if args.child:
        model_name, batch, schedule = args.child.split(":")
        run_case(model_name, int(batch), schedule, args.modes, args,
                 emit=lambda row: print(json.dumps({"row": dict(row, warmup=args.warmup)}), flush=True))
        return 0
    meta, rows, started = meta_block(), [], time.monotonic()
    cases = [(m, b, s) for m, b in cases for s in SCHEDULES_OF[m]
             if args.schedules is None or s in args.schedules]
    # Serial first within each (model, batch), so every concurrent row has its reference when it is checked.
    for case in cases:
        elapsed = time.monotonic() - started
        if args.max_seconds is not None and elapsed > args.max_seconds:
            rows += [{"model": case[0], "batch": case[1], "schedule": case[2], "mode": m, "status": "skipped",
                      "error": "--max-seconds %.0f exceeded after %.0f s" % (args.max_seconds, elapsed)}
                     for m in args.modes]
        elif args.isolate:
            left = args.child_timeout if args.max_seconds is None else max(
                1.0, min(args.child_timeout, args.max_seconds - elapsed))
            rows += run_child(case, args, left)
        else:
            rows += [dict(r, warmup=args.warmup) for r in run_case(*case, args.modes, args)]
        add_serial_checks(rows)
        write_out(args.out, meta, rows)
        print("done %s:%d:%s after %.0f s" % (case + (time.monotonic() - started,)), file=sys.stderr, flush=True)
    print_table(rows)
    # A failed capture or a skipped case is a recorded result; a crashed or timed-out case or a schedule that
    # computes something else than serial is a failure of the run.
    failed = [r for r in rows if r.get("status") in ("error", "timeout") or r.get("matches_serial") is False]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

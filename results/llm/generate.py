"""The tables of README.md: fine-tuning the Llama-family presets of the zoo (llama3.2-1b, llama3-8b, llama2-7b,
llama2-13b, mistral-7b, qwen2.5-0.5b) on one h100-sxm and one h200, micro-batch 1, AdamW, mixed-bf16 (autocast,
fp32 master weights) and bf16 (the model held in bf16), at sequences 2048 and 8192, with each memory-saving variant
of SAVINGS, and the largest micro-batch each fits (`dlsim fit`).

Per cell: one `dlsim run --json` on the GPU as it is; one on the same GPU with its memory raised (hw_override) so
that the whole iteration runs, which gives the bytes an out-of-memory cell needed; one `dlsim fit --json`. Per
model and precision, one `dlsim run --memory-snapshot` (memory raised) whose allocations are summed by what they
hold: the bytes per parameter of the weights, the optimizer state and the gradients, and what is live at the peak.
A sequence above a preset's max_position_embeddings is skipped with dlsim's own error message.

Raw results: runs.json, fit.json, bytes.json.
"""
import collections
import functools
import json
import os
import pickle
import tempfile

GIB = 2 ** 30
GB = 1e9
MODELS = ["llama3.2-1b", "llama3-8b", "llama2-7b", "llama2-13b", "mistral-7b", "qwen2.5-0.5b"]
SEQS = [2048, 8192]
HWS = ["h100-sxm", "h200"]
PRECISIONS = ["mixed-bf16", "bf16"]
# Memory-saving variants, one (label, swap) each: every table gains a row or column per entry. The zero-offload
# policy's work adds its entry here, e.g. ("zero-offload", {"name": "zero-offload"}).
SAVINGS = [
    ("none", "none"),
    ("checkpoint every 1", {"name": "checkpoint", "every": 1}),  # one segment per decoder layer
    # ZeRO-Offload: fp32 master weights and AdamW state on the host, the step on the CPU; alone, with checkpointing
    # per layer, and with checkpointing and the delayed parameter update.
    ("zero-offload", "zero-offload"),
    ("zero-offload + checkpoint", {"name": "zero-offload", "checkpoint_every": 1}),
    ("zero-offload DPU + checkpoint", {"name": "zero-offload", "checkpoint_every": 1, "delayed_update": True}),
    # FSDP's CPU offload of the parameters too (PyTorch's CPU AdamW steps them), with checkpointing per layer.
    ("param-offload + checkpoint", {"name": "param-offload", "checkpoint_every": 1}),
]
BASIC = {label for label, _ in SAVINGS[:2]}  # no saving and checkpointing: every table shows them
# ZeRO-Offload's claim (13B on one 32 GB V100, fp16 mixed precision): the same runs on that GPU.
PUBLISHED_CELLS = [("llama2-13b", 2048, "v100-sxm2-32gb", "mixed-fp16"),
                   # the 16-bit model on the GPU that ZeRO-Offload keeps there (dlsim has bf16, not pure fp16: the
                   # same bytes; a V100 has no bf16 tensor cores, so its times are not ZeRO-Offload's)
                   ("llama2-13b", 2048, "v100-sxm2-32gb", "bf16")]
MAX_BATCH = 256  # `dlsim fit --max-batch`: far above any batch these models fit at sequence 2048 on 141 GB
UNBOUNDED = {"memory": {"total_mib": 4000000}}  # 3.8 TiB: every iteration here runs to the end
OFFLOAD_MODELS = ("llama3-8b", "llama2-13b")  # the offload table's rows (the others' are in runs.json)


def experiment(model, seq, hw, precision, swap, override=None):
    e = {"model": model, "batch": 1, "seq_len": seq, "hw": hw, "pool": "pytorch-caching", "swap": swap,
         "concurrency": "serial", "iterations": 3, "optimizer": "adamw", "precision": precision}
    if override:
        e["hw_override"] = override
    return e


def memory_breakdown(dlsim, exp):
    """Runs EXP with a memory snapshot and sums its allocations by what they hold (see the module comment)."""
    with tempfile.TemporaryDirectory() as d:
        snap = os.path.join(d, "snap.pickle")
        run = dlsim.json(["run"], exp, ["--memory-snapshot", snap], allow_error=True)
        if "error" in run:
            return run
        with open(snap, "rb") as f:
            trace = pickle.load(f)["device_traces"][0]
    weights = {e["frames"][0]["name"] for e in trace if e["action"] == "alloc" and e["frames"][0]["filename"] == "weight"}

    def category(kind, name):
        if kind == "weight":
            return "weights"
        if kind == "optimizer_state":
            return "optimizer state"
        if kind == "gradient" and name.startswith("grad."):
            base = name[len("grad."):]
            if base in weights:
                return "weight gradients"
            if base.endswith(".bf16") and base[:-len(".bf16")] in weights:
                return "gradients of the 16-bit weight casts"
        if kind == "activation" and name.endswith(".bf16") and name[:-len(".bf16")] in weights:
            return "16-bit weight casts"
        if kind == "workspace" and name.endswith(".adam_denom"):
            return "Adam's per-parameter denominator"
        return {"activation": "activations", "gradient": "activation gradients"}.get(kind, kind)

    live = collections.Counter()  # bytes per category now
    sizes = {}  # addr -> (category, bytes, name)
    most = collections.Counter()  # the most bytes each category held at any moment
    total = peak = 0
    at_peak, tensors_at_peak, peak_at = {}, [], ""
    setup = collections.Counter()
    for e in trace:
        if e["action"] == "alloc":
            fr = e["frames"][0]
            c = category(fr["filename"], fr["name"])
            sizes[e["addr"]] = (c, e["size"], fr["name"])
            live[c] += e["size"]
            total += e["size"]
            most[c] = max(most[c], live[c])
            if fr["line"] == -1:
                setup[c] += e["size"]
            if total > peak:
                peak = total
                at_peak = dict(live)
                peak_at = f"{fr['filename']} '{fr['name']}' (iteration {fr['line']})"
                tensors_at_peak = sorted(sizes.values(), key=lambda x: -x[1])[:8]
        elif e["action"] == "free_completed":
            c, n, _ = sizes.pop(e["addr"])
            live[c] -= n
            total -= n
    return {"peak_live_bytes": peak, "run_peak_live_bytes": run["peak_live_bytes"],
            "iteration_time_us": run["iteration_time_us"], "setup_bytes": dict(setup), "max_bytes": dict(most),
            "at_peak_bytes": at_peak, "peak_reached_by": peak_at,
            "largest_tensors_at_peak": [{"name": n, "category": c, "bytes": b} for c, b, n in tensors_at_peak]}


def gib(b):
    return f"{b / GIB:.1f}"


def run_grid(study):
    """Every cell's runs and fits, the memory breakdowns, and the (model, sequence) pairs dlsim refuses."""
    dl = study.dlsim
    pairs = [(m, s) for m in MODELS for s in SEQS]
    # Which (model, sequence) exist: dlsim model names a sequence above max_position_embeddings.
    described = dict(zip(pairs, dl.parallel([functools.partial(
        dl.json, ["model", m, "--batch", "1", "--seq-len", str(s)], allow_error=True) for m, s in pairs])))
    cells = [(m, s, hw, p) for m in MODELS for s in SEQS for hw in HWS for p in PRECISIONS
             if "error" not in described[(m, s)]]
    cells += PUBLISHED_CELLS
    jobs = []
    for m, s, hw, p in cells:
        for label, swap in SAVINGS:
            key = {"model": m, "seq": s, "hw": hw, "precision": p, "saving": label}
            jobs.append(("run", key, ["run"], experiment(m, s, hw, p, swap), ()))
            jobs.append(("need", key, ["run"], experiment(m, s, hw, p, swap, UNBOUNDED), ()))
            jobs.append(("fit", key, ["fit"], experiment(m, s, hw, p, swap), ("--max-batch", str(MAX_BATCH))))
    breakdowns = [(m, s, p, label, swap) for m in MODELS for s in SEQS for p in PRECISIONS for label, swap in SAVINGS
                  if "error" not in described[(m, s)]]
    results = dl.parallel([functools.partial(dl.json, args, e, extra, allow_error=True)
                           for _, _, args, e, extra in jobs] +
                          [functools.partial(memory_breakdown, dl, experiment(m, s, "h100-sxm", p, swap, UNBOUNDED))
                           for m, s, p, _, swap in breakdowns])
    rows = {}
    for (kind, key, _, e, _), r in zip(jobs, results):
        row = rows.setdefault(tuple(key.values()), dict(key))
        row[kind] = {"experiment": e, "result": r}
    bytes_rows = [{"model": m, "seq": s, "precision": p, "saving": label, "params": described[(m, s)]["params"],
                   "breakdown": b} for (m, s, p, label, _), b in zip(breakdowns, results[len(jobs):])]
    return described, rows, bytes_rows


def cells_table(runs, precision):
    """Every cell of one precision (no saving and checkpointing; the offloads have a table of their own)."""
    out = ["| model | seq | GPU | saving | outcome | peak reserved (GiB) | peak live (GiB) | iteration (s) | "
           "tokens/s | largest micro-batch | tokens/s there |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        if r["precision"] != precision or r["saving"] not in BASIC:
            continue
        j, need, fit = r["run"]["result"], r["need"]["result"], r["fit"]["result"]
        lead = f"| {r['model']} | {r['seq']} | {r['hw']} | {r['saving']} |"
        if "error" in j or "error" in need:
            out.append(f"{lead} error: {j.get('error') or need.get('error')} | | | | | | |")
            continue
        if j["oom"]:
            where = "at setup" if j["oom_where"].startswith("setup") else "in the iteration"
            outcome = f"**OOM** {where}"
            mem = f"needs {gib(need['peak_reserved_bytes'])} | needs {gib(need['peak_live_bytes'])}"
            it = f"({need['iteration_time_us'] / 1e6:.2f})"
            tps = ""
        else:
            outcome = "fits"
            mem = f"{gib(j['peak_reserved_bytes'])} | {gib(j['peak_live_bytes'])}"
            it = f"{j['iteration_time_us'] / 1e6:.2f}"
            tps = f"{r['seq'] / (j['iteration_time_us'] / 1e6):.0f}"
        if "error" in fit:
            fb = f"error: {fit['error']} |"
        else:
            mb = fit["max_batch"]
            fb = (f"{mb}{'+' if mb == MAX_BATCH else ''} | "
                  + (f"{mb * r['seq'] / (fit['iteration_time_us'] / 1e6):.0f}" if mb else ""))
        out.append(f"{lead} {outcome} | {mem} | {it} | {tps} | {fb} |")
    return "\n".join(out)


def micro_batch_table(rows):
    """The largest micro-batch, one column per GPU and saving."""
    cols = [(hw, label) for hw in HWS for label, _ in SAVINGS]
    out = ["| model | seq | precision | " + " | ".join(f"{hw}, {label}" for hw, label in cols) + " |",
           "|---|---|---|" + "---|" * len(cols)]
    for m in MODELS:
        for s in SEQS:
            for p in PRECISIONS:
                cells = []
                for hw, label in cols:
                    r = rows.get((m, s, hw, p, label))
                    if not r:
                        cells.append("—")
                        continue
                    f = r["fit"]["result"]
                    cells.append(f.get("error", str(f.get("max_batch"))))
                if all(c == "—" for c in cells):
                    continue
                out.append(f"| {m} | {s} | {p} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def bytes_per_parameter_table(bytes_rows):
    """The most each kind of tensor held at any moment, divided by the parameters (no saving, the first sequence,
    memory raised: they do not depend on the sequence)."""
    cats = ["weights", "optimizer state", "weight gradients", "16-bit weight casts",
            "gradients of the 16-bit weight casts", "Adam's per-parameter denominator"]
    out = ["| model | precision | params | " + " | ".join(cats) + " |", "|---|---|---|" + "---|" * len(cats)]
    for b in bytes_rows:
        d = b["breakdown"]
        if b["saving"] != SAVINGS[0][0] or b["seq"] != SEQS[0]:
            continue
        if "error" in d:
            out.append(f"| {b['model']} | {b['precision']} | error: {d['error']} |")
            continue
        n = b["params"]
        out.append(f"| {b['model']} | {b['precision']} | {n} | " +
                   " | ".join(f"{d['max_bytes'].get(c, 0) / n:.2f}" for c in cats) + " |")
    return "\n".join(out)


def offload_table(runs, rows):
    """The zero-offload and param-offload rows of OFFLOAD_MODELS: the CPU step, the host memory and the traffic."""
    out = ["| model | seq | GPU | precision | saving | outcome | peak reserved | iteration (s) | CPU step (s) | "
           "host fp32 state | to host per iteration | from host per iteration | no saving, memory raised (s) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        if not r["saving"].startswith(("zero-offload", "param-offload")) or r["model"] not in OFFLOAD_MODELS:
            continue
        j, need = r["run"]["result"], r["need"]["result"]
        base = rows.get((r["model"], r["seq"], r["hw"], r["precision"], SAVINGS[0][0]))
        b = base["need"]["result"] if base else {}
        bt = f"{b['iteration_time_us'] / 1e6:.2f}" if "iteration_time_us" in b else ""
        lead = f"| {r['model']} | {r['seq']} | {r['hw']} | {r['precision']} | {r['saving']} |"
        if "error" in j or "error" in need:
            out.append(f"{lead} error: {j.get('error') or need.get('error')} | | | | | | | |")
            continue
        src = need if j["oom"] else j
        outcome = "**OOM**" if j["oom"] else "fits"
        res = f"needs {gib(need['peak_reserved_bytes'])}" if j["oom"] else gib(j["peak_reserved_bytes"])
        it = f"({need['iteration_time_us'] / 1e6:.2f})" if j["oom"] else f"{j['iteration_time_us'] / 1e6:.2f}"
        out.append(f"{lead} {outcome} | {res} | {it} | {src['host_step_us'] / 1e6:.2f} | "
                   f"{gib(src['host_optimizer_bytes'])} | {gib(src['swap_out_bytes'])} | "
                   f"{gib(src['swap_in_bytes'])} | {bt} |")
    return "\n".join(out)


def live_at_peak_table(bytes_rows):
    """What is live at each run's peak (memory raised; the offloads: Llama-3-8B's rows only)."""
    out = ["| model | seq | precision | saving | peak live | weights + optimizer state | weight gradients | "
           "16-bit weight casts (+ their gradients) | activations | activation gradients | other | reached by |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in bytes_rows:
        d = b["breakdown"]
        if b["saving"] not in BASIC and b["model"] != "llama3-8b":
            continue
        lead = f"| {b['model']} | {b['seq']} | {b['precision']} | {b['saving']} |"
        if "error" in d:
            out.append(f"{lead} error: {d['error']} |")
            continue
        at = dict(d["at_peak_bytes"])
        state = at.pop("weights", 0) + at.pop("optimizer state", 0)
        grads = at.pop("weight gradients", 0)
        casts = at.pop("16-bit weight casts", 0) + at.pop("gradients of the 16-bit weight casts", 0)
        acts, agrads = at.pop("activations", 0), at.pop("activation gradients", 0)
        other = sum(at.values())
        check = "" if d["peak_live_bytes"] == d["run_peak_live_bytes"] else " (differs from the run's peak)"
        out.append(f"{lead} {gib(d['peak_live_bytes'])}{check} | {gib(state)} | {gib(grads)} | {gib(casts)} | "
                   f"{gib(acts)} | {gib(agrads)} | {gib(other)} | {d['peak_reached_by']} |")
    return "\n".join(out)


def generate(study):
    described, rows, bytes_rows = run_grid(study)
    runs = list(rows.values())
    skipped = [{"model": m, "seq": s, "reason": described[(m, s)]["error"]} for (m, s) in described
               if "error" in described[(m, s)]]
    with open(study.path("runs.json"), "w") as f:
        json.dump({"models": {f"{m} seq {s}": d for (m, s), d in described.items()}, "skipped": skipped,
                   "runs": [{k: v for k, v in r.items() if k != "fit"} for r in runs]}, f, indent=1, sort_keys=True)
    with open(study.path("fit.json"), "w") as f:
        json.dump([{k: v for k, v in r.items() if k not in ("run", "need")} for r in runs], f, indent=1,
                  sort_keys=True)
    with open(study.path("bytes.json"), "w") as f:
        json.dump(bytes_rows, f, indent=1, sort_keys=True)
    for precision in ["mixed-bf16", "bf16", "mixed-fp16"]:
        study.block(f"cells-{precision}", cells_table(runs, precision))
    study.block("micro-batch", micro_batch_table(rows))
    study.block("bytes-per-parameter", bytes_per_parameter_table(bytes_rows))
    study.block("offload", offload_table(runs, rows))
    study.block("live-at-peak", live_at_peak_table(bytes_rows))

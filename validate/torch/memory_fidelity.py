#!/usr/bin/env python3
"""How close dlsim's device memory is to PyTorch's caching allocator on a real GPU (issue 29, item 4);
results/fidelity/memory.md is this script's report.

  validate/torch/memory_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity/memory.md]

Measured (results/fidelity/data/h200-2026-11-27b/, one H200, PyTorch 2.11, cuDNN 9.19; its README has the commands):
- memory-truth*.json (torch_memory_truth.py): max_memory_reserved/allocated over 2 steps after 3 warm-ups, and a
  memory-history snapshot analysed into what is live at the peak of allocated bytes, with cuDNN/cuBLAS workspaces
  picked out by their C++ stack;
- step-profiles.json (torch_step_profile.py): max_memory_reserved/allocated over 10 eager steps of 11 CNNs;
- conv-workspace.json (conv_workspace_probe.py): per convolution shape, pass and dtype, what cuDNN asked of the
  allocator beyond the operands and the result (one gradient a call, batch 32); and h200-2026-11-28b's
  conv-workspace-bwd.json: the same probe's forward and both gradients in one call, at each step's batch.

Predicted: `dlsim run --json` on h200 with pool pytorch-caching, no swap (Hugging Face checkpointing, which the
measured Qwen step used, is `swap: {name: checkpoint, every: 1}` for the zoo graph; the traced step recorded it),
serial, PyTorch's first step (`first_step: lazy`, the default on pytorch-caching; memory_first_step.py's block sets
it against the state preallocated) and 3 iterations after it (the peaks are over all of them, as the allocator's are
over warm-ups and measured steps), of
(a) the zoo model and (b) the fake-tensor trace of the same step (`dlsim import-torch`, torch 2.11, kept gzipped in
results/fidelity/data/memory-traces/). Reserved is `peak_reserved_bytes` against max_memory_reserved; allocated is
`peak_live_bytes` (tensor bytes, no 512-B rounding) against max_memory_allocated. Nothing is fitted here.

The lent H100's cases (results/fidelity/data/h100-2026-11-27c/: Qwen2.5-0.5B without checkpointing with a
snapshot, and the peaks of 2 LLM and 13 CNN eager steps) are memory_h100.py's, on h100-sxm; GPT-2 small as a
causal LM on the lent H200 of 2026-11-28 (results/fidelity/data/h200-2026-11-28/) is memory_h200_lm.py's, on h200;
Llama 3.2 1B and Qwen2.5-0.5B b8 on the second lease that day (data/h200-2026-11-28b/) memory_h200_llama.py's;
Inception-v3 b32's segments (dlsim's cudaMalloc calls beside the measured pool counts and the segments of session
12's H200, and a what-if run) are memory_segment_openings.py's; GPT-2's segments after each warm-up step (session 12's
H200, data/h200-2026-11-28c/) beside dlsim's after each iteration memory_gpt2_segments.py's.
"""
import gzip
import json
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import conv_scratch_yaml  # noqa: E402  (the probe's records as a hardware file's conv_scratch list)
import memory_h100  # noqa: E402  (the lent H100's cases)
import memory_h200_lm  # noqa: E402  (GPT-2 as a causal LM on the lent H200 of 2026-11-28)
import memory_gpt2_segments  # noqa: E402  (GPT-2's segments after each warm-up step, session 12's H200)
import memory_h200_llama  # noqa: E402  (Llama 3.2 1B and Qwen b8 on the second H200 lease of 2026-11-28)
import memory_first_step  # noqa: E402  (the first step preallocated against lazy)
import memory_segment_openings  # noqa: E402  (Inception-v3's segments: dlsim's cudaMalloc calls and a what-if)
import memory_unprobed  # noqa: E402  (CNNs whose convolutions no probe measured: the nearest geometries' scratch)
import fit_host_model as host  # noqa: E402  (emit_report: the generated blocks and their provenance)
from fit_host_model import pct  # noqa: E402  (the signed error of a prediction, as every report prints it)

DATA = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-27b"
TRACES = ROOT / "results" / "fidelity" / "data" / "memory-traces"
MIB = 1 << 20
KIB = 1 << 10
HEURISTIC_CAP = 64 * MIB  # workloads/training.cc: an eighth of input + output bytes, at most 64 MiB

QWEN = {"model": "qwen2.5-0.5b", "seq_len": 2048, "precision": "mixed-bf16", "optimizer": "adamw",
        "swap": {"name": "checkpoint", "every": 1}}
# memory-truth file -> (case label, zoo experiment keys, trace file)
TRUTH = [("memory-truth.json", "Qwen2.5-0.5B b4 s2048 bf16 AdamW, HF ckpt", QWEN, "qwen2.5-0.5b-hf-b4-s2048"),
         ("memory-truth.json", "ResNet-50 b32", {"model": "resnet50"}, "resnet50-b32"),
         ("memory-truth-vgg16-b64.json", "VGG-16 b64", {"model": "vgg16"}, "vgg16-b64"),
         ("memory-truth-inception_v3-b32.json", "Inception-v3 b32", {"model": "inception_v3"}, "inception_v3-b32"),
         ("memory-truth-mobilenet_v2-b64.json", "MobileNet-V2 b64", {"model": "mobilenet_v2"}, "mobilenet_v2-b64"),
         ("memory-truth-googlenet-b32.json", "GoogLeNet b32", {"model": "googlenet"}, "googlenet-b32"),
         ("memory-truth-densenet121-b32.json", "DenseNet-121 b32", {"model": "densenet121"}, "densenet121-b32")]


def unpacked_trace(tmp, name):
    """data/memory-traces/NAME.torchstep.json.gz unpacked into the folder `tmp` (dlsim reads plain JSON), once."""
    out = pathlib.Path(tmp) / f"{name}.torchstep.json"
    if not out.exists():
        with gzip.open(TRACES / f"{name}.torchstep.json.gz", "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
    return out


class Dlsim:
    def __init__(self, binary, tmp):
        self.binary, self.tmp, self.n = binary, pathlib.Path(tmp), 0

    def trace(self, name):
        return unpacked_trace(self.tmp, name)

    def scratch_hw(self, which="both"):
        """h200 with measured cuDNN scratch (validate/torch/conv_scratch_yaml.py), float32 records: `one`, the
        2026-11-27 probe alone (one gradient a call, batch 32); `both`, it with the 2026-11-28 probe laid over it
        (h200-2026-11-28b: forward and both gradients in one call, at each step's measured batch)."""
        path = self.tmp / f"h200-conv-scratch-{which}.yaml"
        if not path.exists():
            probes = [json.loads((DATA / "conv-workspace.json").read_text())]
            if which == "both":
                probes.append(json.loads(BWD_PROBE.read_text()))
            probe = probes[0] if len(probes) == 1 else conv_scratch_yaml.merge(probes)
            path.write_text(conv_scratch_yaml.to_yaml(probe, {"float32"}, base="h200"))
        return str(path)

    def no_scratch_hw(self):
        """h200 without the measured scratch it ships (an empty conv_scratch list: the 1/8 rule alone)."""
        path = self.tmp / "h200-no-conv-scratch.yaml"
        path.write_text("base: h200\nconv_scratch: []\n")
        return str(path)

    def run(self, keys, batch, hw="h200"):
        self.n += 1
        exp = self.tmp / f"exp{self.n}.yaml"
        doc = {"batch": batch, "hw": hw, "pool": "pytorch-caching", "swap": "none", "concurrency": "serial",
               "iterations": 3}
        doc.update(keys)
        exp.write_text(json.dumps(doc))
        cmd = [self.binary, "run", str(exp), "--json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"memory_fidelity: {' '.join(cmd)} ({json.dumps(doc)}) failed ({r.returncode}): "
                             f"{r.stderr.strip()}")
        return json.loads(r.stdout)


def mib(b):
    return f"{b / MIB:,.0f}"


def truth_case(path, trace):
    """The measured case of `path` whose model and batch are the trace's (name-bB...)."""
    name, rest = trace.split("-b", 1) if not trace.startswith("qwen") else ("Qwen2.5-0.5B", trace.split("-b", 1)[1])
    batch = int(rest.split("-")[0])
    for c in json.loads((DATA / path).read_text())["cases"]:
        if c.get("status") == "ok" and c["case"]["batch"] == batch and name in c["case"]["spec"]:
            return c
    raise SystemExit(f"memory_fidelity: {DATA / path}: no measured case of {name} at batch {batch}")


def category(frame):
    """What a live block at the measured peak is, from the frame torch_memory_truth.py grouped it under."""
    if frame.startswith("workspace:"):
        return "cublas workspace" if "cublas" in frame.lower() or "Blas" in frame else "cudnn workspace"
    if frame.startswith("autograd:"):
        return "backward outputs"
    if frame.startswith(("sgd.py", "adam.py", "optimizer.py")):
        return "optimizer (state, foreach temporaries)"
    return "forward, parameters, inputs (no finer frame)"


def live_breakdown(snapshot):
    out = {}
    for g in snapshot["live_at_peak_by_frame"]:
        k = category(g["frame"])
        out[k] = out.get(k, 0) + g["bytes"]
    return out


def comparison(dlsim):
    rows, notes = [], []
    for path, label, keys, trace in TRUTH:
        c = truth_case(path, trace)
        batch, m = c["case"]["batch"], c["measured"]
        zoo = dlsim.run(keys, batch)
        # The trace carries its precision, optimizer and checkpointing.
        tr = dlsim.run({"model": str(dlsim.trace(trace))}, batch)
        res, alloc = m["max_memory_reserved"], m["max_memory_allocated"]
        rows.append(f"| {label} | {mib(res)} | {mib(zoo['peak_reserved_bytes'])} ({pct(zoo['peak_reserved_bytes'], res)})"
                    f" | {mib(tr['peak_reserved_bytes'])} ({pct(tr['peak_reserved_bytes'], res)}) | {mib(alloc)} | "
                    f"{mib(zoo['peak_live_bytes'])} ({pct(zoo['peak_live_bytes'], alloc)}) | "
                    f"{mib(tr['peak_live_bytes'])} ({pct(tr['peak_live_bytes'], alloc)}) | "
                    f"{m['num_device_alloc']} / {zoo['device_mallocs']} / {tr['device_mallocs']} |")
        s = c["snapshot"]
        parts = live_breakdown(s)
        ws = s["workspaces"]
        # What dlsim's recorded step is meant to hold: the measured peak less what neither the trace nor dlsim's
        # pytorch-caching run of it has (the 512-B rounding, which peak_live_bytes leaves out, and cuDNN's scratch,
        # which a recorded step gets only from a conv_scratch list); the cuBLAS workspaces dlsim adds itself
        # (hw/cublas_workspace.h), so they stay in.
        rest = alloc - (m["allocated_bytes.all.peak"] - m["requested_bytes.all.peak"]) - \
            parts.get("cudnn workspace", 0)
        notes.append(f"| {label} | {mib(s['peak_allocated_bytes'])} | "
                     f"{mib(m['allocated_bytes.all.peak'] - m['requested_bytes.all.peak'])} | "
                     + " | ".join(mib(parts.get(k, 0)) for k in ("forward, parameters, inputs (no finer frame)",
                                                                  "backward outputs",
                                                                  "optimizer (state, foreach temporaries)",
                                                                  "cudnn workspace", "cublas workspace"))
                     + f" | {mib(ws['max_bytes'])} | {mib(m['inactive_split_bytes.all.peak'])} | "
                       f"{mib(res - alloc)} | {mib(zoo['peak_reserved_bytes'] - zoo['peak_live_bytes'])} | "
                       f"{mib(rest)} | {mib(tr['peak_live_bytes'])} ({pct(tr['peak_live_bytes'], rest)}) |")
    table = ["MiB. dlsim's error against the measurement in brackets. Segments: cudaMalloc calls measured / zoo / "
             "traced.", "",
             "| case | measured reserved | dlsim zoo | dlsim traced | measured allocated | dlsim zoo live | "
             "dlsim traced live | segments |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"] + rows
    live = ["What is live at the measured peak of allocated bytes (the snapshot of the 2 measured steps), MiB, by "
            "the frame that allocated it (`forward, parameters, inputs`: every block whose stack named no finer "
            "frame); the allocator's rounding at the peak; the largest cuDNN workspace (convolution or attention) "
            "of the measured steps; the allocator's "
            "largest inactive split bytes; reserved less allocated, measured and dlsim's zoo graph.", "",
            "| case | live at peak | 512-B rounding (allocated - requested peaks) | forward, parameters, inputs | backward outputs | optimizer | cuDNN workspace "
            "| cuBLAS workspace | largest cuDNN workspace | inactive split (measured) | reserved - allocated "
            "(measured) | reserved - live (dlsim zoo) | allocated less rounding and cuDNN's workspace at the peak | "
            "dlsim traced live |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + notes
    return "\n".join(table), "\n".join(live)


def step_profiles(dlsim):
    recs = json.loads((DATA / "step-profiles.json").read_text())["records"]
    rows, errs = [], {"zr": [], "tr": [], "za": [], "ta": []}
    for r in recs:
        name, b = r["case"].rsplit("-b", 1)
        batch = int(b)
        zoo = dlsim.run({"model": name}, batch)
        tr = dlsim.run({"model": str(dlsim.trace(r["case"]))}, batch)
        res, alloc = r["max_memory_reserved_bytes"], r["max_memory_allocated_bytes"]
        for key, p, mm in (("zr", zoo["peak_reserved_bytes"], res), ("tr", tr["peak_reserved_bytes"], res),
                           ("za", zoo["peak_live_bytes"], alloc), ("ta", tr["peak_live_bytes"], alloc)):
            errs[key].append(p / mm - 1)
        rows.append(f"| {r['case']} | {mib(res)} | {mib(zoo['peak_reserved_bytes'])} "
                    f"({pct(zoo['peak_reserved_bytes'], res)}) | {mib(tr['peak_reserved_bytes'])} "
                    f"({pct(tr['peak_reserved_bytes'], res)}) | {mib(alloc)} | {mib(zoo['peak_live_bytes'])} "
                    f"({pct(zoo['peak_live_bytes'], alloc)}) | {mib(tr['peak_live_bytes'])} "
                    f"({pct(tr['peak_live_bytes'], alloc)}) |")

    def mape(e):
        return f"{100.0 * sum(abs(x) for x in e) / len(e):.1f} % (signed mean {100.0 * sum(e) / len(e):+.1f} %)"
    return "\n".join(["MiB, over 10 eager steps (fp32, SGD momentum). dlsim's error in brackets.", "",
                      "| case | measured reserved | dlsim zoo | dlsim traced | measured allocated | dlsim zoo live | "
                      "dlsim traced live |", "|---|---:|---:|---:|---:|---:|---:|"] + rows +
                     ["", f"Mean absolute error, reserved: zoo {mape(errs['zr'])}, traced {mape(errs['tr'])}; "
                          f"allocated: zoo {mape(errs['za'])}, traced {mape(errs['ta'])}."])


BWD_PROBE = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-28b" / "conv-workspace-bwd.json"


def with_scratch(dlsim):
    """Every case again on h200 with the measured scratch, the 2026-11-27 probe's alone and with the 2026-11-28
    probe's two-gradient calls at the measured batches: the change each makes, zoo and traced."""
    cases = [(label, keys, trace, truth_case(path, trace)["case"]["batch"],
              truth_case(path, trace)["measured"]["max_memory_reserved"],
              truth_case(path, trace)["measured"]["max_memory_allocated"]) for path, label, keys, trace in TRUTH]
    have = {t for _, _, t, *_ in cases}
    for r in json.loads((DATA / "step-profiles.json").read_text())["records"]:
        if r["case"] not in have:
            name, b = r["case"].rsplit("-b", 1)
            cases.append((r["case"], {"model": name}, r["case"], int(b), r["max_memory_reserved_bytes"],
                          r["max_memory_allocated_bytes"]))
    rows, live = [], []
    cols = [(g, hw) for g in ("zoo", "traced") for hw in ("h200", "one", "both")]
    errs = {(g, hw, m): [] for g, hw in cols for m in ("r", "a")}
    for label, keys, trace, batch, res, alloc in cases:
        model = {"zoo": keys, "traced": {"model": str(dlsim.trace(trace))}}
        p = {(g, hw): dlsim.run(model[g], batch, dlsim.no_scratch_hw() if hw == "h200" else dlsim.scratch_hw(hw)) for g, hw in cols}
        for (g, hw), x in p.items():
            errs[(g, hw, "r")].append(x["peak_reserved_bytes"] / res - 1)
            errs[(g, hw, "a")].append(x["peak_live_bytes"] / alloc - 1)
        rows.append(f"| {label} | {mib(res)} | " + " | ".join(
            f"{mib(p[c]['peak_reserved_bytes'])} ({pct(p[c]['peak_reserved_bytes'], res)})" for c in cols) + " |")
        live.append(f"| {label} | {mib(alloc)} | " + " | ".join(
            f"{mib(p[c]['peak_live_bytes'])} ({pct(p[c]['peak_live_bytes'], alloc)})" for c in cols) + " |")

    def summary(m):
        def one(e):
            worst = max(e, key=abs)
            return f"{100.0 * sum(abs(x) for x in e) / len(e):.1f} % (worst {100.0 * worst:+.1f} %)"
        return "; ".join(f"{g} " + " -> ".join(one(errs[(g, hw, m)]) for hw in ("h200", "one", "both"))
                         for g in ("zoo", "traced"))
    head = " | ".join(f"{g}, {hw}" for g, hw in cols)
    return "\n".join(["MiB; dlsim's error against the measurement in brackets. `h200`: the shipped file without "
                      "its `conv_scratch` list (its zoo graphs then charge 1/8 of a convolution's input + output "
                      "bytes, at most 64 MiB, recorded steps nothing); `one`: the same file with the 2026-11-27 probe's fp32 records as `conv_scratch` "
                      "(one gradient a call, batch 32, scaled linearly to the step's batch); `both`: with the "
                      "2026-11-28 probe's records laid over those (forward, and both gradients in one call as a "
                      "`bwd` entry, at the step's batch; validate/torch/conv_scratch_yaml.py): what `h200` ships.", "",
                      "Reserved:", "", f"| case | measured reserved | {head} |",
                      "|---|---:|" + "---:|" * len(cols)] + rows +
                     ["", "Allocated (dlsim's live peak):", "", f"| case | measured allocated | {head} |",
                      "|---|---:|" + "---:|" * len(cols)] + live +
                     ["", f"Mean absolute error over the {len(cases)} cases, h200 -> one -> both. Reserved: "
                          f"{summary('r')}. Allocated: {summary('a')}.", "", batch_scaling()])


def batch_scaling():
    """What linear scaling from batch 32 made of the probes' two-gradient scratch at the steps' larger batches:
    per model measured at another batch, the 2026-11-27 probe's batch-32 scratch of the call (the larger of its
    one-gradient calls' records) times batch / 32, against the 2026-11-28 probe's at that batch."""
    one = {}
    for r in json.loads((DATA / "conv-workspace.json").read_text())["records"]:
        if r["dtype"] == "float32" and r["op"] in ("conv_dgrad", "conv_wgrad") and r["n"] == 32:
            k = conv_scratch_yaml.geometry(r)
            one[k] = max(one.get(k, 0), r["scratch_bytes"])
    rows = []
    by_model = {}
    same = []  # at batch 32, both probes: (one-gradient calls' larger, two-gradient call)
    for r in json.loads(BWD_PROBE.read_text())["records"]:
        if r["op"] == "conv_bwd" and r["n"] != 32:
            by_model.setdefault((r["src"].split(":")[-1], r["n"]), []).append(r)
        elif r["op"] == "conv_bwd" and conv_scratch_yaml.geometry(r) in one:
            same.append((one[conv_scratch_yaml.geometry(r)], r["scratch_bytes"]))
    for (model, n), recs in sorted(by_model.items()):
        pairs = [(one[conv_scratch_yaml.geometry(r)] * n // 32, r["scratch_bytes"]) for r in recs
                 if conv_scratch_yaml.geometry(r) in one]
        if not pairs:
            rows.append(f"| {model} | {n} | {len(recs)} | 0 | | | | | |")
            continue
        within = sum(abs(s - m) <= max(0.1 * m, MIB) for s, m in pairs)
        big_s, big_m = max(s for s, _ in pairs), max(m for _, m in pairs)
        rows.append(f"| {model} | {n} | {len(recs)} | {len(pairs)} | {within} | {mib(sum(s for s, _ in pairs))} | "
                    f"{mib(sum(m for _, m in pairs))} | {mib(big_s)} | {mib(big_m)} |")
    return "\n".join(["Linear batch scaling against the measurement, per model measured at a batch other than 32: "
                      "the batch-32 probe's scratch of a backward call (its one-gradient records' larger) scaled to "
                      "the batch, and the two-gradient call measured at that batch. MiB.", "",
                      "| model | batch | convolutions | with a batch-32 record | scaled within 10 % or 1 MiB | "
                      "scaled, sum | measured, sum | scaled, largest | measured, largest |",
                      "|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows +
                     ["", f"At batch 32, on the {len(same)} convolutions both probes measured, the two-gradient "
                          f"call's scratch is within 1 MiB of the larger of the one-gradient calls' in "
                          f"{sum(abs(a - b) <= MIB for a, b in same)} (sums {mib(sum(a for a, _ in same))} and "
                          f"{mib(sum(b for _, b in same))} MiB, largest difference "
                          f"{max(abs(a - b) for a, b in same) / MIB:.1f} MiB)."])


def conv_out(x, r, stride, pad):
    return (x + 2 * pad - r) // stride + 1


def pair(v):
    return v[0] if isinstance(v, list) else v


def workspaces():
    """What the probe measured per pass, fp32 NCHW at batch 32, against dlsim's zoo rule (1/8 of the forward
    op's input + output bytes, at most 64 MiB)."""
    recs = json.loads((DATA / "conv-workspace.json").read_text())["records"]
    rows, big = [], []
    for p in ("conv_fwd", "conv_dgrad", "conv_wgrad"):
        sel = [r for r in recs if r["op"] == p and r["dtype"] == "float32"]
        n = len(sel)
        measured, rule = 0, 0
        over_rule, over_cap, zero = 0, 0, 0
        for r in sel:
            s, pd = pair(r["stride"]), pair(r["pad"])
            oh, ow = conv_out(r["h"], r["r"], s, pd), conv_out(r["w"], r["s"], s, pd)
            io = 4 * r["n"] * (r["c"] * r["h"] * r["w"] + r["k"] * oh * ow)
            h = min(HEURISTIC_CAP, io // 8)
            measured += r["scratch_bytes"]
            rule += h
            over_rule += r["scratch_bytes"] > h
            over_cap += r["scratch_bytes"] > HEURISTIC_CAP
            zero += r["scratch_bytes"] == 0
            big.append((r["scratch_bytes"], p, r, h))
        largest = max(r["scratch_bytes"] for r in sel)
        rows.append(f"| {p.split('_')[1]} | {n} | {zero} | {over_rule} | {over_cap} | {mib(measured)} | {mib(rule)} | "
                    f"{measured / rule:.2f} | {mib(largest)} |")
    big.sort(key=lambda t: (-t[0], t[1], t[2]["src"]))
    top = [f"| {p.split('_')[1]} | {r['src'].split(':')[-1]} | {r['c']}x{r['h']}x{r['w']} -> {r['k']}, "
           f"{r['r']}x{r['s']} s{pair(r['stride'])} | {mib(s)} | {mib(h)} |" for s, p, r, h in big[:10]]
    return "\n".join(["fp32 NCHW (TF32 on), batch 32, cuDNN's heuristics (benchmark off). MiB.", "",
                      "| pass | shapes | no scratch | above dlsim's rule | above 64 MiB | measured, sum | dlsim's rule, "
                      "sum | ratio | largest |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows +
                     ["", "The ten largest:", "", "| pass | model | input -> out channels, kernel | measured | "
                      "dlsim's rule |", "|---|---|---|---:|---:|"] + top)


def first_step(dlsim):
    """Every case with a memory measurement, the first step preallocated against lazy (memory_first_step.py)."""
    cases = []
    for path, label, keys, trace in TRUTH:
        c = truth_case(path, trace)
        cases.append((label, c["measured"]["max_memory_reserved"], c["measured"]["num_device_alloc"], keys,
                      dlsim.trace(trace), c["case"]["batch"], "h200"))
    lm = memory_h200_lm
    for name, keys, trace, label in (("memory-truth-gpt2-none.json", lm.KEYS, lm.TRACE, lm.LABEL + ", no checkpointing"),
                                     ("memory-truth-gpt2-hf-nostacks.json", dict(lm.KEYS, swap={"name": "checkpoint", "every": 1}),
                                      lm.TRACE_HF, lm.LABEL + ", HF checkpointing")):
        m = json.loads((lm.DATA / name).read_text())["cases"][0]["measured"]
        cases.append((label, m["max_memory_reserved"], m["num_device_alloc"], keys, dlsim.trace(trace), 8, lm.HW))
    h = memory_h100
    label, keys, trace = h.CASES["Qwen2.5-0.5B-b4-s2048-mixed-bf16"]
    m = json.loads((h.DATA / "memory-truth.json").read_text())["cases"][0]["measured"]
    cases.append((label + ", no checkpointing (H100)", m["max_memory_reserved"], m["num_device_alloc"], keys,
                  dlsim.trace(trace), 4, h.HW))
    failed = json.loads((lm.DATA / "memory-truth-gpt2-hf.json").read_text())["cases"][0]["measured"]
    return memory_first_step.table(dlsim, cases, (
        "GPT-2 with HF checkpointing under the memory history (memory-truth-gpt2-hf.json)", failed,
        dict(lm.KEYS, swap={"name": "checkpoint", "every": 1}), dlsim.trace(lm.TRACE_HF), 8, lm.HW))


def main():
    def generate(_, binary, tmp):
        dlsim = Dlsim(binary, str(tmp))
        peaks, live = comparison(dlsim)
        return {"truth": peaks, "live-at-peak": live, "step-profiles": step_profiles(dlsim),
                "conv-workspace": workspaces(), "with-scratch": with_scratch(dlsim),
                "h100-qwen": memory_h100.qwen_snapshot(dlsim), "h100-step-profiles": memory_h100.peaks(dlsim),
                "h200-gpt2": memory_h200_lm.gpt2(dlsim),
                "h200-gpt2-segments": memory_gpt2_segments.gpt2_segments(dlsim),
                "h200-llama": memory_h200_llama.llama(dlsim),
                "first-step": first_step(dlsim), "segment-openings": memory_segment_openings.inception(dlsim),
                "unprobed-convolutions": memory_unprobed.unprobed(dlsim)}
    return host.report_main("memory_fidelity", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())

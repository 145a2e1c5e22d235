#!/usr/bin/env python3
"""dlsim's step time for Hugging Face causal-LM training against the lent H100's and H200's measurements (issue 28),
kernel class by kernel class; results/fidelity/llm-steps.md is this script's report.

  validate/torch/llm_step_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity/llm-steps.md]

Measured (results/fidelity/data/h100-2026-11-27c/, torch_step_profile.py; its README has the commands): Qwen2.5-0.5B
b4 s2048 and GPT-2 small b8 s1024, random weights, bf16 autocast, fp32 AdamW (foreach), no checkpointing, PyTorch
2.11, transformers 5.17: the median synchronised eager step over 10 steps, and from the torch.profiler trace of 2
more steps the GPU's busy time (the sum of the kernels' durations) and every kernel's name and duration. AdamW
without `capturable` refuses CUDA-graph capture, so the busy time is the only device time there is.

Predicted: `dlsim run --json --chrome-trace` (launch eager, sync_every_step, pool pytorch-caching, no swap, serial,
2 iterations; fit_host_model.step_experiment) of (a) the zoo preset with the measured precision, optimizer and
sequence and (b) the fake-tensor recording of the same step (`dlsim import-torch`, results/fidelity/data/
memory-traces/), on h100-sxm (kernel model fitted to the H200 sweep and the H100's CNN traces, plus PyTorch's eager
host), h100-sxm-harness (the harness-calibrated H100),
h100-sxm-datasheet (the datasheet's roofline) and "sweep fit": `dlsim fit-kernels` of the same H100 lease's
graph-timed kernel sweep (data/h100-2026-11-27c/kernels-graph.json: GEMMs of random shapes and the CNNs' classifier
layers, causal SDPA of random shapes, six memory-bound ops at six sizes; no shape of these two models) over
h100-sxm-datasheet, the file a user makes for a GPU from a sweep and the datasheet. The step is
`iteration_time_us`, the device time `device_time_us`; per class, dlsim's kernels of the last iteration from its
Chrome trace, by op kind and name, against the measured kernels by name (CLASSES below). Nothing is fitted to
these steps.

The lent H200 (results/fidelity/data/h200-2026-11-28/, the same script and software): GPT-2 small as the causal LM
(GPT2LMHeadModel) b8 s1024 and Qwen2.5-0.5B b4 s2048, measured as above plus the whole-step CUDA-graph replay (AdamW
rebuilt with capturable=True), a second device-time measurement beside the busy time; the profiler traces are in
traces.tar. dlsim as above on h200 (h200-fitted plus PyTorch's eager host fitted on an H200 machine), h200-fitted
(the kernel model fitted to an event-timed PyTorch sweep on an H200 and the H200's CNN profiler traces), h200-datasheet and "sweep fit" (fit-kernels
of h200-2026-11-27b/kernels-graph.json, a graph-timed sweep of the earlier H200 lease, over h200-datasheet); the
recorded GPT-2 is the causal LM's (data/memory-traces/gpt2-lm-b8-s1024).

Session 12's lent H200 (results/fidelity/data/h200-2026-11-28c/step-profile-llama1b.json, no profiler trace): Llama
3.2 1B b2 s2048, bf16 autocast, AdamW (foreach), a model no hardware file was fitted on, against the shipped h200
alone: the zoo's llama3.2-1b and the recording llama3.2-1b-b2-s2048 (checked to have the measured batch, sequence,
precision, optimizer and no checkpointing), `launch: eager` against the eager step and its device time against the
busy time, `launch: cuda-graph` against the whole-step replay (AdamW capturable); dlsim's classes without a
measured column (block h200c-llama).
"""
import collections
import gzip
import json
import pathlib
import re
import subprocess
import sys
import tarfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402  (step_experiment, report_main)
import memory_fidelity  # noqa: E402  (unpacked_trace: the recorded steps it compares too)
from fit_host_model import pct  # noqa: E402

ROOT = HERE.parent.parent
FIDELITY = ROOT / "results" / "fidelity" / "data"
LLM = {"precision": "mixed-bf16", "optimizer": "adamw"}
QWEN = ("Qwen2.5-0.5B-b4-s2048-mixed-bf16", "Qwen2.5-0.5B b4 s2048", dict(model="qwen2.5-0.5b", seq_len=2048, **LLM),
        "qwen2.5-0.5b-b4-s2048")


class Machine:
    """One lease's measurement and the hardware files dlsim runs for it: cases are (profile case, label, zoo
    experiment keys, recorded step), columns the (source, hardware) runs of the class table and their headers."""

    def __init__(self, name, data, hw, sweep, sweep_base, cases, columns, headers, replay):
        self.name, self.data, self.hw, self.sweep, self.sweep_base = name, data, hw, sweep, sweep_base
        self.cases, self.columns, self.headers, self.replay = cases, columns, headers, replay

    def kernels_trace(self, case):
        """The profiler trace's events of a case: traces/CASE.json.gz, loose or in traces.tar."""
        member = f"traces/{case}.json.gz"
        if (self.data / member).exists():
            with gzip.open(self.data / member, "rt") as f:
                return json.load(f)["traceEvents"]
        with tarfile.open(self.data / "traces.tar") as t:
            return json.loads(gzip.decompress(t.extractfile(member).read()))["traceEvents"]


H100 = Machine("H100", FIDELITY / "h100-2026-11-27c",
               ["h100-sxm", "h100-sxm-harness", "h100-sxm-datasheet", "sweep fit"],
               FIDELITY / "h100-2026-11-27c" / "kernels-graph.json", "h100-sxm-datasheet",
               [QWEN, ("gpt2-b8-s1024-mixed-bf16", "GPT-2 small b8 s1024 (measured: GPT2Model)",
                       dict(model="gpt2-small", seq_len=1024, **LLM), "gpt2-b8-s1024")],
               [("zoo", "h100-sxm"), ("traced", "h100-sxm"), ("zoo", "h100-sxm-datasheet"), ("zoo", "sweep fit")],
               ["zoo, h100-sxm", "traced, h100-sxm", "zoo, datasheet", "zoo, sweep fit"], False)
# The H200 lease measured GPT-2 as the causal LM (GPT2LMHeadModel), and the whole-step graph replay of both.
H200 = Machine("H200", FIDELITY / "h200-2026-11-28", ["h200", "h200-fitted", "h200-datasheet", "sweep fit"],
               FIDELITY / "h200-2026-11-27b" / "kernels-graph.json", "h200-datasheet",
               [QWEN, ("gpt2-b8-s1024-mixed-bf16", "GPT-2 small b8 s1024 (causal LM)",
                       dict(model="gpt2-small", seq_len=1024, **LLM), "gpt2-lm-b8-s1024")],
               [("zoo", "h200"), ("traced", "h200"), ("zoo", "h200-fitted"), ("zoo", "h200-datasheet"),
                ("zoo", "sweep fit")],
               ["zoo, h200", "traced, h200", "zoo, h200-fitted", "zoo, datasheet", "zoo, sweep fit"], True)

# Session 12's lent H200: Llama 3.2 1B, a model no dlsim file was fitted on, measured without a profiler trace.
LLAMA = ("Llama-3.2-1B-b2-s2048-mixed-bf16", "Llama 3.2 1B b2 s2048", dict(model="llama3.2-1b", seq_len=2048, **LLM),
         "llama3.2-1b-b2-s2048")
LLAMA_DATA = FIDELITY / "h200-2026-11-28c" / "step-profile-llama1b.json"

CLASSES = ["GEMM", "attention", "loss (softmax, NLL)", "optimizer", "casts and copies", "other elementwise, norms, "
           "reductions"]
# A measured kernel's class by its name (first match).
MEASURED_RULES = [("attention", r"sdpa|fmha|flash|cudnn::fusion"),
                  ("GEMM", r"nvjet|gemm|cutlass|xmma|splitKreduce"),
                  ("loss (softmax, NLL)", r"SoftMax|nll_loss"),
                  ("optimizer", r"multi_tensor_apply"),
                  ("casts and copies", r"copy_kernel")]


def measured_class(name, rules=MEASURED_RULES, other=CLASSES[-1]):
    """A measured kernel's class: the first of `rules` whose pattern its name matches, else `other`."""
    for cls, pattern in rules:
        if re.search(pattern, name):
            return cls
    return other


def dlsim_class(kind, name):
    """A dlsim kernel's class by its op kind (the trace event's category) and op name."""
    if kind.startswith("CrossEntropyLoss") or re.search(r"log_softmax|nll_loss", name):
        return "loss (softmax, NLL)"
    # GPT-2's explicit attention: the zoo's ops by their names, the recording's forward ops by their module (its
    # backward ops carry none, so they count as GEMM and elementwise).
    if kind.startswith("FlashAttention") or (not kind.startswith(("Linear", "Copy")) and re.search(
            r"\.attn\.(scale|attn_dropout|softmax|mask|scores|context)|\.attn/", name)):
        return "attention"
    if kind == "AdamUpdate" or "_foreach_" in name:
        return "optimizer"
    if kind.startswith(("Linear", "MatMul")):
        return "GEMM"
    if kind == "Copy":
        return "casts and copies"
    return CLASSES[-1]


def measured_kernels(machine, case):
    """{class: (µs per step, kernels per step)} and the step's kernel count, from the profiler trace's 2 steps."""
    steps = 2
    us, n = collections.Counter(), collections.Counter()
    for e in machine.kernels_trace(case):
        if e.get("cat") == "kernel":
            c = measured_class(e["name"])
            us[c] += e["dur"] / steps
            n[c] += 1 / steps
    return us, n


class Runner:
    def __init__(self, binary, tmp):
        self.binary, self.tmp, self.n = binary, pathlib.Path(tmp), 0

    def trace(self, name):
        return str(memory_fidelity.unpacked_trace(self.tmp, name))

    def hw(self, label, machine):
        """A hardware name, or for "sweep fit" the file fit-kernels makes from the machine's sweep over its
        datasheet file."""
        if label != "sweep fit":
            return label
        out = self.tmp / f"{machine.name.lower()}-sweep-fit.yaml"
        if not out.exists():
            cmd = [self.binary, "fit-kernels", str(machine.sweep), "--hw", machine.sweep_base, "--out", str(out)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"llm_step_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        return str(out)

    def run(self, keys, batch, hw, machine, launch="eager", classify=None):
        """The run's JSON and {class: (µs, kernels)} of its last iteration (by `classify`, default dlsim_class)."""
        hw = self.hw(hw, machine)
        self.n += 1
        doc = host.step_experiment(keys["model"], batch, hw, launch)
        doc.pop("weight_decay", None)  # the CNN steps' SGD decay: these steps are AdamW's (its decay in `keys`)
        doc.update(keys)
        exp, chrome = self.tmp / f"exp{self.n}.yaml", self.tmp / f"trace{self.n}.json"
        exp.write_text(json.dumps(doc))
        cmd = [self.binary, "run", str(exp), "--json", "--chrome-trace", str(chrome)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"llm_step_fidelity: {' '.join(cmd)} ({json.dumps(doc)}) failed ({r.returncode}): "
                             f"{r.stderr.strip()}")
        result = json.loads(r.stdout)
        self.last_chrome = chrome  # the run's Chrome trace, for a caller's own breakdown
        last = result["iterations_completed"] - 1
        us, n = collections.Counter(), collections.Counter()
        for e in json.loads(chrome.read_text())["traceEvents"]:
            if e.get("ph") == "X" and e.get("tid", -1) >= 0 and e.get("cat") not in ("host", "copy", "iteration") \
                    and e["args"].get("iteration") == last:
                c = (classify or dlsim_class)(e["cat"], e["name"])
                us[c] += e["dur"]
                n[c] += 1
        return result, (us, n)


def ms(us):
    return f"{us / 1000.0:,.2f}"


def step_table(machine, rows):
    """The step table: the H100's (no replay) or with the graph replay as a second device-time measurement."""
    lead = (f"ms per step on the {machine.name}; dlsim's error against the measurement in brackets: the eager step "
            "against the measured synchronised eager step, the device time against the GPU's busy time")
    if not machine.replay:
        return [lead + ". Host: dlsim's host time per step, and which of host and device bounds its step. Kernels: "
                "per step (dlsim: kernels of its last iteration).", "",
                "| case | dlsim model | hardware file | eager step | device time | host (bound) | kernels |",
                "|---|---|---|---:|---:|---:|---:|"] + rows
    return [lead + " and against the whole-step CUDA-graph replay (AdamW rebuilt capturable). Host: dlsim's host "
            "time per step, and which of host and device bounds its step. Kernels: per step (dlsim: kernels of its "
            "last iteration; measured: of the profiled eager step).", "",
            "| case | dlsim model | hardware file | eager step | device time (vs busy) | graph replay | "
            "host (bound) | kernels |", "|---|---|---|---:|---:|---:|---:|---:|"] + rows


def steps(runner, machine):
    """Per case: the measured step against each dlsim source and hardware file."""
    recs = {r["case"]: r for r in json.loads((machine.data / "step-profiles.json").read_text())["records"]}
    rows, breakdowns = [], []
    for case, label, keys, trace in machine.cases:
        r = recs[case]
        wall, busy = r["eager_wall_ms_median"] * 1000.0, r["gpu_busy_ms_per_iteration"] * 1000.0
        replay = r.get("graph_replay_ms_median", 0.0) * 1000.0
        kernels = r["kernels_per_iteration"]
        rows.append(f"| {label} | measured | | {ms(wall)} | {ms(busy)} | " + (f"{ms(replay)} | " if machine.replay
                                                                             else "") + f"| {kernels:,.0f} |")
        runs = {}
        for source, k in (("zoo", keys), ("traced", {"model": runner.trace(trace)})):
            for hw in machine.hw:
                res, per = runner.run(k, r["batch"], hw, machine)
                runs[(source, hw)] = per
                dev = res["device_time_us"]
                rows.append(f"| | {source} | {hw} | {ms(res['iteration_time_us'])} "
                            f"({pct(res['iteration_time_us'], wall)}) | {ms(dev)} ({pct(dev, busy)}) | "
                            + (f"{pct(dev, replay)} | " if machine.replay else "") +
                            f"{ms(res['host_time_us'])} ({res['bound']}) | {sum(per[1].values()):,.0f} |")
        mus, mn = measured_kernels(machine, case)
        lines = [f"**{label}**: ms per step (kernels per step); dlsim's error against the measured class in brackets.",
                 "", "| class | measured | " + " | ".join(machine.headers) + " |",
                 "|---|---:|" + "---:|" * len(machine.headers)]
        for c in CLASSES + ["total"]:
            m = sum(mus.values()) if c == "total" else mus[c]
            mk = sum(mn.values()) if c == "total" else mn[c]
            cells = []
            for col in machine.columns:
                us, n = runs[col]
                p = sum(us.values()) if c == "total" else us[c]
                pk = sum(n.values()) if c == "total" else n[c]
                cells.append(f"{ms(p)} ({pk:,.0f}; {pct(p, m) if m else 'n/a'})")
            lines.append(f"| {c} | {ms(m)} ({mk:,.0f}) | " + " | ".join(cells) + " |")
        breakdowns.append("\n".join(lines))
    return "\n".join(step_table(machine, rows)), "\n\n".join(breakdowns)


def llama_heldout(runner):
    """Llama 3.2 1B on session 12's lent H200 (LLAMA_DATA: no profiler trace, so no measured class), against the
    shipped h200 alone: eager with its host, and cuda-graph against the whole-step replay."""
    doc = json.loads(LLAMA_DATA.read_text())
    r = {x["case"]: x for x in doc["records"]}[LLAMA[0]]
    case, label, keys, trace = LLAMA
    path = runner.trace(trace)
    step = json.loads(pathlib.Path(path).read_text())["step"]
    recorded = (step["batch"], step["seq_len"], step["precision"], step["optimizer"], step["checkpointing"]["mode"])
    if recorded != (r["batch"], r["seq_len"], r["precision"], r["optimizer"], "none"):
        raise SystemExit(f"llm_step_fidelity: {trace} records {recorded}, the measured {case} is "
                         f"{(r['batch'], r['seq_len'], r['precision'], r['optimizer'], 'none')}")
    wall, busy = r["eager_wall_ms_median"] * 1000.0, r["gpu_busy_ms_per_iteration"] * 1000.0
    replay = r["graph_replay_ms_median"] * 1000.0
    rows = [f"| measured | {ms(wall)} | | {ms(busy)} | {ms(replay)} | {r['kernels_per_iteration']:,.0f} |"]
    per_class = {}
    for source, k in (("zoo", keys), ("traced", {"model": path})):
        eager, per = runner.run(k, r["batch"], "h200", None)
        graph, _ = runner.run(k, r["batch"], "h200", None, launch="cuda-graph")
        per_class[source] = per
        dev, it = eager["device_time_us"], graph["iteration_time_us"]
        rows.append(f"| {source}, h200 | {ms(eager['iteration_time_us'])} ({pct(eager['iteration_time_us'], wall)}) "
                    f"| {ms(eager['host_time_us'])} ({eager['bound']}) | {ms(dev)} ({pct(dev, busy)}) | "
                    f"{ms(it)} ({pct(it, replay)}) | {sum(per[1].values()):,.0f} |")
    table = [f"{label}, bf16 autocast, AdamW (foreach), on the H200 of `h200-2026-11-28c` ({r['torch']}); ms per "
             "step, dlsim's error against the measurement in brackets: `launch: eager` against the synchronised "
             "eager step, its device time against the GPU's busy time (profiled eager steps), `launch: cuda-graph` "
             f"against the whole-step replay ({r['graph_optimizer']}). Hardware file: the shipped `h200`. Kernels: "
             "per step (dlsim: kernels of its last eager iteration).", "",
             "| | eager step | host (bound) | device time (vs busy) | cuda-graph (vs replay) | kernels |",
             "|---|---:|---:|---:|---:|---:|"] + rows
    classes = ["dlsim's kernel time by class (ms per step, kernels in brackets; the lease kept no trace of this "
               "step, so there is no measured column):", "", "| class | zoo, h200 | traced, h200 |", "|---|---:|---:|"]
    for c in CLASSES + ["total"]:
        cells = []
        for source in ("zoo", "traced"):
            us, n = per_class[source]
            cells.append(f"{ms(sum(us.values()) if c == 'total' else us[c])} "
                         f"({sum(n.values()) if c == 'total' else n[c]:,.0f})")
        classes.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(table + [""] + classes)


def main():
    def generate(_, binary, tmp):
        runner = Runner(binary, tmp)
        table, classes = steps(runner, H100)
        h200_table, h200_classes = steps(runner, H200)
        return {"steps": table, "classes": classes, "h200-steps": h200_table, "h200-classes": h200_classes,
                "h200c-llama": llama_heldout(runner)}
    return host.report_main("llm_step_fidelity", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())

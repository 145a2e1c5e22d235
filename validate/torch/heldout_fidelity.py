#!/usr/bin/env python3
"""Models no hardware file was fitted on (issue 28: "held-out models measured on the same GPUs come within 10 %"):
nine torchvision CNNs measured on the lent H200 on 2026-11-28, predicted with the shipped `h200` file before
anything is refitted on them, then the leave-one-model-out figures with them added to the eleven fitted ones
(results/fidelity.md's section "Models no file was fitted on").

  validate/torch/heldout_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity.md] [--no-lomo]

Measured (torch_step_profile.py, results/fidelity/data/h200-2026-11-28b/: step-profiles.json, traces.tar): PyTorch
2.11 fp32 training steps, SGD momentum 0.9 with weight decay 1e-4, the eager wall time per synchronised step, the
whole step's CUDA-graph replay, the kernels per step and each kernel's CUPTI duration (two profiled eager steps).
Simulated: VGG-19 as the zoo builds it; the eight CNNs the zoo lacks as `dlsim import-torch torchvision:NAME --batch
B` recorded them (PyTorch 2.11 on the CPU, fake tensors; committed gzipped in data/memory-traces/, so this report
regenerates without PyTorch 2.x; the recording's SGD has no weight decay, whose out-of-place foreach the host
section charges per parameter). Every dlsim run as step_fidelity.py's: pool pytorch-caching, no swap, serial, two
iterations (the second's), eager with `sync_every_step: true` against the eager wall, cuda-graph against the replay.

1. Held out: `h200.yaml` fitted as before the nine were measured (on the eleven CNNs of h200-2026-11-27b only;
   ship_hw_files.py now fits its kernel model on the nine's traces too): the kernel model, as the code now fits it,
   fitted to the sweeps and the eleven's profiler traces, the host to their profiles. Kernels per step: dlsim's
   kernels of its last iteration (its Chrome trace) against the trace's. Per kernel class, the measured kernels
   (each attributed to the aten op that launched it, by the profiler's External id) against dlsim's kernels of the
   cuda-graph run (by op kind and name): the same classes on both sides (CLASSES).
2. Leave one model out over the twenty (the eleven of h200-2026-11-27b and these nine), as step_fidelity.py's
   *sweep + traces*: the kernel model fitted onto h200-datasheet.yaml to the H200 sweep less the held-out model's
   records and the other models' profiler traces (those the trace matcher takes), the replays' idle time per kernel
   from the same models, and the host section fitted (fit_host_model.py) on the profiles of the other models of
   the same machine (the host is the CPU's: the two leases' machines ran the same aten ops at different speeds).
"""
import collections
import gzip
import json
import multiprocessing
import pathlib
import re
import subprocess
import sys
import tarfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402
import ship_hw_files as ship  # noqa: E402
import step_fidelity as sf  # noqa: E402

HELD_OUT = "h200-2026-11-28b"
FITTED = "h200-2026-11-27b"
STEPS = 2  # profiled eager steps per trace
# A kernel's class, from the aten op that launched it (measured) or dlsim's op kind and name: first match.
CLASSES = [("optimizer", r"_foreach|sgd"),
           ("convolution", r"conv"),
           ("GEMM", r"matmul|linear|(^|[ /:])(mm|addmm|bmm)\b"),
           ("normalisation", r"norm"),
           ("pooling", r"pool"),
           ("loss", r"softmax|nll_loss|cross_?entropy"),
           ("activation", r"relu|gelu|silu|hardswish|hardsigmoid|sigmoid|threshold|hardtanh|tanh"),
           ("reduction", r"(^|[ /:])(sum|mean)\b"),
           ("copy, cat, layout", r"copy|clone|contiguous|(^|[ /:_])cat\b|concat|narrow|slice|transpose|permute"),
           ("dropout, random", r"bernoulli|dropout"),
           ("other elementwise", r"")]


def kernel_class(text):
    text = text.lower()
    return next(c for c, pattern in CLASSES if re.search(pattern, text))


def launching_ops(trace_events):
    """{External id: name} of the outermost aten op around each host op (the op the model's code called: a kernel
    of aten::mean under aten::adaptive_avg_pool2d is the pooling's, of aten::addmm under aten::linear the linear
    layer's), by the host ops' nesting on each thread."""
    by_thread = collections.defaultdict(list)
    for e in trace_events:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            by_thread[e["tid"]].append(e)
    out = {}
    for events in by_thread.values():
        stack = []
        for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            stack.append(e)
            outer = next((s["name"] for s in stack if s["name"].startswith("aten::")), e["name"])
            out[e["args"]["External id"]] = outer
    return out


def measured_kernels(trace_events):
    """{class: [kernels, µs]} per step of a profiler trace, each kernel classed by the op that launched it."""
    ops = launching_ops(trace_events)
    out = collections.defaultdict(lambda: [0.0, 0.0])
    for e in trace_events:
        if e.get("cat") == "kernel":
            c = out[kernel_class(ops.get(e["args"].get("External id"), e["name"]))]
            c[0] += 1 / STEPS
            c[1] += e["dur"] / STEPS
    return out


def dlsim_kernels(dlsim, model, batch, hw, launch):
    """`dlsim run` of a case: (its JSON, {class: [kernels, µs]} of its last iteration's kernels)."""
    dlsim.n += 1
    exp, chrome = dlsim.tmp / f"exp{dlsim.n}.yaml", dlsim.tmp / f"trace{dlsim.n}.json"
    exp.write_text(json.dumps(host.step_experiment(dlsim.model(model, batch), batch, hw, launch)))
    cmd = [dlsim.binary, "run", str(exp), "--json", "--chrome-trace", str(chrome)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"heldout_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    result = json.loads(r.stdout)
    last = result["iterations_completed"] - 1
    out = collections.defaultdict(lambda: [0, 0.0])
    for e in json.loads(chrome.read_text())["traceEvents"]:
        if e.get("ph") == "X" and e.get("tid", -1) >= 0 and e.get("cat") not in ("host", "copy", "iteration") \
                and e["args"].get("iteration") == last:
            c = out[kernel_class(f"{e['cat']} {e['name'].rsplit('/', 1)[-1].split('#')[0]}")]
            c[0] += 1
            c[1] += e["dur"]
    return result, out


def trace_events(tar, case):
    with tarfile.open(tar) as t:
        return json.loads(gzip.decompress(t.extractfile(f"traces/{case}.json.gz").read()))["traceEvents"]


def eleven_only_file(dlsim, tmp, profiles, folder):
    """`h200.yaml` fitted as before the nine were measured (ship_hw_files.py's fit to commit cc1cc91, with the
    kernel model as the code now fits it): the kernel model fitted to the sweeps of then (the 2026-11-27 sweep and
    2026-11-28b's LLM GEMMs: none of session 12's, which hold the nine's layers) and the eleven's profiler traces,
    the host to the eleven's profiles."""
    traced_hw, _ = sf.fit_kernels(dlsim, tmp, "h200-datasheet", "none-b0",
                                  traces=(folder, profiles, list(profiles)), extra_sweeps=[sf.LLM_SWEEP],
                                  model_sweeps=[])
    base, _ = host.with_device_fixed(dlsim, str(traced_hw), profiles, list(profiles))
    hw, _ = with_host(dlsim, base, profiles, list(profiles))
    return hw


def held_out_report(dlsim, profiles, tar, hw):
    rows, classes, dev, eager = [], [], [], []
    for case, p in profiles.items():
        model, batch = host.CASES[case]
        e_run, _ = dlsim_kernels(dlsim, model, batch, hw, "eager")
        g_run, per_class = dlsim_kernels(dlsim, model, batch, hw, "cuda-graph")
        e_ms, g_ms = e_run["iteration_time_us"] / 1000, g_run["iteration_time_us"] / 1000
        replay, wall = p["graph_replay_ms_median"], p["eager_wall_ms_median"]
        dev.append(sf.err(g_ms, replay))
        eager.append(sf.err(e_ms, wall))
        n_dlsim = sum(v[0] for v in per_class.values())
        busy = sum(v[1] for v in per_class.values()) / 1000
        how = "zoo" if model == case.rsplit("-b", 1)[0] else "recorded"
        rows.append(f"| {case} ({how}) | {replay:.2f} | {g_ms:.2f} ({sf.pct(sf.err(g_ms, replay))}) | "
                    f"{p['gpu_busy_ms_per_iteration']:.2f} | {busy:.2f} | {wall:.2f} | "
                    f"{e_ms:.2f} ({sf.pct(sf.err(e_ms, wall))}) | {e_run['bound']} | "
                    f"{p['kernels_per_iteration']:.0f} / {p['graph_kernels_per_replay']:.0f} | {n_dlsim} |")
        measured = measured_kernels(trace_events(tar, case))
        classes += class_table(case, measured, per_class, replay, g_ms)
    head = ["`h200.yaml` fitted as it was before these nine were measured: the kernel model (as the code now fits "
            "it) to the sweeps and the profiler traces of the eleven CNNs of `h200-2026-11-27b`, the host to their "
            "profiles; nothing of the nine in it (the file shipped to commit cc1cc91 was this fit with the kernel "
            "model of then: device 11.6 %, eager 19.2 % here). ms per step; "
            "the error against the measurement in brackets. Kernels: per step, the eager trace's / the replay "
            "trace's, and dlsim's last iteration. *kernels ms*: the sum of the kernels' durations (CUPTI; dlsim's "
            "cuda-graph run).", "",
            "| model | replay ms | dlsim cuda-graph | kernels ms | dlsim kernels ms | eager ms | dlsim eager | bound "
            "| kernels measured (eager / replay) | dlsim kernels |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    tail = ["", f"Held out, `h200.yaml` before the nine: device time (cuda-graph vs replay) MAPE {sf.mape(dev)}; eager step MAPE "
            f"{sf.mape(eager)}.", ""]
    intro = ["Per kernel class, ms per step: the measured kernels (two profiled eager steps, averaged; each classed "
             "by the aten op that launched it) against dlsim's (the cuda-graph run above, by op kind and name), "
             "kernels per step in brackets; classes within 0.2 ms summed in *others*. *idle*: the replay less its "
             "kernels (measured), dlsim's cuda-graph step less its kernels.", ""]
    return head + rows + tail + intro + classes, dev, eager


HOST_OPS = ["aten::conv2d", "aten::convolution_backward", "aten::batch_norm", "aten::cudnn_batch_norm_backward",
            "aten::relu_", "aten::threshold_backward", "aten::add_", "aten::cat", "aten::linear", "aten::detach"]


def host_per_call_table(fitted, held):
    """The profiled host time per call of the aten ops both leases profiled (pooled over each lease's models, as
    fit_host_model.py pools them): whether the held-out lease's CPU ran PyTorch's host side as fast."""
    rows = ["| aten op | µs per call, h200-2026-11-27b (calls per step, all models) | h200-2026-11-28b (calls) | ratio |",
            "|---|---:|---:|---:|"]
    for op in HOST_OPS:
        a, b = ([host.calls(c, op) for c in group.values()] for group in (fitted, held))
        na, nb = sum(n for n, _ in a), sum(n for n, _ in b)
        if na and nb:
            ua, ub = 1000 * sum(ms for _, ms in a) / na, 1000 * sum(ms for _, ms in b) / nb
            rows.append(f"| `{op}` | {ua:.1f} ({na:.0f}) | {ub:.1f} ({nb:.0f}) | {ub / ua:.2f} |")
    return rows


def class_table(case, measured, predicted, replay, g_ms):
    out = [f"**{case}**", "", "| class | measured ms (kernels) | dlsim ms (kernels) | dlsim - measured ms |",
           "|---|---:|---:|---:|"]
    other = [0.0, 0.0, 0.0, 0.0]
    names = [c for c, _ in CLASSES if c in measured or c in predicted]
    for c in sorted(names, key=lambda c: -abs(predicted.get(c, [0, 0])[1] - measured.get(c, [0, 0])[1])):
        mk, mus = measured.get(c, [0, 0.0])
        dk, dus = predicted.get(c, [0, 0.0])
        if abs(dus - mus) < 200:
            other = [other[0] + mk, other[1] + mus, other[2] + dk, other[3] + dus]
            continue
        out.append(f"| {c} | {mus / 1000:.2f} ({mk:.0f}) | {dus / 1000:.2f} ({dk}) | {(dus - mus) / 1000:+.2f} |")
    if other[0] or other[2]:
        out.append(f"| others | {other[1] / 1000:.2f} ({other[0]:.0f}) | {other[3] / 1000:.2f} ({other[2]:.0f}) | "
                   f"{(other[3] - other[1]) / 1000:+.2f} |")
    mus = sum(v[1] for v in measured.values())
    dus = sum(v[1] for v in predicted.values())
    out.append(f"| all kernels | {mus / 1000:.2f} | {dus / 1000:.2f} | {(dus - mus) / 1000:+.2f} |")
    idle, d_idle = replay - mus / 1000, g_ms - dus / 1000
    out.append(f"| idle | {idle:.2f} | {d_idle:.2f} | {d_idle - idle:+.2f} |")
    return out + [""]


def trace_folder(tmp, leases):
    """One folder of every model's eager profiler trace (NAME.json.gz), as step_fidelity.trace_args reads them,
    each from its lease ({case: the lease's step-profile file, relative to the data folder})."""
    folder = tmp / "traces" / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    for case, profiles in leases.items():
        (folder / f"{case}.json.gz").write_bytes(host.lease_trace(profiles, case))
    return folder


def unmatched(dlsim, tmp, folder, names):
    """The models whose traces `dlsim calibrate --torch-profile`'s matcher refuses (more than a tenth of their ops
    match no op of dlsim's graph: views and layout ops the recording or the zoo has no op for), left out of the
    kernel fits as step_fidelity.UNMATCHED_TRACES are. {case: the matcher's first line}."""
    out = {}
    for n in names:
        args = sf.trace_args(dlsim, tmp, folder, [n], "h200-datasheet")
        cmd = [dlsim.binary, "calibrate", "--torch-profile", args[1], "--experiment", args[3], "--hw", "h200-datasheet",
               "--out", str(tmp / "matcher-check.yaml")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            if "match no op" not in r.stderr:
                raise SystemExit(f"heldout_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
            out[n] = r.stderr.strip().splitlines()[0]
    return out


def times(dlsim, model, batch, hw):
    eager, _ = dlsim.run(model, batch, hw, launch="eager", trace=False)
    graph, _ = dlsim.run(model, batch, hw, launch="cuda-graph", trace=False)
    return eager["iteration_time_us"] / 1000.0, graph["iteration_time_us"] / 1000.0, eager["bound"]


def kernel_file(dlsim, tmp, profiles, folder, held, train):
    """step_fidelity.py's *sweep + traces* file fitted on `train` (the sweeps less `held`'s records, the traces of
    `train`)."""
    traced_hw, _ = sf.fit_kernels(dlsim, tmp, "h200-datasheet", held, traces=(folder, profiles, train))
    base, fixed = host.with_device_fixed(dlsim, str(traced_hw), profiles, train)
    if fixed is not None:
        raise SystemExit(f"heldout_fidelity: {traced_hw} still holds the dispatch in its fixed costs")
    return base


def with_host(dlsim, base, host_profiles, host_train):
    """`base` with the host section fitted on the profiles `host_train` of `host_profiles`: (the file, the costs)."""
    _, _, costs = host.fit(dlsim, str(base), host_profiles, host_train)
    return dlsim.hw_file(str(base), costs), costs


def fitted_file(dlsim, tmp, profiles, folder, held, train, host_profiles, host_train):
    """kernel_file with_host: (the file, the host costs)."""
    return with_host(dlsim, kernel_file(dlsim, tmp, profiles, folder, held, train), host_profiles, host_train)


def fold(job):
    """One fit (in its own folder, so that folds run as parallel processes): the file whose kernel model is fitted
    without `held`, with the host fitted on every machine's profiles but `held`'s (pooled), and with each machine's
    own host fitted on its other models (own); (eager ms, cuda-graph ms, bound) of `held` on each: ({"pooled": times,
    machine: times}, the pooled host costs)."""
    binary, tmp, folder, profiles, host_profiles, refused, held = job
    sf.UNMATCHED_TRACES.update(refused)
    tmp.mkdir(parents=True, exist_ok=True)
    dlsim = host.Dlsim(binary, tmp)
    try:
        base = kernel_file(dlsim, tmp, profiles, folder, held, [n for n in profiles if n != held])
        hw, costs = with_host(dlsim, base, host_profiles, [n for n in host_profiles if n.split("@")[0] != held])
        out = {"pooled": times(dlsim, *host.CASES[held], hw)}
        for machine in sorted({n.split("@")[1] for n in host_profiles if n.split("@")[0] == held}):
            own = [n for n in host_profiles if n.endswith(f"@{machine}") and n.split("@")[0] != held]
            if len(own) >= 2:  # a machine of three models (the issue's) leaves two to fit on
                out[machine] = times(dlsim, *host.CASES[held], with_host(dlsim, base, host_profiles, own)[0])
        return out, costs
    except SystemExit as e:  # a pool's worker that exits never answers: the error goes back to the parent
        return None, str(e)


def lomo_report(dlsim, tmp, profiles, folder, jobs):
    held_out = set(host.load_profiles(host.DATA / HELD_OUT / "step-profiles.json"))
    host_profiles = host.machine_cases(ship.HOST_PROFILES["h200"])
    machines = list(ship.HOST_PROFILES["h200"])
    refused = unmatched(dlsim, tmp, folder, [n for n in profiles if n not in sf.UNMATCHED_TRACES])
    sf.UNMATCHED_TRACES.update(refused)
    # Each model left out of the kernel fit (its sweep records and trace) and of the host fit on every machine;
    # then, in-sample, all twenty in the kernel fit and every machine's models in the host's (what h200.yaml ships).
    work = [(dlsim.binary, tmp / f"fold-{i}", folder, profiles, host_profiles, refused, held)
            for i, held in enumerate(profiles)]
    with multiprocessing.Pool(jobs) as pool:
        results = pool.map(fold, work, chunksize=1)
    for w, (got, why) in zip(work, results):
        if got is None:
            raise SystemExit(f"heldout_fidelity: the fit without {w[6]}: {why}")
    all_dlsim = host.Dlsim(dlsim.binary, tmp / "fold-all")
    (tmp / "fold-all").mkdir(parents=True, exist_ok=True)
    hw_all, costs_all = fitted_file(all_dlsim, tmp / "fold-all", profiles, folder, "none-b0", list(profiles),
                                    host_profiles, list(host_profiles))
    rows, dev, eager, own_eager, in_eager = [], [], [], [], []
    per_machine = {m: [] for m in machines}
    per_machine_own = {m: [] for m in machines}
    for i, held in enumerate(profiles):
        model, batch = host.CASES[held]
        got, _ = results[i]
        e, g, bound = got["pooled"]
        ie, ig, _ = times(all_dlsim, model, batch, hw_all)
        replay = profiles[held]["graph_replay_ms_median"]
        dev.append(sf.err(g, replay))
        walls = []
        for m in machines:
            p = host_profiles.get(f"{held}@{m}")
            if p is None:
                walls.append("")
                continue
            wall = p["eager_wall_ms_median"]
            eager.append(sf.err(e, wall))
            in_eager.append(sf.err(ie, wall))
            per_machine[m].append(sf.err(e, wall))
            own = ""
            if m in got:
                own_eager.append(sf.err(got[m][0], wall))
                per_machine_own[m].append(sf.err(got[m][0], wall))
                own = f" / {sf.pct(sf.err(got[m][0], wall))}"
            walls.append(f"{wall:.2f} ({sf.pct(sf.err(e, wall))}{own})")
        rows.append(f"| {held}{' (new)' if held in held_out else ''} | {replay:.2f} | {g:.2f} "
                    f"({sf.pct(sf.err(g, replay))}) | {ig:.2f} | {e:.2f} | {ie:.2f} | " + " | ".join(walls) +
                    f" | {bound} | {'no: ' + 'matcher refuses it' if held in sf.UNMATCHED_TRACES else 'yes'} |")
    shipped = shipped_host_costs()
    out = [f"Leave one model out over the {len(profiles)} H200 models (the eleven of `{FITTED}` and the nine of "
           f"`{HELD_OUT}`, marked *new*), step_fidelity.py's *sweep + traces*: the kernel model fitted onto "
           "`h200-datasheet.yaml` to the H200 sweeps less the held-out model's records and the other models' "
           "profiler traces (the replays' idle time per kernel from the same models), the host fitted on the other "
           f"models' profiles of all {len(machines)} machines pooled (results/fidelity/host.md, *Four H200 "
           "machines*; the model left out on every machine), as `h200.yaml` is fitted. One prediction per model, set "
           "against each machine's measured eager step (`issue`: the issue's H200 profiles; 27b, 28b, 28c: the "
           "leases), with its error in brackets and, after the slash, the error of the same fold with the host fitted on "
           "that machine's other models alone (what `dlsim calibrate --torch-profile` on your own machine gives; not "
           "for the issue's machine, whose three models leave two). *All*: fitted on everything (in-sample; what "
           "`h200.yaml` ships). ms per step.", "",
           "| model | replay ms | leave one out | all | dlsim eager, leave one out | all | " +
           " | ".join(f"eager {m}" for m in machines) + " | bound | trace in the fits |",
           "|---|---:|---:|---:|---:|---:|" + "---:|" * len(machines) + "---|---|"] + rows
    by_machine = "; ".join(f"{m} {sf.mape(v)} ({len(v)})" for m, v in per_machine.items())
    by_machine_own = "; ".join(f"{m} {sf.mape(v)} ({len(v)})" for m, v in per_machine_own.items() if v)
    out += ["", f"Leave one model out: device time MAPE {sf.mape(dev)} over the {len(profiles)} models; eager step "
            f"MAPE {sf.mape(eager)} over the {len(eager)} measured steps with the host of all machines pooled (per "
            f"machine: {by_machine}), {sf.mape(own_eager)} over {len(own_eager)} with each machine's own host (per "
            f"machine: {by_machine_own}). Fitted on everything (in-sample, pooled host): eager {sf.mape(in_eager)}.",
            ""]
    if refused:
        out += ["Traces the matcher refuses (left out of the kernel fits; their models are still predicted):", ""]
        # The matcher's line without the temporary file's name (a rerun writes the same report).
        out += [f"- {n}: {line.split(': ', 1)[-1].split('.trace.json: ', 1)[-1]}" for n, line in refused.items()]
        out += [""]
    out += ["The host section (`host_cpu.pytorch_eager`, µs) as `h200.yaml` ships it, and fitted here on all the "
            "machines' models over the kernel model of all twenty (the same fit over a kernel model without "
            "28c's sweeps' records would differ only there).", "",
            "| key | shipped | fitted here |", "|---|---:|---:|"]
    out += [f"| `{k}` | {shipped.get(k, float('nan')):.2f} | {costs_all[k]:.2f} |" for k in host.KEY_ORDER]
    return out + [""]


def shipped_host_costs():
    """The shipped h200.yaml's host_cpu.pytorch_eager values ({key: µs}, keys as fit_host_model.KEY_ORDER)."""
    out, group, inside = {}, None, False
    for line in host.hw_path("h200").read_text().splitlines():
        if line.strip().startswith("#") or not line.strip():
            continue
        if line.strip() == "pytorch_eager:":
            inside = True
            continue
        if inside:
            indent = len(line) - len(line.lstrip())
            if indent <= 2:
                break
            key, _, value = line.strip().partition(":")
            if not value.strip():
                group = key
            elif indent == 6 and group:
                out[f"{group}.{key}"] = float(value)
            else:
                out[key] = float(value)
    return out


def main():
    def generate(a, binary, tmp):
        dlsim = host.Dlsim(binary, tmp)
        tar = host.DATA / HELD_OUT / "traces.tar"
        held = host.load_profiles(host.DATA / HELD_OUT / "step-profiles.json")
        fitted = host.load_profiles(host.DATA / FITTED / "step-profiles.json")
        leases = {c: f"{lease}/step-profiles.json" for lease, group in ((FITTED, fitted), (HELD_OUT, held))
                  for c in group}
        folder = trace_folder(tmp, leases)
        hw = eleven_only_file(dlsim, tmp, fitted, folder)
        generated = {"heldout-shipped": "\n".join(held_out_report(dlsim, held, tar, hw)[0])}
        generated["heldout-host"] = "\n".join(host_per_call_table(fitted, held))
        if not a.no_lomo:
            profiles = dict(fitted)
            profiles.update(held)
            generated["heldout-lomo"] = "\n".join(lomo_report(dlsim, tmp, profiles, folder, a.jobs))
        return generated
    return host.report_main("heldout_fidelity", __doc__, generate,
                            [("--no-lomo", {"action": "store_true",
                                            "help": "the held-out tables only, not the leave-one-out fits"}),
                             ("--jobs", {"type": int, "default": 2,
                                         "help": "leave-one-out fits run at once (processes; the output is the same)"})],
                            provenance="heldout-provenance")


if __name__ == "__main__":
    sys.exit(main())

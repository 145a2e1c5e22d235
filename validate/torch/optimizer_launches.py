#!/usr/bin/env python3
"""The optimizer step priced as multi_tensor_apply's launches (issue 28; results/fidelity/membound-kernels.md
measured them): per CNN of the H200's twenty, the optimizer's kernel time per step measured against dlsim's,
before and after the multi_tensor class, and the whole step's device time (results/fidelity/optimizer-launches.md).

  validate/torch/optimizer_launches.py --before REV [--lomo] [--dlsim build/bin/dlsim] [--report FILE]

Measured: the profiler traces of two eager steps per model (PyTorch 2.11, fp32, SGD momentum 0.9, weight decay
1e-4, foreach; h200-2026-11-27b's eleven and h200-2026-11-28b's nine), each kernel classed by the aten op that
launched it (heldout_fidelity.py's classes: *optimizer* is every `_foreach_*` kernel), and the CUDA-graph replay's
median step (step-profiles.json). Simulated: each case as heldout_fidelity.py runs it (the zoo's graph, or the
committed `dlsim import-torch` recording for the eight CNNs the zoo lacks), launch cuda-graph (device time), with
the shipped `h200.yaml` of commit REV (*before*: no multi_tensor class; the zoo's updates by the roofline, a recorded
foreach op as one elementwise kernel) and of the working tree (*after*), and after again with `weight_decay: 1e-4`
on the zoo's models (the measured steps' decay: one more pass, `_foreach_add`; a recording's step is what was
recorded, without decay). These are in-sample: the shipped files are fitted on these traces (the class on 19 of
them: ShuffleNet V2's trace is not matched); results/fidelity/membound-kernels.md has the term's leave-one-model-out
errors (5.7 %).

--lomo adds the leave-one-model-out device time over the twenty, as heldout_fidelity.py's folds fit the kernel
model (step_fidelity.py's *sweep + traces* onto h200-datasheet.yaml, less the held-out model's sweep records and
trace: the multi_tensor class is fitted on the other models' launches), with the shipped h200.yaml's host section
in place of each fold's refitted one (the CUDA-graph step's device time does not read it): *before* is each fold's
file less its multi_tensor class (the ops priced as they were), *after* the file as fitted.
"""
import gzip
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402
import multiprocessing  # noqa: E402
import heldout_fidelity as ho  # noqa: E402
import step_fidelity as sf  # noqa: E402

ROOT = HERE.parent.parent
LEASES = ["h200-2026-11-27b", "h200-2026-11-28b"]
DECAY = 1e-4


def before_files(tmp, rev):
    """h200.yaml and its base h200-fitted.yaml as commit `rev` shipped them, the base by path."""
    def show(path):
        return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True,
                              cwd=ROOT).stdout
    fitted = tmp / "before-h200-fitted.yaml"
    fitted.write_text(show("configs/hw/h200-fitted.yaml"))  # a whole file (no base)
    shipped = tmp / "before-h200.yaml"
    shipped.write_text(show("configs/hw/h200.yaml").replace("base: h200-fitted", f"base: {fitted}"))
    return shipped


def run(dlsim, model, batch, hw, decay):
    """dlsim's cuda-graph step: (device ms per step, optimizer kernel ms per step)."""
    dlsim.n += 1
    exp, chrome = dlsim.tmp / f"exp{dlsim.n}.yaml", dlsim.tmp / f"trace{dlsim.n}.json"
    e = host.step_experiment(dlsim.model(model, batch), batch, hw, "cuda-graph")
    e.pop("weight_decay", None)  # step_experiment's measured decay: this table sets it per column
    if decay:
        e["weight_decay"] = decay
    exp.write_text(json.dumps(e))
    cmd = [dlsim.binary, "run", str(exp), "--json", "--chrome-trace", str(chrome)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"optimizer_launches: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    result = json.loads(r.stdout)
    last = result["iterations_completed"] - 1
    opt = sum(e["dur"] for e in json.loads(chrome.read_text())["traceEvents"]
              if e.get("ph") == "X" and e.get("tid", -1) >= 0 and e.get("cat") not in ("host", "copy", "iteration")
              and e["args"].get("iteration") == last
              and ho.kernel_class(f"{e['cat']} {e['name'].rsplit('/', 1)[-1].split('#')[0]}") == "optimizer")
    return result["iteration_time_us"] / 1000.0, opt / 1000.0


def lomo_fold(job):
    """One fold: (device ms before, after, after with decay) of `held`, or None and the error."""
    binary, tmp, folder, profiles, refused, costs, held = job
    sf.UNMATCHED_TRACES.update(refused)
    tmp.mkdir(parents=True, exist_ok=True)
    dlsim = host.Dlsim(binary, tmp)
    try:
        base = ho.kernel_file(dlsim, tmp, profiles, folder, held, [n for n in profiles if n != held])
        without = tmp / "without-multi-tensor.yaml"
        without.write_text("".join(line for line in pathlib.Path(base).read_text().splitlines(keepends=True)
                                   if not line.lstrip().startswith("multi_tensor.")))
        model, batch = host.CASES[held]
        after = dlsim.hw_file(str(base), costs)
        before = dlsim.hw_file(str(without), costs)
        zoo = not model.startswith("torchvision:")
        d_before = run(dlsim, model, batch, before, 0)[0]
        d_after = run(dlsim, model, batch, after, 0)[0]
        d_decay = run(dlsim, model, batch, after, DECAY)[0] if zoo else d_after
        return (d_before, d_after, d_decay), None
    except SystemExit as e:
        return None, str(e)


def lomo_report(dlsim, tmp, jobs):
    leases = {}
    profiles = {}
    for lease in LEASES:
        for case, p in host.load_profiles(host.DATA / lease / "step-profiles.json").items():
            leases[case], profiles[case] = f"{lease}/step-profiles.json", p
    folder = ho.trace_folder(tmp, leases)
    refused = ho.unmatched(dlsim, tmp, folder, [n for n in profiles if n not in sf.UNMATCHED_TRACES])
    sf.UNMATCHED_TRACES.update(refused)
    costs = ho.shipped_host_costs()
    work = [(dlsim.binary, tmp / f"fold-{i}", folder, profiles, refused, costs, held)
            for i, held in enumerate(profiles)]
    with multiprocessing.Pool(jobs) as pool:
        results = pool.map(lomo_fold, work, chunksize=1)
    rows, errs = [], ([], [], [])
    for w, (got, why) in zip(work, results):
        if got is None:
            raise SystemExit(f"optimizer_launches: the fold without {w[-1]}: {why}")
        held = w[-1]
        replay = profiles[held]["graph_replay_ms_median"]
        for e, d in zip(errs, got):
            e.append(sf.err(d, replay))
        rows.append(f"| {held} | {replay:.2f} | " + " | ".join(f"{d:.2f} ({sf.pct(sf.err(d, replay))})" for d in got)
                    + f" | {'no: the matcher refuses it' if held in sf.UNMATCHED_TRACES else 'yes'} |")
    out = ["Leave one model out over the twenty: each model's CUDA-graph step (ms) with the kernel model fitted "
           "without it (its sweep records and its trace; the multi_tensor class from the other models' launches), "
           "*before* that file less its multi_tensor class, *after* as fitted, *decay* with `weight_decay: "
           f"{DECAY}` (zoo models; a recording as after).", "",
           "| model | replay | before | after | after, decay | trace in the fits |", "|---|---:|---:|---:|---:|---|"]
    out += rows
    out += ["", f"Leave one model out, device time MAPE over the {len(rows)} models: before {sf.mape(errs[0])}, "
            f"after {sf.mape(errs[1])}, after with the zoo models' decay {sf.mape(errs[2])}.", ""]
    return "\n".join(out)


def generate(a, binary, tmp):
    dlsim = host.Dlsim(binary, tmp)
    before = before_files(tmp, a.before)
    after = ROOT / "configs" / "hw" / "h200.yaml"
    rows, errs = [], {k: [] for k in ("before", "after", "decay", "dev_before", "dev_after", "dev_decay")}
    for lease in LEASES:
        profiles = host.load_profiles(host.DATA / lease / "step-profiles.json")
        for case, p in profiles.items():
            model, batch = host.CASES[case]
            events = json.loads(gzip.decompress(host.lease_trace(f"{lease}/step-profiles.json", case)))["traceEvents"]
            measured = ho.measured_kernels(events)["optimizer"][1] / 1000.0
            replay = p["graph_replay_ms_median"]
            d_before, o_before = run(dlsim, model, batch, before, 0)
            d_after, o_after = run(dlsim, model, batch, after, 0)
            zoo = not model.startswith("torchvision:")
            d_decay, o_decay = run(dlsim, model, batch, after, DECAY) if zoo else (d_after, o_after)
            errs["before"].append(sf.err(o_before, measured))
            errs["after"].append(sf.err(o_after, measured))
            errs["decay"].append(sf.err(o_decay, measured))
            errs["dev_before"].append(sf.err(d_before, replay))
            errs["dev_after"].append(sf.err(d_after, replay))
            errs["dev_decay"].append(sf.err(d_decay, replay))
            decay_cells = (f"{o_decay:.3f} ({sf.pct(sf.err(o_decay, measured))})", f"{d_decay:.2f} "
                           f"({sf.pct(sf.err(d_decay, replay))})") if zoo else ("recorded: as after", "as after")
            rows.append(f"| {case} ({lease[-3:]}) | {'zoo' if zoo else 'recording'} | {measured:.3f} | "
                        f"{o_before:.3f} ({sf.pct(sf.err(o_before, measured))}) | "
                        f"{o_after:.3f} ({sf.pct(sf.err(o_after, measured))}) | {decay_cells[0]} | {replay:.2f} | "
                        f"{d_before:.2f} ({sf.pct(sf.err(d_before, replay))}) | "
                        f"{d_after:.2f} ({sf.pct(sf.err(d_after, replay))}) | {decay_cells[1]} |")
    n = len(rows)
    out = [f"Per model: the optimizer's kernel time per step (ms) measured and as dlsim prices it with the shipped "
           f"`h200.yaml` of commit {a.before} (*before*) and of this tree (*after*; *decay*: with `weight_decay: "
           f"{DECAY}`, zoo models only), and the CUDA-graph step's device time (ms) against the replay. In-sample "
           "(the shipped files are fitted on these traces).", "",
           "| model (lease) | graph | optimizer measured | before | after | after, decay | replay | device before | "
           "device after | device after, decay |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows
    out += ["", f"Optimizer time per step, MAPE over the {n} models: before {sf.mape(errs['before'])}, after "
            f"{sf.mape(errs['after'])}, after with the zoo models' decay {sf.mape(errs['decay'])}. Device step time "
            f"MAPE (in-sample): before {sf.mape(errs['dev_before'])}, after {sf.mape(errs['dev_after'])}, after with "
            f"decay {sf.mape(errs['dev_decay'])}.", ""]
    generated = {"optimizer-launches": "\n".join(out)}
    if a.lomo:
        generated["optimizer-lomo"] = lomo_report(dlsim, tmp, a.jobs)
    return generated


if __name__ == "__main__":
    sys.exit(host.report_main("optimizer_launches", __doc__, generate,
                              [("--before", {"required": True, "in_command": True,
                                             "help": "the commit whose shipped h200.yaml is *before*"}),
                               ("--lomo", {"action": "store_true",
                                           "help": "also the leave-one-model-out device time (twenty fits)"}),
                               ("--jobs", {"type": int, "default": 2, "help": "folds fitted in parallel"})]))

"""The tables of README.md from the concurrency sweeps (concurrency-<model>.yaml): iteration time, speed-up over
serial and peak memory of every concurrency policy per model, batch and GPU, the ideal (critical path, infinite
SMs) and serial bounds beside them, the graph's width (`dlsim model --parallelism`), the bound checks, and dlsim's
numbers beside the published ones (IOS, MXNet #14006, SPAA'20), and the speed-ups PyTorch's own concurrent
schedules measured on a lent H200 over the batch beside the simulated ones. The README's prose quotes these
tables: re-read it when the device model or a hardware file's `concurrent_kernels:` block changes them."""
import functools
import json

MIB = 2 ** 20
MODELS = ["googlenet", "inception_v3", "resnet50", "densenet121", "squeezenet1_1", "bert-base", "vgg16"]
GPUS = ["h100-sxm", "v100-sxm2-16gb"]
# the sweep's concurrency labels, in column order, and their short names
POLICIES = [
    ("serial", "serial"),
    ("branch-streams", "branch"),
    ("critical-path", "crit-path"),
    ("ios", "ios"),
    ("dgrad-wgrad", "dgrad‖wgrad"),
    ("optimizer-overlap", "opt-overlap"),
    ("dgrad-wgrad(base=ios,max_streams=8,optimizer_overlap=true)", "ios+both"),
    ("algorithm-aware", "alg-aware"),
]


def ok(r):
    return r is not None and r["status"] == "ok"


class Tables:
    def __init__(self, study):
        self.study = study
        self.runs = {}
        for m in MODELS:
            for r in study.rows(f"concurrency-{m}"):
                self.runs[(m, r["hw"], int(r["batch"]), r["concurrency"])] = r
        self.below_ideal, self.ios_slower, self.total, self.best = [], [], 0, {}

    def model_table(self, m):
        """Per GPU and batch: serial, ideal, the bound, and each policy's speed-up with its memory against serial."""
        keys = sorted({(k[1], k[2]) for k in self.runs if k[0] == m}, key=lambda x: (x[0] != "h100-sxm", x[1]))
        out = ["| hw | batch | serial (ms) | serial reserved (GiB) | ideal (ms) | bound | "
               + " | ".join(short for _, short in POLICIES[1:]) + " |", "|---|---|---|---|---|---|"
               + "---|" * (len(POLICIES) - 1)]
        for hw, b in keys:
            s = self.runs.get((m, hw, b, "serial"))
            if not ok(s):
                out.append(f"| {hw} | {b} | {s['status'] if s else '-'} | | | | "
                           + " | ".join("" for _ in POLICIES[1:]) + " |")
                continue
            ts, ideal, live = float(s["iteration_time_us"]), float(s["ideal_iteration_us"]), int(s["peak_live_bytes"])
            reserved = int(s["peak_reserved_bytes"])
            cells = []
            for label, short in POLICIES[1:]:
                r = self.runs.get((m, hw, b, label))
                if r is None:
                    cells.append("-")
                    continue
                if not ok(r):
                    cells.append(r["status"])
                    continue
                self.total += 1
                t = float(r["iteration_time_us"])
                if t < float(r["ideal_iteration_us"]) - 1e-6:
                    self.below_ideal.append((m, hw, b, label))
                if label == "ios" and t > ts + 1e-6:
                    self.ios_slower.append((m, hw, b))
                sp = ts / t
                if sp > self.best.get((m, hw, b), (0, ""))[0]:
                    self.best[(m, hw, b)] = (sp, short)
                cells.append(f"{sp:.3f} ({(int(r['peak_live_bytes']) / live - 1) * 100:+.1f}%, "
                             f"{(int(r['peak_reserved_bytes']) / reserved - 1) * 100:+.1f}%)")
            out.append(f"| {hw} | {b} | {ts / 1000:.3f} | {reserved / MIB / 1024:.2f} | {ideal / 1000:.3f} | "
                       f"{ts / ideal:.2f} | " + " | ".join(cells) + " |")
        return "\n".join(out)

    def checks(self):
        """Over every row of the model tables (call after them)."""
        return "\n".join([
            f"- Runs compared: {self.total}. Runs faster than the ideal bound: {len(self.below_ideal)}"
            + (f" ({self.below_ideal[:5]})" if self.below_ideal else "") + ".",
            f"- ios slower than serial: {len(self.ios_slower)}"
            + (f" ({self.ios_slower[:5]})" if self.ios_slower else "")
            + " (serial is one of its candidates, and the simulator compares the two before it answers)."])

    def width(self):
        """The graph's widest ASAP stage forward and backward against the best speed-up any policy reached."""
        dl = self.study.dlsim
        widths = dl.parallel([functools.partial(dl.json, ["model", m, "--batch", "32", "--parallelism"]
                                                + (["--seq-len", "128"] if m == "bert-base" else []))
                              for m in MODELS])
        out = ["| model | max width forward | max width backward | best speed-up h100 b1 | b32 | v100 b1 | b32 |",
               "|---|---|---|---|---|---|---|"]
        for m, j in zip(MODELS, widths):
            cells = []
            for hw in GPUS:
                for b in [1, 32]:
                    sp = self.best.get((m, hw, b))
                    cells.append(f"{sp[0]:.2f}× ({sp[1]})" if sp else "-")
            out.append(f"| {m} | {j['forward']['max_width']} | {j['backward']['max_width']} | "
                       + " | ".join(cells) + " |")
        return "\n".join(out)

    def speedup(self, m, hw, b, label):
        s, r = self.runs.get((m, hw, b, "serial")), self.runs.get((m, hw, b, label))
        if not (ok(s) and ok(r)):
            return None
        return float(s["iteration_time_us"]) / float(r["iteration_time_us"])

    def reserved(self, m, hw, b, label):
        s, r = self.runs.get((m, hw, b, "serial")), self.runs.get((m, hw, b, label))
        if not (ok(s) and ok(r)):
            return "-"
        return f"{(int(r['peak_reserved_bytes']) / int(s['peak_reserved_bytes']) - 1) * 100:+.1f}%"

    def published(self):
        """dlsim beside the published claims; ResNet-50 at batch 256, and at 32 with the `planned` pool, run here."""
        fmt = lambda x: "-" if x is None else f"{x:.3f}×"  # noqa: E731
        sp = self.speedup
        dl = self.study.dlsim
        cases = [(hw, pol, pool, batch) for hw in GPUS for pol in ["serial", "dgrad-wgrad"]
                 for pool, batch in [("pytorch-caching", 256), ("planned", 32)]]
        # MXNet plans its memory in advance: the `planned` pool, whose slots are reused after an event, not held
        extra = dict(zip(cases, dl.parallel([functools.partial(dl.json, ["run"], {
            "model": "resnet50", "batch": batch, "hw": hw, "pool": pool, "swap": "none", "concurrency": pol,
            "iterations": 6}) for hw, pol, pool, batch in cases])))

        def planned_row(hw):
            s, r = extra[(hw, "serial", "planned", 32)], extra[(hw, "dgrad-wgrad", "planned", 32)]
            if s["oom"] or r["oom"]:
                return f"{hw}: oom"
            return (f"{hw} {s['iteration_time_us'] / r['iteration_time_us']:.3f}×, reserved "
                    f"{(r['peak_reserved_bytes'] / s['peak_reserved_bytes'] - 1) * 100:+.1f}%")

        def dw256(hw):
            s, r = extra[(hw, "serial", "pytorch-caching", 256)], extra[(hw, "dgrad-wgrad", "pytorch-caching", 256)]
            return "oom" if s["oom"] or r["oom"] else f"{s['iteration_time_us'] / r['iteration_time_us']:.3f}×"

        v100, h100 = "v100-sxm2-16gb", "h100-sxm"
        vgg = [f"{hw} b{b}: dgrad‖wgrad {fmt(sp('vgg16', hw, b, 'dgrad-wgrad'))}, optimizer "
               f"{fmt(sp('vgg16', hw, b, 'optimizer-overlap'))}, branch {fmt(sp('vgg16', hw, b, 'branch-streams'))}"
               for hw in GPUS for b in [32, 256]]
        return "\n".join([
            "| claim | published | dlsim |",
            "|---|---|---|",
            "| IOS over sequential, Inception-v3 batch 1, V100 (inference) | 1.57× (6.20 → 3.94 ms) | ios, training: "
            f"{fmt(sp('inception_v3', v100, 1, 'ios'))} |",
            "| IOS over sequential, Inception-v3 batch 128, V100 (inference) | 1.06× (108.55 → 102.74 ms) | ios, "
            f"training: {fmt(sp('inception_v3', v100, 128, 'ios'))} |",
            "| IOS: greedy concurrency makes SqueezeNet slower (batch 1, V100) | 0.88× (0.86 → 0.98 ms) | "
            f"branch-streams: {fmt(sp('squeezenet1_1', v100, 1, 'branch-streams'))}, ios "
            f"{fmt(sp('squeezenet1_1', v100, 1, 'ios'))} |",
            f"| MXNet #14006 dgrad‖wgrad, ResNet-50 batch 32 | 1.02–1.03× | h100 "
            f"{fmt(sp('resnet50', h100, 32, 'dgrad-wgrad'))}, v100 {fmt(sp('resnet50', v100, 32, 'dgrad-wgrad'))} |",
            "| MXNet #14006 dgrad‖wgrad memory, ResNet-50 batch 32 | about +2–3 % (workspaces no longer shared) | "
            f"peak reserved h100 {self.reserved('resnet50', h100, 32, 'dgrad-wgrad')}, v100 "
            f"{self.reserved('resnet50', v100, 32, 'dgrad-wgrad')} |",
            "| MXNet #14006 dgrad‖wgrad memory, with a memory plan made in advance as MXNet's (`planned` pool: a freed "
            "slot is reused after an event, not held), ResNet-50 batch 32 | about +2–3 % | "
            f"{planned_row(h100)}; {planned_row(v100)} |",
            f"| MXNet #14006 dgrad‖wgrad, ResNet-50 batch 256 | ~1.00× | h100 {dw256(h100)}, v100 {dw256(v100)} |",
            "| VGG-16 (a chain forward: every policy keeps its forward on one stream, tests check it): only the "
            "training overlaps can win; branch finds only the backward's dgrad‖wgrad forks | - | "
            + "; ".join(vgg) + " |"])


# PyTorch's concurrent schedules measured on a lent H200 (validate/torch/torch_concurrency_reference.py; each
# folder's README says how): (model, batch, the schedule, whose name is also dlsim's policy of the same kind, the
# measurement file under results/fidelity/data/ that holds it and serial's). validate/torch/concurrency_fidelity.py
# sets the same rows beside dlsim in full (pytorch-h200.md); here they stand beside the sweeps' trend over the batch.
H200_MEASURED = [("inception_v3", 1, "branch-streams", "h200-2026-11-28/concurrency.json"),
                 ("inception_v3", 8, "branch-streams", "h200-2026-11-27b/concurrency.json"),
                 ("inception_v3", 32, "branch-streams", "h200-2026-11-27b/concurrency.json"),
                 ("inception_v3", 128, "branch-streams", "h200-2026-11-28/concurrency.json"),
                 ("googlenet", 32, "branch-streams", "h200-2026-11-27b/concurrency.json"),
                 ("googlenet", 128, "branch-streams", "h200-2026-11-28/concurrency-b128.json"),
                 ("resnet50", 32, "dgrad-wgrad", "h200-2026-11-27b/concurrency-resnet50-rerun.json"),
                 ("resnet50", 128, "dgrad-wgrad", "h200-2026-11-28/concurrency-b128.json")]
MEASURED_MODES = [("eager", "eager", "host_ms_median"), ("graph", "cuda-graph", "device_ms_median")]
IOS_PUBLISHED = {1: "1.57×", 128: "1.06×"}  # IOS over sequential, Inception-v3, V100, inference (the table above)


def measured_h200(study, t):
    """The H200's measured speed-ups of PyTorch's concurrent schedules (eager and CUDA graph) beside dlsim on the
    same experiments as pytorch-h200.md's (hw h200, 3 iterations, a synchronize after each step), the sweeps'
    speed-ups of the same policy on the H100 and V100 files (eager launch), the sweep's ios on the V100, and IOS's
    published figure where there is one."""
    rows = {}
    for m, b, sched, path in H200_MEASURED:
        data = json.loads((study.root / "results" / "fidelity" / "data" / path).read_text())
        for r in data["rows"]:
            if r["model"] == m and r["batch"] == b and r.get("status") == "ok":
                rows[(m, b, r["schedule"], r["mode"])] = r
    dl = study.dlsim
    runs = [(m, b, pol, launch) for m, b, sched, _ in H200_MEASURED for pol in ("serial", sched)
            for _, launch, _ in MEASURED_MODES]
    sims = dict(zip(runs, dl.parallel([functools.partial(dl.json, ["run"], {
        "model": m, "batch": b, "hw": "h200", "pool": "pytorch-caching", "swap": "none", "concurrency": pol,
        "iterations": 3, "launch": launch, "sync_every_step": True}) for m, b, pol, launch in runs])))
    fmt = lambda x: "-" if x is None else f"{x:.3f}×"  # noqa: E731
    out = ["| model | batch | schedule (PyTorch's; dlsim's policy of the same kind) | measured: PyTorch, training, "
           "H200, eager | measured: PyTorch, training, H200, CUDA graph | dlsim as pytorch-h200.md, h200, eager | "
           "dlsim as pytorch-h200.md, h200, CUDA graph | dlsim sweep, same policy, h100-sxm | dlsim sweep, same "
           "policy, v100-sxm2-16gb | dlsim sweep, ios, v100-sxm2-16gb | IOS published (ios, inference, V100) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m, b, sched, _ in H200_MEASURED:
        cells = []
        for mode, _, field in MEASURED_MODES:
            key = (m, b, "serial", mode), (m, b, sched, mode)
            missing = [k for k in key if k not in rows]
            if missing:
                raise SystemExit(f"concurrency: no measured {missing[0]} in {H200_MEASURED}")
            cells.append(fmt(rows[key[0]][field] / rows[key[1]][field]))
        for _, launch, _ in MEASURED_MODES:
            cells.append(fmt(sims[(m, b, "serial", launch)]["iteration_time_us"] /
                             sims[(m, b, sched, launch)]["iteration_time_us"]))
        cells += [fmt(t.speedup(m, hw, b, sched)) for hw in GPUS]
        cells.append(fmt(t.speedup(m, "v100-sxm2-16gb", b, "ios")))
        cells.append(IOS_PUBLISHED.get(b, "-") if m == "inception_v3" else "-")
        out.append(f"| {m} | {b} | {sched} | " + " | ".join(cells) + " |")
    out += ["", "Measured: PyTorch 2.11 training steps (fp32, SGD) on the lent H200, each speed-up serial's median "
            "over the schedule's within one measurement file (eager: the host's clock around a synchronised step; "
            "graph: one replay of the whole step captured in a CUDA graph); the files: "
            + ", ".join(sorted({f"`{p}`" for *_, p in H200_MEASURED})) + " under `results/fidelity/data/`. dlsim "
            "h200: the same model, batch and policy on `h200` (PyTorch's kernels and eager host fitted on that "
            "machine), pool pytorch-caching, 3 iterations, `sync_every_step: true`, `launch: eager` or "
            "`cuda-graph`. Sweep: this study's tables above (`launch: eager`, the harness's host, 6 iterations)."]
    return "\n".join(out)


def generate(study):
    t = Tables(study)
    for m in MODELS:
        study.block(f"model-{m}", t.model_table(m))
    study.block("checks", t.checks())
    study.block("width", t.width())
    study.block("published", t.published())
    study.block("measured-h200", measured_h200(study, t))

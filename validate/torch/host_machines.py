#!/usr/bin/env python3
"""The host across machines (issue 28: "held-out models and steps measured on the same GPUs come within 10 %"):
four H200 machines ran the same torchvision CNNs, and one of them ran four of them twice. How much of an eager
step's error is the machine, and which host fit does best on a machine it never saw? (results/fidelity/host.md,
section "Four H200 machines").

  validate/torch/host_machines.py [--dlsim build/bin/dlsim] [--report results/fidelity/host.md]

Measured (torch_step_profile.py, fp32, SGD momentum, PyTorch 2.11, the same script and cases on each machine):
*issue*, the H200 profiles given with the issue (h200-2026-11-27-pytorch-step-profiles.json: ResNet-50,
MobileNet-V2, GoogLeNet; the same measurements, another machine), h200-2026-11-27b (eleven CNNs), h200-2026-11-28b
(nine others), h200-2026-11-28c (all twenty, and four again in a new process 6-10 minutes later:
step-profiles-repeat.json). Each machine is a VM with 16 cores of an unnamed Xeon.

1. Spread: per model, the CUDA-graph replay (the device alone) and the eager wall on each machine.
2. Cross-machine host fits: fit_host_model.py's fit (profiled per-op costs pooled over the training models, one
   scale fitted to their eager walls) on the models of one machine, of every machine but the predicted one (a
   machine never seen) and of all four (as validate/torch/ship_hw_files.py fits `h200.yaml`'s host), predicted on
   each machine's models with the device time taken from that machine's measured replay (fit_host_model.predict):
   the host's error alone. A model is never predicted by a fit that saw it: the training set excludes it on every
   machine (leave one model out inside each cell).
3. The shipped `h200.yaml` end to end on the machine that ran all twenty (dlsim's own kernel model; eager with
   `sync_every_step: true` against the eager wall, cuda-graph against the replay).
"""
import pathlib
import statistics
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402
import ship_hw_files as ship  # noqa: E402

BASE = "h200-fitted"  # the host is laid over the kernel model ship_hw_files.py fits (its fixed costs the device's)
# label: the step-profile files of the machine (relative to results/fidelity/data): the machines h200.yaml's host
# is fitted on.
MACHINES = ship.HOST_PROFILES["h200"]
REPEAT = "h200-2026-11-28c/step-profiles-repeat.json"
# Rows of the cross-machine table: one machine; every machine but the predicted one; all (what ship_hw_files.py
# fits the shipped host on).
TRAININGS = [("issue",), ("27b",), ("28b",), ("28c",), "the others", "all four"]


def training(row, target):
    if row == "the others":
        return tuple(m for m in MACHINES if m != target)
    return tuple(MACHINES) if row == "all four" else row


def recorded(case):
    """Whether dlsim can run the case from the repository alone: a zoo CNN, or a committed recording."""
    model, batch = host.CASES[case]
    name = f"{model.split(':', 1)[-1]}-b{batch}"
    return not model.startswith("torchvision:") or (host.RECORDINGS / f"{name}.torchstep.json.gz").exists()


def machine_profiles():
    """{label: {case: profile}}: each machine's CNNs with a replay and a model dlsim can run (load_profiles), less
    fit_host_model.NOT_FITTED (ViT-B/16, the transformer held out of every host fit)."""
    out = {}
    for label, files in MACHINES.items():
        out[label] = {}
        for f in files:
            out[label].update({c: p for c, p in host.load_profiles(host.DATA / f).items()
                               if recorded(c) and c not in host.NOT_FITTED})
    return out


def spread_table(machines):
    repeat = host.load_profiles(host.DATA / REPEAT)
    cases = sorted({c for m in machines.values() for c in m})
    head = ["Per model, ms: the CUDA-graph replay and the median eager step (10 synchronised steps after 5 warm-ups) "
            "on each machine; *again*: the same machine (28c), a new process 6-10 minutes later. Spread: the "
            "largest over the smallest, less one.", "",
            "| model | replay issue | 27b | 28b | 28c | spread | eager issue | 27b | 28b | 28c | 28c again | spread |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows, dev_spread, eager_spread = [], [], []

    def cell(label, c, key):
        p = machines[label].get(c)
        return f"{p[key]:.2f}" if p else ""
    for c in cases:
        replays = [m[c]["graph_replay_ms_median"] for m in machines.values() if c in m]
        walls = [m[c]["eager_wall_ms_median"] for m in machines.values() if c in m]
        if c in repeat:
            walls.append(repeat[c]["eager_wall_ms_median"])
        ds, es = max(replays) / min(replays) - 1, max(walls) / min(walls) - 1
        dev_spread.append(ds)
        eager_spread.append(es)
        again = f"{repeat[c]['eager_wall_ms_median']:.2f}" if c in repeat else ""
        replay = " | ".join(cell(m, c, "graph_replay_ms_median") for m in MACHINES)
        eager = " | ".join(cell(m, c, "eager_wall_ms_median") for m in MACHINES)
        rows.append(f"| {c} | {replay} | {100 * ds:.1f} % | {eager} | {again} | {100 * es:.1f} % |")
    tail = ["", f"Replay spread: mean {100 * statistics.mean(dev_spread):.1f} %, largest "
            f"{100 * max(dev_spread):.1f} %. Eager spread: mean {100 * statistics.mean(eager_spread):.1f} %, largest "
            f"{100 * max(eager_spread):.1f} %.", ""]
    return head + rows + tail


def qualified(machines, labels, skip=None):
    """The profiles of `labels` pooled under machine-qualified names (CASE@LABEL), less `skip` (a case) on all."""
    out = {}
    for label in labels:
        for c, p in machines[label].items():
            if c == skip:
                continue
            out[f"{c}@{label}"] = p
            host.CASES[f"{c}@{label}"] = host.CASES[c]
    return out


def cross_table(dlsim, machines):
    """Eager MAPE of each training set's fit (leave one model out) on each machine's models."""
    head = ["Eager step MAPE (the host's error alone: device time from each machine's measured replay), the host "
            "fitted on the machines of the row (their models pooled, each cell leaving the predicted model out of "
            "every machine's training set) and predicted on the column's models. The diagonal is a machine's own "
            "leave-one-model-out; off it, the machine was never seen.", "",
            "| fitted on | " + " | ".join(f"predicted on {m} ({len(machines[m])})" for m in MACHINES) + " |",
            "|---|" + "---:|" * len(MACHINES)]
    rows, fits = [], {}
    for row in TRAININGS:
        cells = []
        for target in MACHINES:
            train = training(row, target)
            errs = []
            for case, p in machines[target].items():
                skip = case if any(case in machines[m] for m in train) else None
                key = (train, skip)
                if key not in fits:
                    profiles = qualified(machines, train, skip=skip)
                    fits[key] = host.fit(dlsim, BASE, profiles, list(profiles))[2]
                qual = f"{case}@{target}"
                host.CASES[qual] = host.CASES[case]
                _, eager = host.predict(dlsim, BASE, fits[key], p, qual)
                errs.append(abs(eager / p["eager_wall_ms_median"] - 1))
            cells.append(f"{100 * statistics.mean(errs):.1f} % (largest {100 * max(errs):.1f} %)")
        rows.append(f"| {row if isinstance(row, str) else row[0]} | " + " | ".join(cells) + " |")
    return head + rows + [""]


def shipped_table(dlsim, machines):
    head = ["The shipped `h200.yaml` on the twenty CNNs of 28c (its host fitted on the four machines pooled, 28c's "
            "models among them; its kernel model on the sweeps, 28c's among them, and the traces of 27b and 28b), "
            "ms per step, the error in brackets:", "",
            "| model | replay | dlsim cuda-graph | eager | dlsim eager | bound |", "|---|---:|---:|---:|---:|---|"]
    rows, dev, eager = [], [], []
    for case, p in machines["28c"].items():
        e, _ = dlsim.run(*host.CASES[case], "h200", launch="eager", trace=False)
        g, _ = dlsim.run(*host.CASES[case], "h200", launch="cuda-graph", trace=False)
        e_ms, g_ms = e["iteration_time_us"] / 1000, g["iteration_time_us"] / 1000
        replay, wall = p["graph_replay_ms_median"], p["eager_wall_ms_median"]
        dev.append(abs(g_ms / replay - 1))
        eager.append(abs(e_ms / wall - 1))
        rows.append(f"| {case} | {replay:.2f} | {g_ms:.2f} ({host.pct(g_ms, replay)}) | {wall:.2f} | {e_ms:.2f} "
                    f"({host.pct(e_ms, wall)}) | {e['bound']} |")
    tail = ["", f"Device time MAPE {100 * statistics.mean(dev):.1f} % (largest {100 * max(dev):.1f} %); eager step "
            f"MAPE {100 * statistics.mean(eager):.1f} % (largest {100 * max(eager):.1f} %).", ""]
    return head + rows + tail


def main():
    def generate(a, binary, tmp):
        dlsim = host.Dlsim(binary, tmp)
        machines = machine_profiles()
        return {"machines-spread": "\n".join(spread_table(machines)),
                "machines-cross": "\n".join(cross_table(dlsim, machines)),
                "machines-shipped": "\n".join(shipped_table(dlsim, machines))}
    return host.report_main("host_machines", __doc__, generate, provenance="machines-provenance")


if __name__ == "__main__":
    sys.exit(main())

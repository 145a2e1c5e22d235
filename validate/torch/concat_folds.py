#!/usr/bin/env python3
"""The concatenation term's effect on the models that concatenate (issue 28; hw/fitted/concat_kernels.h): single
leave-one-model-out folds of heldout_fidelity.py (the kernel model fitted without the model's sweep records and
trace, the host on the other models' profiles of every machine, pooled), per model the device time (dlsim's
cuda-graph step against the measured CUDA-graph replay) and the forward `cat` kernels' time per step (measured:
the kernels aten::cat launched in the model's profiler trace, two eager steps averaged; dlsim: its Concat ops'
kernels in the cuda-graph run), with a second binary's folds beside (--before: a build of the commit before the
concat classes), and each fold's fitted `concat.f32` class.

  validate/torch/concat_folds.py [--dlsim build/bin/dlsim] [--before OTHER_DLSIM] [--models a,b] [--report FILE]

A fold takes a few minutes on two cores (the kernel fit over the sweeps and nineteen traces, the host fit).
"""
import gzip
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402
import heldout_fidelity as hf  # noqa: E402
import ship_hw_files as ship  # noqa: E402
import step_fidelity as sf  # noqa: E402

MODELS = ["densenet121-b32", "densenet169-b32", "googlenet-b32", "inception_v3-b32"]
# The forward cat apart from the other copies: measured, the kernels of aten::cat; dlsim, its Concat ops (kind
# first in the text heldout_fidelity classes a kernel by; ConcatBwd is "concatbwd").
hf.CLASSES.insert(0, ("cat", r"^aten::cat$|^concat "))


def concat_class(hw_path):
    """The fitted file's concat.f32 line (its coefficients), or 'none'."""
    for line in pathlib.Path(hw_path).read_text().splitlines():
        m = re.match(r"\s*concat\.f32: \{(.*)\}", line)
        if m:
            return m.group(1)
    return "none"


def one_fold(binary, tmp, folder, profiles, host_profiles, held):
    """(device ms, cat kernel ms, cat kernels, the fold's concat.f32) of `held` under `binary`'s fit without it."""
    tmp.mkdir(parents=True, exist_ok=True)
    dlsim = host.Dlsim(binary, tmp)
    base = hf.kernel_file(dlsim, tmp, profiles, folder, held, [n for n in profiles if n != held])
    hw, _ = hf.with_host(dlsim, base, host_profiles, [n for n in host_profiles if n.split("@")[0] != held])
    model, batch = host.CASES[held]
    run, per_class = hf.dlsim_kernels(dlsim, model, batch, hw, "cuda-graph")
    cat = per_class.get("cat", [0, 0.0])
    return run["iteration_time_us"] / 1000, cat[1] / 1000, cat[0], concat_class(base)


def main():
    def generate(a, binary, tmp):
        held = host.load_profiles(host.DATA / hf.HELD_OUT / "step-profiles.json")
        fitted = host.load_profiles(host.DATA / hf.FITTED / "step-profiles.json")
        leases = {c: f"{lease}/step-profiles.json" for lease, group in ((hf.FITTED, fitted), (hf.HELD_OUT, held))
                  for c in group}
        folder = hf.trace_folder(tmp, leases)
        profiles = dict(fitted)
        profiles.update(held)
        host_profiles = host.machine_cases(ship.HOST_PROFILES["h200"])
        dlsim = host.Dlsim(binary, tmp)
        sf.UNMATCHED_TRACES.update(hf.unmatched(dlsim, tmp, folder, [n for n in profiles
                                                                     if n not in sf.UNMATCHED_TRACES]))
        tar = host.DATA / hf.HELD_OUT / "traces.tar"
        rows = []
        for n in a.models.split(","):
            events = (hf.trace_events(tar, n) if n in held else
                      json.loads(gzip.decompress(host.lease_trace(leases[n], n)))["traceEvents"])
            measured = hf.measured_kernels(events).get("cat", [0, 0.0])
            replay = profiles[n]["graph_replay_ms_median"]
            after = one_fold(binary, tmp / f"after-{n}", folder, profiles, host_profiles, n)
            before = (one_fold(a.before, tmp / f"before-{n}", folder, profiles, host_profiles, n)
                      if a.before else None)
            cells = [f"{replay:.2f}"]
            if before:
                cells.append(f"{before[0]:.2f} ({sf.pct(sf.err(before[0], replay))})")
            cells.append(f"{after[0]:.2f} ({sf.pct(sf.err(after[0], replay))})")
            cells.append(f"{measured[1] / 1000:.3f} ({measured[0]:.0f})")
            if before:
                cells.append(f"{before[1]:.3f} ({before[2]:.0f})")
            cells.append(f"{after[1]:.3f} ({after[2]:.0f})")
            cells.append(f"`{after[3]}`")
            rows.append(f"| {n} | " + " | ".join(cells) + " |")
        head = ["replay ms", *(["before, leave one out"] if a.before else []), "leave one out",
                "cat measured ms (kernels)", *(["cat before ms"] if a.before else []), "cat ms",
                "the fold's concat.f32"]
        table = ["| model | " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1) + "---|"] + rows
        return {"concat-folds": "\n".join(table)}
    return host.report_main("concat_folds", __doc__, generate,
                            [("--before", {"help": "a second dlsim binary whose folds go beside (the commit before)"}),
                             ("--models", {"default": ",".join(MODELS), "in_command": True,
                                           "help": "the held-out models, comma-separated"})],
                            provenance="concat-folds-provenance")


if __name__ == "__main__":
    sys.exit(main())

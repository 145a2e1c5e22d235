"""Convolutions nobody probed (issue 29): how close dlsim's reserved peak comes for a CNN whose convolution shapes
no conv_workspace_probe.py run measured, as a user's own model is, for memory_fidelity.py's report.

A convolution whose geometry has no `conv_scratch` entry takes the median of its k nearest geometries' entries,
scaled to it, where k are of its kind (hw/conv_scratch.h; k is the hardware file's `conv_scratch_neighbours`, 3 by
default); with `conv_scratch_neighbours: 0` it takes none, as before that rule: a recorded step's convolution then
asks no scratch at all. Two checks, both against
`max_memory_reserved` of the eager steps of torch_step_profile.py on an H200 (fp32, SGD momentum):
- **the nine CNNs of 2026-11-28** (h200-2026-11-28b), whose shapes no probe had: their recorded steps (VGG-19: the
  zoo's graph) on `h200` as shipped, with k = 0, 1, 2 and 3;
- **leave one model out over the eleven probed CNNs** (h200-2026-11-27b): `h200` less the entries of every
  geometry that model alone has among the eleven (`dlsim fit-kernels --shapes-of`; a geometry another model shares
  stays, as it would for a user bringing that model), its recorded step, with k = 0, 1, 2 and 3.
"""
import collections
import json
import pathlib
import subprocess
import tempfile

import yaml

from fit_host_model import pct  # memory_fidelity.py puts validate/torch/ on the path before importing this

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "results" / "fidelity" / "data"
MIB = 1 << 20
HELD_OUT = DATA / "h200-2026-11-28b" / "step-profiles.json"
PROBED = DATA / "h200-2026-11-27b" / "step-profiles.json"
NEIGHBOURS = (0, 1, 2, 3)  # 3: as h200.yaml ships (hw/gpu_spec.h's default)


def geometry(c, h, w, k, r, s, stride, pad_h, pad_w, groups):
    return (c, h, w, k, r, s, stride, pad_h, pad_w, groups)


def entry_geometry(e):
    return geometry(e["c"], e["h"], e["w"], e["k"], e["r"], e["s"], e["stride_h"], e["pad_h"], e["pad_w"], e["groups"])


def model_geometries(binary, model, tmp):
    """The fp32 NCHW convolution geometries of a zoo model, as `dlsim fit-kernels --shapes-of` lists them."""
    out = pathlib.Path(tmp) / f"shapes-{model}.json"
    subprocess.run([binary, "fit-kernels", "--shapes-of", model, "--out", str(out)], check=True,
                   capture_output=True, text=True)
    return {geometry(x["c"], x["h"], x["w"], x["k"], x["r"], x["s"], x["stride"], x["pad"], x.get("pad_w", x["pad"]),
                     x["groups"])
            for x in json.loads(out.read_text())["records"] if x.get("layout") == "nchw"}


def without_model(entries, owners, model):
    """The entries less those of the geometries `model` alone has among the probed models."""
    return [e for e in entries if owners.get(entry_geometry(e), set()) - {model} or not owners.get(entry_geometry(e))]


def mape(errs):
    worst = max(errs, key=abs)
    return f"{100.0 * sum(abs(e) for e in errs) / len(errs):.1f} % (largest {100.0 * worst:+.1f} %)"


def table(rows, errs, head):
    lines = ["| case | measured reserved | " + " | ".join(f"dlsim, k = {k}" for k in NEIGHBOURS) + " |",
             "|---|---:|" + "---:|" * len(NEIGHBOURS)] + rows
    lines += ["", head + ", mean absolute error of reserved: " +
              "; ".join(f"k = {k}: {mape(errs[k])}" for k in NEIGHBOURS) + "."]
    return lines


def unprobed(dlsim):
    shipped = yaml.safe_load((ROOT / "configs" / "hw" / "h200.yaml").read_text())["conv_scratch"]
    tmp = pathlib.Path(tempfile.mkdtemp(dir=dlsim.tmp))

    def hw(k, entries=None, without=None):
        path = tmp / f"h200-{k}-without-{without}.yaml"
        text = f"base: h200\nconv_scratch_neighbours: {k}\n"
        if entries is not None:
            text += "conv_scratch: " + json.dumps(entries) + "\n"
        path.write_text(text)
        return str(path)

    def row(case, measured, keys, batch, hws, errs):
        cells = []
        for k, h in zip(NEIGHBOURS, hws):
            got = dlsim.run(keys, batch, h)["peak_reserved_bytes"]
            errs[k].append(got / measured - 1)
            cells.append(f"{got / MIB:,.0f} ({pct(got, measured)})")
        return f"| {case} | {measured / MIB:,.0f} | " + " | ".join(cells) + " |"

    out = ["MiB; dlsim's error against `max_memory_reserved` in brackets.", "",
           "**The nine CNNs no probe measured** (`h200` as shipped; VGG-19 the zoo's graph, the others recorded):", ""]
    errs = collections.defaultdict(list)
    rows = []
    shipped_hws = [hw(k) for k in NEIGHBOURS]
    for r in json.loads(HELD_OUT.read_text())["records"]:
        name, b = r["case"].rsplit("-b", 1)
        keys = {"model": name} if name == "vgg19" else {"model": str(dlsim.trace(r["case"]))}
        rows.append(row(r["case"], r["max_memory_reserved_bytes"], keys, int(b), shipped_hws, errs))
    out += table(rows, errs, "The nine")

    probed = json.loads(PROBED.read_text())["records"]
    owners = collections.defaultdict(set)
    for r in probed:
        model = r["case"].rsplit("-b", 1)[0]
        for g in model_geometries(dlsim.binary, model, tmp):
            owners[g].add(model)
    out += ["", "**Leave one model out over the eleven probed CNNs** (`h200` less the entries of the geometries the "
            "model alone has; its recorded step):", ""]
    errs = collections.defaultdict(list)
    rows = []
    for r in probed:
        name, b = r["case"].rsplit("-b", 1)
        kept = without_model(shipped, owners, name)
        rows.append(row(f"{r['case']} ({len(shipped) - len(kept)} entries out)", r["max_memory_reserved_bytes"],
                        {"model": str(dlsim.trace(r["case"]))}, int(b), [hw(k, kept, name) for k in NEIGHBOURS], errs))
    out += table(rows, errs, "Left out")
    return "\n".join(out)

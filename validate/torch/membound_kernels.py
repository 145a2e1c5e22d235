#!/usr/bin/env python3
"""The memory-bound kernels dlsim prices short on the H200 (issue 28, results/fidelity.md's per-class tables),
measured from the lent H200's profiler traces: the optimizer's multi-tensor kernels and DenseNet's strided `add_`
and `cat` kernels (results/fidelity/membound-kernels.md is this script's report).

  /usr/bin/python3 validate/torch/membound_kernels.py [--report results/fidelity/membound-kernels.md]

Measured: the profiler traces of two eager steps per model (torch_step_profile.py, PyTorch 2.11, fp32, SGD with
momentum 0.9 and weight decay 1e-4, foreach): the eleven CNNs of h200-2026-11-27b (traces/*.json.gz) and the nine of
h200-2026-11-28b (traces.tar); h200-2026-11-28c's traces.tar (the nine and ResNet-50 again, another machine) for the
repeat column. Each kernel is attributed to the aten op that launched it by the profiler's External id.

1. The optimizer. torch.optim's foreach SGD (torch/optim/sgd.py, _multi_tensor_sgd) runs four multi-tensor ops a
   step over the parameters that have a gradient: the weight decay out of place (`_foreach_add(grads, params,
   alpha=wd)`: three tensor lists, a new one written), the momentum (`_foreach_mul_(bufs, 0.9)`: one list, read and
   written; `_foreach_add_(bufs, grads)`: two lists) and the update (`_foreach_add_(params, bufs, alpha=-lr)`: two).
   Each op is multi_tensor_apply's launches (PyTorch's aten/src/ATen/native/cuda/MultiTensorApply.cuh), whose rule
   launches() restates: every tensor is cut into chunks of kChunkSize = 65,536 elements, one thread block of
   kBlockSize = 512 threads per chunk; the chunks are appended to the current launch's table in the list's order
   (empty tensors skipped), and a launch goes out when its table holds depth_to_max_blocks = 320 blocks, or when it
   holds depth_to_max_tensors[depth - 1] tensors (110, 64, 48, 36, 30 for 1-5 lists) and the last of them has all
   its chunks in; a tensor cut by a full table carries over as the next launch's first. (The header has a second
   configuration for 32 KB kernel arguments, 2,240 blocks and seven times the tensors; no trace here has a grid
   above 320 blocks, so PyTorch 2.11 ran the 4 KB one on that machine.) The parameters' element counts are
   torchvision's (its models built on the CPU, no weights), less those without a gradient in the profiled step
   (Inception-v3's auxiliary classifier: the loss reads only the main logits).
   Each launch's time is fitted as fixed_us + byte_scale * B + chunk_scale * K (least squares over the launches),
   B = the launch's bytes / the HBM bandwidth (h200-datasheet.yaml's 4.8 TB/s), its bytes the launch's elements
   times the tensors each element moves (3, 2, 3, 3) times 4 (fp32), and K = its largest chunk's bytes over one
   SM's share of the bandwidth: each chunk is one block, so a launch lasts at least as long as its largest chunk
   on one SM (a launch of 48 tensors of a few hundred elements takes 2-3 µs, one of 48 full chunks 17). Leave one
   model out: fitted on the other models' launches, predicting the held-out model's optimizer time per step.
2. DenseNet's concatenation. In backward, the gradient of each dense layer's input `cat` is split into slices of
   the concatenated channels, and autograd's `add_` sums a slice (batch stride: the concatenation's channels, not
   the slice's) into a contiguous gradient: operands of different strides, which TensorIterator cannot vectorise,
   so PyTorch runs its generic `elementwise_kernel` (128 threads, 2 elements each, index arithmetic per element)
   instead of `vectorized_elementwise_kernel`. Those kernels, and the forward `cat` (CatArrayBatchedCopy), are
   fitted as above (bytes: the add's three operands, the cat's inputs read and output written), on DenseNet-121
   and on DenseNet-169, each predicting the other (the two models that have such ops), beside what h200-fitted.yaml's
   contiguous `elementwise.f32` class gives them.
"""
import argparse
import collections
import gzip
import io
import json
import math
import pathlib
import sys
import tarfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "results" / "fidelity" / "data"
HBM_BYTES_PER_US = 4.8e6  # h200-datasheet.yaml's hbm_bandwidth_gb_per_s, in bytes per microsecond
SMS = 132  # its SMs
# h200-fitted.yaml's contiguous elementwise class (what dlsim prices these kernels by now): fixed_us, byte_scale.
SHIPPED_ELEMENTWISE = (0.942189, 1.09279)

STEPS = 2  # profiled eager steps per trace
CHUNK = 65536          # kChunkSize: elements per chunk, one thread block each
MAX_BLOCKS = 320       # depth_to_max_blocks (4 KB kernel arguments), any depth
MAX_TENSORS = (110, 64, 48, 36, 30)  # depth_to_max_tensors, depth 1-5
# torch.optim's foreach SGD with momentum and weight decay: (aten op, tensor lists, tensors each element moves).
# _foreach_add_ runs twice a step (momentum, then the update), both of two lists moving three tensors.
PASSES = {"aten::_foreach_add": (3, 3), "aten::_foreach_mul_": (1, 2), "aten::_foreach_add_": (2, 3)}


def launches(numels, depth):
    """multi_tensor_apply's launches over tensors of `numels` elements with `depth` tensor lists: [(blocks,
    elements, largest chunk's elements, tensors)] per launch, in order (the rule the module docstring describes;
    a tensor cut by a full table counts in both launches)."""
    out, blocks, elements, largest, tensors = [], 0, 0, 0, 0
    for n in numels:
        if n == 0:
            continue
        tensors += 1
        chunks = -(-n // CHUNK)
        for c in range(chunks):
            blocks += 1
            chunk = min(CHUNK, n - c * CHUNK)
            elements += chunk
            largest = max(largest, chunk)
            last = c == chunks - 1
            if (tensors == MAX_TENSORS[depth - 1] and last) or blocks == MAX_BLOCKS:
                out.append((blocks, elements, largest, tensors))
                blocks, elements, largest = 0, 0, 0
                tensors = 0 if last else 1  # a tensor cut by a full table is the next launch's first
    if blocks:
        out.append((blocks, elements, largest, tensors))
    return out


def parameter_numels(name):
    """Element counts of torchvision model `name`'s parameters that get a gradient in a training step, in
    parameters() order (the optimizer's list order)."""
    import torchvision  # noqa: PLC0415 (only the optimizer part needs it)
    kwargs = {"init_weights": False} if name in ("googlenet", "inception_v3") else {}
    if name == "googlenet":
        kwargs["aux_logits"] = False
    model = getattr(torchvision.models, name)(**kwargs)
    # Inception-v3's auxiliary classifier runs in training mode but the loss reads only the main logits.
    return [p.numel() for n, p in model.named_parameters() if not n.startswith("AuxLogits")]


def traces():
    """{case: (label, trace events)} of the eager-step traces: h200-2026-11-27b's eleven and h200-2026-11-28b's nine;
    and {case: events} of h200-2026-11-28c's (the repeat)."""
    def from_tar(path):
        out = {}
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                name = pathlib.Path(m.name).name
                if name.endswith(".json.gz") and ".replay." not in name and "-b" in name and "mixed" not in name:
                    out[name[:-len(".json.gz")]] = json.load(gzip.open(io.BytesIO(tar.extractfile(m).read())))
        return out
    main = {}
    for f in sorted((DATA / "h200-2026-11-27b" / "traces").glob("*.json.gz")):
        main[f.name[:-len(".json.gz")]] = ("27b", json.load(gzip.open(f)))
    for case, d in from_tar(DATA / "h200-2026-11-28b" / "traces.tar").items():
        main[case] = ("28b", d)
    return main, from_tar(DATA / "h200-2026-11-28c" / "traces.tar")


def kernels_by_op(trace, names):
    """[(aten op event, [its kernel events in time order])] for the host ops named in `names`, in time order."""
    ev = trace["traceEvents"]
    ops = {e["args"]["External id"]: e for e in ev
           if e.get("cat") == "cpu_op" and e["name"] in names and "External id" in e.get("args", {})}
    ks = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "kernel" and e.get("args", {}).get("External id") in ops:
            ks[e["args"]["External id"]].append(e)
    return [(ops[x], sorted(ks[x], key=lambda k: k["ts"])) for x in sorted(ops, key=lambda x: ops[x]["ts"])]


def fit_terms(rows):
    """Least squares t = c0 + c1 * x1 + c2 * x2 ... over [(x1, x2, ..., t)] (no intercept column given: it is
    added): [c0, c1, ...]."""
    import numpy  # noqa: PLC0415
    x = numpy.array([[1.0] + list(r[:-1]) for r in rows])
    return [float(c) for c in numpy.linalg.lstsq(x, numpy.array([r[-1] for r in rows]), rcond=None)[0]]


def fit_line(points):
    """Least squares t = a + b * x over [(x, t)]: (a, b)."""
    return tuple(fit_terms(points))


def predict(coefficients, row):
    """A fitted term's time for one sample row (its quantities, then the measured time, which is not read)."""
    return coefficients[0] + sum(c * x for c, x in zip(coefficients[1:], row[:-1]))


def optimizer_launches(trace, numels, steps=2):
    """The optimizer's measured launches of one trace against the rule: [(op, launches per step: [(us, grid)],
    rule: [(blocks, elements)], bytes per element)] per foreach op of the first step, and the optimizer's measured
    kernel microseconds per step (all its launches over `steps`)."""
    ops = kernels_by_op(trace, set(PASSES))
    per_step = len(ops) // steps
    out = []
    for op, ks in ops[:per_step]:
        depth, moved = PASSES[op["name"]]
        out.append((op["name"], [(k["dur"], k["args"]["grid"][0]) for k in ks], launches(numels, depth), 4 * moved))
    total = sum(k["dur"] for _, ks in ops for k in ks) / steps
    return out, total


def pct(p, m):
    return f"{100.0 * (p / m - 1):+.1f} %"


def optimizer_report(main, repeat):
    """The optimizer's launches per model and the per-launch term's fit, all models and leave one model out."""
    samples, info, per_launch = {}, {}, {}  # samples: case -> [(ideal byte us, largest chunk's us on one SM's share, measured us)]
    for case, (label, trace) in main.items():
        numels = parameter_numels(case.rsplit("-b", 1)[0])
        ops, total = optimizer_launches(trace, numels)
        agree = all([g for _, g in m] == [b for b, *_ in r] for _, m, r, _ in ops)
        samples[case] = [(e * moved / HBM_BYTES_PER_US, big * moved * SMS / HBM_BYTES_PER_US, us)
                         for _, m, r, moved in ops if len(m) == len(r) for (us, _), (_, e, big, _) in zip(m, r)]
        info[case] = (label, len(numels), sum(numels), sum(len(m) for _, m, _, _ in ops),
                      sum(len(r) for _, _, r, _ in ops), agree, total)
        per_launch[case] = (sum(us for _, m, _, _ in ops for us, _ in m) / info[case][3],
                            sum(e * moved for _, _, r, moved in ops for _, e, _, _ in r) / info[case][4] / 1e6,
                            sum(t for _, _, r, _ in ops for *_, t in r) / info[case][4])
    every = [s for v in samples.values() for s in v]
    terms = fit_terms(every)
    rows, errs, line_errs = [], [], []
    for case, (label, tensors, elements, counted, rule, agree, total) in info.items():
        others = [p for c, v in samples.items() if c != case for p in v]
        c = fit_terms(others)
        line = fit_terms([(b, t) for b, _, t in others])
        pred = sum(predict(c, r) for r in samples[case])
        line_pred = sum(predict(line, (b, t)) for b, _, t in samples[case])
        shipped = sum(predict(SHIPPED_ELEMENTWISE, (b, t)) for b, _, t in samples[case])
        rep = ""
        if case in repeat:
            rep = f"{optimizer_launches(repeat[case], parameter_numels(case.rsplit('-b', 1)[0]))[1] / 1000:.3f}"
        errs.append(pred / total - 1)
        line_errs.append(line_pred / total - 1)
        us, mb, per = per_launch[case]
        rows.append(f"| {case} ({label}) | {tensors} | {elements / 1e6:.2f} | {counted} | {rule}"
                    f"{'' if agree else ' (grids differ)'} | {per:.0f} | {mb:.1f} | {us:.1f} | {total / 1000:.3f} | {rep} | {pred / 1000:.3f} "
                    f"({pct(pred, total)}) | {line_pred / 1000:.3f} ({pct(line_pred, total)}) | "
                    f"{shipped / 1000:.3f} ({pct(shipped, total)}) |")

    def mape(e):
        return f"{100.0 * sum(abs(x) for x in e) / len(e):.1f} % (largest {100.0 * max(abs(x) for x in e):.1f} %)"
    return [
        "## The optimizer's multi-tensor launches", "",
        f"Each launch's time, fitted over all {len(every)} launches of the {len(info)} models: "
        f"t = {terms[0]:.2f} + {terms[1]:.3f} * B + {terms[2]:.3f} * K µs, B the launch's bytes over 4.8 TB/s, K "
        f"its largest chunk's bytes over one SM's share of it (bytes * {SMS} / 4.8 TB/s: one block per chunk, as "
        "batch norm's per-channel term has one block per channel). Per model: the parameters with a gradient "
        "(tensors, million elements), the launches per step measured and by the rule (each launch's grid against "
        "the rule's blocks: equal unless marked), per launch on average the tensors and MB moved (the rule's) and "
        "the µs measured, the optimizer's kernel time per step measured (this lease; 28c: "
        "another machine), and predicted over the rule's launches: the term fitted on the other models (leave one "
        "model out), the same without K (t = fixed + byte_scale * B, left out alike), and h200-fitted.yaml's "
        "contiguous `elementwise.f32` class. ms per step.", "",
        "| model (lease) | tensors | M elements | launches measured | by the rule | tensors per launch | MB per "
        "launch | µs per launch | measured ms | 28c ms | leave one out ms | without K | elementwise.f32 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + [
        "", f"Leave one model out, optimizer time per step over {len(errs)} models: MAPE {mape(errs)}; without the "
        f"chunk term {mape(line_errs)}; `elementwise.f32` over the rule's launches (no fit) "
        f"{mape([sum(predict(SHIPPED_ELEMENTWISE, (b, t)) for b, _, t in samples[c]) / info[c][6] - 1 for c in info])}.",
        ""]


def strided_samples(trace):
    """DenseNet's backward `add_` of operands of different strides (PyTorch's non-vectorised elementwise kernel):
    [(ideal byte us, measured us)], and its `cat` kernels: [(ideal byte us, inputs, measured us)], by kind."""
    out = collections.defaultdict(list)
    for op, ks in kernels_by_op(trace, {"aten::add_", "aten::cat"}):
        dims, strides = op["args"].get("Input Dims"), op["args"].get("Input Strides")
        for k in ks:
            if op["name"] == "aten::cat" and "CatArray" in k["name"]:
                # One kernel per cat here, grid.y its inputs. The profiler records no shapes for a list above 30
                # tensors (DenseNet-169's last three cats of a 32-layer block): such a kernel is left out.
                if len(dims[0]) != k["args"]["grid"][1]:
                    out["cat, shapes not recorded"].append((0, k["dur"]))
                    continue
                elements = sum(math.prod(d) for d in dims[0])
                out["cat"].append((2 * 4 * elements / HBM_BYTES_PER_US, len(dims[0]), k["dur"]))
            elif op["name"] == "aten::add_" and dims and len(dims) >= 2 and dims[0] and dims[1]:
                kind = "add_, strided operand" if strides[0] != strides[1] else "add_, contiguous"
                if ("vectorized" in k["name"]) == (kind == "add_, contiguous"):
                    out[kind].append((3 * 4 * math.prod(dims[0]) / HBM_BYTES_PER_US, k["dur"]))
    return out


def strided_report(main):
    """Each DenseNet's strided adds and cats, fitted on it and predicted from the other DenseNet's fit."""
    models = {c: strided_samples(main[c][1]) for c in ("densenet121-b32", "densenet169-b32")}
    rows = []
    for kind in ("add_, strided operand", "cat"):
        for case, other in (("densenet121-b32", "densenet169-b32"), ("densenet169-b32", "densenet121-b32")):
            pts = models[case][kind]
            meas = sum(r[-1] for r in pts) / STEPS
            gb = sum(r[0] for r in pts) / STEPS * HBM_BYTES_PER_US / 1e9
            c = fit_terms(models[other][kind])
            pred = sum(predict(c, r) for r in pts) / STEPS
            shipped = sum(predict(SHIPPED_ELEMENTWISE, (r[0], r[-1])) for r in pts) / STEPS
            rows.append(f"| `{kind}` | {case} | {len(pts) // STEPS} | {gb:.3f} | {meas / 1000:.3f} | "
                        f"{gb / meas * 1e3:.2f} | {' / '.join(f'{x:.2f}' for x in fit_terms(pts))} | "
                        f"{pred / 1000:.3f} ({pct(pred, meas)}) | {' / '.join(f'{x:.2f}' for x in c)} | "
                        f"{shipped / 1000:.3f} ({pct(shipped, meas)}) |")
    return [
        "## DenseNet's strided `add_` and `cat`", "",
        "Per kernel kind and DenseNet: kernels per step, GB moved per step (the add's three operands; the cat's "
        "inputs and output), measured ms per step and the rate it is, the per-kernel term fitted on this model "
        "(`add_`: fixed_us / byte_scale; `cat`: fixed_us / byte_scale / µs per input tensor), the same term "
        "fitted on the *other* DenseNet predicting this one (leave one model out: the only two models with such "
        "kernels), and h200-fitted.yaml's contiguous `elementwise.f32` (bytes alone).", "",
        "| kernel | model | kernels | GB | measured ms | TB/s | own fit | from the other DenseNet ms | its fit | "
        "elementwise.f32 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + [
        "", "Left out of the `cat` rows (the profiler recorded no input shapes for lists above 30 tensors): " +
        "; ".join(f"{c} {len(m['cat, shapes not recorded']) // STEPS} kernels, "
                  f"{sum(t for _, t in m['cat, shapes not recorded']) / STEPS / 1000:.3f} ms per step"
                  for c, m in models.items()) + ".", ""]


def generate():
    main, repeat = traces()
    return optimizer_report(main, repeat) + strided_report(main)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", help="write the report into this markdown file between its generated markers")
    args = ap.parse_args()
    text = "\n".join(generate())
    if not args.report:
        print(text)
        return 0
    path = pathlib.Path(args.report)
    page = path.read_text()
    start, end = "<!-- generated: membound -->", "<!-- end generated -->"
    if start not in page or end not in page:
        raise SystemExit(f"membound_kernels: {path}: no '{start}' ... '{end}' markers to write between")
    head, rest = page.split(start, 1)
    path.write_text(head + start + "\n\n" + text + "\n" + end + rest.split(end, 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())

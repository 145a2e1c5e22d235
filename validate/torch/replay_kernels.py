"""The whole-step CUDA-graph replay against the eager step, kernel by kernel, from the H200 lease's profiler traces
(results/fidelity/data/h200-2026-11-28/: traces.tar holds the eager traces, 2 profiled steps each; replay-traces/ the
replay traces, 2 profiled replays each). Prints, per case, kernels and GPU time per step by llm_step_fidelity.py's
kernel classes, eager against replay, and the kernel names whose count or time changed most, as Markdown.

Usage: python3 validate/torch/replay_kernels.py   (needs only the standard library)
"""
import collections
import gzip
import io
import json
import pathlib
import re
import sys
import tarfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from llm_step_fidelity import CLASSES, measured_class  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent.parent.parent / "results" / "fidelity" / "data" / "h200-2026-11-28"
CASES = [("GPT-2 small b8 s1024", "gpt2-b8-s1024-mixed-bf16"),
         ("Qwen2.5-0.5B b4 s2048", "Qwen2.5-0.5B-b4-s2048-mixed-bf16")]
STEPS = 2  # profiled eager steps and profiled replays alike
# What the capture changes, by kernel name (first match; see results/fidelity/llm-steps.md): the attention kernels;
# AdamW (capturable: its two `_foreach_div_` by tensor lists run one float division kernel per parameter tensor);
# the boolean mask transformers builds while a stream captures, and SDPA's `where` over it.
CAUSES = [("attention kernels", r"sdpa|fmha|flash|cudnn::fusion"),
          ("AdamW: foreach kernels and per-tensor float divisions",
           r"multi_tensor_apply|BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float>"),
          ("mask: where, ==, &, bf16 fill", r"where_kernel_impl|CompareEqFunctor|BitwiseAndFunctor|FillFunctor<c10::BFloat16>")]


def events(raw):
    return json.loads(gzip.decompress(raw))["traceEvents"]


def eager(case):
    with tarfile.open(DATA / "traces.tar") as t:
        return events(t.extractfile(f"traces/{case}.json.gz").read())


def replay(case):
    return events((DATA / "replay-traces" / f"{case}.replay.json.gz").read_bytes())


def short(name):
    """A kernel's name without its template arguments and parameters, enough to tell kernels apart in a table."""
    name = re.sub(r"^void ", "", name).replace("(anonymous namespace)::", "")
    depth, out = 0, []
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    s = "".join(out)
    return s.split("(")[0][:70]


def summary(evs):
    """Per class and per short name: (µs per step, kernels per step); memsets per step; busy µs per step."""
    cls_us, cls_n, name_us, name_n, cause_us, cause_n = (collections.Counter() for _ in range(6))
    spans = []
    memsets = 0
    for e in evs:
        if e.get("cat") == "gpu_memset":
            memsets += 1
            spans.append((e["ts"], e["ts"] + e["dur"]))
        if e.get("cat") != "kernel":
            continue
        c, s = measured_class(e["name"]), short(e["name"])
        cls_us[c] += e["dur"] / STEPS
        cls_n[c] += 1 / STEPS
        name_us[(c, s)] += e["dur"] / STEPS
        name_n[(c, s)] += 1 / STEPS
        cause = next((k for k, pattern in CAUSES if re.search(pattern, e["name"])), "everything else")
        cause_us[cause] += e["dur"] / STEPS
        cause_n[cause] += 1 / STEPS
        spans.append((e["ts"], e["ts"] + e["dur"]))
    busy, end = 0.0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            busy += b - a
            end = b
        elif b > end:
            busy += b - end
            end = b
    return cls_us, cls_n, name_us, name_n, memsets / STEPS, busy / STEPS, cause_us, cause_n


def table(label, case):
    e, r = summary(eager(case)), summary(replay(case))
    out = [f"**{label}**: ms per step (kernels per step), the profiled eager step against a profiled replay.", "",
           "| class | eager | replay | change |", "|---|---:|---:|---:|"]
    for c in CLASSES:
        out.append(f"| {c} | {e[0][c] / 1e3:.2f} ({e[1][c]:,.0f}) | {r[0][c] / 1e3:.2f} ({r[1][c]:,.0f}) | "
                   f"{(r[0][c] - e[0][c]) / 1e3:+.2f} ({r[1][c] - e[1][c]:+,.0f}) |")
    te, tr = sum(e[0].values()), sum(r[0].values())
    ne, nr = sum(e[1].values()), sum(r[1].values())
    out.append(f"| total kernel time | {te / 1e3:.2f} ({ne:,.0f}) | {tr / 1e3:.2f} ({nr:,.0f}) | "
               f"{(tr - te) / 1e3:+.2f} ({nr - ne:+,.0f}) |")
    out.append(f"| memsets per step | {e[4]:,.0f} | {r[4]:,.0f} | {r[4] - e[4]:+,.0f} |")
    out.append(f"| GPU busy (kernels and memsets, union) | {e[5] / 1e3:.2f} | {r[5] / 1e3:.2f} | "
               f"{(r[5] - e[5]) / 1e3:+.2f} |")
    out += ["", "The same kernels grouped by what the capture changes:", "", "| kernels | eager | replay | change |",
            "|---|---:|---:|---:|"]
    for k in [c for c, _ in CAUSES] + ["everything else"]:
        out.append(f"| {k} | {e[6][k] / 1e3:.2f} ({e[7][k]:,.0f}) | {r[6][k] / 1e3:.2f} ({r[7][k]:,.0f}) | "
                   f"{(r[6][k] - e[6][k]) / 1e3:+.2f} ({r[7][k] - e[7][k]:+,.0f}) |")
    keys = set(e[2]) | set(r[2])
    moved = sorted(keys, key=lambda k: -abs(r[2][k] - e[2][k]))[:14]
    out += ["", "The kernels whose time per step changed most:", "",
            "| class | kernel | eager ms (n) | replay ms (n) |", "|---|---|---:|---:|"]
    for k in moved:
        out.append(f"| {k[0]} | `{k[1]}` | {e[2][k] / 1e3:.3f} ({e[3][k]:,.0f}) | {r[2][k] / 1e3:.3f} "
                   f"({r[3][k]:,.0f}) |")
    return "\n".join(out)


def main():
    print("\n\n".join(table(label, case) for label, case in CASES))


if __name__ == "__main__":
    main()

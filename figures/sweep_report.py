#!/usr/bin/env python3
"""`dlsim report SWEEP_DIR`: report.md and report.html for a sweep's results, readable without its YAML.

What was swept (the experiment fields that vary, and those that do not), the runs' outcome, a table per group
of runs that differ only in their policy, the best policy of each group with its margin over the runner-up, and
the sweep's figures (those its `plots:` drew, else one drawn here by plot_runs.py). The HTML page holds the same
text with the figures inline (base64), so it is one file to send. Deterministic: the same runs.csv and figures
give the same bytes.

  figures/sweep_report.py SWEEP_DIR [--metric iteration_time_us|peak_reserved_bytes|...]

Exit 0 written, 2 bad input (no runs.csv, a metric that is not a column: the message lists the columns).
"""
import argparse
import base64
import html
import os
import re
import subprocess
import sys

from atomic_output import write_atomically
from runs_csv import read_runs_csv
from script_main import InputError, run_main

EXPERIMENT = ["model", "batch", "hw", "pool", "swap", "concurrency", "iterations"]
POLICIES = ["pool", "swap", "concurrency"]
MIB = 1 << 20
# Lower is better for every metric a report ranks by; the label and how to print a value.
METRICS = {
    "iteration_time_us": ("iteration time", lambda v: f"{v / 1000:.3f} ms"),
    "peak_reserved_bytes": ("peak reserved memory", lambda v: f"{v / MIB:.1f} MiB"),
    "peak_live_bytes": ("peak live memory", lambda v: f"{v / MIB:.1f} MiB"),
    "alloc_time_us": ("allocator time", lambda v: f"{v:.1f} us"),
}


def fail(msg, code=2):
    sys.stderr.write(f"dlsim report: {msg}\n")
    sys.exit(code)


def measured(runs, r, col):
    """The number in column `col` of an ok row; InputError naming the line when it is not one."""
    v = number(r[col])
    if v is None:
        raise InputError(f"{runs}:{r['__line__']}: column '{col}' holds '{r[col]}', not a number (status ok)")
    return v


def distinct(rows, key):
    seen = []
    for r in rows:
        if r[key] not in seen:
            seen.append(r[key])
    return seen


def number(v):
    try:
        return float(v)
    except ValueError:
        return None


def figures_of(sweep_dir):
    """(png, caption) for each figure summary.md links, in its order; captions are the line after the image."""
    path = os.path.join(sweep_dir, "summary.md")
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:  # only its image links matter
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"!\[[^]]*\]\(([^)]+\.png)\)", line.strip())
        if m and os.path.exists(os.path.join(sweep_dir, m.group(1))):
            caption = ""
            for nxt in lines[i + 1:]:
                if nxt.strip():
                    caption = re.sub(r"\s*\[[^]]+\]\([^)]+\)(, \[[^]]+\]\([^)]+\))*\s*$", "", nxt.strip())
                    break
            out.append((m.group(1), caption))
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="dlsim report", description=__doc__.splitlines()[0])
    ap.add_argument("sweep_dir")
    ap.add_argument("--metric", default="iteration_time_us", help="the column the best policy is chosen by (lower wins)")
    a = ap.parse_args(argv)
    runs = os.path.join(a.sweep_dir, "runs.csv")
    if not os.path.exists(runs):
        fail(f"{runs}: no such file (a sweep's results folder holds runs.csv)")
    rows, columns = read_runs_csv(runs, "dlsim report")
    missing = [c for c in EXPERIMENT + ["status", "iteration_time_us", "peak_live_bytes", "peak_reserved_bytes"]
               if c not in columns]
    if missing:
        fail(f"{runs}: not a dlsim runs.csv (no column {', '.join(missing)})")
    if a.metric not in columns or a.metric in EXPERIMENT + ["status", "error"]:
        fail(f"--metric {a.metric}: not a metric of {runs}; its columns: {', '.join(columns)}")
    label, show = METRICS.get(a.metric, (a.metric, lambda v: f"{v:g}"))
    name = os.path.basename(os.path.normpath(a.sweep_dir))

    varied = [k for k in EXPERIMENT if len(distinct(rows, k)) > 1]
    fixed = [k for k in EXPERIMENT if k not in varied]
    policy_keys = [k for k in POLICIES if k in varied] or ["pool"]
    group_keys = [k for k in varied if k not in policy_keys]
    status = {s: sum(r["status"] == s for r in rows) for s in distinct(rows, "status")}

    md = [f"# Sweep `{name}`", ""]
    md.append(f"{len(rows)} runs of the simulator ({', '.join(f'{n} {s}' for s, n in status.items())}), from "
              f"`{runs}`. `oom`: the simulated GPU ran out of memory (a result); `error`: the run failed, its message "
              "is in runs.csv.")
    md += ["", "## What was swept", ""]
    md.append("| field | values |")
    md.append("|---|---|")
    for k in varied:
        md.append(f"| {k} (varied) | {', '.join(f'`{v}`' for v in distinct(rows, k))} |")
    for k in fixed:
        md.append(f"| {k} | `{rows[0][k]}` |" if rows else f"| {k} | |")
    md += ["", f"Policies compared: {' × '.join(policy_keys)}; each table below is one "
           f"{' / '.join(group_keys) if group_keys else 'setting'} and ranks them by {label} (lower is better)."]
    honest = "reserved_excess" in columns

    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in group_keys), []).append(r)
    best_rows = []
    md += ["", "## Results", ""]
    for g, rs in groups.items():
        title = ", ".join(f"{k} {v}" for k, v in zip(group_keys, g)) or "all runs"
        md += [f"### {title}", ""]
        head = "| " + " | ".join(policy_keys) + " | status | iteration (ms) | peak live (MiB) | peak reserved (MiB) |"
        if honest:
            head += " reserved beyond live |"
        md.append(head)
        md.append("|---" * (len(policy_keys) + 4 + (1 if honest else 0)) + "|")
        for r in rs:
            ok = r["status"] == "ok"
            cells = [r[k] for k in policy_keys] + [r["status"]]
            cells += [f"{measured(runs, r, 'iteration_time_us') / 1000:.3f}" if ok else "",
                      f"{measured(runs, r, 'peak_live_bytes') / MIB:.1f}" if ok else "",
                      f"{measured(runs, r, 'peak_reserved_bytes') / MIB:.1f}" if ok else ""]
            if honest:
                cells.append(r["reserved_excess"] if ok else "")
            md.append("| " + " | ".join(cells) + " |")
        ranked = sorted((number(r[a.metric]), i, r) for i, r in enumerate(rs)
                        if r["status"] == "ok" and number(r[a.metric]) is not None)
        if ranked:
            best = ranked[0]
            who = " / ".join(best[2][k] for k in policy_keys)
            if len(ranked) > 1:
                second = ranked[1]
                margin = (second[0] - best[0]) / second[0] * 100 if second[0] else 0.0
                runner = " / ".join(second[2][k] for k in policy_keys)
                if second[0] == best[0]:
                    md += ["", f"Best by {label}: **{who}** ({show(best[0])}), tied with {runner}."]
                    best_rows.append((title, who, show(best[0]), "tie", runner))
                else:
                    md += ["", f"Best by {label}: **{who}** ({show(best[0])}), {margin:.1f} % below the runner-up "
                           f"{runner} ({show(second[0])})."]
                    best_rows.append((title, who, show(best[0]), f"{margin:.1f} %", runner))
            else:
                md += ["", f"Only one run completed: {who} ({show(best[0])})."]
                best_rows.append((title, who, show(best[0]), "", ""))
        else:
            md += ["", "No run completed."]
            best_rows.append((title, "none", "", "", ""))
        md.append("")

    summary = ["## Best policy per setting", "", f"| setting | best by {label} | {label} | margin | runner-up |",
               "|---|---|---|---|---|"] + [f"| {' | '.join(b)} |" for b in best_rows] + [""]
    md[md.index("## Results"):md.index("## Results")] = summary

    figs = figures_of(a.sweep_dir)
    # Without figures of its own, draw one: the metric per setting, one bar per policy (a panel per value of a
    # second setting key; past two setting keys or two policy keys a bar chart would mix runs, so none is drawn).
    if not figs and any(r["status"] == "ok" for r in rows) and len(group_keys) <= 2 and len(policy_keys) == 1:
        x = group_keys[0] if group_keys else policy_keys[0]
        hue = policy_keys[0]
        png = "report-figure.png"
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "plot_runs.py"), runs,
               "--x", x, "--y", a.metric, "--kind", "bars", "--out", os.path.join(a.sweep_dir, png)]
        if hue != x:
            cmd += ["--hue", hue]
        if len(group_keys) == 2:
            cmd += ["--facet", group_keys[1]]
        if a.metric == "peak_reserved_bytes":
            cmd += ["--bound", "peak_live_bytes"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            fail(f"drawing {png}: {res.stderr.strip()}", res.returncode)
        per = f" and {group_keys[1]} (a panel each)" if len(group_keys) == 2 else ""
        figs = [(png, f"{label} per {x}{per}, one bar per {hue} (drawn by dlsim report: the sweep has no plots:).")]
    if figs:
        md += ["## Figures", ""]
        for png, caption in figs:
            md += [f"![{png}]({png})", "", caption, ""]

    text = "\n".join(md).rstrip() + "\n"
    page = to_html(text, a.sweep_dir, name)  # before either file is written: both or neither
    write_atomically(os.path.join(a.sweep_dir, "report.md"), text)
    write_atomically(os.path.join(a.sweep_dir, "report.html"), page)
    print(f"wrote {os.path.join(a.sweep_dir, 'report.md')} and report.html")
    return 0


def inline(s):
    s = html.escape(s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", s)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", s)


def to_html(md, sweep_dir, name):
    """The report's Markdown (headings, paragraphs, pipe tables, images) as one HTML page, images inline."""
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">", f"<title>dlsim sweep {html.escape(name)}</title>",
           "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}img{max-width:100%}</style></head><body>"]
    table = []

    def flush():
        if table:
            out.append("<table>")
            for i, row in enumerate(table):
                if i == 1:
                    continue  # the |---| line
                tag = "th" if i == 0 else "td"
                out.append("<tr>" + "".join(f"<{tag}>{inline(c.strip())}</{tag}>" for c in row.strip("|").split("|")) + "</tr>")
            out.append("</table>")
            table.clear()

    for line in md.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        m = re.match(r"(#+) (.*)", line)
        img = re.match(r"!\[[^]]*\]\(([^)]+)\)", line)
        if m:
            n = len(m.group(1))
            out.append(f"<h{n}>{inline(m.group(2))}</h{n}>")
        elif img:
            with open(os.path.join(sweep_dir, img.group(1)), "rb") as f:
                data = base64.b64encode(f.read()).decode()
            out.append(f"<p><img alt=\"{html.escape(img.group(1))}\" src=\"data:image/png;base64,{data}\"></p>")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
    flush()
    out.append("</body></html>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    run_main("dlsim report", main, sys.argv[1:])

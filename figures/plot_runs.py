#!/usr/bin/python3
"""Draws one figure from a sweep's runs.csv (what `dlsim plot` and a sweep's `plots:` run).

  plot_runs.py RUNS.csv --x KEY --y METRIC [--hue KEY] [--hue-drop PARAM]... [--facet KEY]
               [--kind auto|bars|lines|pareto|speedup] [--bound METRIC] [--baseline VALUE] [--where KEY=VALUE]...
               [--log-y] [--title TEXT] --out FIG.png [--out FIG.svg]

Kinds: bars (grouped: one group per x value, one bar per hue value; --bound marks a lower bound on each bar),
lines (y against a numeric x, one line per hue value), pareto (every run as a point, the front of runs that no
other beats on both x and y drawn as a line, one series per hue value), speedup (bars of y(--baseline) / y, one
per hue value other than the baseline). auto: lines when every x value is a number, else bars. Only rows whose
status is ok are drawn; the others are named in the figure (bars) or counted in a note. --hue-drop PARAM leaves
PARAM=value out of the hue labels ("singa(limit_fraction=0.5,mode=x)" -> "singa(mode=x)"), so that runs of one
policy at several values of PARAM form one series (a policy's Pareto front over its limits).
Exit status: 0 drawn, 2 bad input (the message names the column or value), 3 matplotlib missing.
"""
import argparse
import sys

import plot_style
from plot_style import plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from runs_csv import read_runs_csv
from script_main import InputError, run_main


def parse_args(argv):
    p = argparse.ArgumentParser(prog="dlsim plot", description=__doc__.split("\n\n")[0])
    p.add_argument("csv")
    p.add_argument("--x", required=True)
    p.add_argument("--y", required=True)
    p.add_argument("--hue")
    p.add_argument("--hue-drop", action="append", default=[])
    p.add_argument("--facet")
    p.add_argument("--kind", default="auto", choices=["auto", "bars", "lines", "pareto", "speedup"])
    p.add_argument("--bound")
    p.add_argument("--baseline")
    p.add_argument("--where", action="append", default=[])
    p.add_argument("--log-y", action="store_true")
    p.add_argument("--title")
    p.add_argument("--out", action="append", required=True)
    return p.parse_args(argv)


def check_column(path, columns, option, col):
    if col is not None and col not in columns:
        raise InputError(f"{path}: no column '{col}' (named by {option}); its columns: {', '.join(columns)}")


def number(path, row_no, col, text):
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{path}:{row_no}: column '{col}' holds '{text}', not a number")


def drop_params(label, params):
    """"singa(limit_fraction=0.5,mode=x)" without limit_fraction -> "singa(mode=x)"; no parameters left: "singa"."""
    if not params or "(" not in label or not label.endswith(")"):
        return label
    name, inner = label[:-1].split("(", 1)
    kept = [kv for kv in inner.split(",") if kv.split("=", 1)[0].strip() not in params]
    return f"{name}({','.join(kept)})" if kept else name


def ordered(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def draw_bars(ax, cells, xs, hues, a, colours, status_of):
    _, scale, _ = plot_style.column_axis(a.y)
    width = 0.8 / max(1, len(hues))
    bound_drawn = False
    labelled = set()
    for hi, h in enumerate(hues):
        for xi, x in enumerate(xs):
            pos = xi - 0.4 + width * (hi + 0.5)
            c = cells.get((x, h))
            if c is None:
                st = status_of.get((x, h))
                if st:
                    # x in data, y in axes fraction: at the bottom whatever the scale (log has no 0)
                    ax.text(pos, 0.02, st, rotation=90, ha="center", va="bottom", fontsize=8, color="#444444",
                            transform=ax.get_xaxis_transform())
                continue
            bar = ax.bar(pos, c["y"] * scale, width, color=colours[h], label=None if h in labelled else h)
            labelled.add(h)
            if len(xs) * len(hues) <= 16:  # few bars: their values are worth reading off
                v = c["y"] * scale
                ax.bar_label(bar, labels=[f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"], fontsize=7, padding=1)
            if c.get("bound") is not None:
                ax.hlines(c["bound"] * scale, pos - width / 2, pos + width / 2, colors="black", linewidth=2,
                          label=None if bound_drawn else f"lower bound ({plot_style.column_axis(a.bound)[0]})")
                bound_drawn = True
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(xs, rotation=30 if max(len(x) for x in xs) > 8 else 0, ha="right" if max(len(x) for x in xs) > 8 else "center")


def draw_speedup(ax, cells, xs, hues, a, colours, path):
    if a.baseline is None:
        raise InputError("--kind speedup needs --baseline VALUE (a value of the --hue column)")
    if a.baseline not in hues:
        raise InputError(f"{path}: --baseline '{a.baseline}' is not a value of column '{a.hue}'; its values: "
                         f"{', '.join(hues)}")
    others = [h for h in hues if h != a.baseline]
    width = 0.8 / max(1, len(others))
    labelled = set()
    for hi, h in enumerate(others):
        for xi, x in enumerate(xs):
            c, b = cells.get((x, h)), cells.get((x, a.baseline))
            if c is None or b is None or c["y"] == 0:
                continue
            bar = ax.bar(xi - 0.4 + width * (hi + 0.5), b["y"] / c["y"], width, color=colours[h],
                         label=None if h in labelled else h)
            labelled.add(h)
            if len(xs) * len(others) <= 16:
                ax.bar_label(bar, fmt="%.2fx", fontsize=8, padding=1)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label=f"{a.baseline} (1x)")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(xs, rotation=30 if max(len(x) for x in xs) > 8 else 0, ha="right" if max(len(x) for x in xs) > 8 else "center")


def draw_series(ax, points, hues, a, colours, pareto):
    _, xscale, _ = plot_style.column_axis(a.x)
    _, yscale, _ = plot_style.column_axis(a.y)
    for h in hues:
        pts = sorted(points.get(h, []))
        if not pts:
            continue
        xs = [p[0] * xscale for p in pts]
        ys = [p[1] * yscale for p in pts]
        if not pareto:
            ax.plot(xs, ys, marker="o", color=colours[h], label=h)
            continue
        ax.scatter(xs, ys, color=colours[h], alpha=0.35, s=18)
        front, best = [], None
        for x, y in zip(xs, ys):  # sorted by x: a point is on the front when it beats every smaller-x point on y
            if best is None or y < best:
                front.append((x, y))
                best = y
        ax.plot([p[0] for p in front], [p[1] for p in front], marker="o", drawstyle="steps-post", color=colours[h],
                label=h)


def main(argv):
    a = parse_args(argv)
    plot_style.check_outputs(a.out)  # before any work: a figure that could not be saved is no figure
    path = a.csv
    rows, columns = read_runs_csv(path, "dlsim plot")
    for option, col in (("--x", a.x), ("--y", a.y), ("--hue", a.hue), ("--facet", a.facet), ("--bound", a.bound)):
        check_column(path, columns, option, col)
    wheres = []
    for w in a.where:
        if "=" not in w:
            raise InputError(f"--where '{w}': expected KEY=VALUE")
        k, v = w.split("=", 1)
        check_column(path, columns, "--where", k)
        wheres.append((k, v))
    rows = [(r["__line__"], r) for r in rows if all(r[k] == v for k, v in wheres)]
    if not rows:
        raise InputError(f"{path}: no rows" + (" match " + " and ".join(a.where) if a.where else ""))
    kind = a.kind
    if kind == "auto":
        try:
            [float(r[a.x]) for _, r in rows]
            kind = "lines"
        except ValueError:
            kind = "bars"

    if a.hue_drop and not a.hue:
        raise InputError("--hue-drop needs --hue")
    hue_of = (lambda r: drop_params(r[a.hue], a.hue_drop)) if a.hue else (lambda r: a.y)
    facet_of = (lambda r: r[a.facet]) if a.facet else (lambda r: "")
    facets = ordered(facet_of(r) for _, r in rows)
    hues = ordered(hue_of(r) for _, r in rows)
    colours = plot_style.colours_for(hues)
    left_out = 0

    ncols = min(3, len(facets))
    nrows = (len(facets) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(6.4, 4.6 * ncols), 4.2 * nrows), squeeze=False)
    for fi, facet in enumerate(facets):
        ax = axes[fi // ncols][fi % ncols]
        sub = [(n, r) for n, r in rows if facet_of(r) == facet]
        status_of, cells, points = {}, {}, {}
        for n, r in sub:
            key = (r[a.x], hue_of(r))
            status = r.get("status", "ok")
            if status != "ok" or r[a.y] == "":
                status_of[key] = status if status != "ok" else "no value"
                left_out += 1
                continue
            y = number(path, n, a.y, r[a.y])
            if kind in ("bars", "speedup"):
                if key in cells:
                    raise InputError(f"{path}:{n}: rows {cells[key]['row']} and {n} both have {a.x}={key[0]}" +
                                     (f", {a.hue}={key[1]}" if a.hue else "") +
                                     (f", {a.facet}={facet}" if a.facet else "") +
                                     "; tell them apart with --hue, --facet or --where")
                cell = {"y": y, "row": n}
                if a.bound:
                    cell["bound"] = number(path, n, a.bound, r[a.bound]) if r[a.bound] != "" else None
                cells[key] = cell
            else:
                points.setdefault(key[1], []).append((number(path, n, a.x, r[a.x]), y))
        if kind == "bars":
            draw_bars(ax, cells, ordered(r[a.x] for _, r in sub), hues, a, colours, status_of)
        elif kind == "speedup":
            if not a.hue:
                raise InputError("--kind speedup needs --hue KEY (the column whose --baseline value the others are "
                                 "compared with)")
            draw_speedup(ax, cells, ordered(r[a.x] for _, r in sub), hues, a, colours, path)
        else:
            draw_series(ax, points, hues, a, colours, kind == "pareto")
        ax.set_xlabel(plot_style.axis_text(a.x) if kind in ("lines", "pareto") else a.x)
        if kind == "speedup":
            ax.set_ylabel(f"speed-up over {a.baseline} (×, {plot_style.column_axis(a.y)[0]})")
        else:
            ax.set_ylabel(plot_style.axis_text(a.y))
        if a.log_y:
            ax.set_yscale("log")
            # Plain numbers at 1-2-3-5 steps: a log axis with only powers of ten labelled is hard to read.
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        if a.facet:
            ax.set_title(f"{a.facet} = {facet}")
    for fi in range(len(facets), nrows * ncols):
        axes[fi // ncols][fi % ncols].axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    if handles:
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), title=a.hue)
    x_name = plot_style.column_axis(a.x)[0] if kind in ("lines", "pareto") else a.x
    title = a.title or {"pareto": "Pareto front: ", "speedup": "Speed-up: "}.get(kind, "") + \
        f"{plot_style.column_axis(a.y)[0]} {'against' if kind in ('lines', 'pareto') else 'by'} {x_name}" + \
        (f", per {a.hue}" if a.hue else "")
    if left_out:
        title += f"\n({left_out} run{'s' if left_out > 1 else ''} not ok left out)"
    fig.suptitle(title)
    fig.tight_layout()
    plot_style.save(fig, a.out)
    return 0


if __name__ == "__main__":
    run_main("dlsim plot", main, sys.argv[1:])

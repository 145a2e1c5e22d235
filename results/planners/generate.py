"""The planner table of README.md: greedy-by-size, best-fit and optimal on every instance of the shared DSA data
($DLSIM_SHARED_DIR/data/dsa), one `dlsim plan --json` at a time whatever --jobs says (the optimal planner works to
a wall-clock limit, so runs side by side would take each other's time). DLSIM_TABLE_MINIMALLOC_S (60) and
DLSIM_TABLE_OTHER_S (10) are the optimal planner's limits: heights it did not prove, and its seconds, depend on
the machine, which is why the study is not checked."""
import json
import os
import pathlib

PLANNERS = ["greedy-by-size", "best-fit", "optimal"]


def plan(study, csv, planner, limit):
    args = ["plan", csv, "--planner", planner, "--json"] + (["--time-limit", limit] if planner == "optimal" else [])
    return json.loads(study.dlsim.run(args).stdout)


def generate(study):
    dsa = pathlib.Path(os.environ["DLSIM_SHARED_DIR"]) / "data" / "dsa"
    rows = {}
    for f in sorted(str(p.relative_to(dsa)) for p in dsa.glob("*/*.csv")):
        limit = os.environ.get("DLSIM_TABLE_MINIMALLOC_S" if f.startswith("minimalloc/") else "DLSIM_TABLE_OTHER_S",
                               "60" if f.startswith("minimalloc/") else "10")
        rows[f] = {p: plan(study, str(dsa / f), p, limit) for p in PLANNERS}
    out = ["| instance | buffers | LOAD | greedy-by-size | best-fit | optimal | optimal / LOAD | proved | lower bound "
           "| optimal s |", "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    cell = lambda x: f"{x['height']:,} ({x['ratio']:.4f})"  # noqa: E731
    for inst, r in rows.items():
        g, b, o = r["greedy-by-size"], r["best-fit"], r["optimal"]
        out.append(f"| {inst} | {o['buffers']} | {o['load']:,} | {cell(g)} | {cell(b)} | {o['height']:,} | "
                   f"{o['ratio']:.6f} | {'yes' if o['optimal'] else 'no'} | {o['lower_bound']:,} | "
                   f"{o['seconds']:.2f} |")
    study.block("planners", "\n".join(out))

#!/usr/bin/env python3
"""The two tables of results/pools.md from the sweeps' runs.csv: peak reserved MiB per pool, with its excess
over the lower bound (peak live), and SmartPool against cnmem.

  scripts/pools_tables.py results/pools-cifar/runs.csv results/pools-imagenet/runs.csv
"""
import csv
import sys

POOLS = [("cuda-malloc", "cuda-malloc"), ("cnmem(init_size_mb=256)", "cnmem"), ("pytorch-caching", "pytorch-caching"),
         ("tf-bfc(allow_growth=true)", "tf-bfc"), ("smartpool", "smartpool"), ("planned", "planned")]
MIB = 1 << 20


def excess(reserved, live):
    e = (reserved / live - 1) * 100
    return f"{e:.0f}%" if e >= 100 else f"{e:.1f}%"


def table(path):
    rows, order = {}, []
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["model"] not in rows:
                rows[r["model"]] = {}
                order.append(r["model"])
            rows[r["model"]][r["pool"]] = r
    print("| model | lower bound | " + " | ".join(label for _, label in POOLS) + " | smartpool vs cnmem |")
    print("|---" * (len(POOLS) + 3) + "|")
    for m in order:
        live = int(next(iter(rows[m].values()))["peak_live_bytes"])
        cells = []
        for key, _ in POOLS:
            r = rows[m].get(key)
            if r is None or r["status"] != "ok":
                cells.append(r["status"] if r else "—")
                continue
            res = int(r["peak_reserved_bytes"])
            # A pool that never held more than it reserved by its configuration (cnmem's first region) shows that
            # reservation, not fragmentation (runs.csv's reserved_excess, issue 14's honest labels).
            up_front = r.get("reserved_excess") == "reserved up front"
            cells.append(f"{res // MIB} ({'reserved up front' if up_front else excess(res, live)})")
        smart = int(rows[m]["smartpool"]["peak_reserved_bytes"])
        cnmem = int(rows[m]["cnmem(init_size_mb=256)"]["peak_reserved_bytes"])
        vs = (smart - cnmem) / cnmem * 100
        print(f"| {m} | {live // MIB} | " + " | ".join(cells) + f" | {'+' if vs >= 0 else '−'}{abs(vs):.1f}% |")


def main():
    for i, path in enumerate(sys.argv[1:]):
        if i:
            print()
        table(path)


if __name__ == "__main__":
    main()

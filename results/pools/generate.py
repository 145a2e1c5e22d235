"""The two tables of README.md from the sweeps' runs.csv: peak reserved MiB per pool, with its excess over the lower
bound (peak live), and SmartPool against cnmem. The figures are the manifest's `dlsim plot` runs."""

POOLS = [("cuda-malloc", "cuda-malloc"), ("cnmem(init_size_mb=256)", "cnmem"), ("pytorch-caching", "pytorch-caching"),
         ("tf-bfc(allow_growth=true)", "tf-bfc"), ("smartpool", "smartpool"), ("planned", "planned")]
MIB = 1 << 20
# Cells the README explains below its table (a footnote mark after the cell).
NOTES = {("cifar-alexnet", "smartpool"): "\\*", ("resnet101", "smartpool"): "\\*\\*"}


def excess(reserved, live):
    e = (reserved / live - 1) * 100
    return f"{e:.0f}%" if e >= 100 else f"{e:.1f}%"


def table(runs):
    rows, order = {}, []
    for r in runs:
        if r["model"] not in rows:
            rows[r["model"]] = {}
            order.append(r["model"])
        rows[r["model"]][r["pool"]] = r
    out = ["| model | lower bound | " + " | ".join(label for _, label in POOLS) + " | smartpool vs cnmem |",
           "|---" * (len(POOLS) + 3) + "|"]
    for m in order:
        live = int(next(iter(rows[m].values()))["peak_live_bytes"])
        cells = []
        for key, label in POOLS:
            r = rows[m].get(key)
            if r is None or r["status"] != "ok":
                cells.append(r["status"] if r else "—")
                continue
            res = int(r["peak_reserved_bytes"])
            # A pool that never held more than it reserved by its configuration (cnmem's first region) shows that
            # reservation, not fragmentation (runs.csv's reserved_excess).
            up_front = r.get("reserved_excess") == "reserved up front"
            cells.append(f"{res // MIB} ({'reserved up front' if up_front else excess(res, live)})"
                         + NOTES.get((m, label), ""))
        smart = int(rows[m]["smartpool"]["peak_reserved_bytes"])
        cnmem = int(rows[m]["cnmem(init_size_mb=256)"]["peak_reserved_bytes"])
        vs = (smart - cnmem) / cnmem * 100
        out.append(f"| {m} | {live // MIB} | " + " | ".join(cells) + f" | {'+' if vs >= 0 else '−'}{abs(vs):.1f}% |")
    return "\n".join(out)


def generate(study):
    study.block("cifar", table(study.rows("pools-cifar")))
    study.block("imagenet", table(study.rows("pools-imagenet")))

"""How much faster `dlsim sweep --jobs N` runs the 1,000-point sweep speedup-1000.yaml than `--jobs 1` (issue 14's
goal: at least 1.8x at --jobs 2 on a 2-core machine), and whether both give the same runs.csv and summary.md byte
for byte. Wall-clock time: measure on an otherwise idle machine (other work on the cores shows up directly in the
ratio), and say in README.md what else ran."""
import filecmp
import os
import tempfile
import time

SWEEP = "results/sweep-speedup/speedup-1000.yaml"


def timed(study, jobs, out):
    start = time.monotonic()
    study.dlsim.run(["sweep", SWEEP, "--jobs", jobs, "--results-dir", out])
    return time.monotonic() - start


def generate(study):
    jobs = max(2, study.dlsim.jobs)
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()
        one = timed(study, 1, os.path.join(tmp, "jobs1"))
        many = timed(study, jobs, os.path.join(tmp, f"jobs{jobs}"))
        after = os.getloadavg()
        a, b = os.path.join(tmp, "jobs1", "speedup-1000"), os.path.join(tmp, f"jobs{jobs}", "speedup-1000")
        with open(os.path.join(a, "runs.csv")) as f:
            points = sum(1 for _ in f) - 1
        same = all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False)
                   for n in ("runs.csv", "summary.md"))
    study.block("speedup", "\n".join([
        f"{os.cpu_count()} cores; load average {load[0]:.2f} before the runs, {after[0]:.2f} after.", "",
        f"| points | `--jobs 1` | `--jobs {jobs}` | speed-up | outputs |", "|---|---|---|---|---|",
        f"| {points:,} | {one:.2f} s | {many:.2f} s | {one / many:.2f}× | runs.csv and summary.md "
        f"{'byte-identical' if same else 'DIFFER'} |"]))

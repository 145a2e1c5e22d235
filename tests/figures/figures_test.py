#!/usr/bin/python3
"""ctest: `dlsim plot`, `dlsim plot-memory` and `dlsim run --memory-snapshot` on the real binary.

  figures_test.py DLSIM_BINARY [unittest names...]

Runs with Debian's /usr/bin/python3, which has python3-matplotlib and python3-torch (scripts/install-deps.sh):
the snapshot is checked with torch 1.13's own reader (torch.cuda._memory_viz.stats, which asserts that each
segment's blocks add up to its size).
"""
import csv
import json
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

DLSIM = None
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CSV = os.path.join(HERE, "runs-small.csv")


def dlsim(*args):
    return subprocess.run([DLSIM, *args], capture_output=True, text=True, cwd=ROOT)


def trace_peaks(trace):
    live = reserved = peak_live = peak_reserved = 0
    for e in trace:
        a = e["action"]
        if a == "alloc":
            live += e["size"]
        elif a == "free_requested":
            live -= e["size"]
        elif a in ("segment_alloc", "segment_map"):
            reserved += e["size"]
        elif a in ("segment_free", "segment_unmap"):
            reserved -= e["size"]
        peak_live, peak_reserved = max(peak_live, live), max(peak_reserved, reserved)
    return peak_live, peak_reserved


def replay_forward(test, snap):
    """Replays the trace from an empty device, as a viewer does, checking that every tensor lies inside memory the
    pool holds at that moment and that the replay ends where the snapshot's segments and blocks are."""
    pieces = {}  # address -> size of each cudaMalloc or mapping
    live = {}    # address -> size of each tensor not yet freed (requested or completed)
    for e in snap["device_traces"][0]:
        a, addr, size = e["action"], e["addr"], e["size"]
        if a in ("segment_alloc", "segment_map"):
            pieces[addr] = size
        elif a == "segment_free":
            del pieces[addr]
        elif a == "segment_unmap":
            for p in [p for p in pieces if addr <= p < addr + size]:
                del pieces[p]
        elif a == "alloc":
            test.assertNotIn(addr, live)
            live[addr] = size
            inside = any(p <= addr and addr + size <= p + n for p, n in pieces.items())
            if not inside:  # side by side mappings of one expandable segment
                covered, at = 0, addr
                while at < addr + size:
                    hit = [(p, n) for p, n in pieces.items() if p <= at < p + n]
                    if not hit:
                        break
                    at = hit[0][0] + hit[0][1]
                inside = at >= addr + size
            test.assertTrue(inside, f"tensor at {addr} ({size} bytes) outside the pool's memory")
        elif a == "free_completed":
            del live[addr]
    test.assertEqual(sum(pieces.values()), sum(s["total_size"] for s in snap["segments"]))
    active = {}
    for seg in snap["segments"]:
        for b in seg["blocks"]:
            if b["state"] != "inactive":
                active[b["address"]] = b["size"]
    test.assertEqual(active, live)


class Plot(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def out(self, name):
        return os.path.join(self.dir.name, name)

    def draw(self, *args, outs=("fig.png", "fig.svg")):
        paths = [self.out(o) for o in outs]
        r = dlsim("plot", CSV, *args, *sum((["--out", p] for p in paths), []))
        self.assertEqual(r.returncode, 0, r.stderr)
        for p in paths:
            with open(p, "rb") as f:
                data = f.read()
            self.assertGreater(len(data), 5000, p)
            if p.endswith(".png"):
                self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
            else:
                self.assertIn(b"<svg", data[:2000])
        return paths

    def test_every_kind_draws_png_and_svg(self):
        self.draw("--x", "model", "--y", "peak_reserved_bytes", "--hue", "pool", "--bound", "peak_live_bytes",
                  "--facet", "batch")
        self.draw("--x", "batch", "--y", "iteration_time_us", "--hue", "pool", "--facet", "model", "--kind", "lines")
        self.draw("--x", "peak_reserved_bytes", "--y", "iteration_time_us", "--hue", "pool", "--kind", "pareto")
        self.draw("--x", "model", "--y", "iteration_time_us", "--hue", "pool", "--kind", "speedup",
                  "--baseline", "cuda-malloc", "--where", "batch=8")

    def test_repeatable_options_take_one_value_each(self):
        # --out and --where before the CSV: each takes its one value, the CSV stays the positional
        r = dlsim("plot", "--out", self.out("o.png"), "--where", "batch=8", "--x", "model", "--y",
                  "peak_reserved_bytes", "--hue", "pool", CSV)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(os.path.getsize(self.out("o.png")), 5000)

    def test_svg_is_the_same_bytes_each_time(self):
        args = ("--x", "model", "--y", "peak_reserved_bytes", "--hue", "pool", "--where", "batch=8", "--log-y")
        a = self.draw(*args, outs=("a.svg", "a.png"))
        b = self.draw(*args, outs=("b.svg", "b.png"))
        for x, y in zip(a, b):
            with open(x, "rb") as f, open(y, "rb") as g:
                self.assertEqual(f.read(), g.read(), f"{x} and {y} differ")

    def test_a_column_that_does_not_exist_lists_the_columns(self):
        r = dlsim("plot", CSV, "--x", "model", "--y", "peak_bytes", "--out", self.out("x.png"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no column 'peak_bytes' (named by --y); its columns: model, batch, hw, pool", r.stderr)
        self.assertFalse(os.path.exists(self.out("x.png")))

    def test_bad_input_names_the_problem(self):
        r = dlsim("plot", CSV, "--x", "model", "--y", "pool", "--out", self.out("x.png"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("column 'pool' holds 'cuda-malloc', not a number", r.stderr)
        r = dlsim("plot", CSV, "--x", "model", "--y", "iteration_time_us", "--out", self.out("x.pdf"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("must end in .png or .svg", r.stderr)
        r = dlsim("plot", CSV, "--x", "model", "--y", "iteration_time_us", "--hue", "pool", "--kind", "speedup",
                  "--baseline", "tf-bfc", "--where", "batch=8", "--out", self.out("x.png"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--baseline 'tf-bfc' is not a value of column 'pool'; its values: cuda-malloc, cnmem", r.stderr)
        # Two rows for one bar: refused, not one silently drawn over the other.
        r = dlsim("plot", CSV, "--x", "model", "--y", "iteration_time_us", "--hue", "pool", "--out", self.out("x.png"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("both have model=resnet50, pool=cuda-malloc", r.stderr)

    def test_hue_drop_makes_one_series_of_a_policy_at_several_limits(self):
        sys.path.insert(0, os.path.join(ROOT, "figures"))
        import plot_runs

        self.assertEqual(plot_runs.drop_params("singa(limit_fraction=0.5,mode=no-overhead)", ["limit_fraction"]),
                         "singa(mode=no-overhead)")
        self.assertEqual(plot_runs.drop_params("singa(limit_fraction=0.5)", ["limit_fraction"]), "singa")
        self.assertEqual(plot_runs.drop_params("vdnn", ["limit_fraction"]), "vdnn")
        self.draw("--x", "peak_live_bytes", "--y", "iteration_time_us", "--hue", "pool", "--hue-drop", "x",
                  "--kind", "pareto")
        r = dlsim("plot", CSV, "--x", "model", "--y", "iteration_time_us", "--hue-drop", "x", "--out", self.out("x.png"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--hue-drop needs --hue", r.stderr)

    def test_missing_python_is_a_clear_error(self):
        env = dict(os.environ, DLSIM_PYTHON="/nonexistent/python3")
        r = subprocess.run([DLSIM, "plot", CSV, "--x", "model", "--y", "iteration_time_us", "--out", self.out("x.png")],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no Python interpreter here", r.stderr)
        self.assertIn("python3-matplotlib", r.stderr)


    def test_missing_matplotlib_is_a_clear_error(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "no_matplotlib"))
        r = subprocess.run([DLSIM, "plot", CSV, "--x", "model", "--y", "iteration_time_us", "--out", self.out("x.png")],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 3)
        self.assertIn("matplotlib is missing", r.stderr)
        self.assertIn("install Debian's python3-matplotlib", r.stderr)


class MemorySnapshot(unittest.TestCase):
    def check(self, experiment):
        import torch.cuda._memory_viz as memory_viz

        with tempfile.TemporaryDirectory() as d:
            pickle_path = os.path.join(d, "snap.pickle")
            r = dlsim("run", experiment, "--json", "--memory-snapshot", pickle_path)
            self.assertEqual(r.returncode, 0, r.stderr)
            run = json.loads(r.stdout)
            with open(pickle_path, "rb") as f:
                snap = pickle.load(f)
            self.assertEqual(set(snap), {"segments", "device_traces", "allocator_settings"})
            stats = memory_viz.stats(snap["segments"])  # asserts each segment's blocks add up to total_size
            self.assertGreater(stats["segments"], 0)
            self.assertIn("active_allocated", stats)
            replay_forward(self, snap)
            peak_live, peak_reserved = trace_peaks(snap["device_traces"][0])
            self.assertEqual(peak_live, run["peak_live_bytes"])
            self.assertEqual(peak_reserved, run["peak_reserved_bytes"])
            # plot-memory draws the same snapshot and prints the same peak.
            png = os.path.join(d, "mem.png")
            r = dlsim("plot-memory", pickle_path, "--out", png)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"peak live {run['peak_live_bytes']} bytes", r.stdout)
            self.assertGreater(os.path.getsize(png), 5000)
            return snap, stats

    def test_resnet50_cnmem(self):
        snap, stats = self.check("configs/experiments/resnet50-cnmem.yaml")
        self.assertEqual(stats["segments"], 1)  # cnmem's one reservation

    def test_resnet50_cuda_malloc(self):
        snap, stats = self.check("configs/experiments/resnet50-cuda-malloc.yaml")
        # cudaMalloc per tensor: every segment holds exactly one live tensor (and the 512-byte rounding as a gap)
        for seg in snap["segments"]:
            self.assertEqual(sum(b["state"] != "inactive" for b in seg["blocks"]), 1)
            self.assertLess(seg["total_size"] - seg["allocated_size"], 512)

    def test_resnet50_pytorch_caching_on_streams(self):
        self.check("tests/figures/resnet50-pytorch-caching-streams.yaml")

    def test_plot_memory_runs_an_experiment(self):
        with tempfile.TemporaryDirectory() as d:
            outs = [os.path.join(d, "m.png"), os.path.join(d, "m.svg")]
            r = dlsim("plot-memory", "configs/experiments/resnet50-cuda-malloc.yaml", "--out", outs[0], "--out", outs[1])
            self.assertEqual(r.returncode, 0, r.stderr)
            for p in outs:
                self.assertGreater(os.path.getsize(p), 5000)

    def test_not_a_snapshot(self):
        r = dlsim("plot-memory", CSV.replace(".csv", ".csv"), "--out", "/tmp/x.png")  # a YAML parse of a CSV
        self.assertEqual(r.returncode, 2)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.pickle")
            with open(bad, "wb") as f:
                pickle.dump({"segments": []}, f)
            r = dlsim("plot-memory", bad, "--out", os.path.join(d, "x.png"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("expected a dict with 'device_traces'", r.stderr)


class Report(unittest.TestCase):
    def test_report_of_a_sweep_with_figures(self):
        with tempfile.TemporaryDirectory() as d:
            sweep = os.path.join(d, "default")
            subprocess.run(["cp", "-r", os.path.join(ROOT, "results", "default"), sweep], check=True)
            r = dlsim("report", sweep)
            self.assertEqual(r.returncode, 0, r.stderr)
            md = open(os.path.join(sweep, "report.md")).read()
            self.assertIn("| model (varied) | `resnet50`, `inception_v3` |", md)
            self.assertIn("| pool (varied) | `pytorch-caching`, `cuda-malloc`, `cnmem`, `tf-bfc`, `planned` |", md)
            self.assertIn("| batch | `32` |", md)
            # the best policy combination per model by iteration time, with its margin over the runner-up, from
            # runs.csv
            rows = list(csv.DictReader(open(os.path.join(sweep, "runs.csv"))))
            for model in ("resnet50", "inception_v3"):
                t = {(x["pool"], x["swap"], x["concurrency"]): float(x["iteration_time_us"])
                     for x in rows if x["model"] == model}
                best, other = sorted(t, key=t.get)[:2]
                margin = (t[other] - t[best]) / t[other] * 100
                # equal times (Inception-v3's serial runs under every caching pool, host-bound) are a tie
                margin_text = "tie" if t[other] == t[best] else f"{margin:.1f} %"
                self.assertIn(f"| model {model} | {' / '.join(best)} | {t[best] / 1000:.3f} ms | {margin_text} | "
                              f"{' / '.join(other)} |", md)
            self.assertIn("![pools-memory.png](pools-memory.png)", md)  # the sweep's own figures, with captions
            page = open(os.path.join(sweep, "report.html")).read()
            self.assertEqual(page.count("data:image/png;base64,"), 5)  # inline: one file to send
            self.assertIn("<table>", page)
            first = (md, page)
            self.assertEqual(dlsim("report", sweep).returncode, 0)  # the same bytes again
            self.assertEqual(first, (open(os.path.join(sweep, "report.md")).read(),
                                     open(os.path.join(sweep, "report.html")).read()))

    def test_report_draws_a_figure_when_the_sweep_has_none(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["cp", CSV, os.path.join(d, "runs.csv")], check=True)
            r = dlsim("report", d, "--metric", "peak_reserved_bytes")
            self.assertEqual(r.returncode, 0, r.stderr)
            md = open(os.path.join(d, "report.md")).read()
            self.assertIn("best by peak reserved memory", md)
            self.assertIn("![report-figure.png](report-figure.png)", md)
            self.assertGreater(os.path.getsize(os.path.join(d, "report-figure.png")), 5000)

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            r = dlsim("report", d)
            self.assertEqual(r.returncode, 2)
            self.assertIn("runs.csv: no such file", r.stderr)
            subprocess.run(["cp", CSV, os.path.join(d, "runs.csv")], check=True)
            r = dlsim("report", d, "--metric", "speed")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--metric speed: not a metric", r.stderr)
            self.assertIn("iteration_time_us", r.stderr)  # the columns are listed
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write("a,b\n1,2\n")
            r = dlsim("report", d)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a dlsim runs.csv", r.stderr)


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


class EvilPickle:
    """Unpickled by pickle.load, this runs `touch MARKER` (what a snapshot someone sent could do)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class InputSafety(unittest.TestCase):
    """Issue 27: no code runs from an input file, bad input is one line and exit 2 (never a traceback), and an
    output that cannot be written is exit 2 naming it."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.d, name)

    def assert_one_line_error(self, r, rc, *texts):
        self.assertEqual(r.returncode, rc, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotIn("internal error", r.stderr)
        for t in texts:
            self.assertIn(t, r.stderr)

    def test_a_pickle_that_would_run_code_is_refused_without_running_it(self):
        marker = self.path("ran")
        cases = {
            # the reduce at the top, inside the trace, and in each protocol's opcode for naming a global
            "top.pickle": (EvilPickle(marker), 2),
            "inside.pickle": ({"device_traces": [[EvilPickle(marker)]], "segments": []}, 4),
            "protocol0.pickle": ({"device_traces": [[EvilPickle(marker)]]}, 0),
            "protocol5.pickle": ({"device_traces": [[EvilPickle(marker)]]}, 5),
        }
        for name, (value, protocol) in cases.items():
            with self.subTest(name=name):
                snap = self.path(name)
                with open(snap, "wb") as f:
                    pickle.dump(value, f, protocol=protocol)
                self.assertIn(b"system", slurp(snap, "rb"))  # the file does name os.system
                r = dlsim("plot-memory", snap, "--out", self.path("x.png"))
                self.assert_one_line_error(r, 2, snap, "names the Python object posix.system", "refused")
                self.assertFalse(os.path.exists(marker), "the pickle's code ran")
                self.assertFalse(os.path.exists(self.path("x.png")))
        # Python's own loader would have run it: the test's pickle is what it claims to be.
        with open(self.path("top.pickle"), "rb") as f:
            pickle.load(f)
        self.assertTrue(os.path.exists(marker))

    def test_a_snapshot_of_the_wrong_shape_is_one_line_naming_the_entry(self):
        cases = [
            ({"device_traces": [[{"action": "alloc", "size": "big", "addr": 1}]]}, "device_traces[0][0]: 'size' is 'big'"),
            ({"device_traces": [[7]]}, "device_traces[0][0] is a int, not an entry"),
            ({"device_traces": [[{"action": "alloc", "size": 8, "addr": [1]}]]}, "'addr' is [1], not an address"),
            ({"device_traces": "x"}, "expected a dict with 'device_traces'"),
            ([1, 2], "expected a dict with 'device_traces'"),
        ]
        for i, (value, text) in enumerate(cases):
            with self.subTest(text=text):
                snap = self.path(f"s{i}.pickle")
                with open(snap, "wb") as f:
                    pickle.dump(value, f)
                self.assert_one_line_error(dlsim("plot-memory", snap, "--out", self.path("x.png")), 2, snap, text)
        with open(self.path("garbage.pickle"), "wb") as f:
            f.write(b"\x80\x04not a pickle at all")
        self.assert_one_line_error(dlsim("plot-memory", self.path("garbage.pickle"), "--out", self.path("x.png")), 2,
                                   "not a pickled memory snapshot")

    def torn_copy(self):
        """runs-small.csv cut inside its last row, as a sweep killed while writing it leaves it."""
        text = slurp(CSV)
        self.assertTrue(text.endswith("\n"))
        cut = text[:-25]
        os.makedirs(self.path("sweep"), exist_ok=True)
        with open(self.path("sweep/runs.csv"), "w") as f:
            f.write(cut)
        return self.path("sweep/runs.csv"), cut.count("\n") + 1

    def test_a_torn_last_line_is_left_out_with_a_warning(self):
        runs, last = self.torn_copy()
        r = dlsim("plot", runs, "--x", "model", "--hue", "pool", "--y", "iteration_time_us", "--where", "batch=8",
                  "--out", self.path("p.png"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{runs}:{last}: the last line has no line break", r.stderr)
        self.assertGreater(os.path.getsize(self.path("p.png")), 5000)
        r = dlsim("report", self.path("sweep"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the last line has no line break", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        rows = len(slurp(CSV).splitlines()) - 1
        self.assertIn(f"{rows - 1} runs of the simulator", slurp(self.path("sweep/report.md")))

    def test_a_malformed_row_is_one_line_naming_it(self):
        lines = slurp(CSV).splitlines(keepends=True)
        for name, bad, text in (("short", "resnet50,8,h100-sxm\n", "malformed row: 3 fields where the header has"),
                                ("quote", 'resnet50,"8\n', "malformed row"),
                                ("binary", "\udcff\n", "not UTF-8 text")):
            with self.subTest(name=name):
                os.makedirs(self.path(name), exist_ok=True)
                runs = self.path(f"{name}/runs.csv")
                with open(runs, "w", errors="surrogateescape") as f:
                    f.write("".join(lines[:2] + [bad] + lines[2:]))
                self.assert_one_line_error(dlsim("plot", runs, "--x", "pool", "--y", "iteration_time_us",
                                                 "--out", self.path("p.png")), 2, f"{runs}:3", text)
                self.assert_one_line_error(dlsim("report", self.path(name)), 2, f"{runs}:3", text)

    def test_a_figure_that_cannot_be_written_is_exit_2_naming_it_and_leaves_nothing(self):
        for out, text in ((self.path("no-such-folder/p.png"), "No such file or directory"),
                          (self.d + "/", "must end in .png or .svg"),
                          (self.path("a-folder.png"), "is a folder")):
            with self.subTest(out=out):
                os.makedirs(self.path("a-folder.png"), exist_ok=True)
                r = dlsim("plot", CSV, "--x", "model", "--hue", "pool", "--y", "iteration_time_us", "--where",
                          "batch=8", "--out", out)
                self.assert_one_line_error(r, 2, out, text)
        self.assertEqual(sorted(os.listdir(self.d)), ["a-folder.png"])  # no temporary file left

    def test_a_full_standard_output_is_exit_2(self):
        with open("/dev/full", "w") as full:
            r = subprocess.run([DLSIM, "run", "configs/experiments/resnet50-cnmem.yaml", "--json"], stdout=full,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT)
            self.assert_one_line_error(r, 2, "<standard output>: cannot write")
            r = subprocess.run([DLSIM, "plot", CSV, "--x", "model", "--hue", "pool", "--y", "iteration_time_us",
                                "--where", "batch=8", "--out", self.path("p.png")], stdout=full,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT)
            self.assert_one_line_error(r, 2, "<standard output>: cannot write")


if __name__ == "__main__":
    DLSIM = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[2:]])

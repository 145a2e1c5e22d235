#!/usr/bin/env python3
"""harness_concurrency.py's summary of a trace on hand-made ones: the iteration, kernel, overlap and idle medians
over the iterations after the first, the tarball's layout as --extract reads it, the simulator's Chrome trace read
back, the shipped concurrent_kernels constants the calibrated files carry, each cuDNN API run's own files, and the committed summaries' shape.
No GPU, no dlsim: a second."""
import io
import json
import os
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_concurrency as hc  # noqa: E402


def _trace(iterations, pattern):
    """`iterations` back-to-back iterations of 10,000 ns, each with the ops of `pattern`: (stream, start, end)
    offsets into the iteration."""
    its, ops = [], []
    for i in range(iterations):
        t0 = i * 10_000
        its.append({"start": t0, "end": t0 + 10_000})
        for op, (stream, s, e) in enumerate(pattern):
            ops.append({"iteration": i, "op": op, "stream": stream, "start": t0 + s, "end": t0 + e})
    return {"iterations": its, "ops": ops, "copies": [], "mem": [], "oom": False}


# Two streams: stream 0 runs 1,000-5,000 and 6,000-9,000; stream 1 runs 4,000-7,000 (overlapping 1,000 of each).
# Covered: 1,000-9,000 = 8,000 ns, so 2,000 ns idle; kernel time 4,000 + 3,000 + 3,000 = 10,000; overlap 2,000.
PATTERN = [(0, 1_000, 5_000), (1, 4_000, 7_000), (0, 6_000, 9_000)]


class Summary(unittest.TestCase):
    def test_two_streams(self):
        s = hc.summarise(_trace(3, PATTERN))
        self.assertEqual(s["iterations"], 2)  # the first is left out
        self.assertEqual(s["ops_per_iteration"], 3)
        self.assertEqual(s["streams"], 2)
        self.assertAlmostEqual(s["iteration_ms"], 0.01)
        self.assertAlmostEqual(s["kernel_ms"], 0.01)
        self.assertAlmostEqual(s["overlap_ms"], 0.002)
        self.assertAlmostEqual(s["idle_ms"], 0.002)

    def test_medians_skip_the_first_iteration(self):
        t = _trace(4, PATTERN)
        t["iterations"][0]["end"] += 50_000  # a slow first iteration changes nothing
        t["iterations"][3]["end"] += 4_000   # one slow iteration of three measured moves no median
        s = hc.summarise(t)
        self.assertEqual(s["iterations"], 3)
        self.assertAlmostEqual(s["iteration_ms"], 0.01)
        self.assertAlmostEqual(s["idle_ms"], 0.002)

    def test_three_deep_counts_once(self):
        s = hc.summarise(_trace(2, [(0, 0, 4_000), (1, 1_000, 3_000), (2, 2_000, 5_000)]))
        self.assertAlmostEqual(s["overlap_ms"], 0.003)  # 1,000-4,000 has two or more running, whatever the depth
        self.assertAlmostEqual(s["idle_ms"], 0.005)

    def test_no_iteration_after_the_first(self):
        with self.assertRaises(ValueError):
            hc.summarise(_trace(1, PATTERN))

    def test_chrome_trace_read_back(self):
        chrome = {"traceEvents": [
            {"ph": "M", "pid": 0, "tid": 1, "name": "thread_name"},
            {"ph": "X", "tid": -1, "name": "iteration 1", "cat": "iteration", "ts": 10.0, "dur": 10.0},
            {"ph": "X", "tid": -1, "name": "iteration 0", "cat": "iteration", "ts": 0.0, "dur": 10.0},
            {"ph": "X", "tid": -2, "name": "conv", "cat": "host", "ts": 10.0, "dur": 9.0, "args": {"iteration": 1}},
            {"ph": "X", "tid": 0, "name": "conv", "cat": "Conv2d", "ts": 11.0, "dur": 4.0, "args": {"iteration": 1}},
            {"ph": "X", "tid": 1, "name": "relu", "cat": "Relu", "ts": 14.0, "dur": 3.0, "args": {"iteration": 1}},
            {"ph": "C", "name": "reserved bytes", "ts": 0.0, "args": {"reserved": 1}}]}
        t = hc._from_chrome(chrome)
        self.assertEqual(t["iterations"], [{"start": 0, "end": 10_000}, {"start": 10_000, "end": 20_000}])
        s = hc.summarise(t)
        self.assertAlmostEqual(s["kernel_ms"], 0.007)  # the host's track is not a kernel
        self.assertAlmostEqual(s["overlap_ms"], 0.001)
        self.assertAlmostEqual(s["idle_ms"], 0.004)


class Extract(unittest.TestCase):
    def test_layout_and_reports(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.tar.xz")
            with tarfile.open(path, "w:xz") as tar:
                def add(name, obj):
                    data = json.dumps(obj).encode()
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
                for plan in hc.SERIAL + list(hc.PLANS):
                    pattern = [(0, 1_000, 9_000)] if plan in hc.SERIAL else PATTERN
                    for mode in hc.MODES:
                        add(f"./{plan}/trace.{mode}.json", _trace(3, pattern))
                        add(f"./{plan}/report.{mode}.json", {"peak_reserved_bytes": 3 << 20,
                                                            "peak_live_bytes": 2 << 20, "timing": mode})
                add("./devices.txt", {})
            data = hc.extract(path)
            serial = data["plans"]["resnet50-b32-serial"]["graph"]
            self.assertEqual((serial["streams"], serial["overlap_ms"], serial["idle_ms"]), (1, 0.0, 0.002))
            plan = data["plans"]["inception_v3-b8-branch-streams"]["eager"]
            self.assertEqual((plan["peak_reserved_bytes"], plan["peak_live_bytes"]), (3 << 20, 2 << 20))
            self.assertAlmostEqual(plan["overlap_ms"], 0.002)
            self.assertEqual(len(data["plans"]), len(hc.SERIAL) + len(hc.PLANS))

    def test_missing_plan_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.tar.xz")
            with tarfile.open(path, "w:xz"):
                pass
            with self.assertRaises(SystemExit) as e:
                hc.extract(path)
            self.assertIn("no trace for", str(e.exception))


class Apis(unittest.TestCase):
    def test_each_api_has_its_own_files(self):
        self.assertEqual(sorted(hc.APIS), ["graph", "legacy"])
        for key in ("tarball", "data", "block"):
            self.assertNotEqual(hc.APIS["legacy"][key], hc.APIS["graph"][key])
        self.assertEqual(hc.hw_file("eager"), hc.hw_file("eager", "legacy"))
        self.assertTrue(hc.hw_file("graph", "graph").endswith("data/h200-harness-conc-graph-api-graph.yaml"))
        self.assertEqual(hc.hw_file("eager", "graph", "/tmp/x"), "/tmp/x/h200-harness-conc-graph-api-eager.yaml")
        for api in hc.APIS:  # the tarballs the summaries came from are committed
            self.assertTrue(os.path.exists(os.path.join(hc.ROOT, hc.APIS[api]["tarball"])), api)

    def test_extract_records_the_api(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.tar.xz")
            with tarfile.open(path, "w:xz") as tar:
                for plan in hc.SERIAL + list(hc.PLANS):
                    data = json.dumps(_trace(3, PATTERN)).encode()
                    info = tarfile.TarInfo(f"{plan}/trace.graph.json")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
            out = hc.extract(path, "graph")
            self.assertEqual(out["cudnn_api"], "graph")
            self.assertTrue(out["source"].startswith(hc.APIS["graph"]["tarball"]))


class Committed(unittest.TestCase):
    def test_summary_has_every_plan_in_both_modes(self):
        for api in hc.APIS:
            with open(hc.APIS[api]["data"]) as f:
                d = json.load(f)
            self.assertEqual(d["cudnn_api"], api)
            for plan in hc.SERIAL + list(hc.PLANS):
                for mode in hc.MODES:
                    s = d["plans"][plan][mode]
                    self.assertEqual(s["iterations"], hc.ITERATIONS - 1)
                    self.assertGreater(s["peak_reserved_bytes"], s["peak_live_bytes"] // 2)
                    self.assertFalse(s["oom"])
                self.assertEqual(d["plans"][plan]["graph"]["timing"], "cuda-graph replays")
            for plan in hc.SERIAL:
                self.assertEqual(d["plans"][plan]["graph"]["overlap_ms"], 0.0)  # one stream: nothing overlaps

    def test_calibrated_files_carry_the_shipped_constants(self):
        ck = hc.shipped_concurrent_kernels()
        self.assertEqual(ck.get("co_run_slowdown"), "0.312")
        self.assertEqual(ck.get("gemm_blocks_per_sm"), "1")
        for mode in hc.MODES:
            with open(hc.hw_file(mode)) as f:
                text = f.read()
            block = text[text.index("\nconcurrent_kernels:"):]
            for k, v in ck.items():
                self.assertIn(f"\n  {k}: {v}\n", block)


class HarnessExperiment(unittest.TestCase):
    """The simulated twin pins what dlsim-cuda does, whatever the experiment file or the defaults say."""
    CONFIG = ("model: inception_v3\nbatch: 8\nhw: h100-sxm-harness\npool: pytorch-caching\nconcurrency: ios\n"
              "launch: cuda-graph\nfirst_step: lazy\nhw_override: {memory: {cublas_workspace_kib: 32768}}\n")

    def keys(self, text):
        pairs = [l.split(":", 1) for l in text.splitlines()]
        names = [k for k, _ in pairs]
        self.assertEqual(len(names), len(set(names)), text)  # each key once: a YAML map
        return {k: v.strip() for k, v in pairs}

    def test_eager_preallocates_and_gives_cublas_nothing(self):
        k = self.keys(hc.harness_experiment(self.CONFIG, "eager", "h.yaml"))
        self.assertEqual(k["launch"], "eager")
        self.assertEqual(k["first_step"], "preallocated")  # the harness's plan holds its state before iteration 0
        self.assertEqual(k["hw_override"], "{memory: {cublas_workspace_kib: 0, cublaslt_workspace_kib: 0}}")
        self.assertEqual(k["run_hw"], "h.yaml")
        self.assertEqual(k["sync_every_step"], "true")
        self.assertEqual((k["model"], k["concurrency"]), ("inception_v3", "ios"))

    def test_the_diagnostic_joins_the_same_override(self):
        k = self.keys(hc.harness_experiment(self.CONFIG, "graph", "h.yaml", co_run_slowdown=0.6))
        self.assertEqual(k["launch"], "cuda-graph")
        self.assertEqual(k["hw_override"], "{memory: {cublas_workspace_kib: 0, cublaslt_workspace_kib: 0}, "
                         "concurrent_kernels: {co_run_slowdown: 0.6}}")


if __name__ == "__main__":
    unittest.main()

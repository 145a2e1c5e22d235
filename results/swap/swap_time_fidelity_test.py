#!/usr/bin/env python3
"""swap_time_fidelity.py's two steps on hand-made traces: the summary --extract keeps (iteration and kernel
medians, each kernel's overlap with the copies, the copy counts and rates), the copy slowdown's fit and its
leave-one-plan-out, and the committed summary's shape. No GPU, no dlsim: a second."""
import io
import json
import os
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swap_time_fidelity as stf  # noqa: E402


def _trace(kernel_ns, copies):
    """Three iterations of two kernels back to back (op 0 then op 1) with the given copies in each."""
    ops, cps, its = [], [], []
    t = 0
    for i in range(3):
        start = t
        for op, ns in enumerate(kernel_ns):
            ops.append({"iteration": i, "op": op, "stream": 0, "start": t, "end": t + ns})
            t += ns
        for (off, length, nbytes, to_host) in copies:
            cps.append({"iteration": i, "start": start + off, "end": start + off + length, "bytes": nbytes,
                        "to_host": to_host, "stream": 1, "tensor": 7})
        its.append({"start": start, "end": t})
    return {"ops": ops, "copies": cps, "iterations": its}


def _tarball(path, traces):
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w:gz") as tar:
        for name, trace in traces.items():
            data = json.dumps(trace).encode()
            info = tarfile.TarInfo(f"./resnet50-b64-{name}/trace.eager.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("swap/results.tar.gz")
        info.size = len(inner.getvalue())
        tar.addfile(info, io.BytesIO(inner.getvalue()))


class Extract(unittest.TestCase):
    def test_overlap_and_extra_kernel_time(self):
        # No swap: kernels of 1000 and 3000 ns. The plan: the first kernel 1200 ns, wholly under a copy of 1000 B
        # (0..1200); the second unchanged and overlapped by nothing.
        traces = {"swap-none": _trace([1000, 3000], []),
                  "swap-fastest": _trace([1200, 3000], [(0, 1200, 1000, True)])}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.tar.gz")
            _tarball(path, traces)
            data = stf.extract(path)
        plan = data["plans"]["swap-fastest"]["eager"]
        self.assertAlmostEqual(plan["iteration_ms"], 4200 / 1e6)
        self.assertAlmostEqual(plan["slowdown_extra_ms"], 200 / 1e6)       # 1200 - 1000, per iteration
        self.assertAlmostEqual(plan["slowdown_exposure_ms"], 1000 / 1e6)   # f = 1 on the 1000 ns kernel only
        self.assertEqual(plan["d2h"]["count"], 1)
        self.assertEqual(plan["h2d"]["count"], 0)
        self.assertEqual(plan["d2h"]["bytes"], 1000)
        self.assertEqual(data["plans"]["swap-none"]["eager"]["slowdown_exposure_ms"], 0)
        self.assertNotIn("graph", plan)

    def test_rate_fit(self):
        copies = [{"bytes": b, "start": 0, "end": 5000 + b // 50} for b in (10**6, 2 * 10**6, 4 * 10**6)]
        fit = stf._rate_fit(copies)
        self.assertAlmostEqual(fit["gb_per_s"], 50.0, places=1)
        self.assertAlmostEqual(fit["latency_us"], 5.0, places=1)
        self.assertIsNone(stf._rate_fit(copies[:1]))


class Fit(unittest.TestCase):
    def data(self):
        plan = lambda extra, exposure: {"eager": {"slowdown_extra_ms": extra, "slowdown_exposure_ms": exposure}}
        return {"plans": {"swap-fastest": plan(1.0, 10.0), "swap-singa-stick": plan(3.0, 10.0),
                          "eager-save-on-cpu": plan(5.0, 0.0)}}

    def test_pooled_and_left_out(self):
        d = self.data()
        self.assertAlmostEqual(stf.fit_copy_slowdown(d), 0.2)  # (1 + 3) / 20; save-on-cpu overlaps nothing
        self.assertAlmostEqual(stf.fit_copy_slowdown(d, leave_out="swap-singa-stick"), 0.1)
        self.assertAlmostEqual(stf.fit_copy_slowdown(d, leave_out="swap-fastest"), 0.3)

    def test_committed_summary(self):
        with open(stf.DATA) as f:
            d = json.load(f)
        for plan in list(stf.PLANS) + stf.BASELINES:
            self.assertIn(plan, d["plans"])
        s = stf.fit_copy_slowdown(d)
        self.assertGreater(s, 0.0)
        self.assertLess(s, 0.2)


if __name__ == "__main__":
    unittest.main()

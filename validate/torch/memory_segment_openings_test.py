#!/usr/bin/env python3
"""Tests of memory_segment_openings.py: the openings read from a snapshot's device trace, the what-if hardware file
(one record changed, every other as shipped), and, given the dlsim binary, the run on it.

  python validate/torch/memory_segment_openings_test.py [build/bin/dlsim]
"""
import json
import pathlib
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import memory_segment_openings as mso  # noqa: E402

DLSIM = sys.argv.pop(1) if len(sys.argv) > 1 else None
MIB = 1 << 20


class FakeDlsim:
    def __init__(self, tmp, binary=None):
        self.tmp, self.binary = pathlib.Path(tmp), binary


class Openings(unittest.TestCase):
    def test_each_segment_is_named_by_the_alloc_it_serves(self):
        # PyTorch's (and dlsim's) order: segment_alloc, then the alloc it serves; a cached hit opens nothing.
        ev = [{"action": "segment_alloc", "size": 254 * MIB},
              {"action": "alloc", "size": 265605632, "frames": [{"name": "Conv2d_2b_3x3.conv.workspace"}]},
              {"action": "free_completed", "size": 265605632},
              {"action": "alloc", "size": 177020928, "frames": [{"name": "cached"}]},
              {"action": "segment_alloc", "size": 2 * MIB},
              {"action": "alloc", "size": 512, "frames": []}]
        self.assertEqual(mso.openings(ev), [(254 * MIB, 265605632, "Conv2d_2b_3x3.conv.workspace"),
                                            (2 * MIB, 512, "?")])
        self.assertEqual(mso.pools(mso.openings(ev)), (1, 254 * MIB, 1))


class MeasuredLayout(unittest.TestCase):
    def test_session_12s_layout_is_read_from_the_warm_up_steps(self):
        reserved, big, n, later = mso.measured_layout(mso.LAYOUT)
        case = json.loads((mso.DATA / mso.LAYOUT).read_text())["cases"][0]
        self.assertEqual(reserved, case["measured"]["max_memory_reserved"])  # the first step opened every segment
        self.assertEqual(n, case["measured"]["num_device_alloc"])
        self.assertFalse(later)
        self.assertEqual(big, sorted(big, reverse=True))
        self.assertTrue(all(s >= mso.BIG for s in big))


class WhatIf(unittest.TestCase):
    def test_only_conv2d_2bs_records_change_to_the_requests(self):
        with tempfile.TemporaryDirectory() as tmp:
            path, records = mso.what_if_hw(FakeDlsim(tmp), "h200")
            new = pathlib.Path(path).read_text().splitlines()
        shipped = (mso.ROOT / "configs" / "hw" / "h200.yaml").read_text()
        old = [line for line in shipped[shipped.index("conv_scratch:"):].splitlines()[1:]
               if line.lstrip().startswith("- {")]
        self.assertEqual(new[:2], ["base: h200", "conv_scratch:"])
        dropped = [line for line in old if line not in new and "pass: bwd" in line and mso.SHAPE.search(line)]
        self.assertEqual(len(dropped), 1)  # its two-gradient entry: the calls are per-call entries now
        self.assertEqual(len(new) - 2, len(old) - 1)
        changed = sorted(b for a, b in zip([line for line in old if line not in dropped], new[2:]) if a != b)
        self.assertEqual([mso.SHAPE.search(b).group(1, 2) for b in changed],
                         [("dgrad", "265605632"), ("wgrad", "273799315")])  # the forward's is the request
        self.assertEqual(records["dgrad"], 267145216)  # what it replaced: 254 MiB and the result's block's tail

    @unittest.skipUnless(DLSIM, "no dlsim binary given: the runs are skipped")
    def test_a_data_gradient_workspace_that_fits_the_cached_forward_segment_opens_none(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = FakeDlsim(tmp, DLSIM)
            shipped, op = mso.run_snapshot(d, "h200", "h200")
            what_if, wop = mso.run_snapshot(d, mso.what_if_hw(d, "h200")[0], "what-if")
        self.assertEqual(shipped["peak_reserved_bytes"], sum(s for s, _, _ in op))  # no segment is ever freed
        self.assertEqual(len(wop), len(op) - 1)
        # the large segments the measured step opened, from 150 MiB up: 262, 254, 180, 172, 172, 170 MiB
        self.assertEqual(sorted((s for s, _, _ in wop if s >= mso.BIG), reverse=True),
                         mso.measured_layout(mso.LAYOUT)[1])
        self.assertLess(what_if["peak_reserved_bytes"], shipped["peak_reserved_bytes"])
        # the shipped run's surplus: a segment opened by Conv2d_2b's data-gradient workspace
        self.assertTrue(any(name == "Conv2d_2b_3x3.conv.bwd_data.workspace" for _, _, name in op))
        self.assertFalse(any(name == "Conv2d_2b_3x3.conv.bwd_data.workspace" for _, _, name in wop))
        self.assertEqual(shipped["peak_live_bytes"], what_if["peak_live_bytes"])


if __name__ == "__main__":
    unittest.main()

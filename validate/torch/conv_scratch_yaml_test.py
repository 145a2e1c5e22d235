#!/usr/bin/env python3
"""Tests of conv_scratch_yaml.py (no GPU, no torch): the probe's records become the loader's entries, one per
geometry, in a fixed order; a repeated geometry and an unknown dtype are refused; and, given the dlsim binary,
the file it writes is one `dlsim run` reads and charges (a zoo convolution's workspace resized).

  python3 validate/torch/conv_scratch_yaml_test.py [DLSIM]
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import conv_scratch_yaml as cs  # noqa: E402

DLSIM = None


def record(op, dtype="float32", c=64, scratch=1024, stride=(1, 1), pad=(1, 1)):
    return {"op": op, "n": 32, "c": c, "h": 56, "w": 56, "k": 64, "r": 3, "s": 3, "stride": list(stride),
            "pad": list(pad), "groups": 1, "dtype": dtype, "layout": "nhwc" if dtype == "float16" else "nchw",
            "result_bytes": 1, "scratch_bytes": scratch, "src": "model:resnet50"}


class Entries(unittest.TestCase):
    def test_each_record_one_entry_in_the_loaders_keys(self):
        e = cs.entries([record("conv_wgrad", scratch=7), record("conv_fwd", stride=(2, 1), pad=(0, 3))],
                       {"float32"})
        self.assertEqual([x["pass"] for x in e], ["fwd", "wgrad"])  # sorted
        self.assertEqual(e[0], {"pass": "fwd", "dtype": "f32", "layout": "nchw", "n": 32, "c": 64, "h": 56, "w": 56,
                                "k": 64, "r": 3, "s": 3, "stride_h": 2, "stride_w": 1, "pad_h": 0, "pad_w": 3,
                                "dilation": 1, "groups": 1, "bytes": 1024})
        self.assertEqual(e[1]["bytes"], 7)

    def test_dtypes_filter_and_layout(self):
        recs = [record("conv_fwd"), record("conv_fwd", dtype="float16")]
        self.assertEqual(len(cs.entries(recs, {"float32"})), 1)
        half = cs.entries(recs, {"float16"})
        self.assertEqual((half[0]["dtype"], half[0]["layout"]), ("f16", "nhwc"))

    def test_same_output_twice_and_a_repeat_refused(self):
        probe = {"meta": {"date": "d"}, "records": [record("conv_dgrad"), record("conv_fwd", c=32)]}
        self.assertEqual(cs.to_yaml(probe, {"float32"}, "h200"), cs.to_yaml(probe, {"float32"}, "h200"))
        with self.assertRaises(SystemExit):
            cs.entries([record("conv_fwd"), record("conv_fwd", scratch=5)], {"float32"})

    def test_both_gradients_in_one_call_is_a_bwd_entry(self):
        e = cs.entries([record("conv_bwd", scratch=9), record("conv_wgrad", scratch=7)], {"float32"})
        self.assertEqual([(x["pass"], x["bytes"]) for x in e], [("bwd", 9), ("wgrad", 7)])

    def test_merge_later_file_replaces_the_same_record(self):
        old = {"meta": {"date": "a"}, "records": [record("conv_fwd", scratch=5), record("conv_wgrad", scratch=7)]}
        new = {"meta": {"date": "b", "device": "X"},
               "records": [record("conv_fwd", scratch=6), dict(record("conv_fwd", scratch=8), n=64),
                           record("conv_bwd", scratch=9)]}
        m = cs.merge([old, new])
        self.assertEqual(m["meta"], {"date": "a, b", "device": "X"})
        got = sorted((x["pass"], x["n"], x["bytes"]) for x in cs.entries(m["records"], {"float32"}))
        self.assertEqual(got, [("bwd", 32, 9), ("fwd", 32, 6), ("fwd", 64, 8), ("wgrad", 32, 7)])

    def test_the_bytes_asked_where_measured_else_the_blocks(self):
        # Inception-v3's Conv2d_2b data gradient: the older probe's whole blocks (a 254 MiB segment and the result's
        # 806,912 B unsplit tail) against a request within that segment
        old = record("conv_dgrad", scratch=267145216)
        new = dict(record("conv_dgrad", scratch=267145216), request_bytes=265605632)
        self.assertEqual(cs.entries([old], {"float32"})[0]["bytes"], 267145216)
        self.assertEqual(cs.entries([new], {"float32"})[0]["bytes"], 265605632)

    def test_two_gradient_call_with_requests_is_two_per_call_entries(self):
        # convolution_backward for both gradients: the data gradient (1 result allocated), its workspace, then the
        # weight gradient (2) and its workspace; a small request after the data gradient too
        bwd = dict(record("conv_bwd", scratch=275533824), request_bytes=273799315,
                   requests=[[4096, 1], [265605632, 1], [273799315, 2]])
        lone = dict(record("conv_dgrad", scratch=267145216), request_bytes=1)  # replaced: the step's call is bwd
        e = cs.entries([bwd, lone, record("conv_fwd", scratch=5)], {"float32"})
        self.assertEqual([(x["pass"], x["bytes"]) for x in e], [("dgrad", 265605632), ("fwd", 5),
                                                                 ("wgrad", 273799315)])
        # no request after a result: that call asked no workspace
        e = cs.entries([dict(record("conv_bwd"), requests=[[512, 2]], request_bytes=512)], {"float32"})
        self.assertEqual([(x["pass"], x["bytes"]) for x in e], [("dgrad", 0), ("wgrad", 512)])

    def test_merge_per_call_records_replace_an_earlier_pair_peak(self):
        old = {"meta": {"date": "a"}, "records": [record("conv_bwd", scratch=9), record("conv_dgrad", scratch=8),
                                                  record("conv_wgrad", scratch=7), record("conv_bwd", c=32, scratch=6)]}
        new = {"meta": {"date": "b"},
               "records": [dict(record("conv_bwd", scratch=99), request_bytes=5, requests=[[4, 1], [5, 2]])]}
        got = sorted((x["pass"], x["c"], x["bytes"]) for x in cs.entries(cs.merge([old, new])["records"], {"float32"}))
        self.assertEqual(got, [("bwd", 32, 6), ("dgrad", 64, 4), ("wgrad", 64, 5)])

    def test_cli_refuses_an_unknown_dtype(self):
        with tempfile.TemporaryDirectory() as t:
            p = os.path.join(t, "probe.json")
            with open(p, "w") as f:
                json.dump({"records": []}, f)
            r = subprocess.run([sys.executable, os.path.join(HERE, "conv_scratch_yaml.py"), p, "--dtypes", "f64"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("unknown f64", r.stderr)


@unittest.skipIf(DLSIM is None and len(sys.argv) < 2, "no dlsim binary given")
class ThroughDlsim(unittest.TestCase):
    def test_dlsim_charges_the_entries(self):
        # ResNet-50's stem at batch 32 (3 -> 64 channels, 7x7, stride 2, pad 3) given a 20 GiB forward scratch:
        # a segment of its own that the cache keeps, so the step reserves at least that (the shipped file's rule
        # charges the stem 15 MiB, and the whole step reserves under 4 GiB).
        probe = {"meta": {}, "records": [dict(record("conv_fwd", c=3, scratch=20 << 30, stride=(2, 2), pad=(3, 3)),
                                              h=224, w=224, r=7, s=7)]}
        with tempfile.TemporaryDirectory() as t:
            hw = os.path.join(t, "hw.yaml")
            with open(hw, "w") as f:
                f.write(cs.to_yaml(probe, {"float32"}, "h200"))
            peaks = []
            for h in ("h200", hw):
                exp = os.path.join(t, "exp.yaml")
                with open(exp, "w") as f:
                    json.dump({"model": "resnet50", "batch": 32, "hw": h, "pool": "pytorch-caching", "swap": "none",
                               "concurrency": "serial", "iterations": 2}, f)
                r = subprocess.run([DLSIM, "run", exp, "--json"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                peaks.append(json.loads(r.stdout)["peak_reserved_bytes"])
            self.assertLess(peaks[0], 4 << 30)
            self.assertGreaterEqual(peaks[1], 20 << 30)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        DLSIM = sys.argv.pop(1)
    unittest.main()

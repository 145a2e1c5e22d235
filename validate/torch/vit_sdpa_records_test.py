#!/usr/bin/python3
"""Tests of vit_sdpa_records.py: the committed kernels-vit-sdpa.json is what the committed ViT trace gives, and the
records pair each forward kernel with a backward one as fit-kernels reads them (standard library only, seconds)."""
import json
import pathlib
import subprocess
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import vit_sdpa_records as v  # noqa: E402


class RecordsTest(unittest.TestCase):
    def test_committed_file_is_the_traces(self):
        r = subprocess.run([sys.executable, str(HERE / "vit_sdpa_records.py"), "--check"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_pairs_forward_and_backward_on_hand_made_events(self):
        events = [{"cat": "kernel", "name": "fmha_cutlassF_f32_aligned_64x64_rf_sm80(P)", "ts": 1, "dur": 200.0},
                  {"cat": "kernel", "name": "fmha_cutlassF_f32_aligned_64x64_rf_sm80(P)", "ts": 2, "dur": 202.0},
                  {"cat": "kernel", "name": "fmha_cutlassB_f32_aligned_64x64_k64_sm80(P)", "ts": 3, "dur": 450.0},
                  {"cat": "kernel", "name": "fmha_cutlassB_f32_aligned_64x64_k64_sm80(P)", "ts": 4, "dur": 460.0},
                  {"cat": "kernel", "name": "cutlass_80_simt_sgemm_256x128_8x4_nn_align1", "ts": 5, "dur": 9.0}]
        recs, names = v.records(events)
        self.assertEqual([r["op"] for r in recs], ["sdpa_fwd", "sdpa_fwd", "sdpa_fwd_bwd", "sdpa_fwd_bwd"])
        self.assertEqual([r["us"] for r in recs], [200.0, 202.0, 650.0, 662.0])
        self.assertTrue(all(r["dtype"] == "float32" and r["src"] == "model:vit_b_16" for r in recs))
        self.assertEqual(names, ["fmha_cutlassF_f32_aligned_64x64_rf_sm80", "fmha_cutlassB_f32_aligned_64x64_k64_sm80"])

    def test_unpaired_kernels_are_refused(self):
        events = [{"cat": "kernel", "name": "fmha_cutlassF_f32_x", "ts": 1, "dur": 200.0}]
        with self.assertRaises(SystemExit):
            v.records(events)

    def test_committed_file_holds_both_steps_twelve_layers(self):
        doc = json.loads(v.OUT.read_text())
        self.assertEqual(doc["meta"]["timing_mode"], "trace")
        self.assertEqual(len(doc["records"]), 48)  # 2 steps x 12 layers, forward and forward+backward


if __name__ == "__main__":
    unittest.main()

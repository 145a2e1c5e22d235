"""Runs torch_concurrency_reference.py's CPU dry run: every concurrent schedule must give the serial schedule's loss,
logits, gradients and updated weights (one step at batch 2, small images), and a wrong rewrite must be caught.

Run: python3 validate/torch/torch_concurrency_reference_test.py (needs torch and torchvision >= 0.13; exits 77,
CTest's skip, with a line saying why otherwise). About 25 s with Debian's torch 1.13 on two busy CPU cores.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch  # noqa: F401
    import torchvision  # noqa: F401
except ImportError as e:
    print("skipped: torch/torchvision not importable by %s: %s (apt-get install python3-torch python3-torchvision)"
          % (sys.executable, e))
    sys.exit(77)


class DryRunTest(unittest.TestCase):
    def test_every_schedule_matches_serial(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "dry.json")
            done = subprocess.run([sys.executable, os.path.join(HERE, "torch_concurrency_reference.py"),
                                   "--device", "cpu", "--dry-run", "--out", out],
                                  capture_output=True, text=True, timeout=900)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(out) as f:
                rows = json.load(f)["rows"]
        got = {(r["model"], r["schedule"]): r for r in rows}
        self.assertEqual(set(got), {("inception_v3", "serial"), ("inception_v3", "branch-streams"),
                                    ("googlenet", "serial"), ("googlenet", "branch-streams"),
                                    ("resnet50", "serial"), ("resnet50", "dgrad-wgrad")})
        for key, row in got.items():
            self.assertTrue(row["matches_serial"], (key, row))
            self.assertGreater(row["grads_compared"], 100, key)  # the whole model's gradients were compared
        self.assertEqual(got[("inception_v3", "branch-streams")]["streams"], 5)  # main + 4 branch streams
        self.assertEqual(got[("resnet50", "dgrad-wgrad")]["streams"], 2)

    def test_a_wrong_branch_order_is_caught(self):
        # Guards the check itself: a rewrite that concatenates GoogLeNet's branches in another order must fail.
        import argparse
        import torch_concurrency_schedules as schedules
        from torch_concurrency_dry_run import dry_run
        from torch_concurrency_reference import SCHEDULES_OF, DRY_IMAGE_SIZE, build_model
        original = schedules._BRANCHES["Inception"]
        schedules._BRANCHES["Inception"] = lambda b: [b.branch2, b.branch1, b.branch3, b.branch4]
        try:
            args = argparse.Namespace(device="cpu", image_size=None, schedules=None, out=None)
            self.assertEqual(dry_run(args, [("googlenet", 2)], SCHEDULES_OF, DRY_IMAGE_SIZE, build_model), 1)
        finally:
            schedules._BRANCHES["Inception"] = original


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""Tests of host_machines.py's parts that need no dlsim: which machines each row of the cross-machine table fits
on, the pooled cases' names (a machine's step of a model is a case of its own; ViT-B/16 is in no host fit), and the
spread table on the committed profiles (standard library only)."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import fit_host_model as host  # noqa: E402
import host_machines as hm  # noqa: E402


class TrainingTest(unittest.TestCase):
    def test_the_others_never_hold_the_predicted_machine_and_all_four_hold_every_one(self):
        for target in hm.MACHINES:
            self.assertNotIn(target, hm.training("the others", target))
            self.assertEqual(len(hm.training("the others", target)), len(hm.MACHINES) - 1)
            self.assertEqual(hm.training("all four", target), tuple(hm.MACHINES))
            self.assertEqual(hm.training(("27b",), target), ("27b",))


class PooledCasesTest(unittest.TestCase):
    def test_each_machine_step_is_its_own_case_and_vit_is_left_out(self):
        cases = host.machine_cases(hm.MACHINES)
        self.assertIn("resnet50-b32@issue", cases)
        self.assertIn("resnet50-b32@27b", cases)
        self.assertIn("resnet50-b32@28c", cases)
        self.assertNotIn("resnet50-b32@28b", cases)  # 28b measured the nine others
        self.assertFalse([c for c in cases if c.startswith("vit_b_16")])
        self.assertEqual(len(cases), 43)
        for c in cases:
            self.assertEqual(host.CASES[c], host.CASES[c.split("@")[0]])
        # The same model on two machines: two measurements, not one.
        self.assertNotEqual(cases["googlenet-b32@issue"]["eager_wall_ms_median"],
                            cases["googlenet-b32@27b"]["eager_wall_ms_median"])

    def test_qualified_leaves_the_model_out_on_every_machine(self):
        machines = hm.machine_profiles()
        pooled = hm.qualified(machines, ("27b", "28c"), skip="resnet50-b32")
        self.assertFalse([c for c in pooled if c.startswith("resnet50-b32@")])
        self.assertIn("googlenet-b32@27b", pooled)
        self.assertIn("googlenet-b32@28c", pooled)


class SpreadTest(unittest.TestCase):
    def test_the_replays_agree_across_machines_and_the_eager_steps_do_not(self):
        lines = hm.spread_table(hm.machine_profiles())
        rows = [line for line in lines if line.startswith("| ") and "-b" in line.split("|")[1]]
        self.assertEqual(len(rows), 20)
        summary = next(line for line in lines if line.startswith("Replay spread"))
        # The committed profiles: replays within 1.6 % (MobileNet-V2, the machine against 27b's and 28c's),
        # eager steps up to 45.4 % apart (DenseNet-169, 28b against 28c).
        self.assertIn("Replay spread: mean 0.6 %, largest 1.6 %.", summary)
        self.assertIn("Eager spread: mean 15.2 %, largest 45.4 %.", summary)


if __name__ == "__main__":
    unittest.main()

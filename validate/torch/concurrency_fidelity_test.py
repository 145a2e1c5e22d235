#!/usr/bin/env python3
"""Tests of concurrency_fidelity.py and concurrent_kernels_refit.py without a GPU or dlsim: both GPUs' committed
measurements load (a rerun supersedes the first call's rows, timeouts are listed; the H200's from two leases),
the tables that need both GPUs hold every case, a batch without plans runs the batch-32 plan, the warm-up table
subtracts serial's figures, the diagnostic overlays name the shipped constants, and the refit finds a known grid
point, keeps ties at the smaller values, holds gemm_blocks_per_sm when asked and leaves a whole model out.

  python3 validate/torch/concurrency_fidelity_test.py
"""
import math
import os
import sys
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import concurrency_fidelity as cf  # noqa: E402
import concurrent_kernels_refit as refit  # noqa: E402


class Measurements(unittest.TestCase):
    def test_h100_rerun_supersedes_and_timeouts_are_listed(self):
        ok, failed = cf.load_measured(cf.GPUS["h100"]["files"])
        self.assertEqual({(k[2], k[3]) for _, k, status, _ in failed if status == "timeout"},
                         {("dgrad-wgrad", "eager"), ("dgrad-wgrad", "graph")})
        name, serial, sched = cf.measured_pair(ok, "resnet50", 32, "dgrad-wgrad", "graph")
        self.assertEqual(name, "concurrency-resnet50-rerun.json")
        self.assertEqual((serial["schedule"], sched["schedule"]), ("serial", "dgrad-wgrad"))
        name, _, _ = cf.measured_pair(ok, "inception_v3", 8, "branch-streams", "eager")
        self.assertEqual(name, "concurrency.json")

    def test_both_gpus_every_case_and_mode(self):
        both = {g: cf.load_measured(cf.GPUS[g]["files"]) for g in ("h200", "h100")}
        rows = [r for r in cf.gpu_rows(both) if r.startswith("| ") and "×" in r]
        self.assertEqual(len(rows), len(cf.CASES) * len(cf.MODES))
        up = cf.measured_speedup(both["h100"][0], "inception_v3", 8, "branch-streams", "graph")
        self.assertGreater(up, 1.0)  # the device gains from the branches on both GPUs (1.2x)

    def test_replay_check_rows_carry_the_drift_of_two_eager_runs(self):
        both = {g: cf.load_measured(cf.GPUS[g]["files"]) for g in ("h200", "h100")}
        rows = [r.split(" | ") for r in cf.replay_rows(both, cf.CASES) if r.startswith("| H")]
        self.assertEqual(len(rows), 2 * 2 * len(cf.CASES))
        resnet = [r for r in rows if r[1] == "resnet50"]
        self.assertTrue(all(r[4] == "True" for r in resnet))  # bit-identical steps: the check holds
        self.assertTrue(all(r[6] != "-" for r in rows if r[3] != "serial"))

    def test_h200_every_batch_from_its_lease(self):
        ok, failed = cf.load_measured(cf.GPUS["h200"]["files"])
        self.assertEqual(len(failed), 2)  # the first lease's ResNet-50 dgrad-wgrad timeouts
        for model, batch, schedule, _ in cf.H200_CASES:
            for mode, _, _ in cf.MODES:
                name, serial, sched = cf.measured_pair(ok, model, batch, schedule, mode)
                self.assertEqual((serial["batch"], sched["batch"]), (batch, batch))
                lease = "h200-2026-11-28/" if batch in (1, 128) else "h200-2026-11-27b/"
                self.assertTrue(name.startswith(lease), (model, batch, name))
        self.assertEqual([c for c in cf.CASES if c not in cf.H200_CASES], [])  # the H200 measured what both did

    def test_one_gpu_replay_check_has_no_other_gpu_column(self):
        measured = {"h200": cf.load_measured(cf.GPUS["h200"]["files"])}
        lines = cf.replay_rows(measured, cf.H200_CASES)
        self.assertNotIn("other GPU", lines[0])
        rows = [r.split(" | ") for r in lines if r.startswith("| H")]
        self.assertEqual(len(rows), 2 * len(cf.H200_CASES))
        self.assertTrue(all(len(r) == 8 for r in rows))
        b1 = [r for r in rows if r[1] == "inception_v3" and r[2] == "1"]
        self.assertEqual([r[5] for r in b1], ["0.0e+00", "0.0e+00"])  # a loss of exactly 0 on both sides

    def test_relative_difference_of_two_zero_losses(self):
        self.assertEqual(cf.rel(0.0, 0.0), 0.0)
        self.assertEqual(cf.rel(1e-6, 0.0), float("inf"))
        self.assertAlmostEqual(cf.rel(1.1, 1.0), 0.1)


class Plans(unittest.TestCase):
    def test_own_plan(self):
        exp, marks = cf.plan("inception_v3", 1, "branch-streams")
        self.assertEqual((exp["batch"], exp["concurrency"], marks), (1, "branch-streams", ""))

    def test_a_batch_without_plans_runs_the_batch_32_plan(self):
        exp, marks = cf.plan("resnet50", 128, "dgrad-wgrad")
        own = yaml.safe_load((cf.PLANS / "resnet50-b32-dgrad-wgrad.yaml").read_text())
        self.assertEqual(exp, dict(own, batch=128))
        self.assertEqual(marks, "²")
        exp, marks = cf.plan("googlenet", 128, "branch-streams")  # neither the batch nor the policy has a plan
        self.assertEqual((exp["batch"], exp["concurrency"], marks), (128, "branch-streams", "¹²"))


class WarmupTable(unittest.TestCase):
    def test_deltas_are_the_policy_less_serial(self):
        ok, _ = cf.load_measured(cf.GPUS["h200"]["files"])
        gpu = dict(cf.GPUS["h200"], cases=[("resnet50", 128, "dgrad-wgrad", ["dgrad-wgrad"])])
        run = (lambda reserved: {"peak_reserved_bytes": reserved * cf.MIB, "host_time_us": 22500.0,
                                 "device_time_us": 48800.0})
        sims = {("resnet50", 128, p, "eager", "base"): run(r) for p, r in (("serial", 1000), ("dgrad-wgrad", 1200))}
        warm = {("resnet50", 128, p): run(r) for p, r in (("serial", 1000), ("dgrad-wgrad", 8000))}
        row = [r for r in cf.warmup_rows(ok, sims, warm, gpu) if r.startswith("| resnet50")]
        self.assertEqual(len(row), 1)
        cells = row[0].split(" | ")
        self.assertEqual(cells[3:8], ["+7,126", "+10,958", "+200", "+7,000", "22.5 / 48.8"])


class Overlays(unittest.TestCase):
    def test_diagnostics_name_the_shipped_constants(self):
        hw = yaml.safe_load((cf.ROOT / "configs" / "hw" / "h100-sxm.yaml").read_text())["concurrent_kernels"]
        fitted = yaml.safe_load(cf.H100_CONCURRENT_KERNELS)["concurrent_kernels"]
        self.assertEqual({k: hw[k] for k in fitted}, fitted)
        pytorch = yaml.safe_load((cf.ROOT / "configs" / "hw" / "h100-sxm-pytorch.yaml").read_text())
        self.assertEqual(pytorch["base"], "h100-sxm")  # its concurrent_kernels are the fitted ones
        self.assertNotIn("concurrent_kernels", pytorch)
        for g in cf.GPUS.values():
            self.assertTrue((cf.ROOT / "configs" / "hw" / f"{g['hw']}.yaml").exists(), g["hw"])

    def test_overlay_replaces_only_the_two_constants(self):
        text = yaml.safe_load(refit.overlay("h200", 3, 0.8))
        self.assertEqual(text, {"base": "h200", "concurrent_kernels": {"gemm_blocks_per_sm": 3,
                                                                       "co_run_slowdown": 0.8}})


def synthetic(truth):
    """Simulated speed-ups over the grid for cases whose model is its key's first part: a smooth surface whose
    value at truth[model] is the measured one."""
    simulated, measured = {}, {}
    for key, point in truth.items():
        simulated[key] = {p: 1.5 / (1 + 0.3 * p[0] * p[1]) + 0.02 * p[0] for p in refit.GRID}
        measured[key] = simulated[key][point]
    return simulated, measured


class Refit(unittest.TestCase):
    def test_recovers_a_grid_point(self):
        simulated, measured = synthetic({("a", 1): (2, 0.4), ("b", 1): (2, 0.4)})
        point, error = refit.fit(simulated, measured, sorted(measured))
        self.assertEqual(point, (2, 0.4))
        self.assertLess(error, 1e-12)

    def test_ties_keep_the_smaller_values(self):
        flat = {("a", 1): {p: 1.1 for p in refit.GRID}}
        self.assertEqual(refit.fit(flat, {("a", 1): 1.1}, [("a", 1)])[0], (1, 0.0))

    def test_held_blocks_per_sm(self):
        simulated, measured = synthetic({("a", 1): (3, 0.5)})
        point, _ = refit.fit(simulated, measured, [("a", 1)], per_sm=1)
        self.assertEqual(point[0], 1)

    def test_leave_one_model_out_fits_on_the_other_models_only(self):
        simulated, measured = synthetic({("a", 8): (1, 0.2), ("a", 32): (1, 0.2), ("b", 32): (1, 1.0)})
        out = refit.lomo(simulated, measured, model_of=lambda k: k[0])
        self.assertEqual(out[("a", 8)][0], (1, 1.0))  # both of a's batches out: b's point
        self.assertEqual(out[("b", 32)][0], (1, 0.2))
        self.assertTrue(math.isclose(out[("b", 32)][1], simulated[("b", 32)][(1, 0.2)]))

    def test_no_cases_is_an_error(self):
        with self.assertRaises(ValueError):
            refit.fit({}, {}, [])


if __name__ == "__main__":
    unittest.main()

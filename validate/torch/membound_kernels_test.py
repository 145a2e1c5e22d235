#!/usr/bin/env python3
"""Tests of membound_kernels.py: multi_tensor_apply's launch rule on hand-made tensor lists, the least-squares
terms on exact points, and the attribution of a trace's strided adds and cats.

  /usr/bin/python3 validate/torch/membound_kernels_test.py
"""
import pathlib
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import membound_kernels as mk  # noqa: E402

C = mk.CHUNK


class LaunchRule(unittest.TestCase):
    def test_one_launch_when_nothing_fills(self):
        # three tensors of 1, 1.5 and 0.5 chunks: 1 + 2 + 1 blocks; the largest chunk is a full one
        self.assertEqual(mk.launches([C, C + C // 2, C // 2], 1), [(4, 3 * C, C, 3)])

    def test_a_full_block_table_launches_and_the_cut_tensor_carries_over(self):
        # 330 chunks of one tensor: 320 blocks, then the remaining 10 in a second launch
        self.assertEqual(mk.launches([330 * C], 2), [(320, 320 * C, C, 1), (10, 10 * C, C, 1)])

    def test_the_tensor_limit_depends_on_the_depth(self):
        # 120 one-element tensors: depth 1 holds 110 a launch, depth 2 64, depth 3 48
        self.assertEqual([b for b, *_ in mk.launches([1] * 120, 1)], [110, 10])
        self.assertEqual([b for b, *_ in mk.launches([1] * 120, 2)], [64, 56])
        self.assertEqual([b for b, *_ in mk.launches([1] * 120, 3)], [48, 48, 24])
        self.assertEqual(mk.launches([1] * 120, 3)[0], (48, 48, 1, 48))

    def test_a_tensor_counts_against_the_limit_only_once_its_chunks_are_in(self):
        # depth 3 (48 tensors): the 48th tensor has 3 chunks; the launch goes when its last chunk is in
        launches = mk.launches([1] * 47 + [3 * C] + [5], 3)
        self.assertEqual([(b, t) for b, _, _, t in launches], [(50, 48), (1, 1)])

    def test_empty_tensors_are_skipped(self):
        self.assertEqual(mk.launches([0, 0, 7], 1), [(1, 7, 7, 1)])
        self.assertEqual(mk.launches([0] * 200 + [1] * 48, 3), [(48, 48, 1, 48)])


class Fit(unittest.TestCase):
    def test_terms_of_exact_points(self):
        rows = [(x, y, 2.0 + 0.5 * x + 3.0 * y) for x, y in ((1, 0), (2, 1), (4, 3), (8, 1))]
        c = mk.fit_terms(rows)
        for got, want in zip(c, (2.0, 0.5, 3.0)):
            self.assertAlmostEqual(got, want, places=9)
        self.assertAlmostEqual(mk.predict(c, (10, 2, None)), 2.0 + 5.0 + 6.0, places=9)

    def test_line(self):
        a, b = mk.fit_line([(0, 1.0), (1, 3.0), (2, 5.0)])
        self.assertAlmostEqual(a, 1.0)
        self.assertAlmostEqual(b, 2.0)


def op(xid, ts, name, dims, strides):
    return {"cat": "cpu_op", "name": name, "ts": ts, "dur": 5,
            "args": {"External id": xid, "Input Dims": dims, "Input Strides": strides}}


def kernel(xid, ts, name, dur, grid):
    return {"cat": "kernel", "name": name, "ts": ts, "dur": dur, "args": {"External id": xid, "grid": grid}}


class StridedSamples(unittest.TestCase):
    def test_strided_adds_and_cats_are_told_apart(self):
        slice_ = [32, 32, 7, 7]
        trace = {"traceEvents": [
            # a slice of a 640-channel concatenation's gradient added into a contiguous one: the generic kernel
            op(1, 0, "aten::add_", [slice_, slice_, []], [[1568, 49, 7, 1], [31360, 49, 7, 1], []]),
            kernel(1, 1, "void at::native::elementwise_kernel<128, 2, ...>", 2.0, [49, 1, 1]),
            # a contiguous add: vectorised, not a strided sample
            op(2, 10, "aten::add_", [slice_, slice_, []], [[1568, 49, 7, 1], [1568, 49, 7, 1], []]),
            kernel(2, 11, "void at::native::vectorized_elementwise_kernel<4, ...>", 1.0, [49, 1, 1]),
            # a cat of two inputs, and one whose list the profiler did not record
            op(3, 20, "aten::cat", [[[32, 64, 56, 56], [32, 32, 56, 56]], []], [[], []]),
            kernel(3, 21, "void at::native::CatArrayBatchedCopy_vectorized<...>", 20.0, [4224, 2, 1]),
            op(4, 30, "aten::cat", [[], []], [[], []]),
            kernel(4, 31, "void at::native::CatArrayBatchedCopy_vectorized<...>", 90.0, [1960, 33, 1]),
        ]}
        s = mk.strided_samples(trace)
        elements = 32 * 32 * 7 * 7
        self.assertEqual(s["add_, strided operand"], [(3 * 4 * elements / mk.HBM_BYTES_PER_US, 2.0)])
        self.assertEqual(s["add_, contiguous"], [(3 * 4 * elements / mk.HBM_BYTES_PER_US, 1.0)])
        self.assertEqual(s["cat"], [(2 * 4 * 32 * 96 * 56 * 56 / mk.HBM_BYTES_PER_US, 2, 20.0)])
        self.assertEqual(s["cat, shapes not recorded"], [(0, 90.0)])


class OptimizerLaunches(unittest.TestCase):
    def test_a_step_measured_against_the_rule(self):
        # two steps of one _foreach_mul_ over one tensor of 1.5 chunks: one launch of 2 blocks a step
        events = []
        for step in range(2):
            events.append({"cat": "cpu_op", "name": "aten::_foreach_mul_", "ts": 100 * step, "dur": 5,
                           "args": {"External id": step}})
            events.append(kernel(step, 100 * step + 1, "multi_tensor_apply_kernel", 3.0 + step, [2, 1, 1]))
        ops, total = mk.optimizer_launches({"traceEvents": events}, [C + C // 2])
        self.assertEqual(ops, [("aten::_foreach_mul_", [(3.0, 2)], [(2, C + C // 2, C, 1)], 8)])
        self.assertAlmostEqual(total, 3.5)


if __name__ == "__main__":
    unittest.main()

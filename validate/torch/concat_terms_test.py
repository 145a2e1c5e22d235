#!/usr/bin/env python3
"""Tests of concat_terms.py and concat_folds.py: a trace's cat kernels with their busy and idle blocks on hand-made
events, the terms they are fitted by, and the class concat_folds.py sets the forward cat apart with.

  /usr/bin/python3 validate/torch/concat_terms_test.py
"""
import pathlib
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import concat_folds  # noqa: E402,F401  (puts the "cat" class first in heldout_fidelity's)
import concat_terms as ct  # noqa: E402
import heldout_fidelity as hf  # noqa: E402


def trace(dims, grid, name="void at::native::CatArrayBatchedCopy_vectorized<...>"):
    """One aten::cat of inputs `dims` and its kernel of `grid`."""
    op = {"cat": "cpu_op", "name": "aten::cat", "ts": 0, "dur": 5, "tid": 1,
          "args": {"External id": 7, "Input Dims": [dims, []]}}
    kernel = {"cat": "kernel", "name": name, "ts": 1, "dur": 9.5, "args": {"External id": 7, "grid": grid}}
    return {"traceEvents": [op, kernel]}


class CatKernels(unittest.TestCase):
    def test_idle_blocks_are_each_rows_blocks_past_its_input(self):
        # 64 x 8 x 4 fp32 = 8 KiB (4 blocks of 2 KiB), 1 KiB (1 block): rows of 4 blocks, 3 idle in the second
        (n, gx, busy, nbytes, us), = ct.cat_kernels(trace([[64, 8, 4], [64, 1, 4]], [4, 2, 1]))
        self.assertEqual((n, gx, busy, nbytes, us), (2, 4, 5, 2 * (8192 + 1024), 9.5))
        self.assertEqual(ct.TERMS["idle blocks"](n, gx, busy), 3 / ct.SMS)
        self.assertEqual(ct.TERMS["all blocks"](n, gx, busy), 8 / ct.SMS)
        self.assertEqual(ct.TERMS["per input"](n, gx, busy), 2)

    def test_an_input_larger_than_its_row_keeps_the_whole_row_busy(self):
        (_, _, busy, _, _), = ct.cat_kernels(trace([[1, 4096], [1, 512]], [3, 2, 1]))
        self.assertEqual(busy, 3 + 1)  # 16 KiB: 8 blocks of data, the row's 3

    def test_a_cat_whose_shapes_were_not_recorded_is_left_out(self):
        # the profiler records no shapes for a list above 30 tensors: grid.y says 33 inputs, the dims none
        self.assertEqual(ct.cat_kernels(trace([], [3136, 33, 1])), [])

    def test_a_memcpy_or_other_kernel_under_cat_is_not_a_cat_kernel(self):
        self.assertEqual(ct.cat_kernels(trace([[4], [4]], [1, 2, 1], name="Memcpy DtoD (Device -> Device)")), [])


class FoldClasses(unittest.TestCase):
    def test_the_forward_cat_has_its_own_class_and_the_backward_does_not(self):
        self.assertEqual(hf.kernel_class("aten::cat"), "cat")
        self.assertEqual(hf.kernel_class("Concat features.denseblock1.denselayer2.cat"), "cat")
        self.assertNotEqual(hf.kernel_class("ConcatBwd features.denseblock1.denselayer2.cat.bwd"), "cat")
        self.assertEqual(hf.kernel_class("aten::copy_"), "copy, cat, layout")


if __name__ == "__main__":
    unittest.main()

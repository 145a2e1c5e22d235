#!/usr/bin/python3
"""Tests of heldout_fidelity.py's parts that need no dlsim: the kernel classes both sides share, the measured
kernels' attribution to the op the model called, and the shipped host section's reading (standard library only)."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import heldout_fidelity as h  # noqa: E402


def op(name, ts, dur, ext, tid=1):
    return {"cat": "cpu_op", "name": name, "ts": ts, "dur": dur, "tid": tid, "args": {"External id": ext}}


def kernel(name, dur, ext):
    return {"cat": "kernel", "name": name, "dur": dur, "args": {"External id": ext}}


class KernelClassTest(unittest.TestCase):
    def test_measured_ops_and_dlsim_kinds_fall_in_the_same_classes(self):
        for measured, simulated, cls in [("aten::conv2d", "Conv2dBwdFilter convolution_backward", "convolution"),
                                         ("aten::linear", "MatMul addmm", "GEMM"),
                                         ("aten::mm", "MatMul mm", "GEMM"),
                                         ("aten::layer_norm", "LayerNormBwd native_layer_norm_backward", "normalisation"),
                                         ("aten::adaptive_avg_pool2d", "GlobalAvgPool mean", "pooling"),
                                         ("aten::hardswish_", "Hardswish hardswish_", "activation"),
                                         ("aten::sum", "Other sum", "reduction"),
                                         ("aten::cat", "Concat cat", "copy, cat, layout"),
                                         ("aten::_foreach_add_", "Other _foreach_add_", "optimizer"),
                                         ("aten::mul", "Mul mul", "other elementwise")]:
            self.assertEqual(h.kernel_class(measured), cls, measured)
            self.assertEqual(h.kernel_class(simulated), cls, simulated)

    def test_a_kernel_belongs_to_the_outermost_aten_op(self):
        # aten::linear calls aten::addmm, whose kernel carries addmm's External id; a backward node (no aten name)
        # calls aten::convolution_backward; two steps, so each class is halved.
        events = [op("aten::linear", 0, 10, 1), op("aten::addmm", 2, 5, 2),
                  op("autograd::engine::evaluate_function: ConvolutionBackward0", 20, 10, 3, tid=2),
                  op("aten::convolution_backward", 21, 8, 4, tid=2),
                  kernel("sm90_xmma_gemm", 4.0, 2), kernel("sm90_xmma_gemm", 4.0, 2),
                  kernel("wgrad2d_grouped_direct_kernel", 6.0, 4), kernel("orphan_kernel", 1.0, 99)]
        got = h.measured_kernels(events)
        self.assertEqual(got["GEMM"], [1.0, 4.0])
        self.assertEqual(got["convolution"], [0.5, 3.0])
        self.assertEqual(got["other elementwise"], [0.5, 0.5])  # no op: classed by its own name

    def test_the_shipped_host_section_is_read_key_by_key(self):
        costs = h.shipped_host_costs()
        self.assertEqual(set(costs), set(h.host.KEY_ORDER))
        self.assertTrue(all(v > 0 for v in costs.values()))


if __name__ == "__main__":
    unittest.main()

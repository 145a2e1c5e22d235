#!/usr/bin/python3
"""Tests of vit_step_fidelity.py's parts that need no dlsim: the kernel classes on both sides, a matrix product's
key from its inputs, and the measured GEMM kernels' attribution to the aten op that launched them, on hand-made
events; and that the committed ViT trace and recording load and agree on the twelve layers' products (standard
library only, a few seconds)."""
import gzip
import json
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import vit_step_fidelity as v  # noqa: E402


class ClassTest(unittest.TestCase):
    def test_measured_kernels_by_name(self):
        for name, cls in [("sm80_xmma_fprop_implicit_gemm_indexed_f32f32_f32f32_f32_nchwkcrs_nchw", "patch embedding "
                           "(convolution)"),
                          ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>", "GEMM"),
                          ("void cublasLt::splitKreduce_kernel<32, 16, int, float>", "GEMM"),
                          ("fmha_cutlassB_f32_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel",
                           "attention"),
                          ("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float>",
                           "layer norm"),
                          ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", "GELU"),
                          ("void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>", "copies"),
                          ("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float>>", "sums (reductions)"),
                          ("void at::native::multi_tensor_apply_kernel<TensorListMetadata<2>>",
                           "optimizer (foreach SGD)"),
                          ("void at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>",
                           "other elementwise")]:
            self.assertEqual(v.measured_class(name), cls, name)

    def test_dlsim_kernels_by_kind_and_recorded_op(self):
        for kind, name, cls in [("MatMul", "encoder.layers.encoder_layer_0.mlp.0/addmm#42", "GEMM"),
                                ("FlashAttentionBwd", "x/_scaled_dot_product_flash_attention_for_cpu_backward#9",
                                 "attention"),
                                ("LayerNormBwd", "x/native_layer_norm_backward#3", "layer norm"),
                                ("Conv2dBwdFilter", "conv_proj/convolution_backward#7",
                                 "patch embedding (convolution)"),
                                ("Other", "x/_foreach_add_#1800", "optimizer (foreach SGD)"),
                                ("Other", "x/sum#12", "sums (reductions)"),
                                ("Other", "x/nll_loss_forward#5", "loss (softmax, NLL)"),
                                ("Other", "x/select_backward#6", "other elementwise"),
                                ("Copy", "x/clone#8", "copies")]:
            self.assertEqual(v.dlsim_class(kind, name), cls, name)


class ProductTest(unittest.TestCase):
    def test_product_key_from_inputs(self):
        self.assertEqual(v.product_key("mm", [[6304, 768], [768, 3072]]), ("mm", 6304, 3072, 768))
        self.assertEqual(v.product_key("addmm", [[3072], [6304, 768], [768, 3072], [], []]),
                         ("addmm", 6304, 3072, 768))
        self.assertIsNone(v.product_key("bmm", [[2, 3, 4], [2, 4, 5]]))
        self.assertIsNone(v.product_key("mm", []))

    def test_gemm_kernels_go_to_their_op_and_a_split_k_product_counts_once(self):
        events = [{"cat": "cpu_op", "name": "aten::mm", "args": {"External id": 1,
                                                                 "Input Dims": [[768, 6304], [6304, 768]]}},
                  {"cat": "kernel", "name": "sm80_xmma_gemm_f32f32", "dur": 100.0, "args": {"External id": 1}},
                  {"cat": "kernel", "name": "cublasLt::splitKreduce_kernel", "dur": 20.0, "args": {"External id": 1}},
                  {"cat": "kernel", "name": "direct_copy_kernel", "dur": 50.0, "args": {"External id": 1}},
                  {"cat": "kernel", "name": "cutlass_80_simt_sgemm", "dur": 40.0, "args": {"External id": 9}}]
        got = v.measured_products(events, steps=2)
        self.assertEqual(got[("mm", 768, 768, 6304)], (60.0, 1.0, 0.5))
        self.assertEqual(got[("other", 0, 0, 0)], (20.0, 0.5, 0.5))  # a kernel whose op is not in the trace


class CommittedDataTest(unittest.TestCase):
    def test_trace_and_recording_have_the_same_products(self):
        r = {x["case"]: x for x in json.loads((v.DATA / "step-profiles-eleven.json").read_text())["records"]}[v.CASE]
        measured = v.measured_products(v.trace_events(f"traces/{v.TRACE}.json.gz"), r["profiled_iterations"])
        path = v.llm.memory_fidelity.TRACES / f"{v.TRACE}.torchstep.json.gz"
        with gzip.open(path, "rt") as f:
            recording = json.load(f)
        recorded = {}
        for o in recording["ops"]:
            key = v.product_key(o["name"].removeprefix("aten::"), [i["shape"] for i in o["inputs"]])
            if key:
                recorded[key] = recorded.get(key, 0) + 1
        self.assertNotIn(("other", 0, 0, 0), measured)
        self.assertEqual({k: round(n) for k, (_, _, n) in measured.items()}, recorded)
        self.assertEqual(recorded[("mm", 768, 3072, 6304)], 12)  # the MLP's first weight gradient, once a layer


if __name__ == "__main__":
    unittest.main()

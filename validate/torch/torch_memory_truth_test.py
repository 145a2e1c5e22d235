#!/usr/bin/env python3
"""Tests of torch_memory_truth.py without a GPU: the snapshot analysis on a hand-made snapshot (the part a GPU run
depends on and that cannot otherwise run here), the CPU dry run of a torchvision and a Hugging Face case through
the same child-process path as on a GPU, and the refusal (exit 3) without a GPU.

  python validate/torch/torch_memory_truth_test.py   (the python needs torch; torchvision and transformers for
                                                      the dry runs, which skip, saying so, when they are missing)
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "torch_memory_truth.py")
sys.path.insert(0, HERE)

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def has(module):
    return importlib.util.find_spec(module) is not None


def frames(*names):
    """C++ frames innermost first, as the snapshot lists them."""
    return [{"filename": "??", "line": 0, "name": n} for n in names]


def py(path, line, name):
    return {"filename": path, "line": line, "name": name}


@unittest.skipUnless(HAVE_TORCH, "torch is not installed: the script imports training_step's option names")
class SnapshotAnalysis(unittest.TestCase):
    def test_peak_live_set_and_workspaces(self):
        import torch_memory_truth as t
        model = [py("/x/site-packages/torchvision/models/resnet.py", 90, "forward")]
        conv_out = frames("c10::cuda::CUDACachingAllocator::malloc", "at::detail::empty_generic",
                          "at::native::cudnn_convolution")
        conv_ws = frames("c10::cuda::CUDACachingAllocator::malloc", "at::native::run_conv_plan",
                         "at::native::cudnn_convolution")
        blas_ws = frames("c10::cuda::CUDACachingAllocator::malloc", "at::cuda::getNewWorkspace")
        marker = [py(SCRIPT, 1, t.MARKER_FUNCTION)]
        snapshot = {
            # The end state: the parameter (allocated before recording) and the cuBLAS workspace remain.
            "segments": [{"device": 0, "address": 1000, "blocks": [
                {"size": 100, "state": "active_allocated", "frames": []},
                {"size": 50, "state": "active_allocated", "frames": blas_ws},
                {"size": 850, "state": "inactive"}]}],
            "device_traces": [[
                {"action": "alloc", "addr": 5000, "size": 7, "frames": []},  # before the marker: not counted
                {"action": "free_completed", "addr": 5000, "size": 7, "frames": []},
                {"action": "alloc", "addr": 2000, "size": 512, "frames": marker},
                {"action": "free_completed", "addr": 2000, "size": 512, "frames": marker},
                {"action": "alloc", "addr": 1100, "size": 50, "frames": blas_ws},
                {"action": "alloc", "addr": 1200, "size": 300, "frames": conv_out + model},
                {"action": "alloc", "addr": 1500, "size": 200, "frames": conv_ws + model},
                {"action": "free_requested", "addr": 1500, "size": 200, "frames": conv_ws + model},
                {"action": "free_completed", "addr": 1500, "size": 200, "frames": conv_ws + model},
                {"action": "free_completed", "addr": 1200, "size": 300, "frames": conv_out + model},
            ]]}
        r = t.analyse_snapshot(snapshot, 0)
        self.assertEqual(r["window"], "after marker")
        self.assertEqual(r["peak_allocated_bytes"], 100 + 50 + 300 + 200)
        self.assertEqual(r["live_blocks_at_peak"], 4)
        self.assertEqual(r["workspace_bytes_live_at_peak"], 250)
        groups = {g["frame"]: g["bytes"] for g in r["live_at_peak_by_frame"]}
        self.assertEqual(groups["resnet.py:90 forward"], 300)  # an op's output is the model's, not cuDNN's
        self.assertEqual(groups["workspace: at::native::cudnn_convolution"], 200)
        self.assertEqual(groups["workspace: at::cuda::getNewWorkspace"], 50)
        self.assertEqual(groups["(no stack: allocated before recording began)"], 100)
        self.assertEqual([b["bytes"] for b in r["largest_live_at_peak"]], [300, 200, 100, 50])
        self.assertEqual(r["workspaces"]["count"], 2)
        self.assertEqual(r["workspaces"]["max_bytes"], 200)

    def test_segment_openings_name_the_request_each_cudamalloc_served(self):
        # The allocator records segment_alloc, then (same lock) the alloc it serves; a request served from a cached
        # block opens nothing. Sizes are Inception-v3 b32's Conv2d_2b workspaces as dlsim's h200 charges them: the
        # forward's 265,605,632 B opens a 254 MiB segment, the data gradient's 267,145,216 B does not fit it.
        import torch_memory_truth as t
        plan = "at::native::run_conv_plan(cudnnContext*, at::Tensor const&)"  # as the H200's snapshots name it
        conv_ws = frames("c10::cuda::CUDACachingAllocator::malloc", plan)
        events = [
            {"action": "segment_alloc", "addr": 0, "size": 254 << 20, "frames": conv_ws},
            {"action": "alloc", "addr": 0, "size": 265605632, "frames": conv_ws},
            {"action": "free_completed", "addr": 0, "size": 265605632, "frames": conv_ws},
            {"action": "alloc", "addr": 0, "size": 177020928, "frames": []},  # a cached block: no cudaMalloc
            {"action": "segment_alloc", "addr": 1 << 30, "size": 256 << 20, "frames": conv_ws},
            {"action": "alloc", "addr": 1 << 30, "size": 267145216, "frames": conv_ws},
            {"action": "segment_alloc", "addr": 1 << 31, "size": 2 << 20, "frames": []}]  # cut off: no request
        self.assertEqual(t.segment_openings(events),
                         [[254 << 20, 265605632, "workspace: " + plan],
                          [256 << 20, 267145216, "workspace: " + plan],
                          [2 << 20, None, "(no request recorded after it)"]])
        r = t.analyse_snapshot({"segments": [], "device_traces": [events]}, 0)
        self.assertEqual(len(r["segment_openings"]), 3)

    def test_history_settings_per_stacks_option(self):
        import torch_memory_truth as tmt
        # trace: the history's alloc/free/cudaMalloc entries without any traceback (context None)
        self.assertEqual(tmt.history_settings("trace"), [({"context": None, "stacks": "python"}, "trace")])
        self.assertEqual([label for _, label in tmt.history_settings("all")], ["all", "python"])
        self.assertEqual(tmt.history_settings("python"), [({"context": "all", "stacks": "python"}, "python")])
        self.assertEqual(tmt.history_settings("none"), [])
        self.assertEqual(tmt.parse(["--out", "x.json", "--stacks", "trace"]).stacks, "trace")

    def test_segment_layout_lists_each_segment_with_its_live_blocks(self):
        import torch_memory_truth as tmt
        segments = [  # torch.cuda.memory_snapshot()'s shape: blocks in address order, each with its state
            {"device": 0, "address": 1 << 30, "total_size": 20 << 20, "segment_type": "large",
             "blocks": [{"size": 9 << 20, "state": "active_allocated"}, {"size": 2 << 20, "state": "inactive"},
                        {"size": 9 << 20, "state": "active_allocated"}]},
            {"device": 0, "address": 1 << 20, "total_size": 2 << 20, "segment_type": "small",
             "blocks": [{"size": 512, "state": "active_allocated"}, {"size": (2 << 20) - 512, "state": "inactive"}]},
            {"device": 1, "address": 0, "total_size": 2 << 20, "segment_type": "small", "blocks": []}]
        self.assertEqual(tmt.segment_layout(segments, 0),
                         [[2 << 20, "small", [512]], [20 << 20, "large", [9 << 20, 9 << 20]]])

    def test_backward_blocks_are_named_by_their_autograd_node(self):
        import torch_memory_truth as t
        f = frames("c10::cuda::CUDACachingAllocator::malloc", "at::detail::empty_generic",
                   "torch::autograd::generated::ConvolutionBackward0::apply")
        self.assertEqual(t.top_frame(f), "autograd: torch::autograd::generated::ConvolutionBackward0::apply")
        optim = [py("/x/torch/nn/modules/module.py", 1, "_call_impl"), py("/x/torch/optim/adamw.py", 5, "_multi")]
        self.assertEqual(t.top_frame(optim), "adamw.py:5 _multi")


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class DryRun(unittest.TestCase):
    def run_script(self, *args):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "truth.json")
            p = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--dry-run", "--warmup", "1", "--steps",
                                "1", "--out", out, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                return json.load(f), p.stdout

    def check_case(self, doc, stdout):
        self.assertTrue(doc["meta"]["dry_run"])
        self.assertEqual(doc["meta"]["versions"]["device"], "cpu (dry run)")
        (c,) = doc["cases"]
        self.assertEqual(c["status"], "ok", c.get("error"))
        self.assertGreater(c["parameters"], 0)
        self.assertGreater(c["step_seconds"], 0)
        self.assertIsNone(c["measured"])  # no CUDA allocator on the CPU: nothing pretends to be measured
        self.assertIsNone(c["snapshot"])
        self.assertIn(c["name"], stdout)
        return c

    @unittest.skipUnless(has("torchvision"), "torchvision is not installed: the torchvision dry run is skipped")
    def test_torchvision_case(self):
        c = self.check_case(*self.run_script())
        self.assertEqual(c["model"], "resnet18")

    @unittest.skipUnless(has("transformers"), "transformers is not installed: the Hugging Face dry run is skipped")
    def test_huggingface_mixed_bf16_checkpointed_case(self):
        # The tests' 2-layer Qwen config, narrowed so that the CPU step takes seconds (bf16 matmuls are slow there).
        with open(os.path.join(ROOT, "workloads", "testdata", "torch_steps",
                               "qwen2.5-0.5b-2-layers.config.json"), encoding="utf-8") as f:
            config = json.load(f)
        config.update(hidden_size=112, intermediate_size=224, vocab_size=512)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tiny-qwen.config.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(config, f)
            c = self.check_case(*self.run_script("--spec", "hf:" + path, "--batch", "1", "--seq-len", "64",
                                                 "--precision", "mixed-bf16", "--optimizer", "adamw",
                                                 "--checkpointing", "hf"))
        self.assertEqual(c["checkpointing_settings"]["mode"], "hf")
        self.assertEqual(c["info"]["architecture"], "Qwen2ForCausalLM")

    def test_without_a_gpu_it_refuses(self):
        import torch
        if torch.cuda.is_available():
            self.skipTest("a GPU is present: the refusal cannot be seen")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "truth.json")
            p = subprocess.run([sys.executable, SCRIPT, "--out", out], cwd=ROOT, capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(p.returncode, 3)
            self.assertIn("NO GPU", p.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()

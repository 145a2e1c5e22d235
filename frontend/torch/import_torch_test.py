#!/usr/bin/python3
"""Tests of the PyTorch front end (import_torch.py), run by CTest with Debian's python3 (tests/CMakeLists.txt).

Exit 77 (CTest's skip) with a line saying why when torch is not installed; a test that needs torchvision skips
itself when that is missing. Each test runs the tracer as the dlsim binary does (a child process) on the tiny
models of testdata/tiny_steps.py, and checks the file it writes, or the error and exit code it gives.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TRACER = os.path.join(HERE, "import_torch.py")
STEPS = os.path.join(HERE, "testdata", "tiny_steps.py")

try:
    import torch  # noqa: F401
except ImportError:
    print(f"skipped: {sys.executable} has no torch (apt-get install python3-torch)")
    sys.exit(77)
try:
    import torchvision  # noqa: F401
    HAVE_TORCHVISION = True
except ImportError:
    HAVE_TORCHVISION = False


def trace(spec, out, *extra):
    """(exit code, stderr) of the tracer on `spec` writing `out`."""
    r = subprocess.run([sys.executable, TRACER, spec, "--out", out, *extra], capture_output=True, text=True)
    return r.returncode, r.stderr


class FrontEndTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.dir.name, "step.torchstep.json")

    def tearDown(self):
        self.dir.cleanup()

    def record(self, spec, *extra):
        rc, err = trace(spec, self.out, *extra)
        self.assertEqual(rc, 0, err)
        with open(self.out, encoding="ascii") as f:
            return json.load(f)

    def test_a_whole_step_is_recorded(self):
        d = self.record(f"{STEPS}:tiny_mlp", "--batch", "3")
        self.assertEqual((d["format"], d["version"]), ("dlsim-torch-step", 1))
        self.assertEqual(d["summary"]["parameters"], 8 * 16 + 16 + 2 * (16 * 16 + 16) + 16 * 4 + 4)
        phases = [op["phase"] for op in d["ops"]]
        self.assertEqual(phases, sorted(phases, key=["forward", "backward", "optimizer"].index))  # in issue order
        self.assertTrue({"forward", "backward", "optimizer"} <= set(phases))
        names = {op["name"] for op in d["ops"]}
        self.assertIn("aten::addmm", names)
        self.assertTrue(any(n.startswith("aten::_foreach") for n in names))  # the optimizer's step, foreach
        kinds = {s["kind"] for s in d["storages"]}
        self.assertTrue({"parameter", "gradient", "optimizer_state", "input", "activation"} <= kinds)
        self.assertEqual((d["summary"]["premature_frees"], d["summary"]["unseen_frees"]), (0, 0))
        # Every reference is in range, and every storage's life is in program order.
        n_ops, n_storages = len(d["ops"]), len(d["storages"])
        for op in d["ops"]:
            for r in op["inputs"] + op["outputs"]:
                self.assertLess(r["storage"], n_storages)
        for s in d["storages"]:
            if s["allocated_at"] is not None and s["freed_at"] is not None:
                self.assertLessEqual(s["allocated_at"], s["freed_at"])
                self.assertLessEqual(s["freed_at"], n_ops)
        # What autograd saved: linear layers keep their inputs; each saved storage is read by the op using it.
        self.assertTrue(d["saved"])
        for r in d["saved"]:
            self.assertEqual(r["phase"], "forward")
            used = d["ops"][r["used_by"]]
            self.assertIn(r["storage"], [v["storage"] for v in used["inputs"]])

    def test_attention_with_a_saved_python_number_records(self):
        # torch 1.13 handed the wrapped number of `q / math.sqrt(E)` to the recorder as a float, and the recording
        # failed in aten::detach; every PyTorch records it now, with exact lifetimes.
        d = self.record(f"{STEPS}:tiny_attention", "--batch", "2", "--seq-len", "5")
        self.assertEqual(d["summary"]["parameters"], 3 * 8 * 8 + 3 * 8 + 8 * 8 + 8 + 8 * 3 + 3)
        self.assertEqual((d["summary"]["premature_frees"], d["summary"]["unseen_frees"]), (0, 0))
        self.assertTrue(d["saved"])

    def test_the_same_step_gives_the_same_bytes(self):
        rc, err = trace(f"{STEPS}:tiny_conv", self.out, "--batch", "2")
        self.assertEqual(rc, 0, err)
        with open(self.out, "rb") as f:
            first = f.read()
        rc, err = trace(f"{STEPS}:tiny_conv", self.out, "--batch", "2")
        with open(self.out, "rb") as f:
            self.assertEqual(f.read(), first)

    def test_convolutions_and_their_saved_tensors(self):
        d = self.record(f"{STEPS}:tiny_conv", "--batch", "2")
        names = [op["name"] for op in d["ops"]]
        self.assertIn("aten::convolution", names)
        self.assertIn("aten::convolution_backward", names)
        conv = next(op for op in d["ops"] if op["name"] == "aten::convolution")
        self.assertEqual(conv["args"]["padding"], [1, 1])
        # The input batch, saved by the convolution, is an input storage, not an activation.
        self.assertIn("input", {d["storages"][r["storage"]]["kind"] for r in d["saved"]})

    def test_checkpointing_blocks_recomputes_in_backward(self):
        plain = self.record(f"{STEPS}:tiny_mlp", "--batch", "2")
        self.assertEqual(plain["blocks"], ["blocks.0", "blocks.1"])
        d = self.record(f"{STEPS}:tiny_mlp", "--batch", "2", "--checkpointing", "blocks")
        self.assertTrue(any(op.get("recompute") for op in d["ops"] if op["phase"] == "backward"))
        self.assertLess(d["summary"]["saved_for_backward_bytes"], plain["summary"]["saved_for_backward_bytes"])

    def check_recompute_marks(self, d):
        """`recompute` is set on checkpoint's replays and nothing else: each run of marked ops replays one block's
        forward (its first ops, all of them without an early stop) in backward; the backward ops outside the replays
        run in no module (a replayed module left on the recorder's stack would name them)."""
        def kernels(ops):  # the ops that compute (2.x's checkpoint allocates its dummy input in forward only)
            return [op["name"] for op in ops if not op.get("view") and op["inputs"]]

        forward = {}
        for op in d["ops"]:
            if op["phase"] == "forward" and "block" in op:
                forward.setdefault(op["block"], []).append(op)
        runs, run = [], []
        for op in d["ops"]:
            if op.get("recompute"):
                self.assertEqual(op["phase"], "backward")
                run.append(op)
            elif run:
                runs, run = runs + [run], []
        self.assertEqual(len(runs), len(d["blocks"]))  # one replay per checkpointed block, the last one's first
        for run, block in zip(runs, reversed(range(len(d["blocks"])))):
            replayed = kernels(run)
            # Both saved tensors backward needs (fc's input, relu's output) made again, early stop or not.
            self.assertEqual(replayed[:2], ["aten::addmm", "aten::relu"])
            self.assertEqual(replayed, kernels(forward[block])[:len(replayed)])
        outside = [op for op in d["ops"] if op["phase"] == "backward" and not op.get("recompute")]
        self.assertTrue(outside)
        self.assertEqual([op["id"] for op in outside if "module" in op or "block" in op], [])

    def test_recompute_marks_checkpoints_replays_only(self):
        # Checkpoint around each block's forward (--checkpointing blocks), and around each block's call as Hugging
        # Face's layers do (2.x's early stop then raises out of the replayed block before its hooks return).
        self.check_recompute_marks(self.record(f"{STEPS}:tiny_mlp", "--batch", "2", "--checkpointing", "blocks"))
        self.check_recompute_marks(self.record(f"{STEPS}:tiny_mlp_checkpointing_calls", "--batch", "2"))

    def test_adamw_keeps_two_states_per_parameter(self):
        d = self.record(f"{STEPS}:tiny_mlp", "--batch", "2", "--optimizer", "adamw")
        device_state = sum(s["bytes"] for s in d["storages"] if s["kind"] == "optimizer_state" and not s.get("host"))
        params = sum(s["bytes"] for s in d["storages"] if s["kind"] == "parameter")
        self.assertEqual(device_state, 2 * params)

    def test_weight_decay_is_one_more_foreach_pass_and_is_recorded(self):
        def foreach_ops(d):
            return [o["name"] for o in d["ops"] if o["phase"] == "optimizer" and o["name"].startswith("aten::_foreach")]
        plain = self.record(f"{STEPS}:tiny_mlp", "--batch", "2")
        self.assertEqual(plain["step"]["weight_decay"], 0.0)
        decayed = self.record(f"{STEPS}:tiny_mlp", "--batch", "2", "--weight-decay", "1e-4")
        self.assertEqual(decayed["step"]["weight_decay"], 1e-4)
        # SGD's L2 term: the gradients plus the decayed weights, out of place (torch._foreach_add), before momentum.
        self.assertEqual(len(foreach_ops(decayed)), len(foreach_ops(plain)) + 1)
        self.assertIn("aten::_foreach_add", foreach_ops(decayed))
        adamw = self.record(f"{STEPS}:tiny_mlp", "--batch", "2", "--optimizer", "adamw")
        self.assertEqual(adamw["step"]["weight_decay"], 0.01)  # AdamW's own default
        for bad in ("-0.1", "1", "nan"):
            with self.subTest(weight_decay=bad):
                rc, err = trace(f"{STEPS}:tiny_mlp", self.out, "--batch", "2", "--weight-decay", bad)
                self.assertEqual(rc, 2, err)
                self.assertIn("--weight-decay must be in [0, 1)", err)

    def test_causal_lms_are_known_by_suffix_or_by_transformers_mapping(self):
        sys.path.insert(0, HERE)
        from model_specs import is_causal_lm
        self.assertTrue(is_causal_lm(["Qwen2ForCausalLM"], None))
        self.assertTrue(is_causal_lm(["GPT2LMHeadModel"], "GPT2LMHeadModel"))
        self.assertFalse(is_causal_lm(["GPT2LMHeadModel"], None))
        self.assertFalse(is_causal_lm(["BertModel"], "BertLMHeadModel"))
        self.assertFalse(is_causal_lm([], "GPT2LMHeadModel"))
        self.assertFalse(is_causal_lm([None, 3], None))

    def test_bad_specs_name_what_and_where(self):
        cases = [
            ("nonsense", "names nothing"),
            (f"{STEPS}:no_such_function", "has no function 'no_such_function'"),
            (f"{STEPS}:returns_a_model_only", "must return (model, inputs, loss_fn)"),
            (f"{STEPS}:raises_while_building", "tiny_steps.py line "),
            (f"{STEPS}:reads_a_value", "reads a tensor's value"),
            (os.path.join(self.dir.name, "missing.py") + ":f", "no such file"),
        ]
        for spec, words in cases:
            with self.subTest(spec=spec):
                rc, err = trace(spec, self.out, "--batch", "2")
                self.assertEqual(rc, 2, err)
                self.assertIn(words, err)
                self.assertFalse(os.path.exists(self.out), "a failed trace left a file")

    def test_data_dependence_names_the_line(self):
        rc, err = trace(f"{STEPS}:reads_a_value", self.out, "--batch", "2")
        with open(STEPS, encoding="utf-8") as f:
            line = next(i for i, text in enumerate(f, 1) if ".item()" in text)
        self.assertIn(f"tiny_steps.py line {line}", err)

    def test_a_failure_leaves_an_existing_trace_alone(self):
        with open(self.out, "w", encoding="ascii") as f:
            f.write("old")
        rc, _ = trace("nonsense", self.out, "--batch", "2")
        self.assertEqual(rc, 2)
        with open(self.out, encoding="ascii") as f:
            self.assertEqual(f.read(), "old")

    @unittest.skipUnless(HAVE_TORCHVISION, "python3-torchvision is not installed")
    def test_resnet18_matches_pytorchs_own_count(self):
        # The saved bytes measured with real tensors (validate/torch/torch_reference_cnn.py, torch 1.13, batch 1:
        # workloads/testdata/torch_cnn.json) and the parameters of torchvision's ResNet-18.
        d = self.record("torchvision:resnet18", "--batch", "1")
        self.assertEqual(d["summary"]["parameters"], 11689512)
        self.assertEqual(d["summary"]["saved_for_backward_bytes"], 21620132)
        self.assertEqual(d["blocks"][0], "layer1.0")

    @unittest.skipUnless(HAVE_TORCHVISION, "python3-torchvision is not installed")
    def test_regnet_computes_its_widths_outside_the_fake_mode(self):
        # torchvision's RegNet reads its stage widths back from tensors (BlockParams.from_init_params); the front
        # end computes them outside the fake mode (PyTorch 2.1 and later). Parameters: torchvision's own count.
        try:
            from torch._subclasses.fake_tensor import unset_fake_temporarily  # noqa: F401
        except ImportError:
            self.skipTest(f"torch {torch.__version__} has no unset_fake_temporarily (2.1 and later)")
        d = self.record("torchvision:regnet_y_400mf", "--batch", "1")
        self.assertEqual(d["summary"]["parameters"], 4344144)

    def test_an_unknown_torchvision_model_lists_the_known(self):
        if not HAVE_TORCHVISION:
            self.skipTest("python3-torchvision is not installed")
        rc, err = trace("torchvision:resnet19", self.out, "--batch", "1")
        self.assertEqual(rc, 2)
        self.assertIn("no classification model 'resnet19'", err)
        self.assertIn("resnet18", err)


@unittest.skipUnless(os.environ.get("DLSIM_BIN"), "DLSIM_BIN (the dlsim binary) is not set: CTest sets it")
class DlsimBinaryTest(unittest.TestCase):
    """`dlsim import-torch` runs this tracer and loads what it wrote; `dlsim run` simulates it under policies."""

    def test_import_then_run(self):
        dlsim = os.environ["DLSIM_BIN"]
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "conv.torchstep.json")
            r = subprocess.run([dlsim, "import-torch", f"{STEPS}:tiny_conv", "--batch", "2", "--out", out],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("loaded " + out, r.stdout)
            self.assertIn("costed as their memory traffic", r.stdout)
            for swap in ("none", "{name: dtr, limit_fraction: 0.7}", "vdnn"):
                with self.subTest(swap=swap):
                    exp = os.path.join(d, "exp.yaml")
                    with open(exp, "w", encoding="ascii") as f:
                        f.write(f"model: {out}\nbatch: 2\nhw: h100-sxm\npool: pytorch-caching\nswap: {swap}\n"
                                "concurrency: serial\n")
                    r = subprocess.run([dlsim, "run", exp, "--json"], capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertGreater(json.loads(r.stdout)["peak_live_bytes"], 0)
            r = subprocess.run([dlsim, "import-torch", "nonsense", "--batch", "2", "--out", out],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("names nothing", r.stderr)
            # --weight-decay reaches the tracer, and the binary refuses what is not in [0, 1) itself.
            r = subprocess.run([dlsim, "import-torch", f"{STEPS}:tiny_conv", "--batch", "2", "--weight-decay", "1e-4",
                                "--out", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="ascii") as f:
                self.assertEqual(json.load(f)["step"]["weight_decay"], 1e-4)
            r = subprocess.run([dlsim, "import-torch", f"{STEPS}:tiny_conv", "--batch", "2", "--weight-decay", "two",
                                "--out", out], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("--weight-decay: a number in [0, 1), got 'two'", r.stderr)


if __name__ == "__main__":
    unittest.main()

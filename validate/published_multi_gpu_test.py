#!/usr/bin/env python3
"""Tests of validate/published_multi_gpu.py: the committed results/multi-gpu/published.yaml is sound (every field,
every arithmetic check), results/multi-gpu.md's published table is the one the file gives, the Llama parameter
counts are the presets' (workloads/llama_models.h), and each kind of bad entry is refused with an error naming the
file, the line, the entry and the field. No GPU, no dlsim, no torch: python3-yaml only.

  python3 validate/published_multi_gpu_test.py
"""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import published_multi_gpu as pub  # noqa: E402

# One valid entry (the 13B row of torchtitan's A100 table), the base every bad case below changes one thing in.
GOOD = """schema_version: 1
sources:
  s1:
    title: "t"
    url: https://example.org/x
    path: null
    commit: null
    version: "v"
    read_via: "r"
points:
  - id: p1
    kind: measured
    source: s1
    locator: "table, row 13B"
    model: {name: "Llama 2 13B", arch: llama, params: "13B", layers: 40, hidden: 5120, heads: 40, kv_heads: 40,
            ffn: 13824, vocab: 32000, seq_len: 4096}
    hardware: {gpu: "A100 80GB", gpu_memory_gb: 80, gpus: 64, gpus_per_node: 8, nodes: 8, intra_node: null,
               inter_node: null}
    layout: {dp: null, fsdp: 64, zero_stage: 3, tp: 1, pp: 1, cp: 1, sp: false, reshard_after_forward: true,
             offload: none}
    training: {precision: bf16, mixed_precision: null, activation_checkpointing: none, local_batch: 2,
               global_batch: 128, grad_accum: 1, optimizer: AdamW, compile: false, float8: false, async_tp: false,
               other: []}
    software: null
    figures:
      - {quantity: tokens_per_s_per_gpu, value: 2162, unit: tokens/s, as_published: "2162"}
      - {quantity: mfu, value: 61.1, unit: "%", as_published: "61.1%"}
    checks:
      - {formula: mfu_from_tokens, params: total, peak_tflops: 312, expect: agree}
    dlsim: {status: reproducible, model: llama2-13b, hardware: a100-sxm-80gb, layout: "{fsdp: 64}", local_batch: 2,
            seq_len: 4096, missing: []}
    notes: ""
"""


def line_of(text, needle):
    return text[:text.index(needle)].count("\n") + 1


class Bad(unittest.TestCase):
    def errors(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text)
        try:
            errors, _ = pub.validate(f.name)
        finally:
            os.unlink(f.name)
        return f.name, errors

    def refused(self, old, new, field, words, entry="p1", at=None):
        """Replacing `old` by `new` in GOOD gives one error, on the line of `at` (default: new's first line; the
        entry's when new is empty), naming the entry and the field."""
        self.assertIn(old, GOOD)
        text = GOOD.replace(old, new, 1)
        path, errors = self.errors(text)
        self.assertEqual(len(errors), 1, errors)
        at = at or (new.strip().splitlines()[0] if new.strip() else None)
        line = line_of(text, at) if at else None
        prefix = f"{path}:{line}: " if line else f"{path}:"
        self.assertTrue(errors[0].startswith(prefix), (errors[0], prefix))
        self.assertIn(f"entry '{entry}'", errors[0])
        self.assertIn(f"field '{field}'", errors[0])
        self.assertIn(words, errors[0])

    def test_the_base_entry_is_sound(self):
        self.assertEqual(self.errors(GOOD)[1], [])

    def test_missing_field(self):
        self.refused("    notes: \"\"\n", "", "notes", "missing", at="id: p1")

    def test_unknown_field(self):
        self.refused("    software: null\n", "    software: null\n    sofware: x\n", "sofware", "unknown field",
                     at="sofware: x")

    def test_unknown_nested_field(self):
        self.refused("cp: 1, sp: false", "cp: 1, ep: 2, sp: false", "layout.ep", "unknown field")

    def test_wrong_type(self):
        self.refused("seq_len: 4096}\n    hardware", "seq_len: \"4096\"}\n    hardware", "model.seq_len", "must be int")

    def test_unquoted_no_is_a_bool_and_refused(self):
        self.refused("status: reproducible", "status: no", "dlsim.status", "must be string")

    def test_enumeration(self):
        self.refused("activation_checkpointing: none", "activation_checkpointing: sometimes",
                     "training.activation_checkpointing", "'sometimes' is not one of")

    def test_value_must_be_the_printed_number(self):
        self.refused("value: 2162,", "value: 2126,", "figures[0].value", "is not the printed")

    def test_unit_follows_the_quantity(self):
        self.refused("unit: tokens/s", "unit: samples/s", "figures[0].unit", "tokens_per_s_per_gpu is in tokens/s")

    def test_source_must_exist(self):
        self.refused("    source: s1\n", "    source: s2\n", "source", "is not a key of sources")

    def test_degrees_multiply_to_the_gpus(self):
        self.refused("zero_stage: 3, tp: 1,", "zero_stage: 3, tp: 2,", "layout", "= 128, not hardware.gpus 64")

    def test_global_batch_is_local_times_ranks(self):
        self.refused("global_batch: 128", "global_batch: 256", "training.global_batch", "data-parallel ranks",
                     at="global_batch: 256")

    def test_accumulated_micro_batches_count(self):
        text = GOOD.replace("global_batch: 128, grad_accum: 1,", "global_batch: 512, grad_accum: 4,")
        self.assertEqual(self.errors(text)[1], [])

    def test_reproducible_misses_nothing(self):
        self.refused("missing: []}", "missing: [\"pipeline parallel\"]}", "dlsim.missing", "misses nothing")

    def test_partly_says_what_is_missing(self):
        self.refused("status: reproducible", "status: partly", "dlsim.missing", "must say what is missing",
                     at="missing: []")

    def test_dlsim_model_is_a_zoo_name_or_a_config(self):
        self.refused("model: llama2-13b,", "model: llama2-14b,", "dlsim.model", "neither a zoo name")

    def test_dlsim_hardware_is_a_shipped_file(self):
        self.refused("hardware: a100-sxm-80gb,", "hardware: a100-sxm-96gb,", "dlsim.hardware", "no configs/hw/")

    def test_a_transcription_slip_fails_its_check(self):
        # 2612 tokens/s would be 73.8 % MFU, not the printed 61.1 %.
        self.refused("{quantity: tokens_per_s_per_gpu, value: 2162, unit: tokens/s, as_published: \"2162\"}",
                     "{quantity: tokens_per_s_per_gpu, value: 2612, unit: tokens/s, as_published: \"2612\"}",
                     "checks[0]", "they disagree", at="{formula: mfu_from_tokens")

    def test_an_expected_disagreement_that_agrees(self):
        self.refused("expect: agree}", "expect: disagree, why: \"x\"}", "checks[0]", "expects a disagreement",
                     at="{formula: mfu_from_tokens")

    def test_an_expected_disagreement_says_why(self):
        text = GOOD.replace("value: 61.1, unit: \"%\", as_published: \"61.1%\"",
                            "value: 66.1, unit: \"%\", as_published: \"66.1%\"")
        self.assertEqual(len(self.errors(text)[1]), 1)  # the check fails...
        text = text.replace("expect: agree}", "expect: disagree}")
        path, errors = self.errors(text)  # ...and expecting it needs a why
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("field 'checks[0].why'", errors[0])

    def test_duplicate_id(self):
        entry = GOOD[GOOD.index("  - id: p1"):]
        path, errors = self.errors(GOOD + entry)
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith(f"{path}:{GOOD.count(chr(10)) + 1}: entry 'p1'"), errors[0])
        self.assertIn("field 'id': duplicate of the entry at line", errors[0])

    def test_duplicate_key(self):
        path, errors = self.errors(GOOD.replace("    notes: \"\"\n", "    notes: \"\"\n    notes: \"b\"\n"))
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("a duplicate key 'notes'", errors[0])

    def test_not_yaml(self):
        path, errors = self.errors(GOOD.replace("    kind: measured\n", "    kind: [measured\n"))
        self.assertEqual(len(errors), 1)
        self.assertTrue(errors[0].startswith(path + ":"), errors[0])
        self.assertIn("not YAML", errors[0])

    def test_any_deleted_line_is_an_error_not_a_crash(self):
        lines = GOOD.splitlines(keepends=True)
        for i in range(len(lines)):
            path, errors = self.errors("".join(lines[:i] + lines[i + 1:]))
            self.assertTrue(errors, f"deleting line {i + 1} ({lines[i].strip()}) went unnoticed")
            for e in errors:
                self.assertTrue(e.startswith(path + ":"), e)

    def test_unknown_check_formula(self):
        self.refused("{formula: mfu_from_tokens,", "{formula: mfu_from_vibes,", "checks[0].formula", "one of")


class Committed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.errors, cls.doc = pub.validate(pub.DEFAULT)

    def test_sound(self):
        self.assertEqual(self.errors, [])

    def test_every_point_names_where_it_was_published(self):
        for p in self.doc["points"]:
            src = self.doc["sources"][p["source"]]
            self.assertTrue(src["url"].startswith("https://"), p["id"])
            self.assertTrue(p["locator"], p["id"])
            if src["path"] is not None:  # a repository file is cited at a commit
                self.assertRegex(src["commit"], r"^[0-9a-f]{40}$", p["id"])

    def test_llama_parameter_counts_are_the_presets(self):
        # workloads/llama_models.h gives these for meta-llama/Meta-Llama-3-8B and Llama-2-13b-hf.
        by_id = {p["id"]: p for p in self.doc["points"]}
        self.assertEqual(pub.llama_params(by_id["tt24a-llama3-8b-64gpu-sel-op"]["model"], "total"), 8030261248)
        self.assertEqual(pub.llama_params(by_id["tt24a-llama2-13b-64gpu-noac"]["model"], "total"), 13015864320)
        self.assertEqual(pub.llama_params(by_id["tt24a-llama3-70b-64gpu-full"]["model"], "total"), 70553706496)

    def test_model_tflops_as_megatron_bridge_counts_them(self):
        # Llama 3 8B: 6 x 7,504,924,672 + 6 x 32 x 4096 x 8192 = 51.47 GFLOP per token; x 14451 = 743.8 TFLOP/s.
        p = next(p for p in self.doc["points"] if p["id"] == "mb25-11-llama3-8b-8gpu-fsdp-fp8cs")
        figs = {f["quantity"]: (f["value"], 0.0, None) for f in p["figures"]}
        (lo, _), published = pub.compute("tflops_from_tokens", p["checks"][0], p, figs)
        self.assertAlmostEqual(lo, 743.8, places=1)
        self.assertEqual(published[0], 744)

    def test_mfu_arithmetic_of_a_known_row(self):
        # torchtitan's 8B on 8 H100: (6 x 7,504,924,672 + 12 x 32 x 32 x 128 x 8192) x 5762 / 989e12 = 33.74 %.
        p = next(p for p in self.doc["points"] if p["id"] == "tt24-8b-8gpu-fsdp")
        figs = {f["quantity"]: (f["value"], 0.0, None) for f in p["figures"]}
        (lo, hi), _ = pub.compute("mfu_from_tokens", p["checks"][0], p, figs)
        self.assertAlmostEqual(lo, 33.74, places=2)
        self.assertEqual(lo, hi)

    def test_the_report_holds_the_generated_table(self):
        with open(os.path.join(pub.ROOT, "results", "multi-gpu.md"), encoding="utf-8") as f:
            md = f.read()
        begin, end = "<!-- published table: begin -->\n", "<!-- published table: end -->"
        self.assertIn(begin, md)
        block = md[md.index(begin) + len(begin):md.index(end)]
        self.assertEqual(block, pub.markdown(self.doc),
                         "regenerate: python3 validate/published_multi_gpu.py --markdown")


if __name__ == "__main__":
    unittest.main()

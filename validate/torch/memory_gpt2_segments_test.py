#!/usr/bin/env python3
"""Tests of memory_gpt2_segments.py: a snapshot's device trace replayed iteration by iteration (layouts, openings,
where lm_head's weight cast went and the largest free block outside the logits' segments then), the measured
warm-up steps read back, and, given the dlsim binary, its GPT-2 run's iterations adding up to its reserved peak.

  python validate/torch/memory_gpt2_segments_test.py [build/bin/dlsim]
"""
import pathlib
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import memory_gpt2_segments as g  # noqa: E402

DLSIM = sys.argv.pop(1) if len(sys.argv) > 1 else None
MIB = 1 << 20


def alloc(addr, size, it, name="t"):
    return {"action": "alloc", "addr": addr, "size": size, "frames": [{"name": name, "line": it}]}


def free(addr, size):
    return {"action": "free_completed", "addr": addr, "size": size, "frames": []}


def segment(addr, size):
    return {"action": "segment_alloc", "addr": addr, "size": size, "frames": []}


class FakeDlsim:
    def __init__(self, tmp, binary):
        self.tmp, self.binary = pathlib.Path(tmp), binary

    def trace(self, name):
        import memory_fidelity  # the gzipped recordings, unpacked once
        return memory_fidelity.unpacked_trace(self.tmp, name)


class Replay(unittest.TestCase):
    """The sequence the caching allocator makes of a second step whose forward fills the cached 96 MiB segment: the
    bf16 weight (73.6 MiB) then fits only a free logits segment (best fit: the smallest free block that holds it),
    and the backward's logits-sized request, finding that segment split, opens another."""
    A, B, C, D = 0x1000_0000, 0x2000_0000, 0x9000_0000, 0xF000_0000  # B and D: 1,572 MiB each

    def events(self):
        A, B, C, D = self.A, self.B, self.C, self.D
        return [segment(A, 20 * MIB), alloc(A, 9 * MIB, -1, "param"),  # setup: a 20 MiB segment for a 9 MiB weight
                segment(B, g.LOGITS_SEGMENT), alloc(B, g.LOGITS_F32, 0, "logits"),
                segment(C, 96 * MIB), alloc(C, g.WEIGHT_BF16, 0, "cast"),
                free(B, g.LOGITS_F32), free(C, g.WEIGHT_BF16),
                alloc(C, 90 * MIB, 1, "checkpoints"),  # the next step's forward
                alloc(B, g.WEIGHT_BF16, 1, "cast"),
                segment(D, g.LOGITS_SEGMENT), alloc(D, g.LOGITS_F32, 1, "logits")]

    def test_layouts_after_each_iteration(self):
        layouts, _, _ = g.steps_of(self.events())
        self.assertEqual(sorted(layouts), [-1, 0, 1])
        self.assertEqual(layouts[-1], [(20 * MIB, [9 * MIB])])
        self.assertEqual(layouts[0], [(20 * MIB, [9 * MIB]), (g.LOGITS_SEGMENT, []), (96 * MIB, [])])
        self.assertEqual(layouts[1], [(20 * MIB, [9 * MIB]), (g.LOGITS_SEGMENT, [g.WEIGHT_BF16]),
                                      (96 * MIB, [90 * MIB]), (g.LOGITS_SEGMENT, [g.LOGITS_F32])])

    def test_each_opening_is_the_iteration_of_the_alloc_it_serves(self):
        _, openings, _ = g.steps_of(self.events())
        self.assertEqual(openings[-1], [(20 * MIB, 9 * MIB, "param")])
        self.assertEqual([s for s, _, _ in openings[0]], [g.LOGITS_SEGMENT, 96 * MIB])
        self.assertEqual(openings[1], [(g.LOGITS_SEGMENT, g.LOGITS_F32, "logits")])

    def test_the_cast_and_the_largest_free_block_outside_the_logits_segments(self):
        _, _, casts = g.steps_of(self.events())
        self.assertEqual(casts[0], (11 * MIB, 96 * MIB))  # nothing cached held it: it opened the 96 MiB segment
        self.assertEqual(casts[1], (11 * MIB, g.LOGITS_SEGMENT))  # the 20 MiB segment's rest; the 96's is 6 MiB

    def test_opened_and_the_bytes_outside_the_logits_segments(self):
        layouts, _, _ = g.steps_of(self.events())
        self.assertEqual(g.opened(layouts[0], layouts[1]), [g.LOGITS_SEGMENT])
        self.assertEqual(g.outside_logits(layouts[1]), (116 * MIB, 17 * MIB))
        self.assertEqual(g.sizes([g.LOGITS_SEGMENT, 96 * MIB, g.LOGITS_SEGMENT]), "2 × 1,572, 96")

    def test_constants_are_gpt2s(self):
        self.assertEqual(g.LOGITS_SEGMENT, 1572 * MIB)
        self.assertEqual(g.WEIGHT_BF16, 77_194_752)


class Measured(unittest.TestCase):
    def test_the_warm_up_steps_are_read_with_their_segments(self):
        case, steps = g.measured_steps("memory-truth-gpt2-hf-segments.json")
        self.assertEqual(len(steps), 3)
        self.assertEqual(sum(s for s, _ in steps[-1]), case["measured"]["max_memory_reserved"])
        self.assertEqual([len(s) for s in steps], [case["measured"]["num_device_alloc"]] * 3)


@unittest.skipUnless(DLSIM, "no dlsim binary given: the runs are skipped")
class Run(unittest.TestCase):
    def test_the_iterations_add_up_to_the_reserved_peak(self):
        with tempfile.TemporaryDirectory() as tmp:
            res, (layouts, openings, casts) = g.run_snapshot(FakeDlsim(tmp, DLSIM),
                                                             dict(g.lm.KEYS, swap={"name": "checkpoint", "every": 1}),
                                                             "test")
        last = max(layouts)
        self.assertEqual(sum(s for s, _ in layouts[last]), res["peak_reserved_bytes"])  # no segment is freed
        self.assertEqual(sum(len(o) for o in openings.values()), res["device_mallocs"])
        self.assertEqual(len(layouts[last]), res["device_mallocs"])
        self.assertIn(1, casts)  # the second step asked for lm_head's bf16 weight


if __name__ == "__main__":
    unittest.main()

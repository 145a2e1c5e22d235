#!/usr/bin/env python3
"""Tests of conv_probe_replay.py (no GPU, no torch): the allocator's rules it replays, and that the older probes'
records of Inception-v3's Conv2d_2b follow from requests within the segments the measured step opened, and from no
data-gradient request outside the range that fits the forward's 254 MiB segment.

  python3 validate/torch/conv_probe_replay_test.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_probe_replay as cr  # noqa: E402

MIB = 1 << 20


class Rules(unittest.TestCase):
    def test_split_only_above_one_mib_left_and_freed_blocks_merge(self):
        p = cr.LargePool()
        p.malloc("a", 20 * MIB - 600 * 1024)  # a 20 MiB segment, 600 KiB left: not split, the block counts whole
        self.assertEqual(p.allocated, 20 * MIB)
        p.release("a")
        p.malloc("b", 8 * MIB)  # best fit in the cached segment, split (12 MiB left)
        p.malloc("c", 11 * MIB)  # the 12 MiB remainder, 1 MiB left: not split
        self.assertEqual(len(p.segments), 1)
        self.assertEqual(p.allocated, 20 * MIB)
        p.release("b")
        p.release("c")
        self.assertEqual(p.segments, [[[20 * MIB, True]]])
        p.malloc("d", 15 * MIB)  # 15 MiB asked: 5 MiB left, split
        p.malloc("e", 6 * MIB)  # under 10 MiB with nothing cached that holds it: a 20 MiB segment (14 MiB left)
        self.assertEqual([sum(b[0] for b in s) for s in p.segments], [20 * MIB, 20 * MIB])
        p.malloc("f", 15 * MIB)  # neither the 5 nor the 14 MiB free block holds it: its own 16 MiB segment
        self.assertEqual([sum(b[0] for b in s) for s in p.segments], [20 * MIB, 20 * MIB, 16 * MIB])

class InceptionConv2d2b(unittest.TestCase):
    def replay(self, asked_dgrad):
        kw = dict(asked_fwd=cr.ASKED_FWD, asked_dgrad=asked_dgrad, asked_wgrad=cr.ASKED_WGRAD, **cr.CONV2D_2B)
        return (cr.probe_records(list(cr.RECORDED_27B), **kw), cr.probe_records(list(cr.RECORDED_28B), **kw))

    def test_the_records_follow_from_requests_that_fit_the_steps_segments(self):
        # the data gradient asks anything that fits the forward's 254 MiB segment whole (at most 1 MiB left)
        for asked in (254 * MIB - MIB, cr.ASKED_FWD, 254 * MIB):
            self.assertEqual(self.replay(asked), (cr.RECORDED_27B, cr.RECORDED_28B))
        # 806,912 B of the data-gradient record is its result's block: 89,317,376 B left of that segment by gy
        self.assertEqual(cr.RECORDED_27B["conv_dgrad"] - 254 * MIB, 89317376 - cr.CONV2D_2B["x"])

    def test_no_data_gradient_request_outside_that_range_gives_them(self):
        for asked in (254 * MIB - MIB - 512, 254 * MIB + 512, cr.RECORDED_27B["conv_dgrad"]):
            self.assertNotEqual(self.replay(asked), (cr.RECORDED_27B, cr.RECORDED_28B))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of conv_workspace_probe.py that need no GPU (its measuring needs one): the requests of a call read from
the allocator's memory-history trace, the results told apart by their addresses.

  python3 validate/torch/conv_workspace_probe_test.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_workspace_probe as probe  # noqa: E402


def alloc(addr, size):
    return {"action": "alloc", "addr": addr, "size": size}


def free(addr, size):
    return {"action": "free_requested", "addr": addr, "size": size}


class CallRequests(unittest.TestCase):
    def test_two_gradient_call_data_gradient_then_weight_gradient(self):
        # convolution_backward asked for both gradients (PyTorch's cuDNN path): the data gradient is allocated, its
        # workspace asked and freed, then the weight gradient and its workspace; a segment's own events are skipped
        events = [alloc(0x1000, 88510464), {"action": "segment_alloc", "addr": 0x9000, "size": 266338304},
                  alloc(0x9000, 265605632), free(0x9000, 265605632), alloc(0x2000, 73728),
                  alloc(0x9000, 273799315), free(0x9000, 273799315)]
        self.assertEqual(probe.call_requests(events, {0x1000, 0x2000}),
                         [[265605632, 1], [273799315, 2]])

    def test_sizes_are_the_trace_sizes_asked_and_nothing_else_counts(self):
        # a forward: its output, then an odd-sized workspace (the size asked, not rounded); no request at all
        self.assertEqual(probe.call_requests([alloc(7, 177020928), alloc(8, 1001)], {7}), [[1001, 1]])
        self.assertEqual(probe.call_requests([alloc(7, 512), free(7, 512)], {7}), [])


class FakeCuda:
    """torch.cuda as measure() uses it, over a scripted call: the data gradient's result (88,510,464 B in an
    89,317,376 B block: its unsplit tail) and its workspace (a whole 254 MiB segment for 265,605,632 B asked)."""
    def __init__(self):
        self.memory = self
        self.history = []
        self.stats = {"allocated_bytes.all.current": 1000, "requested_bytes.all.current": 900,
                      "allocated_bytes.all.peak": 1000, "requested_bytes.all.peak": 900}

    def synchronize(self):
        pass

    def memory_stats(self):
        return dict(self.stats)

    def reset_peak_memory_stats(self):
        self.stats["allocated_bytes.all.peak"] = self.stats["allocated_bytes.all.current"]
        self.stats["requested_bytes.all.peak"] = self.stats["requested_bytes.all.current"]

    def _record_memory_history(self, enabled="all", **kw):
        self.history.append((enabled, kw.get("clear_history")))

    def _snapshot(self):
        return {"device_traces": [[alloc(0x1000, 88510464), alloc(0x9000, 265605632), free(0x9000, 265605632)]]}

    def current_device(self):
        return 0

    def call(self):
        if self.history and self.history[-1][0] == "all":  # the measured call: the peaks move
            self.stats["allocated_bytes.all.peak"] = 1000 + 89317376 + 266338304
            self.stats["requested_bytes.all.peak"] = 900 + 88510464 + 265605632
        return FakeTensor(0x1000)


class FakeTensor:
    def __init__(self, ptr):
        self.ptr = ptr

    def data_ptr(self):
        return self.ptr


class Measure(unittest.TestCase):
    def test_requested_and_allocated_peaks_and_the_requests_of_the_measured_call(self):
        cuda = FakeCuda()
        fake_torch = type("T", (), {"cuda": cuda})
        outs, requests, asked, blocks = probe.measure(fake_torch, cuda.call)
        self.assertEqual([o.data_ptr() for o in outs], [0x1000])
        self.assertEqual(requests, [[265605632, 1]])
        self.assertEqual(asked - 88510464, 265605632)  # what the yaml writes: the workspace asked
        self.assertEqual(blocks - 88510464, 267145216)  # the old record: 254 MiB + the result's 806,912 B tail
        self.assertEqual(cuda.history, [("all", True), (None, None)])  # cleared when on, off after


if __name__ == "__main__":
    unittest.main()

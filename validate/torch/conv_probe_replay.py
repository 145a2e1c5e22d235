#!/usr/bin/env python3
"""Why conv_workspace_probe.py's older records (`scratch_bytes`, allocated bytes) are not the workspaces PyTorch
asks: its sequence of allocations for one convolution replayed through the caching allocator's large-pool rules,
given the bytes each call asks, yields what it recorded (results/fidelity/memory.md, "Inception-v3 b32: one segment
too many").

  python3 validate/torch/conv_probe_replay.py

The rules (c10/cuda/CUDACachingAllocator.cpp, as dlsim's pytorch-caching pool follows them): a request rounds up to
512 B; a request above 1 MiB takes the smallest free cached block that holds it (the lowest address on a tie), else
a new segment (20 MiB for a request under 10 MiB, else the request rounded up to 2 MiB); a block is split only when more than 1 MiB would be
left; a freed block merges with free neighbours in its segment. Requests of 1 MiB or less (the weight and its
gradient here) live in the small pool, apart: they are counted, not placed. Allocated bytes count whole blocks, so
an unsplit tail counts; that is what the probe's `scratch_bytes` measured.
"""
MIB = 1 << 20


class LargePool:
    def __init__(self):
        self.segments = []  # each a list of [size, free], in address order
        self.allocated = 0
        self.peak = 0
        self.live = {}  # name -> (segment index, block)

    def malloc(self, name, asked):
        size = -(-asked // 512) * 512
        if size <= MIB:
            block = None
            self.allocated += size
        else:
            free = [(b[0], si, bi) for si, seg in enumerate(self.segments) for bi, b in enumerate(seg)
                    if b[1] and b[0] >= size]
            if free:
                _, si, bi = min(free)
            else:
                self.segments.append([[20 * MIB if size < 10 * MIB else -(-size // (2 * MIB)) * 2 * MIB, True]])
                si, bi = len(self.segments) - 1, 0
            seg = self.segments[si]
            block = seg[bi]
            if block[0] - size > MIB:
                seg.insert(bi + 1, [block[0] - size, True])
                block[0] = size
            block[1] = False
            self.allocated += block[0]
            block = (si, block)
        self.live[name] = (size, block)
        self.peak = max(self.peak, self.allocated)

    def release(self, name):
        size, where = self.live.pop(name)
        if where is None:
            self.allocated -= size
            return
        si, block = where
        self.allocated -= block[0]
        block[1] = True
        seg, merged = self.segments[si], []
        for b in seg:
            if merged and merged[-1][1] and b[1]:
                merged[-1][0] += b[0]
            else:
                merged.append(b)
        self.segments[si] = merged


def probe_records(passes, x, wt, y, asked_fwd, asked_dgrad, asked_wgrad):
    """What conv_workspace_probe.py recorded as `scratch_bytes` per pass (in `passes`' order, its --passes) for a
    convolution whose input, weight and output take x, wt and y bytes and whose calls ask those workspaces: its
    operands and its y = F.conv2d(...) (the forward's workspace asked and freed), gy; then per pass a warm-up call
    whose results are dropped, and the measured one: allocated bytes' peak less before less the results' bytes.
    A call allocates its result, then asks its workspace; convolution_backward for both gradients does that for
    the data gradient, then for the weight gradient."""
    p = LargePool()
    p.malloc("x", x)
    p.malloc("wt", wt)
    p.malloc("y", y)
    p.malloc("ws", asked_fwd)
    p.release("ws")
    p.malloc("gy", y)
    steps = {"conv_fwd": [("out0", y, asked_fwd)], "conv_dgrad": [("out0", x, asked_dgrad)],
             "conv_wgrad": [("out0", wt, asked_wgrad)],
             "conv_bwd": [("out0", x, asked_dgrad), ("out1", wt, asked_wgrad)]}
    out = {}
    for op in passes:
        for _ in range(2):  # the warm-up, then the measured call
            before = p.allocated
            p.peak = before
            for name, result, asked in steps[op]:
                p.malloc(name, result)
                p.malloc("ws", asked)
                p.release("ws")
            out[op] = p.peak - before - sum(r for _, r, _ in steps[op])
            for name, _, _ in steps[op]:
                p.release(name)
    return out


# Inception-v3's Conv2d_2b_3x3 at batch 32, fp32: 32 -> 64 channels, 3 x 3, pad 1, at 147 x 147.
CONV2D_2B = {"x": 32 * 32 * 147 * 147 * 4, "wt": 64 * 32 * 9 * 4, "y": 32 * 64 * 147 * 147 * 4}
# What the probes recorded (results/fidelity/data/h200-2026-11-27b/conv-workspace.json, one gradient a call, and
# h200-2026-11-28b/conv-workspace-bwd.json, --passes conv_bwd,conv_fwd; the H100's of 2026-11-27c equal the first).
RECORDED_27B = {"conv_fwd": 266338304, "conv_dgrad": 267145216, "conv_wgrad": 274726912}
RECORDED_28B = {"conv_bwd": 275533824, "conv_fwd": 265605632}
# The requests: the forward's, the 2026-11-28 record (a split block is the request rounded to 512 B); the weight
# gradient's, the largest cuDNN workspace the step asked (the 2026-11-27 snapshot's workspaces.max_bytes).
ASKED_FWD, ASKED_WGRAD = 265605632, 273799315


def main():
    for asked_dgrad in (265289728, 266338304, 266338304 + 512):
        a = probe_records(list(RECORDED_27B), asked_fwd=ASKED_FWD, asked_dgrad=asked_dgrad,
                          asked_wgrad=ASKED_WGRAD, **CONV2D_2B)
        b = probe_records(list(RECORDED_28B), asked_fwd=ASKED_FWD, asked_dgrad=asked_dgrad,
                          asked_wgrad=ASKED_WGRAD, **CONV2D_2B)
        print(f"data gradient asks {asked_dgrad:,} B: replayed {a} {b}; "
              f"{'the records' if (a, b) == (RECORDED_27B, RECORDED_28B) else 'NOT the records'}")


if __name__ == "__main__":
    main()

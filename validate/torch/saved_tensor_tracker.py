"""Counts what autograd keeps for the backward pass, as torch_checkpoint_bytes.py and torch_sac_bytes.py measure it:
the bytes of the distinct storages that registered tensors hold (parameters, buffers and inputs excluded), at the
end of the forward pass and at their most during the backward pass.

A storage counts from the first registration of a tensor on it until the last such tensor is freed (a
weakref.finalize per tensor). The scripts register what their saved-tensor hooks pack and, each in its own way,
what checkpointing holds; `measure` runs one forward and backward with the garbage collector off, so that tensors
are freed by reference counting alone, in the order autograd releases them. Works with torch 1.13 (Debian's) and
2.x.
"""
import gc
import weakref

import torch

CURRENT = None  # the Tracker of the measurement under way (the scripts' hooks register into it), else None


def storage_of(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


class Tracker:
    def __init__(self, excluded):
        self.excluded = excluded  # data pointers of storages never counted
        self.live = {}  # storage ptr -> [nbytes, registered tensors alive]
        self.total = 0
        self.peak = 0
        self.in_backward = False

    def register(self, t):
        if not isinstance(t, torch.Tensor):
            return
        st = storage_of(t)
        ptr = st.data_ptr()
        if ptr in self.excluded or st.nbytes() == 0:
            return
        entry = self.live.get(ptr)
        if entry is None:
            entry = self.live[ptr] = [st.nbytes(), 0]
            self.total += entry[0]
        entry[1] += 1
        weakref.finalize(t, self.release, ptr)
        if self.in_backward:
            self.peak = max(self.peak, self.total)

    def release(self, ptr):
        entry = self.live[ptr]
        entry[1] -= 1
        if entry[1] == 0:
            self.total -= entry[0]
            del self.live[ptr]


def measure(forward, excluded, pack):
    """forward() -> loss, run under saved_tensors_hooks(pack, identity) with CURRENT set; then its backward.
    -> (bytes kept at the end of the forward pass, the most kept at once during the backward pass)."""
    global CURRENT
    gc.collect()
    gc.disable()  # frees by reference counting only, in the order autograd releases things
    CURRENT = Tracker(excluded)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda d: d):
            loss = forward()
        saved = CURRENT.total
        CURRENT.peak = saved
        CURRENT.in_backward = True
        loss.backward()
        peak = CURRENT.peak
        del loss
    finally:
        CURRENT = None
        gc.enable()
        gc.collect()
    return saved, peak

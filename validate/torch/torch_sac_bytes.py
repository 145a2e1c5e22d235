#!/usr/bin/env python3
"""What PyTorch's selective activation checkpointing keeps for the backward pass under torchtitan's per-op policy,
measured on the CPU with PyTorch >= 2.4 (made with 2.11): the reference for `checkpoint` with `selective: op`
(policies/swap/checkpoint/selective_checkpoint.h).

The model is torch_reference_llama.py's Llama decoder (Hugging Face's eager ops, op for op) with its attention
through F.scaled_dot_product_attention(is_causal=True), as transformers' sdpa path runs it (repeat_kv first). Each
decoder layer runs in torch.utils.checkpoint.checkpoint(use_reentrant=False) with a context_fn from
create_selective_checkpoint_contexts whose policy is torchtitan's (parallelize_llama.py at 9dec370, described
there, not copied): MUST_SAVE for the outputs of aten.mm except every second mm call of the region (counted per
region and per pass, forward and recompute apart), of the SDPA kernels, and of reduce_scatter / abs / max;
PREFER_RECOMPUTE for every other op. On the CPU SDPA is aten._scaled_dot_product_flash_attention_for_cpu, the CPU
counterpart of the CUDA flash kernel on torchtitan's list; it is saved here for that reason.

Figures, in the accounting of docs/models.md (bytes of distinct storages; parameters, buffers and the input ids
excluded), as validate/torch/torch_checkpoint_bytes.py takes them:
  saved_for_backward_bytes   alive at the end of the forward pass and needed later: what ops outside the layers
                             pack, each layer's inputs (checkpoint's closure holds them), and the SAC cache
                             (the saved ops' outputs)
  backward_peak_saved_bytes  the most of those alive at once in the backward pass, what a layer's recomputation
                             stores for its backward included
  recomputed                 (op only) per op name, the calls the recomputations ran (the policy said
                             PREFER_RECOMPUTE while recomputing): what dlsim's replays run
Each model runs with every layer under SAC ("op"), under whole-layer checkpointing ("full", no context_fn) and
without checkpointing ("").
How: the ops outside the layers through a saved_tensors_hooks pair whose pack registers a detached view; the
cache through torch.utils.checkpoint._VersionWrapper (each cached output is wrapped once); the recomputation's
stores through Tensor.detach called from the recomputation hook's pack_hook (and the tensor itself when it needs
no gradient, which that hook stores as is). Each registered tensor gets a weakref.finalize; a storage counts while
one of its registered tensors lives.

Usage: VENV/bin/python validate/torch/torch_sac_bytes.py [--out workloads/testdata/torch_sac.json]
"""
import argparse
import collections
import functools
import json
import os
import sys

import torch
import torch.nn.functional as F
import torch.utils.checkpoint as cp
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import saved_tensor_tracker as tracker  # noqa: E402
import torch_reference_llama as ref  # noqa: E402

aten = torch.ops.aten
SAVE_LIST = {
    aten.mm.default,
    aten._scaled_dot_product_efficient_attention.default,
    aten._scaled_dot_product_flash_attention.default,
    aten._scaled_dot_product_flash_attention_for_cpu.default,  # the CPU's flash kernel (see above)
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    aten.abs.default,
    aten.max.default,
}


RECOMPUTED = collections.Counter()
_detach = torch.Tensor.detach
_wrapper_init = cp._VersionWrapper.__init__
_recompute_hook_init = cp._recomputation_hook.__init__


def detach(self):
    r = _detach(self)
    if tracker.CURRENT is not None and sys._getframe(1).f_code.co_name == "pack_hook":
        tracker.CURRENT.register(r)
    return r


def wrapper_init(self, val):
    _wrapper_init(self, val)
    if tracker.CURRENT is not None:
        tracker.CURRENT.register(val)


def recompute_hook_init(self, *args, **kwargs):
    _recompute_hook_init(self, *args, **kwargs)
    inner = self.pack_hook

    def pack_hook(x):
        if tracker.CURRENT is not None and not x.requires_grad:
            tracker.CURRENT.register(x)  # stored as is
        return inner(x)

    self.pack_hook = pack_hook


torch.Tensor.detach = detach
cp._VersionWrapper.__init__ = wrapper_init
cp._recomputation_hook.__init__ = recompute_hook_init


def torchtitan_policy(meta):
    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func == aten.mm.default:
            meta[mode + "_mm_count"] += 1
        save = func in SAVE_LIST and not (func == aten.mm.default and meta[mode + "_mm_count"] % 2 == 0)
        if ctx.is_recompute and not save:
            RECOMPUTED[str(func)] += 1
        return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE
    return policy


def context_fn():
    return create_selective_checkpoint_contexts(torchtitan_policy(collections.defaultdict(int)))


class SdpaAttention(ref.Attention):
    def forward(self, h, cos, sin, mask):
        b, s, _ = h.shape
        q = self.q_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (ref.rotate_half(q) * sin)
        k = (k * cos) + (ref.rotate_half(k) * sin)
        n_rep = self.heads // self.kv_heads
        k, v = ref.repeat_kv(k, n_rep), ref.repeat_kv(v, n_rep)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous()
        return self.o_proj(o.reshape(b, s, -1))


def build(cfg):
    torch.manual_seed(0)
    m = ref.LlamaForCausalLM(cfg)
    for layer in m.layers:
        attn = SdpaAttention(cfg)
        attn.load_state_dict(layer.self_attn.state_dict())
        layer.self_attn = attn
    return m


def forward(m, ids, mode):
    """LlamaForCausalLM.forward with each layer under SAC (mode "op"), whole-layer checkpointing ("full") or
    neither ("")."""
    b, s = ids.shape
    h = m.embed_tokens(ids)
    cos, sin = m.rotary_emb(h, torch.arange(s).unsqueeze(0))
    for layer in m.layers:
        if mode:
            for t in (h, cos, sin):
                tracker.CURRENT.register(t)  # the region's inputs, held by checkpoint's closure
            kw = {"context_fn": context_fn} if mode == "op" else {}
            h = checkpoint(functools.partial(layer, mask=None), h, cos, sin, use_reentrant=False, **kw)
        else:
            h = layer(h, cos, sin, None)
    logits = F.linear(m.norm(h), m.lm_head.weight).float()
    labels = F.pad(ids, (0, 1), value=-100)[..., 1:].contiguous()
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


def pack(t):
    d = _detach(t)
    tracker.CURRENT.register(d)
    return d


def measure(cfg, batch, seq, mode):
    m = build(cfg)
    m.train()
    ids = torch.randint(1, cfg["vocab"], (batch, seq))
    excluded = {tracker.storage_of(t).data_ptr() for t in list(m.parameters()) + list(m.buffers()) + [ids]}
    RECOMPUTED.clear()
    saved, peak = tracker.measure(lambda: forward(m, ids, mode), excluded, pack)
    return saved, peak, dict(sorted(RECOMPUTED.items()))


CONFIGS = {
    "tiny-gqa": dict(vocab=1000, hidden=128, layers=2, heads=4, kv_heads=2, inner=344, tied=False),
    "tiny-mha": dict(vocab=512, hidden=256, layers=3, heads=8, kv_heads=8, inner=688, tied=False),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="workloads/testdata/torch_sac.json")
    args = ap.parse_args()
    torch.set_num_threads(1)  # a shared build machine; the figures do not depend on threads
    result = {"torch": torch.__version__, "device": "cpu", "policy": "torchtitan 9dec370 selective_ac_option=op",
              "runs": []}
    for name, cfg in CONFIGS.items():
        for batch, seq in ((2, 64),):
            for mode in ("", "full", "op"):
                saved, peak, recomputed = measure(cfg, batch, seq, mode)
                run = {"model": name, "config": cfg, "batch": batch, "seq_len": seq,
                       "checkpoint": mode, "saved_for_backward_bytes": saved,
                       "backward_peak_saved_bytes": peak, "recomputed": recomputed}
                result["runs"].append(run)
                print(json.dumps(run), flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

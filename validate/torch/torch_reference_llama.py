#!/usr/bin/python3
"""Ground truth for dlsim's Llama-family builder: parameters and the activation memory autograd keeps.

The decoder is written here in plain PyTorch, op for op as Hugging Face's modeling_llama.py eager path runs it
(transformers 4.4x's layers, transformers 5's loss; written from our reading of those files, not copied), so
that it runs without `transformers` (Debian's torch 1.13 has none). workloads/testdata/torch_llama.json was made
with PyTorch 2.11 (a virtual environment's python), whose autograd keeps less than 1.13's (no x^2 per RMSNorm):

  LlamaRMSNorm     x.to(float32); variance = x.pow(2).mean(-1, keepdim=True); x = x * rsqrt(variance + eps);
                   weight * x.to(input_dtype)
  rotary           cos, sin computed once per forward from the position ids under no_grad, in the hidden
                   states' dtype, shape (1, S, head_dim); q * cos + rotate_half(q) * sin, rotate_half by two
                   slices, a negation and a cat
  repeat_kv        x[:, :, None].expand(B, kv, n_rep, S, d).reshape(B, kv * n_rep, S, d) (returned as is for
                   n_rep == 1)
  eager attention  matmul(q, k^T) * head_dim^-0.5 + causal mask; softmax(dtype=float32).to(q.dtype);
                   (attention dropout 0.0: no op); matmul with v; transpose(1, 2).contiguous(); reshape
  MLP              down(silu(gate(x)) * up(x))
  head             lm_head (tied to embed_tokens when tie_word_embeddings); logits.float(); the causal-LM loss
                   (transformers 5's ForCausalLMLoss) over every position, the labels padded with one -100 and
                   shifted: F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()

A training-mode forward runs on the CPU under torch.autograd.graph.saved_tensors_hooks; every tensor packed for
the backward is recorded and each storage is counted once. Parameters, buffers (inv_freq) and the input ids /
labels are excluded, as in dlsim's saved_for_backward_bytes. CPU autocast differs from CUDA's, so only fp32 and
a model held in bf16 (model.to(torch.bfloat16)) are measured.

Usage: VENV/bin/python validate/torch/torch_reference_llama.py [--out workloads/testdata/torch_llama.json] [--verbose]
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_reference_transformers import measure  # the saved-tensor hooks, shared


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(input_dtype)


class Rotary(nn.Module):
    def __init__(self, head_dim, theta):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        pos = position_ids[:, None, :].float()
        freqs = (inv @ pos).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    b, kv, s, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads = c["heads"], c["kv_heads"]
        self.head_dim = c["hidden"] // c["heads"]
        bias = c.get("qkv_bias", False)
        self.q_proj = nn.Linear(c["hidden"], self.heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(self.heads * self.head_dim, c["hidden"], bias=False)

    def forward(self, h, cos, sin, mask):
        b, s, _ = h.shape
        q = self.q_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        n_rep = self.heads // self.kv_heads
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        w = torch.matmul(q, k.transpose(2, 3)) * self.head_dim ** -0.5
        w = w + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).contiguous()
        return self.o_proj(o.reshape(b, s, -1))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["hidden"])
        self.gate_proj = nn.Linear(c["hidden"], c["inner"], bias=False)
        self.up_proj = nn.Linear(c["hidden"], c["inner"], bias=False)
        self.down_proj = nn.Linear(c["inner"], c["hidden"], bias=False)

    def forward(self, h, cos, sin, mask):
        h = h + self.self_attn(self.input_layernorm(h), cos, sin, mask)
        x = self.post_attention_layernorm(h)
        return h + self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList([DecoderLayer(c) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"])
        self.rotary_emb = Rotary(c["hidden"] // c["heads"], 10000.0)
        self.tied = c["tied"]
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, input_ids):
        b, s = input_ids.shape
        h = self.embed_tokens(input_ids)
        position_ids = torch.arange(s).unsqueeze(0)
        cos, sin = self.rotary_emb(h, position_ids)
        # HF's 4-D causal mask: 0 on and below the diagonal, the dtype's minimum above; not learnable.
        mask = torch.full((s, s), torch.finfo(h.dtype).min, dtype=h.dtype).triu(1)[None, None].expand(b, 1, s, s)
        for layer in self.layers:
            h = layer(h, cos, sin, mask)
        h = self.norm(h)
        logits = F.linear(h, self.embed_tokens.weight if self.tied else self.lm_head.weight)
        logits = logits.float()
        labels = F.pad(input_ids, (0, 1), value=-100)
        shift_labels = labels[..., 1:].contiguous()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), shift_labels.view(-1), ignore_index=-100)


# Scaled-down configs: two layers, grouped-query attention (n_rep 2) or plain multi-head (n_rep 1, as Llama-2),
# an untied head or a tied one with q/k/v biases (as Qwen2).
CONFIGS = {
    "tiny-gqa": dict(vocab=1000, hidden=128, layers=2, heads=4, kv_heads=2, inner=344, tied=False),
    "tiny-mha-tied-bias": dict(vocab=1024, hidden=256, layers=2, heads=8, kv_heads=8, inner=688, tied=True,
                               qkv_bias=True),
}
RUNS = [(1, 64), (2, 128)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="workloads/testdata/torch_llama.json")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)  # a shared build machine; the figures do not depend on threads
    result = {"torch": torch.__version__, "device": "cpu", "models": {}}
    for name, cfg in CONFIGS.items():
        torch.manual_seed(0)
        model = LlamaForCausalLM(cfg)
        params = sum(p.numel() for p in model.parameters())
        entry = {"config": cfg, "params": params, "runs": []}
        for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            model.to(dtype)
            for batch, seq in RUNS:
                saved = measure(model, batch, seq, cfg["vocab"], args.verbose)
                entry["runs"].append({"precision": precision, "batch": batch, "seq_len": seq,
                                      "saved_for_backward_bytes": saved})
                print(name, precision, batch, seq, saved, flush=True)
        result["models"][name] = entry
        print(name, "params", params, flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Ground truth for dlsim's transformer builders: parameters and the activation memory autograd keeps.

BERT-base and GPT-2 small are written here in plain PyTorch, module for module as Hugging Face's eager
implementations (BertModel + pooler, GPT2LMHeadModel), because the `transformers` package is not available
offline. A training-mode forward runs on the CPU under torch.autograd.graph.saved_tensors_hooks; every tensor
packed for the backward is recorded and each storage is counted once. Parameters, buffers (position ids, the
causal-mask table) and the input ids / labels are excluded, as in dlsim's saved_for_backward_bytes.

Deliberate choices (each one mirrored by workloads/transformer_models.cc):
  * Dropout calls torch.native_dropout, which is what F.dropout runs on CUDA and keeps a 1-byte bool mask.
    On the CPU F.dropout falls back to multiplying by a float noise tensor (4 bytes per element), which would
    not describe the GPU runs dlsim models.
  * GPT-2's MLP activation is F.gelu(approximate="tanh") (HF's "gelu_pytorch_tanh", the same function as
    "gelu_new" computed by one fused kernel). HF's python "gelu_new" composes pow/tanh/mul and keeps four
    tensors where the fused kernel keeps one.
  * BERT's loss head is the decoder tied to the word embeddings without bias or transform (parameter-free), so
    the model keeps BertModel's 109,482,240 parameters; the loss is cross entropy over every position, as
    BertForMaskedLM computes it (labels of -100 do not change what is kept).
  * GPT-2's loss is HF's: logits shifted by one position, then cross entropy.

Usage: validate/torch/torch_reference_transformers.py [--out workloads/testdata/torch_transformers.json]
"""
import argparse
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Dropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        return torch.native_dropout(x, self.p, True)[0]


# ---------------------------------------------------------------- BERT (HF modeling_bert, absolute positions)
class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab"], c["hidden"], padding_idx=0)
        self.position_embeddings = nn.Embedding(c["max_pos"], c["hidden"])
        self.token_type_embeddings = nn.Embedding(2, c["hidden"])
        self.LayerNorm = nn.LayerNorm(c["hidden"], eps=1e-12)
        self.dropout = Dropout(c["dropout"])
        self.register_buffer("position_ids", torch.arange(c["max_pos"]).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros((1, c["max_pos"]), dtype=torch.long))

    def forward(self, input_ids):
        b, s = input_ids.shape
        position_ids = self.position_ids[:, :s]
        token_type_ids = self.token_type_ids[:, :s].expand(b, s)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings += self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c["heads"]
        self.head_size = c["hidden"] // c["heads"]
        self.query = nn.Linear(c["hidden"], c["hidden"])
        self.key = nn.Linear(c["hidden"], c["hidden"])
        self.value = nn.Linear(c["hidden"], c["hidden"])
        self.dropout = Dropout(c["dropout"])

    def split(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_size)).permute(0, 2, 1, 3)

    def forward(self, h, mask):
        q, k, v = self.split(self.query(h)), self.split(self.key(h)), self.split(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        scores = scores + mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.heads * self.head_size,))


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attn_dense = nn.Linear(c["hidden"], c["hidden"])
        self.attn_dropout = Dropout(c["dropout"])
        self.attn_norm = nn.LayerNorm(c["hidden"], eps=1e-12)
        self.intermediate = nn.Linear(c["hidden"], c["inner"])
        self.output = nn.Linear(c["inner"], c["hidden"])
        self.out_dropout = Dropout(c["dropout"])
        self.out_norm = nn.LayerNorm(c["hidden"], eps=1e-12)

    def forward(self, h, mask):
        a = self.attn_norm(self.attn_dropout(self.attn_dense(self.attention(h, mask))) + h)
        i = F.gelu(self.intermediate(a))
        return self.out_norm(self.out_dropout(self.output(i)) + a)


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.layers = nn.ModuleList([BertLayer(c) for _ in range(c["layers"])])
        self.pooler = nn.Linear(c["hidden"], c["hidden"])

    def forward(self, input_ids):
        mask = torch.ones(input_ids.shape, device=input_ids.device)[:, None, None, :]
        mask = (1.0 - mask) * torch.finfo(torch.float32).min
        h = self.embeddings(input_ids)
        for layer in self.layers:
            h = layer(h, mask)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        logits = F.linear(h, self.embeddings.word_embeddings.weight)  # tied, parameter-free MLM decoder
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), input_ids.view(-1))
        return loss, pooled


BERT_BASE = dict(vocab=30522, hidden=768, layers=12, heads=12, inner=3072, max_pos=512, dropout=0.1)


# ---------------------------------------------------------------- GPT-2 (HF modeling_gpt2)
class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c["max_pos"]
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n))
        self.heads = c["heads"]
        self.hidden = c["hidden"]
        self.c_attn = Conv1D(3 * c["hidden"], c["hidden"])
        self.c_proj = Conv1D(c["hidden"], c["hidden"])
        self.attn_dropout = Dropout(c["dropout"])
        self.resid_dropout = Dropout(c["dropout"])

    def split_heads(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.hidden // self.heads)).permute(0, 2, 1, 3)

    def forward(self, h):
        q, k, v = self.c_attn(h).split(self.hidden, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        s = q.size(-2)
        causal = self.bias[:, :, :s, :s]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = self.attn_dropout(F.softmax(w, dim=-1))
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (self.hidden,))
        return self.resid_dropout(self.c_proj(a))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["hidden"], eps=1e-5)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c["hidden"], eps=1e-5)
        self.c_fc = Conv1D(4 * c["hidden"], c["hidden"])
        self.c_proj = Conv1D(c["hidden"], 4 * c["hidden"])
        self.dropout = Dropout(c["dropout"])

    def forward(self, h):
        h = self.attn(self.ln_1(h)) + h
        m = self.dropout(self.c_proj(F.gelu(self.c_fc(self.ln_2(h)), approximate="tanh")))
        return h + m


class GPT2LM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = nn.Embedding(c["max_pos"], c["hidden"])
        self.drop = Dropout(c["dropout"])
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c["layers"])])
        self.ln_f = nn.LayerNorm(c["hidden"], eps=1e-5)
        self.register_buffer("position_ids", torch.arange(c["max_pos"]).view(1, -1))

    def forward(self, input_ids):
        s = input_ids.size(1)
        h = self.drop(self.wte(input_ids) + self.wpe(self.position_ids[:, :s]))
        for block in self.h:
            h = block(h)
        logits = F.linear(self.ln_f(h), self.wte.weight)  # lm_head tied to wte
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = input_ids[..., 1:].contiguous()
        return F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))


GPT2_SMALL = dict(vocab=50257, hidden=768, layers=12, heads=12, max_pos=1024, dropout=0.1)


def measure(model, batch, seq, vocab, verbose=False):
    """Bytes of the distinct storages autograd saves in one training-mode forward (params, buffers, ids out).
    Also used by torch_reference_llama.py."""
    model.train()
    ids = torch.randint(1, vocab, (batch, seq))
    excluded = {p.data_ptr() for p in model.parameters()} | {b.data_ptr() for b in model.buffers()}
    excluded.add(ids.data_ptr())
    storages = {}

    def pack(t):
        st = t.storage()
        if st.data_ptr() not in excluded and st.data_ptr() not in storages:
            storages[st.data_ptr()] = st.nbytes()
            if verbose:
                print("  saved", tuple(t.shape), t.dtype, st.nbytes(), t.grad_fn)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(ids)
    del out
    return sum(storages.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="workloads/testdata/torch_transformers.json")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)  # a shared build machine; the figures do not depend on threads
    cases = [("bert-base", Bert, BERT_BASE, [(1, 128), (4, 128), (1, 512)]),
             ("gpt2-small", GPT2LM, GPT2_SMALL, [(1, 1024), (2, 256)])]
    result = {"torch": torch.__version__, "device": "cpu", "models": {}}
    for name, cls, cfg, shapes in cases:
        model = cls(cfg)
        params = sum(p.numel() for p in model.parameters())
        runs = []
        for batch, seq in shapes:
            runs.append({"batch": batch, "seq_len": seq,
                         "saved_for_backward_bytes": measure(model, batch, seq, cfg["vocab"])})
            print(name, batch, seq, runs[-1]["saved_for_backward_bytes"], flush=True)
        result["models"][name] = {"params": params, "runs": runs}
        print(name, "params", params, flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""One FSDP2 training step of a small Llama-family model on 2 GPUs, measured, with the experiment dlsim simulates it by.

  fsdp_step.py --out-dir DIR [--world 2] [--preset small|tiny] [--precision mixed-bf16|fp32] [--hw h100-sxm]
               [--warmup 3] [--steps 10] [--backend nccl|gloo --device cuda|cpu]

Issue 32's calibration of the link model against a real step: every rank builds the same model (transformers'
LlamaForCausalLM from a Meta-Llama-3-8B config shrunk to --preset; where transformers is missing, a plain-PyTorch
decoder of the same structure: embedding, per layer RMSNorm, grouped-query attention with rotary positions and SDPA,
RMSNorm, SwiGLU MLP; final RMSNorm, untied head), wraps every decoder layer and then the root with FSDP2's
fully_shard (reshard after forward, the default; with mixed-bf16 a MixedPrecisionPolicy of bf16 parameters and fp32
reductions, torchtitan's), and runs AdamW steps on a fixed batch. After --warmup steps it times --steps steps
(CUDA events around each: forward, backward, optimizer step; a host clock on the CPU) and records per rank the step
times' median, min and max and torch.cuda.max_memory_allocated / max_memory_reserved over the timed steps and over
the whole run; then rank 0 records one more step under torch.profiler (DIR/fsdp-step-trace-rank0.json).

Written to DIR: fsdp-step.json (format dlsim-fsdp-step, version 1: command, date, devices, driver, torch, NCCL,
transformers, the model and its parameters, the per-rank numbers), fsdp-step-config.json (the model's config.json)
and fsdp-step-experiment.yaml, the same step as a dlsim experiment (`dlsim run DIR/fsdp-step-experiment.yaml`:
batch per rank, parallel: {fsdp: WORLD} with the same dtypes) for --hw. Spawns its ranks (a free localhost port) or
runs under torchrun. Where this PyTorch has no fully_shard (Debian's 1.13) it says so and exits 3 writing nothing.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nccl_bandwidth  # noqa: E402  (the rank launcher and version probe)

ROOT = os.path.dirname(os.path.dirname(HERE))
LLAMA_CONFIG = os.path.join(ROOT, "workloads", "testdata", "llama_configs", "Meta-Llama-3-8B.config.json")
# "small" fills a GPU step with real work (about 0.5 B parameters); "tiny" is the CPU check's.
PRESETS = {
    "small": ({"num_hidden_layers": 8, "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4,
               "intermediate_size": 5632, "vocab_size": 32000, "max_position_embeddings": 2048,
               "bos_token_id": 1, "eos_token_id": 2}, 4, 1024),
    "tiny": ({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1,
              "intermediate_size": 176, "vocab_size": 512, "max_position_embeddings": 64,
              "bos_token_id": 1, "eos_token_id": 2}, 2, 16),
}


def fully_shard_api():
    """(fully_shard, MixedPrecisionPolicy, None) or (None, None, why not)."""
    why = []
    for where in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"):
        try:
            mod = __import__(where, fromlist=["fully_shard", "MixedPrecisionPolicy"])
            return mod.fully_shard, mod.MixedPrecisionPolicy, None
        except Exception as e:  # ImportError, AttributeError, or 1.13's ValueError at import
            why.append("%s: %s" % (where, str(e).splitlines()[0] if str(e) else type(e).__name__))
    return None, None, "; ".join(why)


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rotate(x, cos, sin):
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


class Layer(nn.Module):
    """A Llama decoder layer in plain PyTorch (no transformers): what LlamaDecoderLayer computes."""

    def __init__(self, c):
        super().__init__()
        d, self.h, self.kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = d // self.h
        self.input_layernorm = RMSNorm(d, c["rms_norm_eps"])
        self.q_proj, self.o_proj = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, self.kv * self.hd, bias=False)
        self.v_proj = nn.Linear(d, self.kv * self.hd, bias=False)
        self.post_attention_layernorm = RMSNorm(d, c["rms_norm_eps"])
        m = c["intermediate_size"]
        self.gate_proj, self.up_proj = nn.Linear(d, m, bias=False), nn.Linear(d, m, bias=False)
        self.down_proj = nn.Linear(m, d, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, s, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, s, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, s, self.kv, self.hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        k, v = (t.repeat_interleave(self.h // self.kv, dim=1) for t in (k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, -1)
        x = x + self.o_proj(a)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class PlainLlama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)

    def forward(self, ids):
        hd = self.c["hidden_size"] // self.c["num_attention_heads"]
        inv = 1.0 / self.c["rope_theta"] ** (torch.arange(0, hd, 2, device=ids.device).float() / hd)
        f = torch.outer(torch.arange(ids.shape[1], device=ids.device).float(), inv)
        emb = torch.cat((f, f), dim=-1)
        x = self.embed_tokens(ids)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.norm(x)).float()
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def model_config(preset):
    with open(LLAMA_CONFIG) as f:
        cfg = json.load(f)
    cfg.update(PRESETS[preset][0])
    cfg.pop("torch_dtype", None)
    return cfg


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def build(cfg, device, implementation):
    """(module, decoder layers, loss function, description)."""
    torch.manual_seed(0)
    # Built on the device where PyTorch can (2.x: a device context), so that a large model's init is the GPU's.
    where = torch.device(device) if hasattr(torch.device, "__enter__") else None
    try:
        import transformers
    except ImportError:
        transformers = None
    if implementation == "plain" or transformers is None:
        with where or _nothing():
            m = PlainLlama(cfg).to(device)
        return m, list(m.layers), lambda ids: m(ids), {"implementation": "plain-pytorch"}
    with where or _nothing():
        m = transformers.LlamaForCausalLM(transformers.LlamaConfig(**cfg)).to(device)
    return m, list(m.model.layers), lambda ids: m(input_ids=ids, labels=ids).loss, {
        "implementation": "transformers.LlamaForCausalLM", "transformers": transformers.__version__}


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])


def run(args, rank, world, out_dir):
    fully_shard, policy, _ = fully_shard_api()
    cuda = args.device == "cuda"
    cfg = model_config(args.preset)
    _, batch, seq = PRESETS[args.preset]
    module, layers, loss_fn, desc = build(cfg, args.device, args.implementation)
    kw = {}
    if args.precision == "mixed-bf16":
        kw["mp_policy"] = policy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in layers:
        fully_shard(layer, **kw)
    fully_shard(module, **kw)
    opt = torch.optim.AdamW(module.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg["vocab_size"], (batch, seq), generator=torch.Generator().manual_seed(1)).to(args.device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(ids).backward()
        opt.step()

    timer = nccl_bandwidth.Timer(args.device)
    for _ in range(args.warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    times = [timer.run(step, 1) for _ in range(args.steps)]
    mem = {}
    if cuda:
        mem = {"max_memory_allocated": torch.cuda.max_memory_allocated(),
               "max_memory_reserved": torch.cuda.max_memory_reserved()}
    # One more step on every rank (its collectives need them all), profiled on rank 0.
    trace = None
    if rank == 0:
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=acts, record_shapes=True) as prof:
            step()
            if cuda:
                torch.cuda.synchronize()
        trace = "fsdp-step-trace-rank0.json"
        prof.export_chrome_trace(os.path.join(out_dir, trace))
    else:
        step()
    dist.barrier()
    record = {"rank": rank, "step_ms_median": round(median(times) * 1e3, 4),
              "step_ms_min": round(min(times) * 1e3, 4), "step_ms_max": round(max(times) * 1e3, 4),
              "timed_steps_peak": mem or None, "profiler_trace": trace}
    if cuda:
        # The whole run's peaks cannot be read after the reset above: torch.cuda.memory_stats keeps the all-time
        # peak under its own key.
        st = torch.cuda.memory_stats()
        record["run_peak"] = {"allocated_bytes.all.peak": st.get("allocated_bytes.all.peak"),
                              "reserved_bytes.all.peak": st.get("reserved_bytes.all.peak")}
    gathered = [None] * world
    dist.all_gather_object(gathered, record)
    n_params = sum(p.numel() for p in module.parameters())  # FSDP2's DTensors report the global numel
    return gathered, desc, n_params, cfg, batch, seq


def rank_main(args, rank, world, local_world):
    if args.device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank % local_world)))
    else:
        torch.set_num_threads(1)
    dist.init_process_group(args.backend, rank=rank, world_size=world)
    try:
        names = [None] * world
        dist.all_gather_object(names, torch.cuda.get_device_name() if args.device == "cuda" else platform.machine())
        ranks, desc, n_params, cfg, batch, seq = run(args, rank, world, args.out_dir)
        if rank != 0:
            return None
        return {"format": "dlsim-fsdp-step", "version": 1, "script": "validate/torch/fsdp_step.py",
                "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "backend": args.backend, "device": args.device, "world_size": world, "gpus_per_node": local_world,
                "nodes": world // local_world, "devices": names, "versions": nccl_bandwidth.versions(args.device),
                "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
                "model": dict(desc, preset=args.preset, config="fsdp-step-config.json", parameters=n_params,
                              batch_per_rank=batch, seq_len=seq),
                "layout": {"fsdp": world, "wrap": "each decoder layer, then the root",
                           "reshard_after_forward": True, "precision": args.precision,
                           "param_dtype": "bf16" if args.precision == "mixed-bf16" else "fp32",
                           "reduce_dtype": "fp32"},
                "optimizer": "AdamW(lr=1e-4)", "warmup_steps": args.warmup, "timed_steps": args.steps,
                "timer": "cuda-events" if args.device == "cuda" else "host-clock",
                "ranks": ranks, "_config": cfg, "_batch": batch, "_seq": seq}
    finally:
        dist.destroy_process_group()


def experiment_yaml(record, hw):
    lay = record["layout"]
    par = "{fsdp: %d%s}" % (record["world_size"], ", param_dtype: bf16, reduce_dtype: fp32"
                            if lay["precision"] == "mixed-bf16" else "")
    return ("# Written by validate/torch/fsdp_step.py (%s, %s): the step it measured, for `dlsim run` (batch is\n"
            "# per rank; one rank of the layout is simulated). Its measured numbers are in fsdp-step.json.\n"
            "model: fsdp-step-config.json\nbatch: %d\nseq_len: %d\nhw: %s\npool: pytorch-caching\nswap: none\n"
            "concurrency: serial\niterations: 3\nprecision: %s\noptimizer: adamw\nparallel: %s\n"
            % (record["date"], record["model"]["implementation"], record["_batch"], record["_seq"], hw,
               lay["precision"], par))


def spawned(rank, world, port, args, q):
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "LOCAL_RANK": str(rank)})
    try:
        q.put((rank, rank_main(args, rank, world, world), None))
    except Exception:
        import traceback
        q.put((rank, None, traceback.format_exc()))
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--preset", default=None, choices=sorted(PRESETS), help="default: small (CUDA), tiny (CPU)")
    ap.add_argument("--precision", default=None, choices=["mixed-bf16", "fp32"],
                    help="default: mixed-bf16 (CUDA), fp32 (CPU)")
    ap.add_argument("--implementation", default="auto", choices=["auto", "plain"],
                    help="auto: transformers' LlamaForCausalLM where installed; plain: the plain-PyTorch decoder")
    ap.add_argument("--hw", default="auto",
                    help="the hardware file the experiment names (auto: h200 on H200s, else h100-sxm)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--max-seconds", type=float, default=300, help="the spawned ranks' limit")
    args = ap.parse_args(argv)
    args.preset = args.preset or ("small" if args.device == "cuda" else "tiny")
    args.precision = args.precision or ("mixed-bf16" if args.device == "cuda" else "fp32")
    if args.backend == "nccl" and args.device != "cuda":
        ap.error("--backend nccl runs on --device cuda")
    if args.warmup < 0 or args.steps < 1 or args.world < 2:
        ap.error("--warmup >= 0, --steps >= 1, --world >= 2")
    if fully_shard_api()[0] is None:
        print("fsdp_step.py: skipped: torch %s has no FSDP2 fully_shard (%s)" % (torch.__version__, fully_shard_api()[2]))
        return 3
    if not dist.is_available():
        print("fsdp_step.py: this PyTorch (%s) has no torch.distributed" % torch.__version__)
        return 3
    if args.device == "cuda" and torch.cuda.device_count() < args.world and "RANK" not in os.environ:
        print("fsdp_step.py: %d GPU(s) visible, --world %d" % (torch.cuda.device_count(), args.world))
        return 3
    os.makedirs(args.out_dir, exist_ok=True)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
        record = rank_main(args, rank, world, int(os.environ.get("LOCAL_WORLD_SIZE", world)))
    else:
        args.min_bytes = 0  # nccl_bandwidth.spawn reads only max_seconds from args
        rank, record = 0, nccl_bandwidth.spawn(args, args.world, target=spawned)
    if rank != 0:
        return 0
    cfg = record.pop("_config")
    with open(os.path.join(args.out_dir, "fsdp-step-config.json"), "w") as f:
        json.dump(cfg, f, indent=1, sort_keys=True)
        f.write("\n")
    hw = args.hw
    if hw == "auto":
        hw = "h200" if "H200" in str(record["devices"][0]) else "h100-sxm"
    with open(os.path.join(args.out_dir, "fsdp-step-experiment.yaml"), "w") as f:
        f.write(experiment_yaml(record, hw))
    record.pop("_batch")
    record.pop("_seq")
    with open(os.path.join(args.out_dir, "fsdp-step.json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    for r in record["ranks"]:
        print("rank %d: step %.3f ms (median of %d)%s" % (r["rank"], r["step_ms_median"], args.steps,
              ", peak allocated %.1f MiB, reserved %.1f MiB" % (r["timed_steps_peak"]["max_memory_allocated"] / 2**20,
                                                                r["timed_steps_peak"]["max_memory_reserved"] / 2**20)
              if r["timed_steps_peak"] else ""))
    print("wrote %s (fsdp-step.json, fsdp-step-config.json, fsdp-step-experiment.yaml%s)"
          % (args.out_dir, ", " + record["ranks"][0]["profiler_trace"] if record["ranks"][0]["profiler_trace"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""PyTorch's own per-rank memory accounting of DDP and FSDP, on CPU processes (gloo), as reference data.

  torch_distributed_memory.py [--models mlp,llama] [--layouts ddp,fsdp,fsdp-bf16] [--worlds 2,4] [--out-dir DIR]

Issue 32 checks dlsim's DDP/FSDP memory per GPU against what PyTorch itself does. This spawns WORLD CPU processes
joined by torch.distributed's gloo backend (a free localhost port, no torchrun), builds one model, wraps it, runs
two training steps (AdamW) and writes what each rank holds as DIR/<model>-<layout>-w<WORLD>-torch<VERSION>.json:

  ddp   the gradient buckets as the reducer hands them to a communication hook (index, bytes, parameters in bucket
        order), on step 1 (one bucket of everything: DDP does not bucket before it has seen the backward order
        unless find_unused_parameters) and step 2 (rebuilt in gradient-ready order: the first bucket closes past
        dist._DEFAULT_FIRST_BUCKET_BYTES, the others past bucket_cap_mb, 25 MiB by default); the logging data's
        bucket fields; per rank the parameter, gradient and optimizer-state bytes (every rank holds all of them).
  fsdp  FSDP2 (fully_shard; skipped, saying why, where this PyTorch has none): one unit per block (each
        Linear of the MLP, each decoder layer of the Llama) and the root; per rank and parameter the local
        (sharded) shape and bytes and the bytes of the storage behind it (padding shows there), the gradient and
        AdamW state bytes after step 2, and per unit the unsharded (all-gathered) bytes seen inside its forward.
  fsdp-bf16  the same under MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32), torchtitan's, without
        autocast; adds the dtypes of the gathered parameters, of each block's output (dtype and bytes) and of the
        sharded parameters and gradients.

Bytes are counted twice: "logical" sums numel * element size of the tensors; "storage" sums each distinct storage
once (FSDP pads shards and may put several gradients in one buffer). Models: "mlp", Linear(256, 1024) -> ReLU ->
Linear(1024, 257) in float32 (257 rows do not split evenly, so FSDP's padding shows; the second Linear alone exceeds
1 MiB, so DDP's first-bucket cap shows), and "llama", Meta-Llama-3-8B's config shrunk (2 layers, hidden 64, 4 heads,
1 KV head, MLP 176, vocab 512, token ids 1 and 2) where transformers is installed. Outputs carry no addresses or
times, so reruns are byte-identical. Runs one thread per process.
"""
import argparse
import json
import os
import queue as queue_mod
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LLAMA_CONFIG = os.path.join(ROOT, "workloads", "testdata", "llama_configs", "Meta-Llama-3-8B.config.json")
LLAMA_SHRINK = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1,
                "intermediate_size": 176, "vocab_size": 512, "max_position_embeddings": 64,
                "bos_token_id": 1, "eos_token_id": 2}  # the 8B's token ids lie outside the shrunk vocabulary
BATCH, SEQ = 2, 16


def storage_of(t):
    """(key, bytes) of the storage behind t; the key only dedupes within one process and is never written."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


def local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def tensor_bytes(t):
    return t.numel() * t.element_size()


def fully_shard_api():
    """(FSDP2's fully_shard, None) or (None, why not). FSDP v1 is no fallback on CPU: PyTorch 2.x's wrapper refuses
    a machine without an accelerator, and Debian's 1.13 fails to import torch.distributed.fsdp under Python 3.11
    (a dataclass default in torch.distributed._shard)."""
    why = []
    for where in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"):
        try:
            return getattr(__import__(where, fromlist=["fully_shard"]), "fully_shard"), None
        except Exception as e:  # ImportError, AttributeError, or 1.13's ValueError at import
            why.append("%s: %s: %s" % (where, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    return None, "; ".join(why)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 257)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def build(model):
    """(module, blocks [(name, module)] to wrap as units, batch maker, description)."""
    torch.manual_seed(0)
    if model == "mlp":
        m = Mlp()
        return m, [("fc1", m.fc1), ("fc2", m.fc2)], lambda: (torch.randn(8, 256),), {
            "layers": "Linear(256, 1024) -> ReLU -> Linear(1024, 257)", "dtype": "float32", "batch": 8}
    import transformers
    with open(LLAMA_CONFIG) as f:
        cfg = json.load(f)
    cfg.update(LLAMA_SHRINK)
    cfg.pop("torch_dtype", None)
    config = transformers.LlamaConfig(**cfg)
    m = transformers.LlamaForCausalLM(config).float()
    blocks = [("model.layers.%d" % i, layer) for i, layer in enumerate(m.model.layers)]
    ids = torch.randint(0, cfg["vocab_size"], (BATCH, SEQ), generator=torch.Generator().manual_seed(1))
    return m, blocks, lambda: (ids,), {"config": os.path.relpath(LLAMA_CONFIG, ROOT), "overrides": LLAMA_SHRINK,
                                       "dtype": "float32", "batch": BATCH, "seq_len": SEQ,
                                       "transformers": transformers.__version__}


def loss_of(model_name, module, batch):
    if model_name == "mlp":
        return module(*batch).square().mean()
    return module(input_ids=batch[0], labels=batch[0]).loss


def param_table(module):
    return [{"name": n, "shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
             "bytes": tensor_bytes(p)} for n, p in module.named_parameters()]


def sum_bytes(tensors):
    """Logical and distinct-storage bytes of tensors."""
    seen, logical, storage = {}, 0, 0
    for t in tensors:
        logical += tensor_bytes(t)
        key, n = storage_of(t)
        if key not in seen:
            seen[key] = n
            storage += n
    return {"logical": logical, "storage": storage}


def optimizer_bytes(opt, params):
    by_key = {}
    for p in params:
        for k, v in opt.state.get(p, {}).items():
            if torch.is_tensor(v):
                by_key.setdefault(k, []).append(local(v))
    return {k: sum_bytes(v) for k, v in sorted(by_key.items())}


def run_ddp(model_name, rank, world):
    from torch.nn.parallel import DistributedDataParallel as DDP
    module, _, batch, _ = build(model_name)
    names = {id(p): n for n, p in module.named_parameters()}
    ddp = DDP(module)
    steps = []

    def hook(state, bucket):
        params = bucket.parameters() if hasattr(bucket, "parameters") else bucket.get_per_parameter_tensors()
        buf = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
        steps[-1].append({"index": bucket.index(), "bytes": tensor_bytes(buf), "dtype": str(buf.dtype)[6:],
                          "parameters": [names[id(p)] for p in params]})
        fut = dist.all_reduce(buf.div_(world), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])

    ddp.register_comm_hook(None, hook)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    for _ in range(2):
        steps.append([])
        opt.zero_grad()
        loss_of(model_name, ddp, batch()).backward()
        opt.step()
    logging = ddp._get_ddp_logging_data() if hasattr(ddp, "_get_ddp_logging_data") else {}
    params = list(module.parameters())
    return {
        "rank": rank,
        "buckets_step1": sorted(steps[0], key=lambda b: b["index"]),
        "buckets_step2": sorted(steps[1], key=lambda b: b["index"]),
        "logging_data": {k: v for k, v in sorted(logging.items()) if "bucket" in k},
        "param_bytes": sum_bytes(params),
        "grad_bytes": sum_bytes([p.grad for p in params]),
        "optimizer_state_bytes": optimizer_bytes(opt, params),
    }


def unsharded_probe(records, name, unit_module, param_names):
    """A forward pre-hook inside the unit: by then FSDP has all-gathered it; reads the tensors the unit computes
    with (its registered parameters, swapped by FSDP2 for the unsharded ones until it reshards)."""
    def read(mod, _inputs):
        tensors = []
        for pname in param_names:
            obj = mod
            for part in pname.split("."):
                obj = getattr(obj, part)
            tensors.append(obj)
        records.setdefault(name, sum_bytes(tensors))
    return unit_module.register_forward_pre_hook(read)


def mixed_precision_policy():
    """FSDP2's MixedPrecisionPolicy as torchtitan sets it: bf16 parameters for compute, fp32 reduce-scatter."""
    for where in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"):
        try:
            policy = getattr(__import__(where, fromlist=["MixedPrecisionPolicy"]), "MixedPrecisionPolicy")
            return policy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        except (ImportError, AttributeError):
            continue
    raise RuntimeError("this PyTorch has fully_shard but no MixedPrecisionPolicy")


def output_probe(records, name, unit_module):
    """A forward hook: the dtype and bytes of what the unit returns (its activations' dtype)."""
    def read(_mod, _inputs, out):
        t = out[0] if isinstance(out, tuple) else out
        records.setdefault(name, {"dtype": str(t.dtype).replace("torch.", ""), "bytes": tensor_bytes(t)})
    return unit_module.register_forward_hook(read)


def dtype_probe(records, name, unit_module):
    """A forward pre-hook inside the unit: the dtypes of the (gathered) parameters it computes with."""
    def read(mod, _inputs):
        records.setdefault(name, sorted({str(p.dtype).replace("torch.", "") for p in mod.parameters()}))
    return unit_module.register_forward_pre_hook(read)


def run_fsdp(model_name, rank, world, bf16=False):
    fully_shard = fully_shard_api()[0]
    kwargs = {"mp_policy": mixed_precision_policy()} if bf16 else {}
    module, blocks, batch, _ = build(model_name)
    block_params = {name: [n for n, _ in b.named_parameters()] for name, b in blocks}
    root_params = [n for n, _ in module.named_parameters()
                   if not any(n.startswith(b + ".") for b, _ in blocks)]
    for _, b in blocks:
        fully_shard(b, **kwargs)
    fully_shard(module, **kwargs)
    wrapped = module
    # FSDP2 registers its own pre-forward hook first (prepend), so these see the all-gathered parameters.
    unsharded = {}
    hooks = [unsharded_probe(unsharded, name, b, block_params[name]) for name, b in blocks]
    if root_params:
        # The root unit's own parameters (embeddings, final norm, head) are gathered for the whole forward.
        hooks.append(unsharded_probe(unsharded, "(root)", module, root_params))
    outputs, dtypes = {}, {}
    if bf16:  # what the units compute in: their outputs and the gathered parameters' dtypes
        hooks += [output_probe(outputs, name, b) for name, b in blocks]
        hooks += [dtype_probe(dtypes, name, b) for name, b in blocks]
    opt = torch.optim.AdamW(wrapped.parameters(), lr=1e-3)
    for _ in range(2):
        opt.zero_grad()
        loss_of(model_name, wrapped, batch()).backward()
        opt.step()
    for h in hooks:
        h.remove()
    params = list(wrapped.named_parameters())
    per_param = []
    for n, p in params:
        t = local(p)
        key, nbytes = storage_of(t)
        per_param.append({"name": n, "local_shape": list(t.shape), "local_bytes": tensor_bytes(t),
                          "storage_bytes": nbytes,
                          "grad_local_bytes": tensor_bytes(local(p.grad)) if p.grad is not None else 0})
    plist = [p for _, p in params]
    record = {
        "rank": rank,
        "parameters": per_param,
        "param_bytes": sum_bytes([local(p) for p in plist]),
        "grad_bytes": sum_bytes([local(p.grad) for p in plist if p.grad is not None]),
        "optimizer_state_bytes": optimizer_bytes(opt, plist),
        "unsharded_per_unit": {k: unsharded[k] for k in sorted(unsharded)},
    }
    if bf16:
        record["mixed_precision"] = {"param_dtype": "bfloat16", "reduce_dtype": "float32"}
        record["unit_outputs"] = {k: outputs[k] for k in sorted(outputs)}
        record["unsharded_dtypes"] = {k: dtypes[k] for k in sorted(dtypes)}
        record["param_dtypes"] = sorted({str(local(p).dtype).replace("torch.", "") for p in plist})
        record["grad_dtypes"] = sorted({str(local(p.grad).dtype).replace("torch.", "")
                                        for p in plist if p.grad is not None})
    return record


def worker(rank, world, port, model_name, layout, queue):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        if layout == "ddp":
            record = run_ddp(model_name, rank, world)
        else:
            record = run_fsdp(model_name, rank, world, bf16=layout == "fsdp-bf16")
        queue.put((rank, record, None))
    except Exception:  # the parent reports it (the other ranks may then wait on a collective until killed)
        import traceback
        queue.put((rank, None, traceback.format_exc()))
        raise
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(model_name, layout, world):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, world, port, model_name, layout, queue)) for r in range(world)]
    for p in procs:
        p.start()
    results, errors = {}, []
    try:
        while len(results) < world and not errors:
            try:
                rank, record, err = queue.get(timeout=2)
            except queue_mod.Empty:
                dead = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0)]
                if dead:
                    errors.append("rank %s exited with %s without a record"
                                  % (dead, [procs[r].exitcode for r in dead]))
                continue
            if err:
                errors.append("rank %d:\n%s" % (rank, err))
            else:
                results[rank] = record
    finally:
        for p in procs:  # after an error the other ranks may wait on a collective: end them
            p.join(timeout=30 if not errors else 1)
            if p.is_alive():
                p.terminate()
                p.join()
    if errors:
        raise RuntimeError("%s %s world %d failed:\n%s" % (model_name, layout, world, "\n".join(errors)))
    module, _, _, description = build(model_name)
    api = "fully_shard" if layout.startswith("fsdp") else None
    return {
        "format": "dlsim-torch-distributed-memory", "version": 1,
        "script": "validate/torch/torch_distributed_memory.py",
        "torch": torch.__version__, "python": "%d.%d" % sys.version_info[:2], "backend": "gloo", "device": "cpu",
        "model": model_name, "model_description": description, "layout": layout, "fsdp_api": api,
        "world_size": world,
        "ddp_defaults": {"bucket_cap_mb": 25, "first_bucket_bytes": getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", None),
                         "find_unused_parameters": False, "gradient_as_bucket_view": False}
        if layout == "ddp" else None,
        "parameters": param_table(module),
        "total_param_bytes": sum(tensor_bytes(p) for p in module.parameters()),
        "optimizer": "AdamW(lr=1e-3), two steps",
        "ranks": [results[r] for r in range(world)],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="mlp,llama")
    ap.add_argument("--layouts", default="ddp,fsdp")
    ap.add_argument("--worlds", default="2,4")
    ap.add_argument("--out-dir", default=".")
    args = ap.parse_args(argv)
    if not dist.is_available() or not dist.is_gloo_available():
        print("torch_distributed_memory.py: this PyTorch (%s) has no torch.distributed with gloo" % torch.__version__)
        return 3
    os.makedirs(args.out_dir, exist_ok=True)
    for model_name in args.models.split(","):
        if model_name not in ("mlp", "llama"):
            sys.exit("torch_distributed_memory.py: --models: unknown model %r (mlp, llama)" % model_name)
        if model_name == "llama":
            try:
                import transformers  # noqa: F401
            except ImportError:
                print("skipping llama: no transformers in %s" % sys.executable)
                continue
        for layout in args.layouts.split(","):
            if layout not in ("ddp", "fsdp", "fsdp-bf16"):
                sys.exit("torch_distributed_memory.py: --layouts: unknown layout %r (ddp, fsdp, fsdp-bf16)" % layout)
            if layout.startswith("fsdp") and fully_shard_api()[0] is None:
                print("skipping %s fsdp: torch %s has no fully_shard (%s)"
                      % (model_name, torch.__version__, fully_shard_api()[1]))
                continue
            for world in (int(w) for w in args.worlds.split(",")):
                record = measure(model_name, layout, world)
                path = os.path.join(args.out_dir, "%s-%s-w%d-torch%s.json"
                                    % (model_name, layout, world, torch.__version__.split("+")[0]))
                with open(path, "w") as f:
                    json.dump(record, f, indent=1, sort_keys=True)
                    f.write("\n")
                print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

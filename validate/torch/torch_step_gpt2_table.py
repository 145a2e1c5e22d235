#!/usr/bin/python3
"""The GPT-2 rows of docs/models.md ("Against a recorded step"): Hugging Face's GPT2LMHeadModel built from the zoo's
GPT-2 config (workloads/testdata/llama_configs/gpt2.config.json) by transformers 5 with its default attention
(attn_implementation "sdpa"), recorded by `dlsim import-torch` (PyTorch 2.x + transformers: --python names that
interpreter), beside the zoo's `gpt2-small` (its default, sdpa-flash: GPT-2 as transformers 5 runs it).

The recording runs PyTorch's CPU dispatch, which differs from CUDA's in three places this script accounts for:
- Attention dropout: PyTorch's CPU flash kernel takes no dropout, so with GPT-2's attn_pdrop 0.1 the CPU step takes
  SDPA's math path and keeps the S x S probabilities, a dropout mask of their size and the dropped-out product,
  where CUDA's flash, memory-efficient and cuDNN kernels apply dropout inside and keep none of them. The recording
  is therefore made of the same config with attn_pdrop 0 (the CPU flash kernel: q, k, v, the output and the
  log-sum-exp, what CUDA's kernels keep; attention dropout changes the size of nothing else). --with-dropout also
  records the config as it is, to show the math path's bytes.
- Dropout masks: on the CPU dropout keeps a mask of its input's dtype (bernoulli_ into empty_like), CUDA's
  native_dropout a bool mask: the "CUDA masks" figures count each such mask at one byte an element.
- Fake tensors: transformers' packed-sequence check cannot read a fake tensor's values, so the recording builds a
  (B, 1, S, S) causal mask per layer (an aten::where in the attention), which SDPA keeps; a real step passes no
  mask (is_causal=True). The "CUDA masks" figures leave those out too.
Mixed precision is recorded under CPU autocast, whose lists differ from CUDA's (CPU runs pow, hence gelu_new's
tanh chain, in bf16; CUDA in fp32): those rows show the difference, they do not remove it.

Figures per row: parameters; saved-for-backward bytes (trace: distinct activation storages autograd packs in
forward; zoo: `dlsim model --json`); peak live bytes (trace: its summary; zoo and traced graph: `dlsim run`'s
peak_live_bytes on h200 with the memory raised, pytorch-caching, no swap, serial). AdamW, fp32 master weights.

Usage: validate/torch/torch_step_gpt2_table.py --dlsim build/bin/dlsim --python VENV/bin/python --out-dir DIR
       [--cases fp32:2:256,fp32:8:1024,mixed-bf16:8:1024] [--with-dropout]   (traces kept in DIR and reused)
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "frontend", "torch"))
import step_file  # noqa: E402  (the trace's own summary, recomputed with CUDA's mask sizes)

CONFIG = os.path.join(ROOT, "workloads", "testdata", "llama_configs", "gpt2.config.json")
ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "bool": 1}


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout[r.stdout.index("{"):])


def cuda_sized(trace):
    """The trace's storages with each CPU dropout mask at one byte an element and the recording's causal masks
    dropped, and the bytes each adjustment removed from the saved set: (storages, masks, causal)."""
    producer = {}
    for op in trace["ops"]:
        for o in op["outputs"]:
            producer.setdefault(o["storage"], (op, o))
    storages = [dict(s) for s in trace["storages"]]
    saved = {r["storage"] for r in trace["saved"] if r["phase"] == "forward"}
    masks = causal = 0
    for s in storages:
        op, out = producer.get(s["id"], (None, None))
        if op is None or s["kind"] != "activation":
            continue
        module = op.get("module") or ""
        if op["name"] == "aten::empty_like" and module.split(".")[-1] in ("drop", "resid_dropout", "dropout"):
            cut = s["bytes"] - s["bytes"] // ITEMSIZE[out["dtype"]]
            masks += cut if s["id"] in saved else 0
            s["bytes"] -= cut
        elif op["name"] == "aten::where" and module.endswith(".attn") and len(out["shape"]) == 4 and out["shape"][1] == 1:
            causal += s["bytes"] if s["id"] in saved else 0
            s["bytes"] = 0
    return storages, masks, causal


def dlsim_peak(dlsim, folder, name, model, extra):
    exp = os.path.join(folder, f"{name}.yaml")
    lines = [f"model: {model}", "hw: h200", "hw_override: {memory: {total_mib: 4000000}}", "pool: pytorch-caching",
             "swap: none", "concurrency: serial"] + extra
    with open(exp, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    return run_json([dlsim, "run", exp, "--json"])["peak_live_bytes"]


def trace_of(a, config, tag, precision, batch, seq):
    path = os.path.join(a.out_dir, f"gpt2-{tag}-{precision}-b{batch}-s{seq}.torchstep.json")
    if not os.path.exists(path):
        subprocess.run([a.python, os.path.join(ROOT, "frontend", "torch", "import_torch.py"), f"hf:{config}",
                        "--batch", str(batch), "--seq-len", str(seq), "--precision", precision, "--optimizer", "adamw",
                        "--out", path], check=True)
    with open(path, encoding="ascii") as f:
        return path, json.load(f)


def row(a, config, tag, precision, batch, seq):
    path, trace = trace_of(a, config, tag, precision, batch, seq)
    s = trace["summary"]
    storages, masks, causal = cuda_sized(trace)
    cuda = step_file.summarize(storages, trace["ops"], trace["saved"], s["parameters"])
    zoo_args = ["--batch", str(batch), "--seq-len", str(seq), "--precision", precision, "--optimizer", "adamw"]
    zoo = run_json([a.dlsim, "model", "gpt2-small", *zoo_args, "--json"])
    eager = run_json([a.dlsim, "model", "gpt2-small", *zoo_args, "--attention", "eager", "--json"])
    name = f"{tag}-{precision}-b{batch}-s{seq}"
    zoo_run = [f"batch: {batch}", f"seq_len: {seq}", f"precision: {precision}", "optimizer: adamw"]
    return {"config": tag, "precision": precision, "batch": batch, "seq_len": seq, "versions": trace["producer"],
            "parameters": [s["parameters"], zoo["params"]],
            "trace_saved": s["saved_for_backward_bytes"], "trace_saved_cuda": cuda["saved_for_backward_bytes"],
            "cpu_mask_bytes": masks, "causal_mask_bytes": causal,
            "zoo_saved": zoo["saved_for_backward_bytes"], "zoo_eager_saved": eager["saved_for_backward_bytes"],
            "trace_peak": s["peak_live_bytes"], "trace_peak_cuda": cuda["peak_live_bytes"],
            "traced_graph_peak": dlsim_peak(a.dlsim, a.out_dir, name + "-traced", path, [f"batch: {batch}"]),
            "zoo_peak": dlsim_peak(a.dlsim, a.out_dir, name + "-zoo", "gpt2-small", zoo_run),
            "zoo_eager_peak": dlsim_peak(a.dlsim, a.out_dir, name + "-zoo-eager", "gpt2-small",
                                         zoo_run + ["attention: eager"])}


def pct(x, ref):
    return f"{x - ref:+,} B ({100.0 * (x - ref) / ref:+.2f} %)"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dlsim", required=True)
    p.add_argument("--python", required=True, help="a Python with torch 2.x and transformers")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--cases", default="fp32:2:256,fp32:8:1024,mixed-bf16:8:1024", help="PRECISION:BATCH:SEQ,...")
    p.add_argument("--with-dropout", action="store_true", help="also record the config with its attention dropout")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    with open(CONFIG, encoding="ascii") as f:
        config = json.load(f)
    config["attn_pdrop"] = 0.0
    no_drop = os.path.join(a.out_dir, "gpt2-attn-pdrop-0.config.json")
    with open(no_drop, "w", encoding="ascii") as f:
        json.dump(config, f, indent=1)
    rows = []
    for case in a.cases.split(","):
        precision, batch, seq = case.split(":")
        rows.append(row(a, no_drop, "attn-pdrop-0", precision, int(batch), int(seq)))
        if a.with_dropout:
            rows.append(row(a, CONFIG, "as-is", precision, int(batch), int(seq)))
    about = ("Written by validate/torch/torch_step_gpt2_table.py --cases " + a.cases +
             (" --with-dropout" if a.with_dropout else "") + ": Hugging Face's GPT2LMHeadModel recorded by "
             "`dlsim import-torch` (the versions under each row's `versions`; AdamW) beside the zoo's gpt2-small. "
             "config attn-pdrop-0: the zoo's GPT-2 config with attention dropout 0 (PyTorch's CPU flash kernel); as-is: "
             "the config itself (the CPU's SDPA math path). *_cuda: the recording with one-byte dropout masks and no "
             "fake-tensor causal mask. parameters: [trace, zoo].")
    with open(os.path.join(a.out_dir, "gpt2.summary.json"), "w", encoding="ascii") as f:
        json.dump({"about": about, "rows": rows}, f, indent=1, sort_keys=True)
        f.write("\n")
    print("| config | precision | batch x seq | params: trace / zoo | saved B: trace / trace, CUDA masks / zoo / zoo eager "
          "| zoo - trace (CUDA masks) | peak live B: trace / trace, CUDA masks / traced graph / zoo / zoo eager "
          "| zoo - trace (CUDA masks) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['config']} | {r['precision']} | {r['batch']} x {r['seq_len']} | "
              f"{' / '.join(f'{x:,}' for x in r['parameters'])} | {r['trace_saved']:,} / {r['trace_saved_cuda']:,} / "
              f"{r['zoo_saved']:,} / {r['zoo_eager_saved']:,} | {pct(r['zoo_saved'], r['trace_saved_cuda'])} | "
              f"{r['trace_peak']:,} / {r['trace_peak_cuda']:,} / {r['traced_graph_peak']:,} / {r['zoo_peak']:,} / "
              f"{r['zoo_eager_peak']:,} | {pct(r['zoo_peak'], r['trace_peak_cuda'])} |")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The decoder rows of docs/models.md ("Against a recorded step"): Hugging Face's LlamaForCausalLM and
Qwen2ForCausalLM built from the zoo presets' config.json files (workloads/testdata/llama_configs/) and recorded by
`dlsim import-torch` (PyTorch 2.x + transformers: --python names that interpreter), with and without Hugging Face's
gradient checkpointing, beside dlsim's graphs: the traced one and the zoo preset's (with checkpoint every=1, one
segment per decoder layer, for Hugging Face's checkpointing).

Figures per row: parameters; saved-for-backward bytes (trace: distinct activation storages autograd packs in
forward; dlsim: `dlsim model --json`, for the zoo under `--swap checkpoint --param every=1` when checkpointed);
peak live bytes (trace: its summary, and its largest in forward + backward; dlsim: `dlsim run`'s peak_live_bytes,
the device's memory raised by hw_override so that an 8B model's step runs whole).
Everything mixed-bf16, AdamW, batch 1, fp32 master weights; the zoo with its default sdpa-flash attention.

Usage: validate/torch/torch_step_llm_table.py --dlsim build/bin/dlsim --python VENV/bin/python [--seq-len 2048]
       [--out-dir DIR]   (traces kept there and reused)
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MODELS = [("Qwen2.5-0.5B", "qwen2.5-0.5b"), ("Meta-Llama-3-8B", "llama3-8b")]


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout[r.stdout.index("{"):])


def forward_backward_peak(trace):
    """The trace's most live device bytes over its forward and backward ops (the optimizer's aside)."""
    st, ops = trace["storages"], trace["ops"]
    n = len(ops)
    delta, live = [0] * (n + 1), 0
    for s in st:
        if s.get("host"):
            continue
        a, f = s["allocated_at"], s["freed_at"]
        start = 0 if a is None else a
        end = n if f is None else max(f, start + 1)
        if a is None and end == 0:
            continue
        if a is None:
            live += s["bytes"]
        else:
            delta[start] += s["bytes"]
        delta[end] -= s["bytes"]
    peak = 0
    for k in range(n):
        live += delta[k]
        if ops[k]["phase"] != "optimizer":
            peak = max(peak, live)
    return peak


def dlsim_peak(dlsim, folder, name, model, seq_len, swap, zoo):
    exp = os.path.join(folder, f"{name}.yaml")
    lines = [f"model: {model}", "batch: 1", "hw: h100-sxm", "hw_override: {memory: {total_mib: 4000000}}",
             "pool: pytorch-caching", f"swap: {swap}", "concurrency: serial"]
    if zoo:
        lines += [f"seq_len: {seq_len}", "precision: mixed-bf16", "optimizer: adamw"]
    with open(exp, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    return run_json([dlsim, "run", exp, "--json"])["peak_live_bytes"]


def row(a, config, zoo_name, checkpointing):
    trace_file = os.path.join(a.out_dir, f"{zoo_name}-{checkpointing}-s{a.seq_len}.torchstep.json")
    if not os.path.exists(trace_file):
        subprocess.run([a.python, os.path.join(ROOT, "frontend", "torch", "import_torch.py"),
                        f"hf:{os.path.join(ROOT, 'workloads', 'testdata', 'llama_configs', config + '.config.json')}",
                        "--batch", "1", "--seq-len", str(a.seq_len), "--precision", "mixed-bf16", "--optimizer",
                        "adamw", "--checkpointing", checkpointing, "--out", trace_file], check=True)
    with open(trace_file, encoding="ascii") as f:
        trace = json.load(f)
    s = trace["summary"]
    swap = "none" if checkpointing == "none" else "{name: checkpoint, every: 1}"
    traced = run_json([a.dlsim, "model", trace_file, "--json"])
    zoo_cmd = [a.dlsim, "model", zoo_name, "--batch", "1", "--seq-len", str(a.seq_len), "--precision", "mixed-bf16",
               "--optimizer", "adamw", "--json"]
    if checkpointing != "none":
        zoo_cmd += ["--swap", "checkpoint", "--param", "every=1"]
    zoo = run_json(zoo_cmd)
    tag = f"{zoo_name}-{checkpointing}"
    return {"model": zoo_name, "checkpointing": checkpointing, "seq_len": a.seq_len,
            "versions": trace["producer"], "parameters": [s["parameters"], traced["params"], zoo["params"]],
            "saved": [s["saved_for_backward_bytes"], traced["saved_for_backward_bytes"], zoo["saved_for_backward_bytes"]],
            "trace_peak": s["peak_live_bytes"], "trace_fwd_bwd_peak": forward_backward_peak(trace),
            "traced_graph_peak": dlsim_peak(a.dlsim, a.out_dir, tag + "-traced", trace_file, a.seq_len, "none", False),
            "zoo_peak": dlsim_peak(a.dlsim, a.out_dir, tag + "-zoo", zoo_name, a.seq_len, swap, True)}


def gib(b):
    return f"{b / 2**30:.2f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dlsim", required=True)
    p.add_argument("--python", required=True, help="a Python with torch 2.x and transformers")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--out-dir", required=True)
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    rows = [row(a, c, z, ck) for c, z in MODELS for ck in ("none", "hf")]
    with open(os.path.join(a.out_dir, f"llm-s{a.seq_len}.json"), "w", encoding="ascii") as f:
        json.dump(rows, f, indent=1)
    print("| model | checkpointing | params: trace / traced graph / zoo | saved GiB: trace / traced graph / zoo "
          "| peak live GiB: trace / trace in fwd+bwd / traced graph (dlsim run) / zoo (dlsim run) |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['checkpointing']} | {' / '.join(f'{x:,}' for x in r['parameters'])} | "
              f"{' / '.join(gib(x) for x in r['saved'])} | {gib(r['trace_peak'])} / {gib(r['trace_fwd_bwd_peak'])} / "
              f"{gib(r['traced_graph_peak'])} / {gib(r['zoo_peak'])} |")


if __name__ == "__main__":
    main()

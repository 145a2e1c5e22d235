#!/usr/bin/env python3
"""What a Hugging Face causal LM's training step runs differently while a CUDA stream is capturing, shown on the
CPU (no GPU needed): transformers asks `torch.cuda.is_current_stream_capturing()` (through `is_tracing`) before it
reads a tensor's values, and where it cannot read them it takes the static path. For a step with no attention mask
that is `masking_utils.find_packed_sequence_indices`, which then assumes packed sequences, so a full boolean mask
is built and passed to SDPA: no `is_causal`, and no `enable_gqa` (the key and value repeated to every query head).
The step captured by torch_step_profile.py's whole-step CUDA graph is that step, not the eager one it profiles.

  validate/torch/hf_capture_path.py CONFIG.json [CONFIG.json ...]   (PyTorch 2.x and transformers 5)

For each config (one decoder layer, batch 2, sequence 64, random weights): the SDPA call's query and key shapes,
mask, dropout, is_causal and enable_gqa, eager and with the capture flag forced on; then the aten ops of one forward
and backward whose counts differ. The flag is forced by replacing torch.cuda.is_current_stream_capturing for the
call; nothing else changes.
"""
import collections
import json
import sys

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode


class OpCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def build(path):
    import transformers
    d = json.loads(open(path).read())
    d.update(num_hidden_layers=1, n_layer=1)  # one layer shows the per-layer difference (key names differ by model)
    config = transformers.AutoConfig.for_model(d.pop("model_type"), **d)
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(config).train()


def step(model, capturing):
    """(SDPA calls, aten op counts) of one forward and backward with the capture flag set as given."""
    calls, plain_sdpa, plain_flag = [], F.scaled_dot_product_attention, torch.cuda.is_current_stream_capturing

    def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, **kw):
        mask = None if attn_mask is None else f"{tuple(attn_mask.shape)} {str(attn_mask.dtype).split('.')[-1]}"
        calls.append(f"q {tuple(q.shape)} k {tuple(k.shape)} mask {mask} dropout {dropout_p} is_causal {is_causal} "
                     f"enable_gqa {kw.get('enable_gqa', False)}")
        return plain_sdpa(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, **kw)
    F.scaled_dot_product_attention = sdpa
    torch.cuda.is_current_stream_capturing = lambda: capturing
    try:
        ids = torch.zeros(2, 64, dtype=torch.long)
        model.zero_grad(set_to_none=True)  # both calls make the gradients (no accumulation into the first's)
        with OpCounter() as counter:
            model(input_ids=ids, labels=ids, use_cache=False).loss.backward()
    finally:
        F.scaled_dot_product_attention, torch.cuda.is_current_stream_capturing = plain_sdpa, plain_flag
    return calls, counter.counts


def main(paths):
    import transformers
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    for path in paths:
        model = build(path)
        (eager_calls, eager), (captured_calls, captured) = step(model, False), step(model, True)
        print(f"{path}:\n  eager:     {'; '.join(eager_calls)}\n  capturing: {'; '.join(captured_calls)}")
        print(f"  aten ops of one forward and backward: {sum(eager.values())} eager, {sum(captured.values())} "
              "capturing; those that differ:")
        for op in sorted(set(eager) | set(captured)):
            if eager[op] != captured[op]:
                print(f"    {op}: {eager[op]} -> {captured[op]}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))

"""Records one training step of a workload (model_specs.py) on fake tensors and returns the trace document.

Order of work: build the model inside a FakeTensorMode, set its numerics and checkpointing, take one unrecorded
step (training_step.warm_up), then register everything that lives before the step (parameters, buffers, gradients,
optimizer state, inputs) with the recorder and record the second step with the garbage collector off, so that
storages are freed by reference counts alone, in program order.
"""
import gc
import os

import torch
from torch import nn

import model_specs
from model_specs import SpecError, build_workload
from step_recorder import StepRecorder
from torch_compat import (DATA_DEPENDENT_ERRORS, cast_floating, checkpoint_hooks_seen, make_fake_mode,
                          no_profiler_annotations)
from training_step import LossScale, apply_checkpointing, check_precision_supported, make_optimizer, run_step, warm_up

TRACER_DIR = os.path.dirname(os.path.abspath(__file__))
TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))


class TracerDefect(Exception):
    """The tracer itself failed (not the user's model): exit 1."""


def find_blocks(model):
    """The model's blocks, what checkpointing segments: modules of a class of the model's own (not torch.nn's) that
    a Sequential, ModuleList or ModuleDict holds two or more of (ResNet's BasicBlocks, a decoder's layers), the
    outermost only. [(qualified name, module)] in definition order."""
    containers = (nn.Sequential, nn.ModuleList, nn.ModuleDict)
    found = []

    def visit(prefix, module, inside):
        children = list(module.named_children())
        for name, child in children:
            path = f"{prefix}.{name}" if prefix else name
            is_block = (not inside and isinstance(module, containers)
                        and not type(child).__module__.startswith("torch.nn")
                        and sum(type(c) is type(child) for _, c in children) >= 2)
            if is_block:
                found.append((path, child))
            visit(path, child, inside or is_block)

    visit("", model, False)
    return found


def _where(exc, script):
    """Where an error of the step happened: the user's script when it is in the traceback, else the innermost
    frame outside torch and the tracer (the model's library code), else the innermost."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    if script is not None:
        return model_specs.where_in(exc, script)
    outside = [f for f in frames if not os.path.abspath(f.filename).startswith((TORCH_DIR, TRACER_DIR))]
    f = (outside or frames or [None])[-1]
    return f"{f.filename} line {f.lineno}" if f is not None else "?"


def _is_tracer_defect(exc):
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(TRACER_DIR)


def _guarded(what, script, fn):
    """Runs fn(); the model's and the user's errors become SpecErrors naming where they happened."""
    try:
        return fn()
    except (SpecError, ModuleNotFoundError):
        raise
    except DATA_DEPENDENT_ERRORS as e:
        raise SpecError(f"{_where(e, script)}: {what} reads a tensor's value (.item(), a tensor in an `if`, a size "
                        f"that depends on values), which a fake tensor does not have ({type(e).__name__})") from None
    except Exception as e:
        if _is_tracer_defect(e):
            raise TracerDefect(f"{type(e).__name__}: {e} ({_where(e, None)})") from e
        raise SpecError(f"{_where(e, script)}: {what} raised {type(e).__name__}: {e}") from None


def _register_existing(recorder, params, model, optimizer, scaler, inputs):
    param_sid = {}
    for name, p in params:
        param_sid[name] = recorder.register_existing(p, "parameter", name)
    for name, b in model.named_buffers():
        recorder.register_existing(b, "buffer", name)
    for name, p in params:
        if p.grad is not None:
            recorder.register_existing(p.grad, "gradient", name + ".grad", grad_of=param_sid[name])
    name_of = {id(p): n for n, p in params}
    for p, state in optimizer.state.items():
        for key, v in state.items():
            if isinstance(v, torch.Tensor):
                sid = recorder.register_existing(v, "optimizer_state", f"{name_of.get(id(p), '?')}.{key}")
                if key == "step" and v.dim() == 0:
                    # A foreach Adam keeps its step counts on the host unless capturable or fused: no device memory.
                    recorder.storages[sid]["host"] = True
    if scaler is not None:
        recorder.register_existing(scaler.scale, "optimizer_state", "grad_scaler.scale")
        recorder.register_existing(scaler.growth_tracker, "optimizer_state", "grad_scaler.growth_tracker")
    for name, t in inputs.items():
        recorder.register_existing(t, "input", name)
    return param_sid


def _order_blocks(recorder, block_names):
    """Renumbers blocks in the order the forward pass first enters them (what checkpointing segments)."""
    order = []
    for op in recorder.ops:
        b = op.get("block")
        if b is not None and op["phase"] == "forward" and b not in order:
            order.append(b)
    index = {b: i for i, b in enumerate(order)}
    for op in recorder.ops:
        if "block" in op:
            if op["block"] in index:
                op["block"] = index[op["block"]]
            else:
                del op["block"]
    return [block_names[b] for b in order]


def record(spec, batch, seq_len, image_size, precision, optimizer_name, checkpointing, weight_decay=None):
    """-> (workload, recorder, blocks, step settings). Raises SpecError for the user's mistakes. `weight_decay`
    None: the optimizer's default."""
    check_precision_supported(precision)
    with no_profiler_annotations():
        return _record(spec, batch, seq_len, image_size, precision, optimizer_name, checkpointing, weight_decay)


def _record(spec, batch, seq_len, image_size, precision, optimizer_name, checkpointing, weight_decay):
    script = spec.rpartition(":")[0] if spec.rpartition(":")[0].endswith(".py") else None
    fake_mode = make_fake_mode()
    with fake_mode:
        workload = _guarded("building the model", script, lambda: build_workload(spec, batch, seq_len, image_size))
        model = workload.model
        model.train()
        if precision == "bf16":
            cast_floating(model, torch.bfloat16)
        block_list = find_blocks(model)
        ckpt = apply_checkpointing(checkpointing, model, [m for _, m in block_list])
        params = [(n, p) for n, p in model.named_parameters()]
        optimizer = make_optimizer(optimizer_name, [p for _, p in params if p.requires_grad], weight_decay)
        device = params[0][1].device if params else torch.device("cpu")
        scaler = LossScale(device) if precision == "mixed-fp16" else None

    recorder = StepRecorder({id(m): n for n, m in model.named_modules()},
                            {id(m): i for i, (_, m) in enumerate(block_list)})
    with fake_mode, recorder:
        _guarded("the first (unrecorded) step", script,
                 lambda: warm_up(workload, optimizer, precision, scaler, recorder))
    hooks = [nn.modules.module.register_module_forward_pre_hook(recorder.module_pre_hook),
             nn.modules.module.register_module_forward_hook(recorder.module_post_hook)]
    gc.collect()
    gc.disable()
    try:
        with fake_mode, recorder:
            param_sid = _register_existing(recorder, params, model, optimizer, scaler, workload.inputs)

            def name_gradients():
                for name, p in params:
                    if p.grad is not None:
                        recorder.mark(p.grad, "gradient", name + ".grad", grad_of=param_sid[name])

            recorder.recording = True
            with checkpoint_hooks_seen(recorder.checkpoint_hooks_entered, recorder.checkpoint_hooks_exited), \
                    torch.autograd.graph.saved_tensors_hooks(recorder.pack, recorder.unpack):
                _guarded("the recorded step", script,
                         lambda: run_step(workload, optimizer, precision, scaler, recorder, name_gradients))
            recorder.finish()
    finally:
        for h in hooks:
            h.remove()
        gc.enable()
    blocks = _order_blocks(recorder, [n for n, _ in block_list])
    settings = {"zero_grad_set_to_none": True, "checkpointing": ckpt,
                "parameters": sum(p.numel() for _, p in params)}
    return workload, recorder, blocks, settings


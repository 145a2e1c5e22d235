#!/usr/bin/python3
"""dlsim import-torch: records one training step of a PyTorch model on fake tensors into a trace file.

The dlsim binary runs this script (`dlsim import-torch SPEC --batch B ... --out FILE`, docs/torch-step.md) with the
Python that DLSIM_PYTHON or --python names; it may also be run directly with the same arguments. It runs with
Debian's torch 1.13 (+ torchvision) and with PyTorch 2.x (+ transformers) from PyPI.

Exit codes as dlsim's (docs/cli.md): 0 written; 2 a mistake in what was asked (a SPEC that names nothing, a script
or model that raises, data-dependent control flow, a config the installed transformers does not know), one line
naming what and where; 3 a package missing (torch, torchvision, transformers); 1 a defect of the tracer. On any
failure no trace is written (an existing file at --out is left as it was).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

PROG = "dlsim import-torch"


def parse(argv):
    from training_step import CHECKPOINTING, OPTIMIZERS, PRECISIONS  # no torch import: `--help` works without it
    p = argparse.ArgumentParser(prog=PROG, description="record one training step of a PyTorch model on fake tensors")
    p.add_argument("spec", metavar="SPEC", help="torchvision:NAME, hf:CONFIG.json or FILE.py:FUNCTION")
    p.add_argument("--batch", type=int, required=True, help="the batch size")
    p.add_argument("--seq-len", type=int, default=0, help="tokens per sequence (token models)")
    p.add_argument("--image-size", type=int, default=0, help="image side (image models; default the model's)")
    p.add_argument("--precision", default="fp32", choices=PRECISIONS)
    p.add_argument("--optimizer", default="sgd-momentum", choices=OPTIMIZERS)
    p.add_argument("--checkpointing", default="none", choices=CHECKPOINTING)
    p.add_argument("--weight-decay", type=float, default=None,
                   help="the optimizer's weight_decay (default: its own, 0.01 for adamw, none for sgd-momentum "
                        "and adam)")
    p.add_argument("--out", required=True, help="the trace file to write (NAME.torchstep.json)")
    a = p.parse_args(argv)
    if a.weight_decay is not None and not 0 <= a.weight_decay < 1:  # also refuses nan
        p.error(f"--weight-decay must be in [0, 1), got {a.weight_decay}")
    for flag, value in (("--batch", a.batch), ("--seq-len", a.seq_len), ("--image-size", a.image_size)):
        if value < 0 or (flag == "--batch" and value == 0):
            p.error(f"{flag} must be {'positive' if flag == '--batch' else 'positive or 0'}, got {value}")
    return a


def main(argv):
    a = parse(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.stderr.write(f"{PROG}: {sys.executable} has no torch (Debian: apt-get install python3-torch; or name a "
                         f"Python that has it with --python or DLSIM_PYTHON)\n")
        return 3
    import step_file
    import step_trace
    from model_specs import SpecError
    from torch_compat import versions
    from training_step import default_weight_decay

    try:
        workload, recorder, blocks, settings = step_trace.record(a.spec, a.batch, a.seq_len, a.image_size,
                                                                 a.precision, a.optimizer, a.checkpointing,
                                                                 a.weight_decay)
    except SpecError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 2
    except ModuleNotFoundError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 3
    except step_trace.TracerDefect as e:
        sys.stderr.write(f"{PROG}: internal error: {e}\n")
        return 1
    if recorder.premature_frees or recorder.unseen_frees:
        # The storage accounting missed a holder of some tensor: the trace would be wrong, so none is written.
        sys.stderr.write(f"{PROG}: internal error: {recorder.premature_frees} storages read after their recorded "
                         f"free and {recorder.unseen_frees} freed unseen: the recorded lifetimes are not exact\n")
        return 1
    step = {"spec": a.spec, "model": workload.name, "batch": a.batch, "seq_len": a.seq_len or None,
            "precision": a.precision, "optimizer": a.optimizer,
            "weight_decay": default_weight_decay(a.optimizer) if a.weight_decay is None else a.weight_decay,
            "device": "cpu", "info": workload.info}
    doc = step_file.document(versions(), step, blocks, recorder, settings)
    try:
        step_file.write(a.out, doc)
    except OSError as e:
        sys.stderr.write(f"{PROG}: {e.filename}: {e.strerror}\n")
        return 2
    s = doc["summary"]
    print(f"recorded {a.spec} (batch {a.batch}): {s['ops']} ops, {s['storages']} storages, {s['parameters']} "
          f"parameters, {s['saved_for_backward_bytes']} bytes saved for backward, peak live {s['peak_live_bytes']} "
          f"bytes; wrote {a.out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)

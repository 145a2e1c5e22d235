"""The check of torch_concurrency_reference.py that needs no GPU (--dry-run): one training step of each model under
each schedule at batch 2 on small images, compared with the serial schedule's step. On the CPU the streams are
no-ops, so this proves the block rewrites compute the plain model's function (loss, logits, every gradient and
the weights after the optimizer step); on a GPU it is also a quick smoke test of the stream wiring.
"""
import json

import torch
import torch.nn.functional as F

from torch_concurrency_schedules import StreamKit, apply_schedule

# The rewrites run the very same kernels on the CPU, so they should agree to rounding; the bound leaves room for
# a backend that picks a different algorithm for a weight-only or input-only convolution backward.
DRY_RTOL, DRY_ATOL = 1e-4, 1e-6


def _one_step(model_name, schedule, device, size, build_model):
    kit = StreamKit(device)
    model = build_model(model_name)
    streams = apply_schedule(model, schedule, kit)
    model = model.to(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator(device=device)
    gen.manual_seed(1)
    x = torch.randn(2, 3, size, size, generator=gen, device=device)
    y = torch.randint(0, 1000, (2,), generator=gen, device=device)
    torch.manual_seed(0)  # the same dropout masks in every schedule
    opt.zero_grad(set_to_none=True)
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    weights = {n: p.detach().clone() for n, p in model.named_parameters()}
    return {"loss": loss.detach(), "out": out.detach(), "grads": grads, "weights": weights, "streams": streams}


def _max_rel(a, b):
    return ((a - b).abs() / (b.abs() + DRY_ATOL / DRY_RTOL)).max().item() if a.numel() else 0.0


def _compare(got, ref):
    """Names what differs between two steps, or returns an empty list."""
    problems = []
    for key in ("loss", "out"):
        if not torch.allclose(got[key], ref[key], rtol=DRY_RTOL, atol=DRY_ATOL):
            problems.append("%s differs (max rel %.3g)" % (key, _max_rel(got[key], ref[key])))
    for key in ("grads", "weights"):
        if set(got[key]) != set(ref[key]):
            problems.append("%s: different parameter sets" % key)
            continue
        bad = [n for n in ref[key] if not torch.allclose(got[key][n], ref[key][n], rtol=DRY_RTOL, atol=DRY_ATOL)]
        if bad:
            problems.append("%s differ for %d of %d parameters, e.g. %s (max rel %.3g)"
                            % (key, len(bad), len(ref[key]), bad[0], _max_rel(got[key][bad[0]], ref[key][bad[0]])))
    return problems


def dry_run(args, cases, schedules_of, image_size, build_model):
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("--dry-run --device %s: no CUDA device here" % args.device)
        return 3
    rows, failed = [], False
    for model_name in sorted({m for m, _ in cases}):
        size = args.image_size or image_size[model_name]
        ref = _one_step(model_name, "serial", device, size, build_model)
        for schedule in schedules_of[model_name]:
            if args.schedules is not None and schedule not in args.schedules:
                continue
            row = {"model": model_name, "batch": 2, "image_size": size, "schedule": schedule, "mode": "dry-run"}
            try:
                got = ref if schedule == "serial" else _one_step(model_name, schedule, device, size, build_model)
                problems = _compare(got, ref)
                row.update(status="ok" if not problems else "mismatch", streams=got["streams"],
                           loss=got["loss"].item(), grads_compared=len(ref["grads"]),
                           matches_serial=not problems, problems=problems)
            except Exception as e:  # e.g. an old PyTorch without an operator a schedule needs
                row.update(status="error", error="%s: %s" % (type(e).__name__, e), matches_serial=None)
            failed |= row["status"] != "ok"
            rows.append(row)
            print("%-13s %-15s %-8s loss=%s grads=%s %s" % (model_name, schedule, row["status"], row.get("loss"),
                  row.get("grads_compared"), "; ".join(row.get("problems", [])) or row.get("error", "")), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"meta": {"torch": torch.__version__, "device": args.device, "dry_run": True},
                       "rows": rows}, f, indent=1, sort_keys=True)
            f.write("\n")
    return 1 if failed else 0

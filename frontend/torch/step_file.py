"""The trace file: what a recorded step becomes on disk (docs/torch-step.md documents every field).

A JSON object whose `format` is "dlsim-torch-step" and `version` FORMAT_VERSION; a reader refuses any other. It is
written whole or not at all (a temporary file renamed over the target), one op per line so that two traces diff.
The `summary` holds PyTorch's own count of the step (from the recorded storages, nothing estimated): what the
loader's graph and the zoo are compared with.
"""
import contextlib
import json
import os

FORMAT = "dlsim-torch-step"
FORMAT_VERSION = 1


def _alive(storage, k):
    """Whether the storage holds memory while op k runs (freed_at k: freed before op k began)."""
    alloc, free = storage["allocated_at"], storage["freed_at"]
    if alloc is not None and alloc > k:
        return False
    return free is None or free > k or (alloc is not None and free == alloc == k)


def summarize(storages, ops, saved, parameters):
    """PyTorch's own figures of the recorded step, device memory only (host-resident step counts excluded)."""
    device = [s for s in storages if not s.get("host")]
    by_kind = {}
    for s in device:
        if s["allocated_at"] is None:
            by_kind[s["kind"]] = by_kind.get(s["kind"], 0) + s["bytes"]
    # Live bytes by op: +bytes where a storage starts, -bytes where it ends (a difference array, one pass).
    n = len(ops)
    delta = [0] * (n + 1)
    base = 0
    for s in device:
        start = 0 if s["allocated_at"] is None else s["allocated_at"]
        end = n if s["freed_at"] is None else max(s["freed_at"], start + 1)
        if s["allocated_at"] is None:
            if end > 0:  # alive when the step begins
                base += s["bytes"]
                delta[end] -= s["bytes"]
        else:
            delta[start] += s["bytes"]
            delta[end] -= s["bytes"]
    peak, peak_at, live = 0, None, base
    for k in range(n):
        live += delta[k]
        if live > peak:
            peak, peak_at = live, k
    forward_saved = {r["storage"] for r in saved if r["phase"] == "forward"}
    saved_bytes = sum(storages[s]["bytes"] for s in forward_saved if storages[s]["kind"] == "activation")
    return {"parameters": parameters, "existing_bytes_by_kind": dict(sorted(by_kind.items())),
            "saved_for_backward_bytes": saved_bytes, "peak_live_bytes": peak, "peak_at_op": peak_at,
            "ops": n, "storages": len(storages)}


def document(versions, step, blocks, recorder, settings):
    storages = recorder.storages
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "producer": dict(versions, tracer="frontend/torch/import_torch.py"),
        "step": dict(step, **{k: v for k, v in settings.items() if k != "parameters"}),
        "summary": dict(summarize(storages, recorder.ops, recorder.saved, settings["parameters"]),
                        premature_frees=recorder.premature_frees, unseen_frees=recorder.unseen_frees),
        "blocks": blocks,
        "storages": storages,
        "saved": recorder.saved,
        "ops": recorder.ops,
    }


def _dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def text_of(doc):
    """The file's text: the header fields one per line, then each storage, saved tensor and op on its own line."""
    lines = ["{"]
    keys = list(doc)
    for i, key in enumerate(keys):
        end = "," if i + 1 < len(keys) else ""
        value = doc[key]
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{_dumps(key)}:[")
            lines.extend(_dumps(v) + ("," if j + 1 < len(value) else "") for j, v in enumerate(value))
            lines.append("]" + end)
        else:
            lines.append(f"{_dumps(key)}:{_dumps(value)}{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(path, doc):
    """Writes the trace whole or not at all."""
    text = text_of(doc)
    folder, name = os.path.split(os.path.abspath(path))
    temp = os.path.join(folder, f".{name[:160]}.tmp-{os.getpid()}")
    try:
        with open(temp, "w", encoding="ascii") as f:
            f.write(text)
        os.replace(temp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise OSError(e.errno, e.strerror, path) from None

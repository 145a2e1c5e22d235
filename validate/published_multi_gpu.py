#!/usr/bin/env python3
"""The published multi-GPU figures of results/multi-gpu/published.yaml (issue 32): read strictly, checked, tabled.

Every entry is checked against the schema its file's header describes: a missing, unknown or ill-typed field is an
error naming the file, the line, the entry and the dotted field. Beyond the schema:
  - ids are unique and `source` names an entry of `sources`;
  - a figure's `value` is the number its `as_published` string prints (so the two cannot drift apart);
  - the layout's degrees multiply to the GPU count, and local batch x data-parallel ranks = global batch, where the
    entry gives them;
  - `dlsim.model` is a zoo name of workloads/zoo.cc or "config.json:<Hub repo>", `dlsim.hardware` a configs/hw
    file, and `missing` is empty exactly when the status is `reproducible`;
  - each `checks` item recomputes a published figure from the others (torchtitan's MFU and Megatron-Bridge's model
    TFLOP/s from tokens/s and the model's shapes, MFU from TFLOP/s, aggregate throughput, ZeRO's model-state bytes,
    DeepSpeed's estimator) and compares
    them with the rounding of the printed numbers: both sides are intervals (a printed "5,762" is 5761.5 to
    5762.5) and they must overlap, or must not where the entry says `expect: disagree` and why.

  python3 validate/published_multi_gpu.py [FILE]             check (default: results/multi-gpu/published.yaml)
  python3 validate/published_multi_gpu.py --markdown [FILE]  print the published table of results/multi-gpu.md
Exit 0 when the file is sound, 1 with every error listed otherwise. Needs python3-yaml only.
"""
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "results", "multi-gpu", "published.yaml")

NULL, INT, NUM, STR, BOOL, LIST, MAP = "null", "int", "number", "string", "bool", "list", "map"

# Field: (allowed types, enumeration or None). A type tuple without NULL makes the field non-nullable.
SOURCE = {"title": ((STR,), None), "url": ((STR,), None), "path": ((STR, NULL), None),
          "commit": ((STR, NULL), None), "version": ((STR,), None), "read_via": ((STR,), None)}
MODEL = {"name": ((STR,), None), "arch": ((STR,), {"llama", "gpt", "t5", "unspecified"}),
         "params": ((STR, NULL), None), "layers": ((INT, NULL), None), "hidden": ((INT, NULL), None),
         "heads": ((INT, NULL), None), "kv_heads": ((INT, NULL), None), "ffn": ((INT, NULL), None),
         "vocab": ((INT, NULL), None), "seq_len": ((INT, NULL), None)}
HARDWARE = {"gpu": ((STR,), None), "gpu_memory_gb": ((NUM, NULL), None), "gpus": ((INT, LIST, NULL), None),
            "gpus_per_node": ((INT, NULL), None), "nodes": ((INT, NULL), None), "intra_node": ((STR, NULL), None),
            "inter_node": ((STR, NULL), None)}
LAYOUT = {"dp": ((INT, NULL), None), "fsdp": ((INT, NULL), None), "zero_stage": ((INT, NULL), {0, 1, 2, 3}),
          "tp": ((INT, NULL), None), "pp": ((INT, NULL), None), "cp": ((INT, NULL), None), "sp": ((BOOL, NULL), None),
          "reshard_after_forward": ((BOOL, NULL), None),
          "offload": ((STR, NULL), {"none", "optimizer", "optimizer+params", "nvme"})}
TRAINING = {"precision": ((STR, NULL), {"fp32", "fp16", "bf16", "bf16+float8"}),
            "mixed_precision": ((STR, NULL), None),
            "activation_checkpointing": ((STR,), {"none", "full", "selective-op", "selective-layer", "unspecified"}),
            "local_batch": ((INT, NULL), None), "global_batch": ((INT, NULL), None), "grad_accum": ((INT, NULL), None),
            "optimizer": ((STR, NULL), None),
            "compile": ((BOOL, NULL), None), "float8": ((BOOL, NULL), None), "async_tp": ((BOOL, NULL), None),
            "other": ((LIST,), None)}
UNITS = {"tokens_per_s_per_gpu": {"tokens/s"}, "tflops_per_gpu": {"TFLOP/s"}, "mfu": {"%"},
         "aggregate_pflops": {"PFLOP/s"}, "peak_memory": {"GiB"}, "model_state_memory": {"GB", "GiB"},
         "max_model_params": {"B"}, "oom": {"-"}, "relative_change": {"%"}}
FIGURE = {"quantity": ((STR,), set(UNITS)), "value": ((NUM, BOOL), None), "unit": ((STR,), None),
          "as_published": ((STR,), None), "stat": ((STR,), None)}
FIGURE_OPTIONAL = {"stat"}
DLSIM = {"status": ((STR,), {"reproducible", "partly", "not-modelled"}), "model": ((STR, NULL), None),
         "hardware": ((STR, NULL), None), "layout": ((STR, NULL), None), "local_batch": ((INT, NULL), None),
         "seq_len": ((INT, NULL), None), "missing": ((LIST,), None)}
POINT = {"id": ((STR,), None), "kind": ((STR,), {"measured", "analytic", "estimator"}), "source": ((STR,), None),
         "locator": ((STR,), None), "model": ((MAP,), MODEL), "hardware": ((MAP,), HARDWARE),
         "layout": ((MAP,), LAYOUT), "training": ((MAP,), TRAINING), "software": ((STR, NULL), None),
         "figures": ((LIST,), None), "checks": ((LIST,), None), "dlsim": ((MAP,), DLSIM), "notes": ((STR,), None)}
POINT_OPTIONAL = {"checks"}
CHECKS = {  # formula -> its parameters (all required) besides formula, expect and why
    "mfu_from_tokens": {"params": ((STR,), {"total", "non_embedding"}), "peak_tflops": ((NUM,), None),
                        "published": ((STR,), None)},
    "mfu_from_tflops": {"peak_tflops": ((NUM,), None)},
    "tflops_from_tokens": {"params": ((STR,), {"total", "non_embedding"}), "attention": ((STR,), {"full", "causal"})},
    "aggregate_pflops": {},
    "tokens_per_batch": {"published": ((STR,), None), "multiplier": ((INT,), None)},
    "zero_model_states": {"psi": ((NUM,), None), "stage": ((INT,), {0, 1, 2, 3}), "k": ((INT,), None)},
    "deepspeed_estimator": {"stage": ((INT,), {2, 3}), "params": ((NUM,), None),
                            "largest_layer_params": ((NUM,), None), "offload_optimizer": ((BOOL,), None),
                            "offload_param": ((BOOL,), None)},
}
CHECK_OPTIONAL = {"published", "why"}


class Node:
    """A YAML value with the line it starts on (1-based); maps and lists hold Nodes."""

    def __init__(self, value, line, kind):
        self.value, self.line, self.kind = value, line, kind


def _scalar(node):
    value = _LOADER.construct_object(node)
    line = node.start_mark.line + 1
    if value is None:
        return Node(None, line, NULL)
    for kind, py in ((BOOL, bool), (INT, int), (NUM, float), (STR, str)):
        if isinstance(value, py):
            return Node(value, line, kind)
    return Node(str(value), line, type(value).__name__)  # a date or the like: no field takes it


_LOADER = yaml.SafeLoader("")


def _convert(node, path, errors, where):
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = {}
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            if key is None or key in out:
                errors.append(f"{where}:{k.start_mark.line + 1}: {path or 'top level'}: "
                              f"{'a duplicate key ' + repr(key) if key else 'a key that is not a string'}")
                continue
            out[key] = _convert(v, f"{path}.{key}" if path else key, errors, where)
        return Node(out, line, MAP)
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(v, path, errors, where) for v in node.value], line, LIST)
    return _scalar(node)


def plain(node):
    """The Node tree as plain Python values."""
    if node.kind == MAP:
        return {k: plain(v) for k, v in node.value.items()}
    if node.kind == LIST:
        return [plain(v) for v in node.value]
    return node.value


def load(path):
    """(top-level Node or None, errors). YAML syntax errors and duplicate keys are errors, not exceptions."""
    errors = []
    try:
        with open(path, encoding="utf-8") as f:
            tree = yaml.compose(f, Loader=yaml.SafeLoader)
    except OSError as e:
        return None, [f"{path}: cannot read: {e.strerror}"]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        return None, [f"{path}:{mark.line + 1 if mark else 0}: not YAML: {getattr(e, 'problem', e)}"]
    if tree is None:
        return None, [f"{path}:1: empty file"]
    return _convert(tree, "", errors, path), errors


class Checker:
    def __init__(self, path, root=ROOT):
        self.path, self.root, self.errors = path, root, []
        self.zoo = set(re.findall(r'^\s*\{"([a-z0-9.\-_]+)",', _read(os.path.join(root, "workloads", "zoo.cc")), re.M))

    def err(self, node, entry, field, msg):
        where = f"entry '{entry}'" if entry else "top level"
        self.errors.append(f"{self.path}:{node.line}: {where}: field '{field}': {msg}")

    def fields(self, node, spec, entry, prefix, optional=()):
        """Type- and enum-check a map against spec; returns its plain dict (None when it is not a map)."""
        if node.kind != MAP:
            self.err(node, entry, prefix, f"must be a map, got {node.kind}")
            return None
        for key, child in node.value.items():
            if key not in spec:
                self.err(child, entry, f"{prefix}.{key}" if prefix else key,
                         f"unknown field (known: {', '.join(sorted(spec))})")
        for key, (types, enum) in spec.items():
            name = f"{prefix}.{key}" if prefix else key
            if key not in node.value:
                if key not in optional:
                    self.err(node, entry, name, "missing")
                continue
            child = node.value[key]
            ok = child.kind in types or (child.kind == INT and NUM in types)
            if not ok:
                self.err(child, entry, name, f"must be {' or '.join(types)}, got {child.kind} {child.value!r}")
            elif isinstance(enum, set) and child.kind != NULL and child.value not in enum:
                self.err(child, entry, name, f"{child.value!r} is not one of {', '.join(sorted(map(str, enum)))}")
            elif isinstance(enum, dict) and child.kind == MAP:
                self.fields(child, enum, entry, name)
        return plain(node)

    def run(self, top):
        spec = {"schema_version": ((INT,), {1}), "sources": ((MAP,), None), "points": ((LIST,), None)}
        doc = self.fields(top, spec, None, "")
        if doc is None or not isinstance(doc.get("sources"), dict) or not isinstance(doc.get("points"), list):
            return
        for key, node in top.value["sources"].value.items():
            self.fields(node, SOURCE, None, f"sources.{key}")
        seen = {}
        for node in top.value["points"].value:
            entry = node.value.get("id").value if node.kind == MAP and "id" in node.value else f"(line {node.line})"
            if isinstance(entry, str) and entry in seen:
                self.err(node, entry, "id", f"duplicate of the entry at line {seen[entry]}")
            seen[entry] = node.line
            self.point(node, entry, set(doc["sources"]))

    def point(self, node, entry, sources):
        before = len(self.errors)
        p = self.fields(node, POINT, entry, "", POINT_OPTIONAL)
        if p is None:
            return
        nv = node.value
        if isinstance(p.get("id"), str) and not re.fullmatch(r"[a-z0-9][a-z0-9-]*", p["id"]):
            self.err(nv["id"], entry, "id", "must match [a-z0-9][a-z0-9-]*")
        if isinstance(p.get("source"), str) and p["source"] not in sources:
            self.err(nv["source"], entry, "source", f"'{p['source']}' is not a key of sources")
        figures = self.figures(nv.get("figures"), entry)
        if len(self.errors) > before:  # the cross-checks below read fields the schema has vouched for
            return
        self.layout(nv, p, entry)
        self.dlsim(nv["dlsim"], p["dlsim"], entry)
        if "checks" in nv and nv["checks"].kind == LIST:
            for i, c in enumerate(nv["checks"].value):
                self.check(c, f"checks[{i}]", entry, p, figures)

    def figures(self, node, entry):
        out = {}
        if node is None or node.kind != LIST:
            return out
        if not node.value:
            self.err(node, entry, "figures", "must hold at least one figure")
        for i, f in enumerate(node.value):
            name = f"figures[{i}]"
            fig = self.fields(f, FIGURE, entry, name, FIGURE_OPTIONAL)
            if fig is None or any(k not in fig for k in ("quantity", "value", "unit", "as_published")):
                continue
            q = fig["quantity"]
            if q in UNITS and fig["unit"] not in UNITS[q]:
                self.err(f.value["unit"], entry, f"{name}.unit", f"{q} is in {' or '.join(sorted(UNITS[q]))}")
            if q in out:
                self.err(f, entry, f"{name}.quantity", f"{q} appears twice")
            printed = parse_printed(fig["as_published"])
            if q == "oom":
                if fig["value"] is not True or fig["as_published"] != "OOM":
                    self.err(f, entry, name, "an oom figure has value true and as_published \"OOM\"")
            elif isinstance(fig["value"], bool) or printed is None:
                self.err(f.value["as_published"], entry, f"{name}.as_published",
                         f"{fig['as_published']!r} holds no number for {q}")
            elif abs(printed[0] - fig["value"]) > 1e-9 * max(1.0, abs(printed[0])):
                self.err(f.value["value"], entry, f"{name}.value",
                         f"{fig['value']} is not the printed {fig['as_published']!r} ({printed[0]:g})")
            out[q] = (fig["value"], printed[1] if printed else 0.0, f)
        return out

    def layout(self, nv, p, entry):
        lay, hw, tr = p["layout"], p["hardware"], p["training"]
        for k in ("dp", "fsdp", "tp", "pp", "cp"):
            if isinstance(lay.get(k), int) and lay[k] < 1:
                self.err(nv["layout"].value[k], entry, f"layout.{k}", f"a degree is at least 1, got {lay[k]}")
        if hw.get("gpus") is not None:
            counts = hw["gpus"] if isinstance(hw["gpus"], list) else [hw["gpus"]]
            if not counts or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in counts):
                self.err(nv["hardware"].value["gpus"], entry, "hardware.gpus", "GPU counts are integers >= 1")
                return
        degrees = [lay.get(k) for k in ("dp", "fsdp", "tp", "pp", "cp")]
        data = [d for d in (lay.get("dp"), lay.get("fsdp")) if isinstance(d, int)]
        if isinstance(hw.get("gpus"), int) and data and all(isinstance(d, int) for d in degrees[2:]):
            product = 1
            for d in degrees:
                product *= d if isinstance(d, int) else 1
            if product != hw["gpus"]:
                self.err(nv["layout"], entry, "layout", f"dp x fsdp x tp x pp x cp = {product}, "
                                                        f"not hardware.gpus {hw['gpus']}")
        if isinstance(hw.get("gpus"), int) and isinstance(hw.get("nodes"), int) and \
                isinstance(hw.get("gpus_per_node"), int) and hw["nodes"] * hw["gpus_per_node"] != hw["gpus"]:
            self.err(nv["hardware"], entry, "hardware", "nodes x gpus_per_node is not gpus")
        ranks = 1
        for d in data:
            ranks *= d
        accum = tr.get("grad_accum")
        if data and isinstance(tr.get("local_batch"), int) and isinstance(tr.get("global_batch"), int) and \
                isinstance(accum, int) and tr["local_batch"] * ranks * accum != tr["global_batch"]:
            self.err(nv["training"].value["global_batch"], entry, "training.global_batch",
                     f"local_batch {tr['local_batch']} x {ranks} data-parallel ranks x grad_accum {accum} is not "
                     f"{tr['global_batch']}")

    def dlsim(self, node, d, entry):
        model, hwname, status, missing = d.get("model"), d.get("hardware"), d.get("status"), d.get("missing")
        if isinstance(model, str) and model not in self.zoo and \
                not re.fullmatch(r"config\.json:[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+", model):
            self.err(node.value["model"], entry, "dlsim.model",
                     f"'{model}' is neither a zoo name of workloads/zoo.cc nor config.json:<org>/<repo>")
        if isinstance(hwname, str) and not os.path.isfile(os.path.join(self.root, "configs", "hw", hwname + ".yaml")):
            self.err(node.value["hardware"], entry, "dlsim.hardware", f"no configs/hw/{hwname}.yaml")
        if isinstance(missing, list):
            if not all(isinstance(m, str) and m for m in missing):
                self.err(node.value["missing"], entry, "dlsim.missing", "items are non-empty strings")
            elif status == "reproducible" and missing:
                self.err(node.value["missing"], entry, "dlsim.missing", "a reproducible point misses nothing")
            elif status in ("partly", "not-modelled") and not missing:
                self.err(node.value["missing"], entry, "dlsim.missing", f"status {status} must say what is missing")

    def check(self, node, name, entry, p, figures):
        if node.kind != MAP or "formula" not in node.value or node.value["formula"].value not in CHECKS:
            self.err(node, entry, f"{name}.formula", f"one of {', '.join(CHECKS)}")
            return
        formula = node.value["formula"].value
        spec = dict(CHECKS[formula])
        spec.update({"formula": ((STR,), None), "expect": ((STR,), {"agree", "disagree"}), "why": ((STR,), None)})
        before = len(self.errors)
        c = self.fields(node, spec, entry, name, CHECK_OPTIONAL)
        if c is None or len(self.errors) > before:
            return
        if c["expect"] == "disagree" and not c.get("why"):
            self.err(node, entry, f"{name}.why", "an expected disagreement says why")
        try:
            got, published = compute(formula, c, p, figures)
        except KeyError as e:
            self.err(node, entry, name, f"{formula} needs {e.args[0]}")
            return
        lo, hi = got
        agree = lo <= published[0] + published[1] + 1e-9 and published[0] - published[1] <= hi + 1e-9
        shown = f"{formula} gives {lo:.6g} to {hi:.6g}, published {published[0]:g} +/- {published[1]:g}"
        if c["expect"] == "agree" and not agree:
            self.err(node, entry, name, shown + ": they disagree")
        if c["expect"] == "disagree" and agree:
            self.err(node, entry, name, shown + ": they agree, yet the entry expects a disagreement")


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def parse_printed(text):
    """(number, half a unit of its last printed digit) of a printed figure ("5,762", "61.1%", "more than 173",
    "15.93GB", "2.28B"), or None."""
    m = re.search(r"-?\d[\d,]*(\.\d+)?", text)
    if not m:
        return None
    digits = m.group(0).replace(",", "")
    decimals = len(m.group(1)) - 1 if m.group(1) else 0
    return float(digits), 0.5 * 10 ** -decimals


def parse_statement(text):
    """A check's `published` text: a printed figure, or a range "33% to 39%" (its middle, half its width plus the
    rounding of its ends)."""
    m = re.fullmatch(r"\s*(\S+?)\s+to\s+(\S+)\s*", text)
    if m and parse_printed(m.group(1)) and parse_printed(m.group(2)):
        (a, ha), (b, hb) = parse_printed(m.group(1)), parse_printed(m.group(2))
        return (a + b) / 2, abs(b - a) / 2 + max(ha, hb)
    return parse_printed(text)


def llama_params(m, which):
    h, L, heads, kv, ffn, vocab = (m[k] for k in ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab"))
    if None in (h, L, heads, kv, ffn, vocab) or m["arch"] != "llama":
        raise KeyError("a llama model with every shape given")
    d = h // heads
    layer = 2 * h * h + 2 * h * kv * d + 3 * h * ffn + 2 * h
    total = 2 * vocab * h + L * layer + h  # untied embedding and output, final norm
    return total if which == "total" else total - vocab * h  # torchtitan leaves out tok_embeddings only


def compute(formula, c, p, figures):
    """((low, high) of the recomputed figure, (published value, half unit)) for one check."""
    m, hw, lay, tr = p["model"], p["hardware"], p["layout"], p["training"]

    def fig(q):
        if q not in figures:
            raise KeyError(f"a {q} figure")
        return figures[q][0], figures[q][1]

    def published_or(q):
        return parse_statement(c["published"]) if c.get("published") else fig(q)

    if formula == "mfu_from_tokens":
        if m["seq_len"] is None:
            raise KeyError("model.seq_len")
        n = llama_params(m, c["params"])
        per_token = 6 * n + 12 * m["layers"] * m["heads"] * (m["hidden"] // m["heads"]) * m["seq_len"]
        tps, half = fig("tokens_per_s_per_gpu")
        scale = per_token / (c["peak_tflops"] * 1e12) * 100
        return ((tps - half) * scale, (tps + half) * scale), published_or("mfu")
    if formula == "tflops_from_tokens":  # model TFLOP/s as NVIDIA's Megatron-Bridge tables count them
        if m["seq_len"] is None:
            raise KeyError("model.seq_len")
        attention = (12 if c["attention"] == "full" else 6) * m["layers"] * m["hidden"] * m["seq_len"]
        per_token = 6 * llama_params(m, c["params"]) + attention
        tps, half = fig("tokens_per_s_per_gpu")
        return ((tps - half) * per_token / 1e12, (tps + half) * per_token / 1e12), fig("tflops_per_gpu")
    if formula == "mfu_from_tflops":
        t, half = fig("tflops_per_gpu")
        return ((t - half) / c["peak_tflops"] * 100, (t + half) / c["peak_tflops"] * 100), fig("mfu")
    if formula == "aggregate_pflops":
        if not isinstance(hw["gpus"], int):
            raise KeyError("hardware.gpus")
        t, half = fig("tflops_per_gpu")
        return ((t - half) * hw["gpus"] / 1000, (t + half) * hw["gpus"] / 1000), fig("aggregate_pflops")
    if formula == "tokens_per_batch":
        if tr["global_batch"] is None or m["seq_len"] is None:
            raise KeyError("training.global_batch and model.seq_len")
        value, half = parse_statement(c["published"])
        tokens = tr["global_batch"] * m["seq_len"] / c["multiplier"]
        return (tokens, tokens), (value, half)
    if formula == "zero_model_states":
        psi, k, nd = c["psi"], c["k"], lay["dp"]
        if nd is None:
            raise KeyError("layout.dp")
        stage = c["stage"]
        sharded = {0: 0, 1: k, 2: 2 + k, 3: 4 + k}[stage]
        gb = ((4 + k - sharded) * psi + sharded * psi / nd) / 1e9
        return (gb, gb), fig("model_state_memory")
    if formula == "deepspeed_estimator":
        psi, largest, gpus = c["params"], c["largest_layer_params"], hw["gpus"]
        if not isinstance(gpus, int):
            raise KeyError("hardware.gpus")
        if c["stage"] == 2:
            b = 2 * psi if c["offload_optimizer"] else 4 * psi + int(16 * psi / gpus)
        elif c["offload_param"]:
            b = 4 * largest
        else:
            b = 4 * largest + int((2 if c["offload_optimizer"] else 18) * psi / gpus)
        gib = b / 2 ** 30
        return (gib, gib), fig("model_state_memory")
    raise KeyError(formula)


def validate(path, root=ROOT):
    """(errors, the document as plain values or None)."""
    top, errors = load(path)
    if top is None:
        return errors, None
    checker = Checker(path, root)
    checker.errors = errors
    checker.run(top)
    return checker.errors, (plain(top) if not checker.errors else None)


def _cell(v):
    return "?" if v is None else str(v)


SHORT = {"tokens_per_s_per_gpu": "tok/s/GPU", "tflops_per_gpu": "TFLOP/s/GPU", "mfu": "MFU",
         "aggregate_pflops": "PFLOP/s total", "peak_memory": "peak", "model_state_memory": "model states",
         "max_model_params": "largest model", "oom": "", "relative_change": "change"}


def layout_text(p):
    lay, tr = p["layout"], p["training"]
    parts = [f"{k.upper()} {lay[k]}" for k in ("dp", "fsdp", "tp", "pp", "cp") if lay[k] not in (None, 1)]
    if lay["zero_stage"] is not None and lay["fsdp"] is None:
        parts.append(f"ZeRO-{lay['zero_stage']}")
    if lay["offload"] not in (None, "none"):
        parts.append(f"offload {lay['offload']}")
    parts += [k.replace("_", " ") for k in ("compile", "float8", "async_tp") if tr[k]]
    return ", ".join(parts) or "?"


def figure_text(f):
    text = f"{SHORT[f['quantity']]} {f['as_published']}".strip()
    if f["quantity"] in ("peak_memory", "model_state_memory") and not f["as_published"].endswith(f["unit"]):
        text += f" ({f['unit']})" if re.search(r"[A-Za-z]$", f["as_published"]) else f" {f['unit']}"
    return text


def markdown(doc):
    """The table of every published point in results/multi-gpu.md (between its markers)."""
    lines = ["| id | where | model, sequence | GPUs | layout | AC | batch local/global | published | dlsim |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in doc["points"]:
        gpus = p["hardware"]["gpus"]
        gpus = f"{gpus[0]}-{gpus[-1]}" if isinstance(gpus, list) else _cell(gpus)
        figs = "; ".join(figure_text(f) for f in p["figures"])
        tr, m = p["training"], p["model"]
        status = p["dlsim"]["status"]
        dl = f"{status}: to be simulated" if status != "not-modelled" else f"not modelled: {p['dlsim']['missing'][0]}"
        lines.append(f"| {p['id']} | {p['source']}, {p['locator']} | {m['name']}, {_cell(m['seq_len'])} | "
                     f"{gpus} x {p['hardware']['gpu']} | {layout_text(p)} | {tr['activation_checkpointing']} | "
                     f"{_cell(tr['local_batch'])}/{_cell(tr['global_batch'])} | {figs} | {dl} |")
    return "\n".join(lines) + "\n"


def main(argv):
    args = [a for a in argv if a != "--markdown"]
    path = args[0] if args else DEFAULT
    errors, doc = validate(path)
    if errors:
        print(f"{len(errors)} error(s):", *errors, sep="\n  ", file=sys.stderr)
        return 1
    if "--markdown" in argv:
        sys.stdout.write(markdown(doc))
        return 0
    by = {}
    for p in doc["points"]:
        by.setdefault(p["source"], {}).setdefault(p["dlsim"]["status"], 0)
        by[p["source"]][p["dlsim"]["status"]] += 1
    checks = sum(len(p.get("checks", [])) for p in doc["points"])
    print(f"{path}: {len(doc['points'])} points from {len(doc['sources'])} sources, {checks} arithmetic checks pass")
    for s, counts in by.items():
        print(f"  {s}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

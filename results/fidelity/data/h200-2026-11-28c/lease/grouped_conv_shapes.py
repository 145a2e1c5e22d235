"""The grouped and depthwise convolutions of recorded steps (dlsim import-torch files, unzipped) as a kernel_sweep.py
shapes file: fit-kernels --shapes-of takes zoo models only, and these models are not in the zoo.

  python3 grouped_conv_shapes.py OUT.json A.torchstep.json B.torchstep.json ...
"""
import json, sys, collections
recs, seen = [], set()
for path in sys.argv[2:]:
    d = json.load(open(path))
    src = "model:" + path.split("/")[-1].split(".torchstep")[0]
    for o in d["ops"]:
        if o["name"] != "aten::convolution":
            continue
        x = o["inputs"][0]; w = o["inputs"][1]; a = o["args"]
        g = a.get("groups", 1)
        if g == 1 or any(v != 1 for v in a.get("dilation", [1])):
            continue
        n, c, h, wd = x["shape"]; k, cg, r, s = w["shape"]
        key = (n, c, h, wd, k, r, s, a["stride"][0], a["padding"][0], g)
        if key in seen: continue
        seen.add(key)
        recs.append({"op": "conv_fwd", "dtype": "float32", "layout": "nchw", "n": n, "c": c, "h": h, "w": wd, "k": k,
                     "r": r, "s": s, "stride": a["stride"][0], "pad": a["padding"][0], "groups": g, "src": src})
json.dump({"meta": {"from": "grouped convolutions of recorded steps: " + " ".join(p.split('/')[-1] for p in sys.argv[2:])},
           "records": recs}, open(sys.argv[1], "w"), indent=0)
print(len(recs), collections.Counter((r["src"], r["groups"] == r["c"]) for r in recs))

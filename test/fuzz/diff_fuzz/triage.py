"""Verdicts (who is right when relaxc and onnxruntime differ), minimization of a finding to the
smallest graph that still shows it, and the repro folder."""
import hashlib
import json
import os
import time

import numpy as np
import onnx
from onnx import helper

import compare
import runner


# Ops whose result on NaN operands ONNX does not define (does max(NaN, 1) propagate the NaN?
# which index does ArgMax give a NaN? where does TopK sort it?). Engines differ legitimately.
NAN_UNDEFINED = {"MaxPool", "GlobalMaxPool", "MaxRoiPool", "MaxUnpool", "ReduceMax", "ReduceMin",
                 "ArgMax", "ArgMin", "TopK", "Max", "Min", "Clip", "Hardmax", "Unique",
                 "Relu", "LpPool", "GlobalLpPool", "Resize", "RoiAlign"}


def judge(model, feeds, got, ort_out, exact, rerun=None):
    """None when relaxc's outputs match onnxruntime's; else (kind, verdict, diffs, ref) with kind
    mismatch | ort_off_spec | borderline | nan_semantics. onnx.reference decides: relaxc within
    tolerance of it while onnxruntime is not -> ort_off_spec; both within tolerance of it (the
    two differ by less than twice the tolerance) -> borderline; otherwise -> mismatch, except
    nan_semantics: the graph has an op of NAN_UNDEFINED, the feeds hold NaN and with every NaN fed
    as 0 instead (rerun(feeds) -> (relaxc outputs, onnxruntime outputs)) the engines agree."""
    diffs = compare.compare_all(got, ort_out, exact)
    if not diffs:
        return None
    ref = None
    try:
        ref = runner.run_reference(model, feeds)
    except Exception as e:  # noqa: BLE001
        verdict = f"reference failed: {type(e).__name__}: {str(e)[:200]}"
    if ref is not None:
        r_ok = all(compare.compare(got[n], ref[n], exact.get(n, False)) is None
                   for n in diffs if n in got)
        o_ok = all(compare.compare(ort_out[n], ref[n], exact.get(n, False)) is None
                   for n in diffs)
        if r_ok and o_ok:
            return "borderline", "both within tolerance of onnx.reference", diffs, ref
        if r_ok:
            return "ort_off_spec", "onnx.reference agrees with relaxc", diffs, ref
        verdict = ("onnx.reference agrees with onnxruntime" if o_ok else
                   "onnx.reference agrees with neither")
    has_nan = any(a.dtype.kind == "f" and np.isnan(a).any() for a in feeds.values())
    if rerun and has_nan and any(n.op_type in NAN_UNDEFINED for n in model.graph.node):
        clean = {k: np.where(np.isnan(a), 0, a).astype(a.dtype) if a.dtype.kind == "f" else a
                 for k, a in feeds.items()}
        again = rerun(clean)
        if again is not None and not compare.compare_all(again[0], again[1], exact):
            return "nan_semantics", verdict + "; the engines agree with NaN fed as 0", diffs, ref
    return "mismatch", verdict, diffs, ref


def rerunner(relaxc, model, path, work):
    """rerun(feeds) -> (relaxc outputs, onnxruntime outputs) of the model at path, or None."""
    def rerun(feeds):
        try:
            want = runner.run_ort(model, [feeds])[0]
        except runner.OrtFailure:
            return None
        r = runner.run_relaxc(relaxc, path, [feeds], work)
        return (runner.relaxc_outputs(model, r.outs[0]), want) if r.status == "ok" else None
    return rerun


# ---- graph surgery -------------------------------------------------------------------------
def value_types(model):
    im = onnx.shape_inference.infer_shapes(model)
    t = {}
    for vi in list(im.graph.input) + list(im.graph.value_info) + list(im.graph.output):
        t[vi.name] = vi.type
    return t


def prune(model, outputs, types=None):
    """The model reduced to the ancestors of `outputs` (which become its outputs)."""
    g = model.graph
    types = types or value_types(model)
    need, keep = set(outputs), []
    for n in reversed(g.node):
        if any(o in need for o in n.output):
            keep.append(n)
            need.update(i for i in n.input if i)
    keep.reverse()
    outs = []
    for o in outputs:
        vi = onnx.ValueInfoProto(name=o)
        if o in types:
            vi.type.CopyFrom(types[o])
        outs.append(vi)
    ng = helper.make_graph(keep, g.name, [i for i in g.input if i.name in need], outs,
                           initializer=[t for t in g.initializer if t.name in need])
    m = helper.make_model(ng, opset_imports=model.opset_import, ir_version=model.ir_version,
                          producer_name=model.producer_name)
    return m


def with_all_outputs(model):
    """Every node output as a graph output (elem type only): for onnxruntime's intermediates."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    types = value_types(model)
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have and o in types and types[o].HasField("tensor_type"):
                m.graph.output.append(helper.make_tensor_value_info(
                    o, types[o].tensor_type.elem_type, None))
    return m


def cut(model, idx, values, feeds):
    """Node idx removed; its outputs become graph inputs fed with `values` (onnxruntime's)."""
    n = model.graph.node[idx]
    if not all(o in values for o in n.output if o):
        return None
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.node[idx]
    f = dict(feeds)
    for o in n.output:
        if o:
            a = values[o]
            m.graph.input.append(helper.make_tensor_value_info(
                o, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
            f[o] = a
    return m, f


def drop_node(model, name):
    """The node called `name` and everything downstream of it removed; the outputs are the
    values no remaining node consumes. None when nothing is left."""
    g = model.graph
    dead, keep = set(), []
    for n in g.node:
        if n.name == name or any(i in dead for i in n.input):
            dead.update(n.output)
        else:
            keep.append(n)
    used = {i for n in keep for i in n.input}
    outs = [o for n in keep for o in n.output if o and o not in used]
    if not outs:
        return None
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    return prune(m, outs, value_types(model))


def make_static(model, feeds):
    """Graph inputs with their symbolic dims replaced by the fed sizes."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for i in m.graph.input:
        if i.name in feeds:
            for d, s in zip(i.type.tensor_type.shape.dim, feeds[i.name].shape):
                d.Clear()
                d.dim_value = int(s)
    return m


# ---- minimization --------------------------------------------------------------------------
class Tester:
    """still(model, feeds) -> whether the finding still shows (same kind)."""

    def __init__(self, relaxc, work, kind, exact, budget_s=120, max_tests=40):
        self.relaxc, self.work, self.kind, self.exact = relaxc, work, kind, exact
        # a mismatch the reference could not judge may become off-spec once it can
        self.kinds = {kind} | ({"ort_off_spec"} if kind == "mismatch" else set())
        self.deadline = time.monotonic() + budget_s
        self.left = max_tests
        self.tests = 0
        os.makedirs(work, exist_ok=True)

    def live(self):
        return self.left > 0 and time.monotonic() < self.deadline

    def __call__(self, model, feeds):
        if not self.live():
            return False
        self.left -= 1
        self.tests += 1
        names = {i.name for i in model.graph.input}
        feeds = {k: v for k, v in feeds.items() if k in names}
        path = runner.save_model(model, os.path.join(self.work, "min.onnx"))
        if self.kind in ("crash", "timeout"):
            r = runner.run_relaxc(self.relaxc, path, [feeds], os.path.join(self.work, "min"))
            return r.status == self.kind
        try:
            ort_out = runner.run_ort(model, [feeds])[0]
        except runner.OrtFailure:
            return False
        r = runner.run_relaxc(self.relaxc, path, [feeds], os.path.join(self.work, "min"))
        if r.status != "ok":
            return False
        v = judge(model, feeds, runner.relaxc_outputs(model, r.outs[0]), ort_out, self.exact,
                  rerunner(self.relaxc, model, path, os.path.join(self.work, "rerun")))
        return v is not None and v[0] in self.kinds


def minimize(model, feeds, outputs, still):
    """Greedy: keep one differing output's ancestors; cut nodes (their outputs become inputs
    fed with onnxruntime's values), nearest the output first; make symbolic dims static."""
    for o in outputs:
        cand = prune(model, [o])
        if len(cand.graph.node) < len(model.graph.node) or len(outputs) > 1:
            if still(cand, feeds):
                model = cand
                break
    try:
        values = runner.run_ort(with_all_outputs(model), [feeds])[0]
    except Exception:  # noqa: BLE001
        values = {}
    changed = True
    while changed and still.live() and values:
        changed = False
        outs = [o.name for o in model.graph.output]
        for idx in reversed(range(len(model.graph.node))):
            if idx >= len(model.graph.node) or any(
                    o in outs for o in model.graph.node[idx].output):
                continue
            c = cut(model, idx, values, feeds)
            if c is None:
                continue
            cand = prune(c[0], outs, value_types(c[0]))
            cf = {i.name: c[1][i.name] for i in cand.graph.input if i.name in c[1]}
            if still(cand, cf):
                model, feeds, changed = cand, cf, True
                break
    if any(d.HasField("dim_param") for i in model.graph.input
           for d in i.type.tensor_type.shape.dim):
        cand = make_static(model, feeds)
        if still(cand, feeds):
            model = cand
    names = {i.name for i in model.graph.input}
    return model, {k: v for k, v in feeds.items() if k in names}


# ---- repro folder --------------------------------------------------------------------------
def save_repro(root, kind, model, feeds, info, arrays=None):
    """root/<kind>-<hash>/: model.onnx, inputs/<name>.npy, outputs/<engine>_<name>.npy,
    info.json and a one-line README.txt."""
    data = model.SerializeToString()
    h = hashlib.sha1(data).hexdigest()[:10]
    d = os.path.join(root, f"{kind}-{h}")
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data)
    for name, a in feeds.items():
        np.save(os.path.join(d, "inputs", runner.sanitize(name) + ".npy"), a, allow_pickle=False)
    info = dict(info, inputs={runner.sanitize(k): k for k in feeds})
    if arrays:
        os.makedirs(os.path.join(d, "outputs"), exist_ok=True)
        for key, a in arrays.items():
            np.save(os.path.join(d, "outputs", runner.sanitize(key) + ".npy"), np.asarray(a),
                    allow_pickle=False)
    with open(os.path.join(d, "info.json"), "w") as f:
        json.dump(info, f, indent=1, default=str)
    with open(os.path.join(d, "README.txt"), "w") as f:
        f.write(f"{kind}: ops {' '.join(info.get('ops', []))} (opset {info.get('opset')}): "
                f"{info.get('verdict', '')}; "
                f"{info.get('detail') or next(iter(info.get('diffs', {}).items()), '')}\n"
                f"replay: diff_fuzz.py --replay {d} --relaxc RELAXC --work /tmp/replay\n")
    return d

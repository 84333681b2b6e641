#!/usr/bin/env python3
# The fold-constants pass through relaxc (fold_cases.py CASE --relaxc PATH --work DIR): a model
# with a constant subgraph is compiled; the IR after fold-constants shows the subgraph folded into
# one constant, --stats shows fewer kernels than with --disable-pass=fold-constants, and both
# artifacts match onnxruntime.
import os
import re
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, same, vi  # noqa: E402


def kernels(stats_out):
    m = re.search(r"kernels: (\d+) PrimFuncs", stats_out)
    if not m:
        raise SystemExit("FAIL: no 'kernels:' line in the --stats output")
    return int(m.group(1))


def case_chain(r):
    """initializer W (2, 3) -> Transpose -> Mul (scale) -> Add (bias) feeding a MatMul with the
    graph input: the chain is evaluated at compile time into one (3, 2) constant (6 elements,
    printed inline)."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((2, 3)).astype(np.float32), "w")
    s = numpy_helper.from_array(np.array([0.5, -2.0], np.float32), "s")
    b = numpy_helper.from_array(np.array([1.0, -3.0], np.float32), "b")
    m = model([
        helper.make_node("Transpose", ["w"], ["wt"], name="transpose0", perm=[1, 0]),
        helper.make_node("Mul", ["wt", "s"], ["ws"], name="mul0"),
        helper.make_node("Add", ["ws", "b"], ["wb"], name="add0"),
        helper.make_node("MatMul", ["x", "wb"], ["y"], name="matmul0"),
    ], [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 2])], [w, s, b])
    so = r.compile(m, "chain")
    onnx_path = r.path("chain.onnx")
    p = r.check_call([r.relaxc, "compile", onnx_path, "-o", r.path("chain_ir.so"),
                      "--print-ir-after=fold-constants", "--stats"])
    ir = p.stdout
    # The matmul's weight operand is the folded constant, equal to numpy's W^T * s + b;
    # onnxruntime on x = eye(2, 3) gives its first two rows.
    want = np.asarray(ort(m, {"x": np.eye(2, 3, dtype=np.float32)})[0])
    call = re.search(r"relax\.call_tir\(@\w*matmul\w*, \(%\w+, const\[f32, \(3, 2\), \{([^}]*)\}\]\)\)",
                     ir)
    if not call:
        raise SystemExit("FAIL: no call_tir of the matmul with a folded (3, 2) constant after "
                         "fold-constants")
    folded = np.array([float(v.split(":")[0]) for v in call.group(1).split(",")], np.float32)
    wt = (numpy_helper.to_array(w).T * numpy_helper.to_array(s) + numpy_helper.to_array(b))
    np.testing.assert_allclose(folded.reshape(3, 2), wt, rtol=1e-6)
    np.testing.assert_allclose(want, wt[:2], rtol=1e-6)
    for op in ("transpose", "permute_dims", "multiply", "add"):
        if re.search(r"call_tir\(@\w*" + op, ir):
            raise SystemExit(f"FAIL: a call_tir of {op} survived fold-constants")
    print("PASS: the Transpose -> Mul -> Add chain is one constant after fold-constants")
    folded_kernels = kernels(ir)
    p = r.check_call([r.relaxc, "compile", onnx_path, "-o", r.path("chain_nofold.so"),
                      "--disable-pass=fold-constants", "--stats"])
    plain_kernels = kernels(p.stdout)
    if not folded_kernels < plain_kernels:
        raise SystemExit(f"FAIL: {folded_kernels} kernels with folding, {plain_kernels} without")
    print(f"PASS: {folded_kernels} kernels with folding, {plain_kernels} without")
    x = rng.standard_normal((2, 3)).astype(np.float32)
    same(r.run(so, {"x": x}), ort(m, {"x": x}), " folded")
    same(r.run(r.path("chain_nofold.so"), {"x": x}), ort(m, {"x": x}), " not folded")


def case_growth(r):
    """Expand of a 1-element constant to (256, 256) (256 KiB, over the 64 KiB growth limit)
    stays a kernel unless the limit is raised with --pass-option."""
    one = numpy_helper.from_array(np.array([2.5], np.float32), "one")
    shape = numpy_helper.from_array(np.array([256, 256], np.int64), "shape")
    m = model([
        helper.make_node("Expand", ["one", "shape"], ["e"], name="expand0"),
        helper.make_node("Add", ["x", "e"], ["y"], name="add0"),
    ], [vi("x", TensorProto.FLOAT, [256, 256])], [vi("y", TensorProto.FLOAT, [256, 256])],
        [one, shape])
    onnx_path = r.path("growth.onnx")
    r.compile(m, "growth")
    x = np.random.default_rng(3).standard_normal((256, 256)).astype(np.float32)
    for tag, extra in (("default", []),
                       ("raised", ["--pass-option", "fold-constants.max-growth-bytes=1000000"])):
        so = r.path(f"growth_{tag}.so")
        ir = r.check_call([r.relaxc, "compile", onnx_path, "-o", so,
                           "--print-ir-after=fold-constants"] + extra).stdout
        kept = re.search(r"call_tir\(@\w*broadcast_to", ir) is not None
        if kept != (tag == "default"):
            raise SystemExit(f"FAIL: {tag}: broadcast_to {'kept' if kept else 'folded'}")
        same(r.run(so, {"x": x}), ort(m, {"x": x}), f" {tag}")


def case_cast_range(r):
    """A constant float -> int Cast with values the target cannot hold (1e10, -3e9, NaN, inf) is
    target-dependent (LLVM poison), so it must stay a kernel: the folded build's output equals
    the unfolded build's; an in-range cast of the same kind folds."""
    vals = np.array([1e10, 3e9, -3e9, np.nan, np.inf, 2.7], np.float32)
    for to, np_to in ((TensorProto.INT32, np.int32), (TensorProto.INT8, np.int8),
                      (TensorProto.UINT32, np.uint32)):
        for tag, w in (("out", vals), ("in", np.array([1.5, -1.9, 100.2], np.float32))):
            if tag == "in" and np_to == np.uint32:
                w = np.abs(w)
            c = numpy_helper.from_array(w, "c")
            m = model([helper.make_node("Cast", ["c"], ["ci"], name="cast0", to=to),
                       helper.make_node("Add", ["x", "ci"], ["y"], name="add0")],
                      [vi("x", to, [len(w)])], [vi("y", to, [len(w)])], [c])
            name = f"cast_{np.dtype(np_to).name}_{tag}"
            so = r.compile(m, name)
            onnx_path = r.path(f"{name}.onnx")
            ir = r.check_call([r.relaxc, "compile", onnx_path, "-o", r.path(name + "_ir.so"),
                               "--print-ir-after=fold-constants"]).stdout
            kept = re.search(r"call_tir\(@\w*astype", ir) is not None
            if kept != (tag == "out"):
                raise SystemExit(f"FAIL: {name}: the cast was {'kept' if kept else 'folded'}")
            nofold = r.path(name + "_nofold.so")
            r.check_call([r.relaxc, "compile", onnx_path, "-o", nofold,
                          "--disable-pass=fold-constants"])
            x = np.zeros(len(w), np_to)
            a, b = r.run(so, {"x": x})[0], r.run(nofold, {"x": x})[0]
            if not np.array_equal(a, b):
                raise SystemExit(f"FAIL: {name}: folded {a.tolist()} != unfolded {b.tolist()}")
            if tag == "in" and not np.array_equal(a, np.trunc(w).astype(np_to)):
                raise SystemExit(f"FAIL: {name}: {a.tolist()} != {np.trunc(w).astype(np_to)}")
            print(f"PASS: {name} ({'kept' if kept else 'folded'}): {a.tolist()}")


CASES = {"chain": case_chain, "growth": case_growth, "cast_range": case_cast_range}

if __name__ == "__main__":
    sys.exit(cases_main(CASES, __doc__))

#!/usr/bin/env python3
# Checks of the elementwise-math, logic, activation, softmax-family and loss ops beyond the ONNX node
# tests (value ranges, dtypes, opset < 13 coercion, bitwise ops of opset 18) and their import
# errors. `run CASE` compiles and runs models with relaxc and compares with numpy or onnxruntime.
import argparse
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import Runner, model, vi  # noqa: E402

NP2ONNX = {np.dtype(k): v for k, v in {
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "int8": TensorProto.INT8,
    "int16": TensorProto.INT16, "int32": TensorProto.INT32, "int64": TensorProto.INT64,
    "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64, "bool": TensorProto.BOOL}.items()}


def check(name, got, want, rtol=1e-6, atol=1e-6):
    if got.dtype != want.dtype or got.shape != want.shape:
        raise SystemExit(f"FAIL {name}: got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
    if want.dtype.kind == "f":
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if not ok.all():
        i = np.argwhere(~ok)[0]
        raise SystemExit(f"FAIL {name}: {int((~ok).sum())} values differ, first at {list(i)}:"
                         f" got {got[tuple(i)]}, want {want[tuple(i)]}")
    print(f"ok {name}")


def run_op(r, tag, op, inputs, out_dtype, opset=13, **attrs):
    """One-node model `op` over `inputs` (name -> array); returns relaxc's output."""
    names = list(inputs)
    ins = [vi(n, NP2ONNX[a.dtype], list(a.shape)) for n, a in inputs.items()]
    m = model([helper.make_node(op, names, ["y"], name=f"{op.lower()}0", **attrs)], ins,
              [vi("y", NP2ONNX[np.dtype(out_dtype)], list(np.broadcast_shapes(*(a.shape for a in inputs.values()))))],
              opset=opset)
    so = r.compile(m, tag)
    return r.run(so, inputs)[0]


def case_bitwise(r):
    """BitwiseAnd/Or/Xor/Not (opset 18) on signed and unsigned types, extremes included."""
    rng = np.random.default_rng(0)
    for dt in ("int8", "int32", "int64", "uint8", "uint16", "uint64"):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=(3, 4), dtype=dt, endpoint=True)
        b = rng.integers(info.min, info.max, size=(4,), dtype=dt, endpoint=True)
        a[0, :2] = [info.min, info.max]
        b[:2] = [info.max, info.min]
        for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                       ("BitwiseXor", np.bitwise_xor)):
            got = run_op(r, f"{op}_{dt}", op, {"a": a, "b": b}, dt, opset=18)
            check(f"{op} {dt}", got, fn(a, b))
        check(f"BitwiseNot {dt}", run_op(r, f"not_{dt}", "BitwiseNot", {"a": a}, dt, opset=18),
              np.invert(a))


def case_math_ranges(r):
    """Trigonometric, rounding, sign and mod functions over wide ranges, NaN and inf, f32 and f64."""
    rng = np.random.default_rng(1)
    for dt in ("float32", "float64"):
        x = np.concatenate([rng.uniform(-100, 100, 40), rng.uniform(-3, 3, 40),
                            [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e10, -1e10, np.inf, -np.inf, np.nan]]
                           ).astype(dt)
        u = np.concatenate([rng.uniform(-1, 1, 60), [-1.0, 1.0, 0.0, np.nan]]).astype(dt)
        tol = 1e-5 if dt == "float32" else 1e-9
        finite = np.isfinite(x) & (np.abs(x) < 1e6)
        for op, fn, arg in (("Sin", np.sin, x[finite]), ("Cos", np.cos, x[finite]),
                            ("Tan", np.tan, x[finite]), ("Atan", np.arctan, x),
                            ("Asin", np.arcsin, u), ("Acos", np.arccos, u),
                            ("Floor", np.floor, x), ("Ceil", np.ceil, x), ("Round", np.round, x),
                            ("Sign", np.sign, x), ("Sinh", np.sinh, u), ("Atanh", np.arctanh, u)):
            with np.errstate(all="ignore"):
                want = fn(arg).astype(dt)
            check(f"{op} {dt}", run_op(r, f"{op}_{dt}", op, {"x": arg}, dt), want, rtol=tol, atol=tol)
        check(f"IsInf(+) {dt}", run_op(r, f"isinfp_{dt}", "IsInf", {"x": x}, "bool", detect_negative=0),
              np.isposinf(x))
        a = rng.uniform(-50, 50, 30).astype(dt)
        b = np.where(rng.random(30) < 0.5, -1, 1) * rng.uniform(0.5, 7, 30).astype(dt)
        check(f"Mod fmod {dt}", run_op(r, f"fmod_{dt}", "Mod", {"a": a, "b": b.astype(dt)}, dt, fmod=1),
              np.fmod(a, b.astype(dt)), rtol=tol, atol=tol)
    for dt in ("int8", "int32", "int64", "uint32"):
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), 40, dtype=dt)
        b = rng.integers(1, 17, 40).astype(dt)
        if info.min < 0:
            b = (b * np.where(rng.random(40) < 0.5, -1, 1)).astype(dt)
        check(f"Mod {dt}", run_op(r, f"mod_{dt}", "Mod", {"a": a, "b": b}, dt), np.mod(a, b))
        check(f"Mod fmod {dt}", run_op(r, f"fmodi_{dt}", "Mod", {"a": a, "b": b}, dt, fmod=1),
              np.fmod(a, b))


def case_softmax_opset11(r):
    """Opset 11 Softmax/LogSoftmax/Hardmax coerce the input to 2-D at `axis`; Hardmax ties pick
    the first maximum. Compared with onnxruntime."""
    import onnxruntime as ort
    rng = np.random.default_rng(2)
    x = rng.integers(-2, 3, size=(2, 3, 4)).astype(np.float32)  # many ties
    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        for axis in (0, 1, 2, -1):
            m = model([helper.make_node(op, ["x"], ["y"], name="sm0", axis=axis)],
                      [vi("x", TensorProto.FLOAT, [2, 3, 4])], [vi("y", TensorProto.FLOAT, [2, 3, 4])],
                      opset=11)
            so = r.compile(m, f"{op}_{axis}")
            got = r.run(so, {"x": x})[0]
            sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            check(f"{op} opset 11 axis {axis}", got, sess.run(None, {"x": x})[0], rtol=1e-5)


def case_symbolic(r):
    """Symbolic dims (dim_params) through the new ops: one artifact run at two sizes, compared
    with onnxruntime. Broadcasting of a symbolic dim against 1 included."""
    import onnxruntime as ort
    F = TensorProto.FLOAT
    nodes = [
        helper.make_node("Less", ["a", "b"], ["lt"]),
        helper.make_node("Where", ["lt", "a", "b"], ["w"]),
        helper.make_node("LeakyRelu", ["w"], ["lr"], alpha=0.1),
        helper.make_node("Sin", ["lr"], ["s"]),
        helper.make_node("Mod", ["s", "b"], ["m"], fmod=1),
        helper.make_node("Mean", ["m", "a", "b"], ["mean"]),
        helper.make_node("Hardmax", ["mean"], ["hm"], axis=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["mean", "t"], ["loss", "lp"], reduction="mean"),
    ]
    m = model(nodes, [vi("a", F, ["n", 5]), vi("b", F, [1, 5]), vi("t", TensorProto.INT64, ["n"])],
              [vi("hm", F, ["n", 5]), vi("loss", F, []), vi("lp", F, ["n", 5])])
    so = r.compile(m, "symbolic")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    for n in (1, 7):
        feeds = {"a": rng.normal(size=(n, 5)).astype(np.float32),
                 "b": (rng.normal(size=(1, 5)) + 2).astype(np.float32),
                 "t": rng.integers(0, 5, n).astype(np.int64)}
        got = r.run(so, feeds)
        for name, g, w in zip(("hm", "loss", "lp"), got, sess.run(None, feeds)):
            check(f"symbolic n={n} {name}", g, w, rtol=1e-5, atol=1e-6)


def case_errors(r):
    """Bad attributes and dtypes are clean `error:` lines naming the node, not crashes."""
    f = vi("x", TensorProto.FLOAT, [3])
    cases = [
        (model([helper.make_node("Mod", ["x", "x"], ["y"], name="mod0")], [f],
               [vi("y", TensorProto.FLOAT, [3])]),
         "Mod 'mod0': attribute 'fmod' must be 1 for float inputs"),
        (model([helper.make_node("BitShift", ["u", "u"], ["y"], name="shift0", direction="UP")],
               [vi("u", TensorProto.UINT8, [3])], [vi("y", TensorProto.UINT8, [3])]),
         "BitShift 'shift0': attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"UP\""),
        (model([helper.make_node("Gelu", ["x"], ["y"], name="gelu0", approximate="fast")], [f],
               [vi("y", TensorProto.FLOAT, [3])], opset=20),
         "Gelu 'gelu0': attribute 'approximate' must be \"none\" or \"tanh\""),
        (model([helper.make_node("Where", ["x", "x", "x"], ["y"], name="where0")], [f],
               [vi("y", TensorProto.FLOAT, [3])]),
         "condition must be bool, got f32"),
        (model([helper.make_node("LogSoftmax", ["x"], ["y"], name="sm0", axis=3)], [f],
               [vi("y", TensorProto.FLOAT, [3])]),
         "LogSoftmax 'sm0': attribute 'axis' 3 out of range for rank 1"),
        (model([helper.make_node("NegativeLogLikelihoodLoss", ["p", "t"], ["y"], name="nll0",
                                 reduction="avg")],
               [vi("p", TensorProto.FLOAT, [2, 3]), vi("t", TensorProto.INT64, [2])],
               [vi("y", TensorProto.FLOAT, [])]),
         "NegativeLogLikelihoodLoss 'nll0': attribute 'reduction' must be \"none\", \"sum\" or \"mean\""),
        (model([helper.make_node("NegativeLogLikelihoodLoss", ["p", "t"], ["y"], name="nll1")],
               [vi("p", TensorProto.FLOAT, [2, 3]), vi("t", TensorProto.INT64, [3])],
               [vi("y", TensorProto.FLOAT, [])]),
         "target dim 0"),
    ]
    import onnx
    for i, (m, msg) in enumerate(cases):
        path = r.path(f"err{i}.onnx")
        onnx.save(m, path)
        p = subprocess.run([r.relaxc, "compile", path, "-o", r.path(f"err{i}.so")],
                           capture_output=True, text=True)
        sys.stdout.write(p.stderr)
        if p.returncode != 1 or "error:" not in p.stderr or msg not in p.stderr:
            raise SystemExit(f"FAIL: expected exit 1 with '{msg}', got {p.returncode}")
        print(f"ok error {i}")


def case_nan_inf(r):
    """NaN and infinity where onnxruntime and the spec text leave room: ArgMax/ArgMin of a row
    holding NaN give the first (select_last_index: last) NaN, as the ONNX reference
    implementation (numpy.argmax/argmin on the row or the flipped row) does, never an index past
    the axis; Mod with fmod=1 and an infinite divisor gives the dividend (C fmod)."""
    x = np.array([[1, 3, 3], [np.nan, 1, 2], [0, np.nan, 5], [np.nan, np.nan, np.nan]], np.float32)
    for op, fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        for last in (0, 1):
            m = model([helper.make_node(op, ["x"], ["y"], name=f"{op.lower()}0", axis=1,
                                        keepdims=0, select_last_index=last)],
                      [vi("x", TensorProto.FLOAT, [4, 3])], [vi("y", TensorProto.INT64, [4])])
            got = r.run(r.compile(m, f"{op}_nan_{last}"), {"x": x})[0]
            want = (fn(x, axis=1) if not last
                    else x.shape[1] - 1 - fn(np.flip(x, axis=1), axis=1)).astype(np.int64)
            check(f"{op} select_last_index={last} with NaN", got, want)
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0, np.inf, 3.0], np.float32)
    b = np.array([np.inf, np.inf, -np.inf, -np.inf, np.inf, np.inf, 2.0], np.float32)
    got = run_op(r, "fmod_inf", "Mod", {"a": a, "b": b}, "float32", fmod=1)
    check("Mod fmod=1 with infinite divisors", got, np.fmod(a, b))


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    rn = sub.add_parser("run")
    rn.add_argument("case", choices=sorted(CASES))
    rn.add_argument("--relaxc", required=True)
    rn.add_argument("--work", required=True)
    args = ap.parse_args()
    work = os.path.join(args.work, args.case)
    os.makedirs(work, exist_ok=True)
    CASES[args.case](Runner(args.relaxc, work))
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# Operands that ONNX passes as tensors but relaxc must read as shapes or axes: run-time
# Reduce* axes (one artifact, several axes values; bad axes are run-time errors naming the
# node), run-time Resize scales and sizes, and shape chains computed at import (Shape -> Slice -> Neg -> ConstantOfShape ->
# Concat -> Reshape stays symbolic). Outputs are checked against onnxruntime.
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, same, vi  # noqa: E402


def i64(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


def case_reduce_runtime_axes(r):
    """ReduceSum/Mean/Max/LogSumExp with axes fed at run time, keepdims 1 and 0."""
    x = vi("x", TensorProto.FLOAT, ["n", 3, "w"])
    ax = vi("ax", TensorProto.INT64, [2])
    m = model([
        helper.make_node("ReduceSum", ["x", "ax"], ["s"], name="rsum", keepdims=1),
        helper.make_node("ReduceMean", ["x", "ax"], ["mn"], name="rmean", keepdims=0),
        helper.make_node("ReduceMax", ["x", "ax"], ["mx"], name="rmax", keepdims=0),
        helper.make_node("ReduceLogSumExp", ["x", "ax"], ["l"], name="rlse", keepdims=1),
    ], [x, ax], [vi("s", TensorProto.FLOAT, ["a", "b", "c"]), vi("mn", TensorProto.FLOAT, ["d"]),
                 vi("mx", TensorProto.FLOAT, ["e"]),
                 vi("l", TensorProto.FLOAT, ["f", "g", "h"])], [], opset=18)
    so = r.compile(m, "reduce_axes")
    rng = np.random.default_rng(3)
    for k, (shape, axes) in enumerate([((2, 3, 4), [0, 2]), ((5, 3, 2), [-1, 1]),
                                       ((1, 3, 6), [1, -3]), ((4, 3, 0), [0, 1])]):
        feeds = {"x": rng.random(shape, dtype=np.float32), "ax": np.array(axes, np.int64)}
        same(r.run(so, feeds), ort(m, feeds), f" set {k} axes {axes}")
    xv = rng.random((2, 3, 4), dtype=np.float32)
    r.run(so, {"x": xv, "ax": np.array([0, 3], np.int64)},
          expect_error="ReduceSum 'rsum': axes must be distinct and in [-3, 2]")
    r.run(so, {"x": xv, "ax": np.array([1, -2], np.int64)},
          expect_error="ReduceSum 'rsum': axes must be distinct and in [-3, 2]")


def case_shape_chain(r):
    """LayerNormalization's expanded shape chain on symbolic dims: the reduced shape
    (prefix of Shape(x), then ConstantOfShape(-axis) ones) is a shape value, so the Reshape
    keeps symbolic dims."""
    x = vi("x", TensorProto.FLOAT, ["n", "c", "h"])
    one = helper.make_tensor("one", TensorProto.INT64, [1], [1])
    m = model([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "zero1", "axis1"], ["prefix"]),
        helper.make_node("Neg", ["axis1"], ["nred"]),
        helper.make_node("ConstantOfShape", ["nred"], ["suffix"], value=one),
        helper.make_node("Concat", ["prefix", "suffix"], ["rs"], axis=0),
        helper.make_node("ReduceMean", ["x", "red_axes"], ["m"], keepdims=1),
        helper.make_node("Reshape", ["m", "rs"], ["y"], name="reshape_mean"),
        helper.make_node("Neg", ["s"], ["negs"]),
        helper.make_node("Abs", ["negs"], ["abss"]),
        helper.make_node("Reshape", ["x", "abss"], ["z"], name="reshape_abs"),
    ], [x], [vi("y", TensorProto.FLOAT, ["y0", "y1", "y2"]),
             vi("z", TensorProto.FLOAT, ["z0", "z1", "z2"])],
        [i64("zero1", [0]), i64("axis1", [-2]), i64("red_axes", [1, 2])], opset=18)
    so = r.compile(m, "shape_chain")
    ir = r.check_call([r.relaxc, "compile", r.path("shape_chain.onnx"), "-o", r.path("sc2.so"),
                       "--print-ir-after=import"]).stdout
    for want in ("Tensor[(n, 1, 1), f32] = %y", "Tensor[(n, c, h), f32] = %z"):
        if want not in ir:
            raise SystemExit(f"FAIL: '{want}' not in the imported IR")
    for shape in ((2, 3, 4), (5, 1, 2)):
        xv = np.random.default_rng(1).random(shape, dtype=np.float32)
        same(r.run(so, {"x": xv}), ort(m, {"x": xv}), f" x{list(shape)}")


def case_resize_runtime(r):
    """Resize with scales and with sizes fed at run time (one artifact, several values); a
    scale that is not positive is a run-time error naming the node."""
    x = vi("x", TensorProto.FLOAT, [1, 2, "h", "w"])
    m = model([
        helper.make_node("Resize", ["x", "", "sc"], ["ys"], name="rs_scales", mode="linear"),
        helper.make_node("Resize", ["x", "", "", "sz"], ["yz"], name="rs_sizes", mode="nearest",
                         coordinate_transformation_mode="asymmetric"),
    ], [x, vi("sc", TensorProto.FLOAT, [4]), vi("sz", TensorProto.INT64, [4])],
        [vi("ys", TensorProto.FLOAT, ["a", "b", "c", "d"]),
         vi("yz", TensorProto.FLOAT, ["e", "f", "g", "i"])], opset=13)
    so = r.compile(m, "resize_rt")
    rng = np.random.default_rng(5)
    for k, (shape, sc, sz) in enumerate([((1, 2, 4, 6), [1, 1, 2, 0.5], [1, 2, 7, 3]),
                                         ((1, 2, 3, 2), [1, 1, 1.5, 3], [1, 2, 2, 5])]):
        feeds = {"x": rng.random(shape, dtype=np.float32), "sc": np.array(sc, np.float32),
                 "sz": np.array(sz, np.int64)}
        same(r.run(so, feeds), ort(m, feeds), f" set {k}")
    # antialias with constant and with run-time scales (downsampling stretches the filter).
    ma = model([
        helper.make_node("Resize", ["x", "", "csc"], ["ya"], mode="linear", antialias=1),
        helper.make_node("Resize", ["x", "", "sc"], ["yb"], mode="cubic", antialias=1),
    ], [x, vi("sc", TensorProto.FLOAT, [4])],
        [vi("ya", TensorProto.FLOAT, ["a", "b", "c", "d"]),
         vi("yb", TensorProto.FLOAT, ["e", "f", "g", "i"])],
        [numpy_helper.from_array(np.array([1, 1, 0.5, 0.25], np.float32), "csc")], opset=18)
    soa = r.compile(ma, "resize_aa")
    for k, sc in enumerate([[1, 1, 0.5, 0.25], [1, 1, 0.75, 2]]):
        fa = {"x": rng.random((1, 2, 8, 12), dtype=np.float32), "sc": np.array(sc, np.float32)}
        same(r.run(soa, fa), ort(ma, fa), f" antialias set {k}")
    feeds["sc"] = np.array([1, 1, 0, 2], np.float32)
    r.run(so, feeds, expect_error="Resize 'rs_scales': scales must be positive and finite")


def ort_refuses(m, feeds):
    """onnxruntime raises on these operands (the reference behaviour relaxc follows)."""
    try:
        ort(m, feeds)
    except Exception as e:  # noqa: BLE001 (onnxruntime's own exception types)
        print(f"onnxruntime refuses too: {str(e).splitlines()[0][:160]}")
        return
    raise SystemExit("FAIL: onnxruntime accepted the out-of-range operand (reference changed?)")


def case_index_range(r):
    """Gather, GatherElements, GatherND, ScatterElements and ScatterND with indices given at run
    time: in range (negative ones too) they match onnxruntime; out of range they are an error
    naming the node, the index and the dim (they used to be clamped: index 5 of 5 rows gave row
    4), as onnxruntime refuses them. Constant out-of-range indices fail at compile time."""
    rng = np.random.default_rng(11)
    x = vi("x", TensorProto.FLOAT, [5, 3])
    cases = [
        ("Gather", dict(axis=0), vi("i", TensorProto.INT64, ["k"]), None, ["k", 3],
         np.array([0, -5, 4, 2], np.int64), np.array([1, 5], np.int64), "indices[1] = 5"),
        ("GatherElements", dict(axis=1), vi("i", TensorProto.INT64, [5, 2]), None, [5, 2],
         np.array([[0, -3]] * 5, np.int64), np.array([[0, 1]] * 4 + [[3, 0]], np.int64),
         "indices[4, 0] = 3"),
        ("GatherND", {}, vi("i", TensorProto.INT64, ["k", 2]), None, ["k"],
         np.array([[4, 2], [-5, -3]], np.int64), np.array([[4, 2], [1, 3]], np.int64),
         "indices[1, 1] = 3"),
        ("ScatterElements", dict(axis=0), vi("i", TensorProto.INT64, [1, 3]),
         vi("u", TensorProto.FLOAT, [1, 3]), [5, 3],
         np.array([[4, -1, 0]], np.int64), np.array([[5, 0, 0]], np.int64),
         "indices[0, 0] = 5"),
        ("ScatterND", {}, vi("i", TensorProto.INT64, [2, 1]), vi("u", TensorProto.FLOAT, [2, 3]),
         [5, 3],
         np.array([[4], [-5]], np.int64), np.array([[0], [-6]], np.int64),
         "indices[1, 0] = -6"),
    ]
    for op, attrs, iv, uv, yshape, good, bad, needle in cases:
        ins = ["x", "i"] + (["u"] if uv else [])
        m = model([helper.make_node(op, ins, ["y"], name="g0", **attrs)],
                  [x, iv] + ([uv] if uv else []), [vi("y", TensorProto.FLOAT, yshape)], opset=16)
        so = r.compile(m, "index_" + op)
        feeds = {"x": rng.standard_normal((5, 3)).astype(np.float32), "i": good}
        if uv:
            feeds["u"] = rng.standard_normal([d.dim_value for d in
                                              uv.type.tensor_type.shape.dim]).astype(np.float32)
        same(r.run(so, feeds), ort(m, feeds), f" {op} in range")
        feeds["i"] = bad
        ort_refuses(m, feeds)
        r.run(so, feeds, expect_error=f"{op} 'g0': {needle} is out of range for a dim of size")
    # Constant indices are checked when the model is compiled.
    c = numpy_helper.from_array(np.array([0, 7], np.int64), "ci")
    m = model([helper.make_node("Gather", ["x", "ci"], ["y"], name="gc", axis=0)], [x],
              [vi("y", TensorProto.FLOAT, [2, 3])], [c])
    onnx_path = r.path("index_const.onnx")
    onnx.save(m, onnx_path)
    p = subprocess.run([r.relaxc, "compile", onnx_path, "-o", r.path("index_const.so")],
                       capture_output=True, text=True)
    print(p.stderr)
    if p.returncode != 1 or "Gather 'gc': indices[1] = 7 is out of range for a dim of size 5" \
            not in p.stderr:
        raise SystemExit("FAIL: constant out-of-range indices must fail at compile time")
    # Slice with axes and steps given at run time: an axis outside the rank and a step of 0 are
    # errors (they used to return the input).
    m = model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="sl")],
              [x, vi("st", TensorProto.INT64, [1]), vi("en", TensorProto.INT64, [1]),
               vi("ax", TensorProto.INT64, [1]), vi("sp", TensorProto.INT64, [1])],
              [vi("y", TensorProto.FLOAT, ["p", "q"])], opset=13)
    so = r.compile(m, "slice_runtime")
    feeds = {"x": rng.standard_normal((5, 3)).astype(np.float32), "st": np.array([4], np.int64),
             "en": np.array([0], np.int64), "ax": np.array([-2], np.int64),
             "sp": np.array([-2], np.int64)}
    same(r.run(so, feeds), ort(m, feeds), " Slice run-time axes and steps")
    for k, v, needle in (("ax", 2, "Slice 'sl': axes[0] = 2 is out of range for a dim of size 2"),
                         ("sp", 0, "Slice 'sl': steps[0] is 0; it must be non-zero")):
        bad = dict(feeds, **{k: np.array([v], np.int64)})
        ort_refuses(m, bad)
        r.run(so, bad, expect_error=needle)
    # Range with a NaN limit has no length (it used to give an empty tensor).
    f = TensorProto.FLOAT
    m = model([helper.make_node("Range", ["a", "l", "d"], ["y"], name="rg")],
              [vi("a", f, []), vi("l", f, []), vi("d", f, [])], [vi("y", f, ["m"])], opset=11)
    so = r.compile(m, "range_nan")
    feeds = {"a": np.array(0, np.float32), "l": np.array(2, np.float32),
             "d": np.array(0.5, np.float32)}
    same(r.run(so, feeds), ort(m, feeds), " Range")
    r.run(so, dict(feeds, l=np.array(np.nan, np.float32)),
          expect_error="Range 'rg': ")
    print("PASS: out-of-range indices and axes, zero steps and NaN limits are errors naming the node")


def case_loss_targets(r):
    """NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss targets index the class axis: in
    [-C, C) they match onnxruntime (which gathers with them, so -1 is the last class), an
    ignore_index outside that range is skipped, and any other value is an error naming the node
    (the kernel used to read outside the scores and weights: found by the end-to-end fuzz run)."""
    x = vi("x", TensorProto.FLOAT, ["n", 5])
    t = vi("t", TensorProto.INT64, ["n"])
    w = numpy_helper.from_array(np.linspace(0.5, 1.5, 5).astype(np.float32), "w")
    m = model([
        helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["nll"], name="nll",
                         reduction="none"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["sce"], name="sce",
                         reduction="mean", ignore_index=-100),
    ], [x, t], [vi("nll", TensorProto.FLOAT, ["n"]), vi("sce", TensorProto.FLOAT, [])], [w])
    so = r.compile(m, "loss_targets")
    xv = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    for tv in ([0, 4, 2, 1], [-1, -5, 3, 0]):
        feeds = {"x": xv, "t": np.array(tv, np.int64)}
        same(r.run(so, feeds), ort(m, feeds), f" targets {tv}")
    m2 = model([helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["sce"], name="sce",
                                 reduction="mean", ignore_index=-100)],
               [x, t], [vi("sce", TensorProto.FLOAT, [])])
    so2 = r.compile(m2, "loss_ignore")
    feeds = {"x": xv, "t": np.array([1, -100, 3, -100], np.int64)}
    same(r.run(so2, feeds), ort(m2, feeds), " ignore_index -100")
    for bad in (5, -6, 1000):
        r.run(so, {"x": xv, "t": np.array([0, bad, 1, 2], np.int64)},
              expect_error=f"NegativeLogLikelihoodLoss 'nll': target[1] = {bad} is out of range "
                           "for a dim of size 5")
    print("PASS: loss targets outside the classes are errors naming the node")


# A hand-written gather kernel that reads A[I[i]] with no check of its own (the verifier cannot
# prove I[i] out of range: its values come at run time).
GATHER_RX = """
func @main(%x: Tensor[(4,), f32], %idx: Tensor[(3,), i64]) -> Tensor[(3,), f32] {
  %y: Tensor[(3,), f32] = relax.call_tir(@gather, (%x, %idx)) -> [Tensor[(3,), f32]]
  return %y
}

prim_func @gather(A: Buffer[f32, (4)], I: Buffer[i64, (3)], B: Buffer[f32, (3)]) num_outputs=1 {
  for i in serial(0, 3) {
    B[i] = A[I[i]]
  }
}
"""


def case_bounds_check(r):
    """relaxc compile --bounds-check: every load and store of a CPU kernel checks its index; one
    outside its buffer is an error naming kernel, buffer, index expression and value, and the
    kernel touches no memory outside its buffers. Results of checked kernels are unchanged (a
    hand-written gather, and a conv/pool/softmax model against onnxruntime)."""
    rx = r.path("gather.rx")
    with open(rx, "w") as f:
        f.write(GATHER_RX)
    so = r.path("gather_checked.so")
    p = r.check_call([r.relaxc, "compile", rx, "-o", so, "--bounds-check",
                      "--print-ir-after=codegen-mlir"])
    if "RelaxReportIndexError" not in p.stdout:
        raise SystemExit("FAIL: no RelaxReportIndexError call in the checked kernel's MLIR")
    x = np.arange(4, dtype=np.float32) + 10
    got = r.run(so, {"x": x, "idx": np.array([3, 0, 2], np.int64)})
    same(got, [x[[3, 0, 2]]], " gather in range")
    for bad in (4, 7, -1):
        r.run(so, {"x": x, "idx": np.array([1, bad, 0], np.int64)},
              expect_error=f"kernel 'gather': buffer 'A' index I[i] is {bad}, outside [0, 4)")
    # A real op set compiled with checks gives onnxruntime's results.
    xi = vi("x", TensorProto.FLOAT, [1, 3, 9, 9])
    w = numpy_helper.from_array(
        np.random.default_rng(5).standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    m = model([
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], ceil_mode=1),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Softmax", ["f"], ["y"], axis=1),
    ], [xi], [vi("y", TensorProto.FLOAT, [1, 64])], [w])
    onnx_path = r.path("convnet.onnx")
    onnx.save(m, onnx_path)
    so = r.path("convnet_checked.so")
    r.check_call([r.relaxc, "compile", onnx_path, "-o", so, "--bounds-check"])
    feeds = {"x": np.random.default_rng(6).standard_normal((1, 3, 9, 9)).astype(np.float32)}
    same(r.run(so, feeds), ort(m, feeds), " convnet with --bounds-check")
    print("PASS: checked kernels report out-of-range indices and keep their results")


CASES = {f.__name__[5:]: f for f in (case_reduce_runtime_axes, case_shape_chain,
                                     case_resize_runtime, case_index_range, case_bounds_check,
                                     case_loss_targets)}


def main():
    return cases_main(CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())

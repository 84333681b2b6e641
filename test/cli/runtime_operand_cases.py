#!/usr/bin/env python3
# Operands that ONNX passes as tensors but relaxc must read as shapes or axes: run-time
# Reduce* axes (one artifact, several axes values; bad axes are run-time errors naming the
# node), run-time Resize scales and sizes, and shape chains computed at import (Shape -> Slice -> Neg -> ConstantOfShape ->
# Concat -> Reshape stays symbolic). Outputs are checked against onnxruntime.
import os
import sys

import numpy as np
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


CASES = {f.__name__[5:]: f for f in (case_reduce_runtime_axes, case_shape_chain,
                                     case_resize_runtime)}


def main():
    return cases_main(CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())

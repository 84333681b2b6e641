#!/usr/bin/env python3
# Sampling, linear-algebra and rearranging ops (GridSample, AffineGrid, RoiAlign, DeformConv,
# Einsum, Det, Col2Im, CenterCropPad, ReverseSequence, MaxUnpool) beyond the node tests:
# symbolic input dims and run-time shape operands (one artifact, two input sizes), checked
# against the ONNX reference implementation (onnx.reference); and the import errors for
# unsupported attribute values, which must name the node and the attribute.
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, same, vi  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def reference(m, inputs):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(m).run(None, inputs)


def one(node, inputs, opset, rank=4):
    return model([node], inputs, [vi("y", F, [None] * rank)], opset=opset)


def check(r, m, name, feeds_list, atol=None):
    """Compiles `m` once and checks every feed against the reference (with `atol`: at rtol 1e-4
    and that atol, for results that are rounding noise around 0, like a singular matrix's det)."""
    so = r.compile(m, name)
    for k, feeds in enumerate(feeds_list):
        got, want = r.run(so, feeds), reference(m, feeds)
        if atol is None:
            same(got, want, f" {name}[{k}]")
        elif not all(g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=atol)
                     for g, w in zip(got, want)):
            raise SystemExit(f"FAIL {name}[{k}]: got {got}, expected {want}")
        else:
            print(f"PASS {name}[{k}]: outputs match at atol {atol}")


def case_symbolic(r):
    """Symbolic dims and run-time shape operands; each artifact runs at two sizes."""
    for mode, pad, align in [("cubic", "reflection", 0), ("linear", "border", 1),
                             ("nearest", "zeros", 0)]:
        m = one(helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad,
                                 align_corners=align),
                [vi("x", F, ["n", "c", "h", "w"]), vi("g", F, ["n", "ho", "wo", 2])], 20)
        check(r, m, f"gridsample_{mode}", [
            {"x": rand(2, 3, 5, 4), "g": rand(2, 3, 6, 2, scale=1.5)},
            {"x": rand(1, 2, 3, 7), "g": rand(1, 4, 2, 2, scale=1.5)}])
    m = one(helper.make_node("GridSample", ["x", "g"], ["y"], mode="linear",
                             padding_mode="reflection"),
            [vi("x", F, ["n", "c", "d", "h", "w"]), vi("g", F, ["n", "do", "ho", "wo", 3])], 20, 5)
    check(r, m, "gridsample_3d", [{"x": rand(1, 2, 3, 4, 5), "g": rand(1, 2, 3, 2, 3, scale=1.3)}])
    m = one(helper.make_node("AffineGrid", ["t", "s"], ["y"], align_corners=0),
            [vi("t", F, ["n", 3, 4]), vi("s", I64, [5])], 20, 5)
    check(r, m, "affine_grid_3d", [
        {"t": rand(2, 3, 4), "s": np.array([2, 1, 3, 4, 5], np.int64)},
        {"t": rand(1, 3, 4), "s": np.array([1, 3, 1, 2, 6], np.int64)}])
    m = one(helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], sampling_ratio=3,
                             output_height=3, output_width=2, spatial_scale=0.5, mode="max"),
            [vi("x", F, ["n", "c", "h", "w"]), vi("rois", F, ["r", 4]), vi("b", I64, ["r"])], 16)
    rois = np.array([[0, 0, 9, 7], [2, 3, 12, 11], [1, 1, 4, 5]], np.float32)
    check(r, m, "roialign_max", [
        {"x": rand(2, 3, 10, 8), "rois": rois, "b": np.array([0, 1, 1], np.int64)},
        {"x": rand(1, 1, 6, 9), "rois": rois[:2], "b": np.array([0, 0], np.int64)}])
    # Adaptive sampling (sampling_ratio 0): the grid differs per roi; an inverted roi has none.
    # A Relu after it checks that the reduction with per-roi extents fuses.
    m = model([helper.make_node("RoiAlign", ["x", "rois", "b"], ["a"], output_height=3,
                                output_width=4, spatial_scale=0.5),
               helper.make_node("Relu", ["a"], ["y"])],
              [vi("x", F, ["n", "c", "h", "w"]), vi("rois", F, ["r", 4]), vi("b", I64, ["r"])],
              [vi("y", F, [None] * 4)], opset=16)
    rois = np.array([[0, 0, 19, 15], [2, 3, 12, 11], [5, 5, 5.5, 5.2], [8, 8, 2, 2]], np.float32)
    check(r, m, "roialign_adaptive", [
        {"x": rand(2, 3, 12, 10), "rois": rois, "b": np.array([0, 1, 1, 0], np.int64)}])
    m = one(helper.make_node("DeformConv", ["x", "w", "o", "bias", "mask"], ["y"], strides=[2, 2],
                             dilations=[2, 1], pads=[1, 0, 2, 1], group=2, offset_group=2),
            [vi("x", F, ["n", 4, "h", "w"]), vi("w", F, [6, 2, 3, 2]),
             vi("o", F, ["n", 24, "oh", "ow"]), vi("bias", F, [6]),
             vi("mask", F, ["n", 12, "oh", "ow"])], 19)
    check(r, m, "deform_conv", [
        {"x": rand(2, 4, 7, 6), "w": rand(6, 2, 3, 2), "o": rand(2, 24, 3, 3), "bias": rand(6),
         "mask": rand(2, 12, 3, 3)},
        {"x": rand(1, 4, 5, 8), "w": rand(6, 2, 3, 2), "o": rand(1, 24, 2, 4), "bias": rand(6),
         "mask": rand(1, 12, 2, 4)}])
    m = one(helper.make_node("Einsum", ["a", "b"], ["y"], equation="...ij,...jk"),
            [vi("a", F, ["b", 1, 3, "j"]), vi("b", F, [5, "j", "k"])], 12, 4)
    check(r, m, "einsum_broadcast", [{"a": rand(2, 1, 3, 4), "b": rand(5, 4, 6)},
                                     {"a": rand(1, 1, 3, 2), "b": rand(5, 2, 1)}])
    m = one(helper.make_node("Einsum", ["a"], ["y"], equation="bii->b"),
            [vi("a", F, ["b", "i", "i"])], 12, 1)
    check(r, m, "einsum_trace", [{"a": rand(3, 4, 4)}, {"a": rand(1, 2, 2)}])
    m = one(helper.make_node("Det", ["a"], ["y"]), [vi("a", F, ["b", 4, 4])], 11, 1)
    check(r, m, "det_4x4", [{"a": rand(3, 4, 4)}])
    m = one(helper.make_node("Det", ["a"], ["y"]), [vi("a", F, ["b", 9, 9])], 11, 1)
    singular = rand(2, 9, 9)
    singular[1, 3] = singular[1, 5] * 3  # two dependent rows
    check(r, m, "det_lu", [{"a": rand(3, 9, 9)}, {"a": singular}], atol=1e-3)
    # Symbolic M: the sequential LU kernel (relax.linalg.det_lu), one artifact for any size.
    m = one(helper.make_node("Det", ["a"], ["y"]), [vi("a", F, ["b", "m", "m"])], 11, 1)
    check(r, m, "det_symbolic", [{"a": rand(3, 9, 9)}, {"a": singular}, {"a": rand(2, 1, 1)},
                                 {"a": rand(1, 40, 40, scale=0.5)}], atol=1e-3)
    m = one(helper.make_node("Col2Im", ["x", "img", "blk"], ["y"], strides=[2, 1]),
            [vi("x", F, ["n", "ck", "l"]), vi("img", I64, [2]), vi("blk", I64, [2])], 18)
    check(r, m, "col2im", [
        {"x": rand(2, 12, 12), "img": np.array([8, 5], np.int64),
         "blk": np.array([2, 3], np.int64)},
        {"x": rand(1, 4, 4), "img": np.array([5, 3], np.int64),
         "blk": np.array([2, 2], np.int64)}])
    m = one(helper.make_node("CenterCropPad", ["x", "s"], ["y"], axes=[1, -1]),
            [vi("x", F, ["n", "h", "w"]), vi("s", I64, [2])], 18, 3)
    check(r, m, "center_crop_pad", [
        {"x": rand(2, 5, 6), "s": np.array([8, 3], np.int64)},
        {"x": rand(1, 9, 2), "s": np.array([4, 5], np.int64)}])
    m = one(helper.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0),
            [vi("x", F, ["t", "b", 2]), vi("l", I64, ["b"])], 10, 3)
    check(r, m, "reverse_sequence", [{"x": rand(5, 3, 2), "l": np.array([1, 5, 3], np.int64)}])
    m = model([helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2]),
               helper.make_node("MaxUnpool", ["p", "i", "s"], ["y"], kernel_shape=[2, 2],
                                strides=[2, 2])],
              [vi("x", F, ["n", "c", "h", "w"]), vi("s", I64, [4])], [vi("y", F, [None] * 4)],
              opset=11)
    check(r, m, "maxunpool", [
        {"x": rand(2, 3, 4, 6), "s": np.array([2, 3, 5, 7], np.int64)},
        {"x": rand(1, 1, 2, 2), "s": np.array([1, 1, 2, 2], np.int64)}])


def case_pads(r):
    """Pads that the CPU schedule splits into guarded borders and an unguarded, vectorized
    interior (schedule/pad_interior.h), per channel plane for depthwise convs
    (schedule/depthwise.h PlanePad), phase-split for stride 2: symbolic and static widths from
    1 (no interior) to 33, odd and even, asymmetric pads, against onnx.reference."""
    widths = [1, 2, 3, 5, 14, 17, 33]
    for stride, pads in [(1, [1, 1, 1, 1]), (2, [1, 1, 1, 1]), (2, [0, 2, 1, 0]), (1, [2, 0, 0, 3])]:
        tag = f"s{stride}_p{''.join(map(str, pads))}"
        dw = model([helper.make_node("Conv", ["x", "w"], ["c"], group=8, kernel_shape=[3, 3],
                                     strides=[stride, stride], pads=pads),
                    helper.make_node("Clip", ["c", "lo", "hi"], ["y"])],
                   [vi("x", F, ["n", 8, "h", "w"]), vi("w", F, [8, 1, 3, 3]), vi("lo", F, []),
                    vi("hi", F, [])], [vi("y", F, [None] * 4)], opset=13)
        lo, hi = np.array(-0.5, np.float32), np.array(0.75, np.float32)
        feeds = [{"x": rand(1 + (k % 2), 8, 4 + k, wd), "w": rand(8, 1, 3, 3), "lo": lo, "hi": hi}
                 for k, wd in enumerate(widths)]
        check(r, dw, f"depthwise_{tag}", feeds)
        dense = one(helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3],
                                     strides=[stride, stride], pads=pads),
                    [vi("x", F, ["n", 3, "h", "w"]), vi("w", F, [4, 3, 3, 3])], 13)
        check(r, dense, f"conv_{tag}",
              [{"x": rand(1, 3, 5, wd), "w": rand(4, 3, 3, 3)} for wd in widths])
        if pads != [1, 1, 1, 1]:
            continue  # a max pool window wholly in the padding has no value (onnx.reference)
        mp = one(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                  strides=[stride, stride], pads=pads),
                 [vi("x", F, ["n", "c", "h", "w"])], 13)
        check(r, mp, f"maxpool_{tag}", [{"x": rand(1, 2, 6, wd)} for wd in widths])
    # Static narrow planes (MobileNet's 7- and 14-wide ones): masked 7 -> 8 and 14 -> 16 lanes.
    for wd in (7, 14):
        m = one(helper.make_node("Conv", ["x", "w"], ["y"], group=16, kernel_shape=[3, 3],
                                 pads=[1, 1, 1, 1]),
                [vi("x", F, [1, 16, wd, wd]), vi("w", F, [16, 1, 3, 3])], 13)
        check(r, m, f"depthwise_static_{wd}", [{"x": rand(1, 16, wd, wd), "w": rand(16, 1, 3, 3)}])
    m = one(helper.make_node("Pad", ["x", "p"], ["y"], mode="constant"),
            [vi("x", F, ["n", "c", "h", "w"]), vi("p", I64, [8])], 13)
    check(r, m, "pad_constant", [
        {"x": rand(1, 2, 3, wd), "p": np.array([0, 0, 1, 3, 0, 1, 2, 0], np.int64)}
        for wd in (1, 4, 19)])


def case_runtime_checks(r):
    """Col2Im operands that disagree with the input's shape are run-time errors."""
    m = one(helper.make_node("Col2Im", ["x", "img", "blk"], ["y"], name="c2i"),
            [vi("x", F, [1, 4, "l"]), vi("img", I64, [2]), vi("blk", I64, [2])], 18)
    so = r.compile(m, "col2im_check")
    r.run(so, {"x": rand(1, 4, 6), "img": np.array([5, 3], np.int64),
               "blk": np.array([2, 2], np.int64)}, expect_error="Col2Im 'c2i'")
    r.run(so, {"x": rand(1, 4, 4), "img": np.array([5, 3], np.int64),
               "blk": np.array([3, 2], np.int64)}, expect_error="Col2Im 'c2i'")
    print("PASS: col2im shape checks")


def compile_error(r, m, name, message):
    path = r.path(name + ".onnx")
    onnx.save(m, path)
    p = subprocess.run([r.relaxc, "compile", path, "-o", r.path(name + ".so")], capture_output=True,
                       text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 1 or message not in p.stderr:
        raise SystemExit(f"FAIL: {name}: expected exit 1 with '{message}', got {p.returncode}")
    print(f"PASS: {name} refused: {message}")


def case_errors(r):
    """Unsupported attribute values are clean compile errors naming the node and attribute."""
    x4 = vi("x", F, [1, 1, 4, 4])
    g = vi("g", F, [1, 2, 2, 2])
    compile_error(r, one(helper.make_node("GridSample", ["x", "g"], ["y"], name="gs", mode="area"),
                         [x4, g], 20), "gs_mode", "GridSample 'gs'")
    compile_error(r, one(helper.make_node("GridSample", ["x", "g"], ["y"], name="gs",
                                          padding_mode="wrap"), [x4, g], 20),
                  "gs_pad", "attribute padding_mode='wrap'")
    compile_error(r, one(helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], name="roi",
                                          mode="min"),
                         [x4, vi("r", F, [2, 4]), vi("b", I64, [2])], 16),
                  "roi_mode", "RoiAlign 'roi': attribute mode='min'")
    compile_error(r, one(helper.make_node("Einsum", ["x"], ["y"], name="ein", equation="ij->k"),
                         [vi("x", F, [3, 4])], 12, 1), "einsum_letter", "Einsum 'ein'")
    compile_error(r, one(helper.make_node("Einsum", ["x"], ["y"], name="ein", equation="i+j"),
                         [vi("x", F, [3, 4])], 12, 1), "einsum_char", "attribute equation")
    compile_error(r, one(helper.make_node("Det", ["x"], ["y"], name="det"),
                         [vi("x", TensorProto.INT32, [3, 3])], 11, 0), "det_int", "Det 'det'")
    compile_error(r, one(helper.make_node("ReverseSequence", ["x", "l"], ["y"], name="rs",
                                          batch_axis=0, time_axis=2),
                         [vi("x", F, [2, 3, 4]), vi("l", I64, [2])], 10, 3),
                  "rs_axes", "attributes batch_axis=0, time_axis=2")
    compile_error(r, one(helper.make_node("DeformConv", ["x", "w", "o"], ["y"], name="dc"),
                         [vi("x", F, [1, 1, 3, 3, 3]), vi("w", F, [1, 1, 2, 2, 2]),
                          vi("o", F, [1, 24, 2, 2, 2])], 19, 5), "dc_3d", "DeformConv 'dc'")


CASES = {f.__name__[5:]: f for f in (case_symbolic, case_pads, case_runtime_checks, case_errors)}


def main():
    return cases_main(CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# relaxc vs onnxruntime (the test venv's pin, 1.32) on the ONNX numerics edge cases where
# compilers go silently wrong (issue 32): pooling windows that ceil_mode adds, exclusive /
# reverse CumSum, integer matmuls with zero points, float Range lengths, trigonometric functions
# of large arguments, fmod of far-apart magnitudes; and negative shape values. Each case is
# written from the operator text; the comment says where onnxruntime departs from the ONNX
# reference implementation.
"""Usage: edge_cases.py --relaxc RELAXC --work DIR [FAMILY ...] (default: every family)."""
import os
import sys

import numpy as np
from onnx import AttributeProto, TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nn_cases  # noqa: E402
from nn_cases import case, node  # noqa: E402

F32 = TensorProto.FLOAT


def pool_edge_cases():
    # AveragePool (opset 19) with ceil_mode = 1 and pads: the divisor counts the explicit pads
    # (count_include_pad = 1) but never the cells ceil_mode adds past them, and a window that
    # would start in the trailing pad is dropped (onnxruntime 1.32 and PyTorch; the ONNX
    # reference implementation also counts the ceil-mode cells).
    for k, s, pads, dil in (([3, 3], [2, 2], [1, 1, 1, 1], [1, 1]), ([2, 2], [2, 2], [1, 1, 1, 1], [1, 1]),
                            ([3, 2], [2, 3], [1, 0, 2, 1], [1, 1]), ([2, 2], [2, 2], [1, 1, 1, 1], [2, 2])):
        for cip in (0, 1):
            name = f"AveragePool_ceil_k{'x'.join(map(str, k))}_s{'x'.join(map(str, s))}" \
                   f"_p{''.join(map(str, pads))}_d{dil[0]}_cip{cip}"
            case("pool_edge", name,
                 [node("AveragePool", ["x"], kernel_shape=k, strides=s, pads=pads, dilations=dil,
                       ceil_mode=1, count_include_pad=cip)],
                 [("x", [1, 2, "h", "w"])], ["y"], opset=19,
                 shapes=[{"x": [1, 2, 6, 6]}, {"x": [1, 2, 5, 7]}, {"x": [1, 2, 8, 9]}])
    # MaxPool with the same windows: the dropped window and the ceil-mode cells never win.
    case("pool_edge", "MaxPool_ceil_drop",
         [node("MaxPool", ["x"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1],
               ceil_mode=1)],
         [("x", [1, 1, "h", "w"])], ["y"], opset=12,
         shapes=[{"x": [1, 1, 5, 5]}, {"x": [1, 1, 6, 7]}])


def scan_edge_cases():
    # CumSum with every exclusive / reverse combination, the axis an int32 input given at run
    # time, also on an axis of length 1.
    for ex in (0, 1):
        for rv in (0, 1):
            case("scan_edge", f"CumSum_e{ex}_r{rv}",
                 [node("CumSum", ["x", "axis"], exclusive=ex, reverse=rv)],
                 [("x", ["n", "m"]), ("axis", [])], ["y"],
                 dtypes={"axis": TensorProto.INT32},
                 shapes=[{"x": [3, 5], "axis": []}, {"x": [4, 1], "axis": []}],
                 gen=lambda r, sh: (np.array(1, np.int32) if sh == []
                                    else r.standard_normal(sh).astype(np.float32)))


def intmm_edge_cases():
    # MatMulInteger: uint8 x int8 with a per-column b_zero_point, int8 x uint8 with a scalar one;
    # the zero points subtracted in a wider type (no wrap-around).
    rng = np.random.default_rng(7)
    a_u8 = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    b_i8 = rng.integers(-128, 128, (4, 5)).astype(np.int8)
    by_shape = {(3, 4): a_u8, (4, 5): b_i8, (5, 4): b_i8.T.copy(), (4, 3): a_u8.T.copy()}
    gen = lambda r, sh: by_shape[tuple(sh)]  # noqa: E731
    case("intmm_edge", "MatMulInteger_u8_i8_column_zp",
         [node("MatMulInteger", ["a", "b", "az", "bz"])], [("a", [3, 4]), ("b", [4, 5])], ["y"],
         [("az", np.array(255, np.uint8)), ("bz", np.array([-128, 127, 0, 5, -7], np.int8))],
         opset=10, dtypes={"a": TensorProto.UINT8, "b": TensorProto.INT8}, gen=gen,
         out_types={"y": TensorProto.INT32})
    case("intmm_edge", "MatMulInteger_i8_u8",
         [node("MatMulInteger", ["a", "b", "az", "bz"])], [("a", [5, 4]), ("b", [4, 3])], ["y"],
         [("az", np.array(-128, np.int8)), ("bz", np.array(200, np.uint8))], opset=10,
         dtypes={"a": TensorProto.INT8, "b": TensorProto.UINT8}, gen=gen,
         out_types={"y": TensorProto.INT32})
    # QLinearMatMul: requantisation rounds half to even and saturates.
    qa = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    qb = rng.integers(0, 256, (4, 5)).astype(np.uint8)
    case("intmm_edge", "QLinearMatMul_round_saturate",
         [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"])],
         [("a", [3, 4]), ("b", [4, 5])], ["y"],
         [("as", np.array(0.05, np.float32)), ("az", np.array(120, np.uint8)),
          ("bs", np.array(0.04, np.float32)), ("bz", np.array(130, np.uint8)),
          ("ys", np.array(0.125, np.float32)), ("yz", np.array(128, np.uint8))], opset=10,
         dtypes={"a": TensorProto.UINT8, "b": TensorProto.UINT8},
         gen=lambda r, sh: qa if tuple(sh) == (3, 4) else qb, out_types={"y": TensorProto.UINT8})


def math_edge_cases():
    # Range with float operands: the length in float64 (onnxruntime and numpy give 4 elements
    # for Range(0, 0.3, 0.1); float32 arithmetic gives 3).
    case("math_edge", "Range_float_length",
         [node("Range", ["a", "l", "d"])], [("a", []), ("l", []), ("d", [])], ["y"], opset=11,
         shapes=[{"a": [], "l": [], "d": []}],
         gen=lambda r, sh, it=iter([0.0, 0.3, 0.1]): np.array(next(it), np.float32))
    # Sin, Cos and Tan of large float32 arguments (an exact argument reduction: within 1 ulp).
    big = np.array([1e18, 1e12, 3e9, -1e15, 1e30, 123456.7, 3.4e38, -2.5e-40, 0.0, 1.5707964],
                   np.float32)
    for op in ("Sin", "Cos", "Tan"):
        case("math_edge", f"{op}_large_arguments", [node(op, ["x"])], [("x", [10])], ["y"],
             opset=7, gen=lambda r, sh: big)
    # Mod with fmod = 1: exact whatever the magnitudes (fmod(1e20, 3) = 2), the dividend's sign,
    # fmod(x, inf) = x, fmod(x, 0) and fmod(inf, y) NaN.
    a = np.array([1e20, -1e20, 7.5, 1e10, 3e38, -5.5, 4.0, np.inf, 2.0], np.float32)
    b = np.array([3.0, 3.0, -2.0, 7.0, 1.1e-38, np.inf, 0.0, 2.0, -0.75], np.float32)
    feeds = iter([a, b])
    case("math_edge", "Mod_fmod_far_apart", [node("Mod", ["a", "b"], fmod=1)],
         [("a", [9]), ("b", [9])], ["y"], opset=13, gen=lambda r, sh: next(feeds))


def math_ulp_cases():
    # Sin, Cos and Tan in ulps of the correctly rounded result (the float64 C library's value of
    # each float32 argument): 40,000 arguments of every binade up to 3.4e38, both signs, and
    # 4,000 next to multiples of pi/2 (the hardest to reduce); within 1 ulp on the cpu and 4 on
    # a GPU (issue 32). Mod with fmod = 1 on far-apart magnitudes: exact everywhere (float64's
    # fmod of two float32 values is exact and a float32).
    rng = np.random.default_rng(7)
    n = 40000
    mags = np.exp2(rng.uniform(-24, 128, n)) * rng.choice([-1.0, 1.0], n)
    k = rng.integers(1, 1 << 40, 4000).astype(np.float64)
    near = np.nextafter((k * (np.pi / 2)).astype(np.float32), np.float32(np.inf))
    x = np.concatenate([mags.astype(np.float32), near]).astype(np.float32)
    x = x[np.isfinite(x)]
    fns = {"Sin": np.sin, "Cos": np.cos, "Tan": np.tan}
    for op, fn in fns.items():
        name = f"{op}_ulp"
        case("math_ulp", name, [node(op, ["x"])], [("x", [x.size])], ["y"], opset=7,
             gen=lambda r, sh, x=x: x)
        nn_cases.CUSTOM_REFERENCE[name] = lambda m, feeds, fn=fn: (
            ["y"], [fn(feeds["x"].astype(np.float64))])
        nn_cases.ULP_LIMIT[name] = (1, 4)
    a = (np.exp2(rng.uniform(-126, 128, n)) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    b = (np.exp2(rng.uniform(-149, 40, n)) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    a, b = a[np.isfinite(a) & (b != 0)], b[np.isfinite(a) & (b != 0)]
    feeds = iter([a, b])
    case("math_ulp", "Mod_fmod_ulp", [node("Mod", ["a", "b"], fmod=1)],
         [("a", [a.size]), ("b", [b.size])], ["y"], opset=13, gen=lambda r, sh: next(feeds))
    nn_cases.CUSTOM_REFERENCE["Mod_fmod_ulp"] = lambda m, feeds: (
        ["y"], [np.fmod(feeds["a"].astype(np.float64), feeds["b"].astype(np.float64))])
    nn_cases.ULP_LIMIT["Mod_fmod_ulp"] = (0, 0)


# NaN, infinities and signed zeros through every float elementwise op: results must match
# onnxruntime (NaN where it gives NaN, infinities of its sign) on every target, vulkan included
# (GLSL.std.450 leaves pow and fmod undefined there; lavapipe gave pow(NaN, 2) = 0,
# pow(-2.5, 0.5) = 0, fmod(1, inf) = NaN). Binary ops run every pair of the values. Large
# arguments (sin(1e30), fmod(1e30, 1e-30)) are math_edge's and math_ulp's.
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -0.125],
                   np.float32)
UNARY_SPECIAL = ("Abs", "Neg", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                 "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh", "Erf", "Sigmoid", "Relu",
                 "Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Floor",
                 "Ceil", "Round", "Sign", "Reciprocal", "LeakyRelu", "Mish", "ThresholdedRelu",
                 "Celu")
BINARY_SPECIAL = (("Add", {}), ("Sub", {}), ("Mul", {}), ("Div", {}), ("Pow", {}), ("Max", {}),
                  ("Min", {}), ("Mod", {"fmod": 1}), ("PRelu", {}))


def special_value_cases():
    n = SPECIAL.size
    for op in UNARY_SPECIAL:
        case("special_values", op, [node(op, ["x"])], [("x", [n])], ["y"], opset=18,
             gen=lambda r, sh: SPECIAL.copy())
    a = np.repeat(SPECIAL, n)  # every pair (a[i], b[i])
    b = np.tile(SPECIAL, n)
    for op, attrs in BINARY_SPECIAL:
        feeds = iter([a, b])
        case("special_values", op, [node(op, ["a", "b"], **attrs)], [("a", [n * n]), ("b", [n * n])],
             ["y"], opset=18, gen=lambda r, sh, it=feeds: next(it))


def einsum_edge_cases():
    # Ellipsis batch dims that broadcast (static 1s against 2 and 5): [2, 1, 3, 4] x [1, 5, 4, 2].
    # Symbolic batch dims follow relaxc's broadcasting policy (equal unless statically 1).
    case("einsum_edge", "Einsum_ellipsis_broadcast",
         [node("Einsum", ["a", "b"], equation="...ij,...jk->...ik")],
         [("a", [2, 1, 3, 4]), ("b", [1, 5, 4, 2])], ["y"], opset=12)


def shape_value_edge_cases():
    # Integer values computed from Shape may be negative (only dims may not): Neg(Shape(x)), a
    # Slice start of -(b // 2), Range(-b, 0, 1); each used to fail at run time ("dim 0 evaluates
    # to negative size", naming no node). Symbolic b at two sizes.
    i64 = TensorProto.INT64
    shapes = [{"x": [6, 4]}, {"x": [3, 4]}]
    scalar = lambda name, v: (name, np.array(v, np.int64))  # noqa: E731
    case("shape_value_edge", "Neg_of_Shape",
         [node("Shape", ["x"], ["s"]), node("Neg", ["s"], ["y"])], [("x", ["b", 4])], ["y"],
         shapes=shapes, out_types={"y": i64})
    case("shape_value_edge", "Slice_negative_start_from_Shape",
         [node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["b"], axis=0),
          node("Div", ["b", "two"], ["h"]), node("Neg", ["h"], ["st"]),
          node("Unsqueeze", ["st", "ax"], ["st1"]), node("Slice", ["x", "st1", "end", "ax"])],
         [("x", ["b", 4])], ["y"],
         [scalar("zero", 0), scalar("two", 2), ("ax", np.array([0], np.int64)),
          ("end", np.array([1000], np.int64))], shapes=shapes)
    case("shape_value_edge", "Range_from_negative_Shape",
         [node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["b"], axis=0),
          node("Neg", ["b"], ["nb"]), node("Range", ["nb", "z", "one"])],
         [("x", ["b", 4])], ["y"], [scalar("zero", 0), scalar("z", 0), scalar("one", 1)],
         shapes=shapes, out_types={"y": i64})
    # A value of either sign: b - 4 (negative for b = 3, positive for b = 6).
    case("shape_value_edge", "Shape_minus_constant_either_sign",
         [node("Shape", ["x"], ["s"]), node("Sub", ["s", "four"], ["y"])], [("x", ["b"])], ["y"],
         [("four", np.array([4], np.int64))], shapes=[{"x": [6]}, {"x": [3]}],
         out_types={"y": i64})
    # A constant index table sliced up to a dim read from Shape, then gathered with (BERT's
    # position ids): constant starts and steps with run-time ends (the slice takes its first
    # indices as constants; the Gather's index check is decided from the table's bounds), the
    # sequence longer than the table (the slice clamps), and a negative step.
    table = np.arange(8, dtype=np.int64).reshape(1, 8)
    emb = np.random.default_rng(3).standard_normal((8, 3)).astype(np.float32)
    seq = [{"x": [1, 5]}, {"x": [1, 8]}, {"x": [1, 12]}]
    case("shape_value_edge", "Slice_constant_table_to_Shape_then_Gather",
         [node("Shape", ["x"], ["s"]), node("Gather", ["s", "one"], ["n"], axis=0),
          node("Unsqueeze", ["n", "ax"], ["end"]),
          node("Slice", ["table", "zero1", "end", "ax1", "one1"], ["ids"]),
          helper.make_node("Gather", ["emb", "ids"], ["y"], name="gather1")],
         [("x", [1, "s"])], ["y"],
         [scalar("one", 1), ("ax", np.array([0], np.int64)), ("zero1", np.array([0], np.int64)),
          ("ax1", np.array([1], np.int64)), ("one1", np.array([1], np.int64)), ("table", table),
          ("emb", emb)], shapes=seq)
    case("shape_value_edge", "Slice_negative_step_runtime_end",
         [node("Shape", ["x"], ["s"]), node("Gather", ["s", "one"], ["n"], axis=0),
          node("Sub", ["three", "n"], ["e"]), node("Unsqueeze", ["e", "ax"], ["end"]),
          node("Slice", ["x", "m2", "end", "ax1", "m1"])],
         [("x", [2, "s"])], ["y"],
         [scalar("one", 1), scalar("three", 3), ("ax", np.array([0], np.int64)),
          ("m2", np.array([-2], np.int64)), ("ax1", np.array([1], np.int64)),
          ("m1", np.array([-1], np.int64))],
         shapes=[{"x": [2, 5]}, {"x": [2, 2]}, {"x": [2, 9]}])
    # A graph output declaring only its element type (make_tensor_value_info(name, FLOAT, None),
    # the usual way to expose an intermediate for debugging): the ONNX checker wants a shape,
    # onnxruntime runs it, so relaxc does (its shape is inferred).
    case("shape_value_edge", "Output_without_shape",
         [node("Relu", ["x"], ["r"]), node("Add", ["r", "x"])], [("x", ["b", 4])], ["y"],
         shapes=[{"x": [2, 4]}, {"x": [5, 4]}])
    nn_cases.CASES["shape_value_edge"][-1][1].graph.output[0].type.tensor_type.ClearField("shape")


def slice_edge_cases():
    # Slice with constant starts, axes and steps and ends given at run time (the strided_slice
    # whose output dims come from shape code): starts and ends beyond either end, INT64
    # extremes, negative and large steps, axes in any order and negative, symbolic dims. (With a
    # negative step, onnxruntime 1.32 reads an INT64_MAX end as "through index 0"; the ONNX
    # reference clamps it to dim - 1, an empty slice, as relaxc does: such ends are not drawn.)
    i64 = TensorProto.INT64
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    rng = np.random.default_rng(11)
    for i in range(12):
        r = int(rng.integers(1, 4))
        k = int(rng.integers(1, r + 1))
        axes = [int(a) - (r if rng.random() < 0.3 else 0)
                for a in rng.permutation(r)[:k]]
        starts = [int(rng.choice([-100, -3, -1, 0, 1, 2, 100, big, small])) for _ in axes]
        steps = [int(rng.choice([1, 1, 2, 3, -1, -2, big, small + 1])) for _ in axes]
        sym = [f"d{j}" if rng.random() < 0.5 else 5 for j in range(r)]
        # (a 1-D x is at least 2 long, so its shape never equals the ends' [1] in `gen`)
        shapes = [{"x": [int(rng.integers(2 if r == 1 else 1, 7)) if isinstance(d, str) else d
                         for d in sym], "e": [k]} for _ in range(2)]

        ends = [-100, -4, -1, 0, 1, 3, 5, 100, small] + ([] if min(steps) < 0 else [big])
        case("slice_edge", f"Slice_runtime_ends_{i}",
             [node("Slice", ["x", "st", "e", "ax", "sp"])], [("x", sym), ("e", [k])], ["y"],
             [("st", np.array(starts, np.int64)), ("ax", np.array(axes, np.int64)),
              ("sp", np.array(steps, np.int64))], dtypes={"e": i64}, shapes=shapes, seed=i,
             gen=lambda g, sh, _k=k, _e=ends: (
                 np.array([g.choice(_e) for _ in range(_k)], np.int64) if sh == [_k] else g.standard_normal(sh).astype(np.float32)))


def declare_output_rank(family, rank):
    # The last case's output declared with `rank` symbolic dims (ONNX shape inference cannot
    # give a rank that depends on a dim's value).
    out = nn_cases.CASES[family][-1][1].graph.output[0]
    out.type.tensor_type.ClearField("shape")
    for j in range(rank):
        out.type.tensor_type.shape.dim.add().dim_param = f"o{j}"


def symbolic_shape_cases():
    # Ops whose parameters depend on symbolic dims (issue 32), each run at two sizes:
    i64 = TensorProto.INT64
    # GatherND whose index depth (the last dim of indices) is symbolic: the result's rank is the
    # one the model declares, the depth checked at run time.
    for b, xs, rank, sh in ((0, [4, 5, 6], 2, [[2, 2], [3, 2]]), (0, [4, 5, 6], 1, [[3, 3], [1, 3]]),
                            (1, [2, 5, 6], 2, [[2, 1], [2, 1]])):
        case("symbolic_shape", f"GatherND_symbolic_depth_b{b}_r{rank}",
             [node("GatherND", ["x", "i"], batch_dims=b)], [("x", xs), ("i", ["n", "q"])], ["y"],
             dtypes={"i": i64}, shapes=[{"x": xs, "i": s} for s in sh],
             gen=lambda g, s, _xs=xs, _b=b: (
                 g.integers(-2, 2, s).astype(np.int64) if len(s) == 2 and s != _xs[:2]
                 else g.standard_normal(s).astype(np.float32)))
        declare_output_rank("symbolic_shape", rank)
    # ConvTranspose with output_shape over symbolic spatial dims: the crop depends on the input
    # extent (also an output_shape beyond the full extent: zeros at the end; SAME_UPPER's split).
    w = np.random.default_rng(5).standard_normal((2, 3, 3, 3)).astype(np.float32)
    bias = np.array([0.5, -1.0, 2.0], np.float32)
    # (onnxruntime accepts an output_shape up to stride - 1 beyond the full extent F =
    # s (in - 1) + (k - 1) d + 1, as zeros at the end; h = 4, 5 and w = 4, 6 below.)
    for name, attrs in (("out_7x8", dict(strides=[2, 2], output_shape=[7, 8])),
                        ("out_beyond", dict(strides=[2, 3], output_shape=[10, 13])),
                        ("out_upper", dict(strides=[2, 3], output_shape=[9, 10], auto_pad="SAME_UPPER")),
                        ("out_dil", dict(strides=[1, 2], dilations=[2, 1], output_shape=[6, 9]))):
        case("symbolic_shape", f"ConvTranspose_output_shape_symbolic_{name}",
             [node("ConvTranspose", ["x", "w", "b"], **attrs)], [("x", [1, 2, "h", "w"])], ["y"],
             [("w", w), ("b", bias)], shapes=[{"x": [1, 2, 4, 4]}, {"x": [1, 2, 5, 6]}])
    # Reduce* whose axes input has a symbolic length (and is empty at run time).
    for noop in (0, 1):
        for op in ("ReduceSum", "ReduceMax"):
            case("symbolic_shape", f"{op}_axes_symbolic_length_noop{noop}",
                 [node(op, ["x", "a"], keepdims=1, noop_with_empty_axes=noop)],
                 [("x", [2, 3, 4]), ("a", ["k"])], ["y"], opset=18, dtypes={"a": i64},
                 shapes=[{"x": [2, 3, 4], "a": [2]}, {"x": [2, 3, 4], "a": [0]}],
                 gen=lambda g, s: (np.array([0, -1], np.int64)[:s[0]] if len(s) == 1
                                   else g.standard_normal(s).astype(np.float32)))
    case("symbolic_shape", "ReduceMean_axes_symbolic_length_keepdims0",
         [node("ReduceMean", ["x", "a"], keepdims=0)], [("x", [2, 3, 4]), ("a", ["k"])], ["y"],
         opset=18, dtypes={"a": i64}, shapes=[{"x": [2, 3, 4], "a": [2]}] * 2,
         gen=lambda g, s: (np.array([2, 0], np.int64) if len(s) == 1
                           else g.standard_normal(s).astype(np.float32)))
    declare_output_rank("symbolic_shape", 1)


def walk_forest(model, feeds):
    """TreeEnsemble-5 by the operator text: every tree walked from its root per sample."""
    from onnx import numpy_helper
    n = model.graph.node[0]
    a = {t.name: (numpy_helper.to_array(t.t) if t.type == AttributeProto.TENSOR else
                  helper.get_attribute_value(t)) for t in n.attribute}
    modes, sets, values = list(a["nodes_modes"]), {}, iter(list(a.get("membership_values", [])))
    for k, mode in enumerate(modes):
        if mode == 6:
            sets[k] = []
            for v in values:
                if np.isnan(v):
                    break
                sets[k].append(v)
    mtt = a.get("nodes_missing_value_tracks_true", [0] * len(modes))
    x = feeds["x"]
    votes = [[[] for _ in range(a["n_targets"])] for _ in range(len(x))]
    for i, row in enumerate(x):
        for node in a["tree_roots"]:
            while True:
                v, sp = row[a["nodes_featureids"][node]], a["nodes_splits"][node]
                go = [v <= sp, v < sp, v >= sp, v > sp, v == sp, v != sp,
                      v in sets.get(node, [])][modes[node]] or bool(np.isnan(v) and mtt[node])
                nxt = (a["nodes_truenodeids"] if go else a["nodes_falsenodeids"])[node]
                if (a["nodes_trueleafs"] if go else a["nodes_falseleafs"])[node]:
                    votes[i][a["leaf_targetids"][nxt]].append(a["leaf_weights"][nxt])
                    break
                node = nxt
    agg = a.get("aggregate_function", 1)
    fn = {0: lambda w: sum(w) / len(a["tree_roots"]), 1: sum, 2: min, 3: max}[agg]
    y = np.array([[fn(w) if w else 0.0 for w in row] for row in votes], x.dtype)
    return ["y"], [y]


def tree_ensemble_cases():
    # ai.onnx.ml TreeEnsemble (opset 5), lowered to dense tensor ops: random forests of 1 to 5
    # trees up to depth 4 with every comparison mode (set membership included), NaN sent to the
    # true branch where nodes_missing_value_tracks_true says so, each aggregate function, and the
    # post transforms NONE, SOFTMAX, LOGISTIC; float and double; inputs with NaN and values equal
    # to the splits (EQ/NEQ, LEQ vs LT). Reference: onnxruntime 1.32; for forests with
    # set-membership nodes `walk_forest` below, written from the operator text (onnxruntime 1.32
    # takes only integer set values and sent samples down the wrong branch of such trees, checked
    # by hand on one; the ONNX reference ends a set at a 0 and differs on others). As in
    # onnxruntime 1.32: post_transform is not applied (the ONNX reference does not either), and
    # a target no reached leaf votes for is 0 under MIN/MAX.
    from onnx import numpy_helper
    feats = 3

    def forest(rng, n_trees, n_targets, dtype, member):
        a = {k: [] for k in ("feat", "split", "mode", "tn", "fn", "tl", "fl", "mtt")}
        members, leaf_t, leaf_w, roots = [], [], [], []

        def grow(depth):
            if depth == 0 or rng.random() < 0.25:
                leaf_t.append(int(rng.integers(0, n_targets)))
                leaf_w.append(float(np.round(rng.standard_normal() * 10, 2)))
                return True, len(leaf_t) - 1
            k = len(a["feat"])
            mode = int(rng.integers(0, 7 if member else 6))
            for key, v in (("feat", int(rng.integers(0, feats))), ("split", float(rng.integers(-2, 3))),
                           ("mode", mode), ("tn", 0), ("fn", 0), ("tl", 0), ("fl", 0),
                           ("mtt", int(rng.integers(0, 2)))):
                a[key].append(v)
            if mode == 6:
                # (no 0 in a set: the ONNX reference ends a set at a 0, its loop tests the
                # value's truth)
                members.extend([float(v) for v in rng.choice([-2, -1, 1, 2], 2, replace=False)]
                               + [np.nan])
            for side in ("t", "f"):
                leaf, idx = grow(depth - 1)
                a[side + "l"][k], a[side + "n"][k] = int(leaf), idx
            return False, k

        for _ in range(n_trees):
            leaf, idx = grow(4)
            if leaf:  # a one-leaf tree: a node whose branches both reach the leaf
                k = len(a["feat"])
                for key, v in (("feat", 0), ("split", 0.0), ("mode", 0), ("tn", idx), ("fn", idx),
                               ("tl", 1), ("fl", 1), ("mtt", 0)):
                    a[key].append(v)
                idx = k
            roots.append(idx)
        np_t = np.float64 if dtype == TensorProto.DOUBLE else np.float32
        attrs = dict(nodes_featureids=a["feat"], nodes_truenodeids=a["tn"], nodes_falsenodeids=a["fn"],
                     nodes_trueleafs=a["tl"], nodes_falseleafs=a["fl"],
                     nodes_missing_value_tracks_true=a["mtt"],
                     nodes_splits=numpy_helper.from_array(np.array(a["split"], np_t)),
                     nodes_modes=numpy_helper.from_array(np.array(a["mode"], np.uint8)),
                     leaf_targetids=leaf_t, leaf_weights=numpy_helper.from_array(np.array(leaf_w, np_t)),
                     tree_roots=roots, n_targets=n_targets)
        if members:
            attrs["membership_values"] = numpy_helper.from_array(np.array(members, np_t))
        return attrs

    def gen(dtype):
        def f(r, sh):
            v = r.integers(-3, 4, sh).astype(np.float64) + np.where(r.random(sh) < 0.5, 0.0, 0.5)
            v[r.random(sh) < 0.1] = np.nan
            return v.astype(np.float64 if dtype == TensorProto.DOUBLE else np.float32)
        return f

    rng = np.random.default_rng(7)
    for i, (agg, post, dtype) in enumerate([(1, 0, TensorProto.FLOAT), (0, 0, TensorProto.FLOAT),
                                            (2, 0, TensorProto.FLOAT), (3, 0, TensorProto.DOUBLE),
                                            (1, 1, TensorProto.FLOAT), (1, 2, TensorProto.DOUBLE),
                                            (0, 0, TensorProto.DOUBLE), (3, 2, TensorProto.FLOAT)]):
        n_trees, n_targets = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        member = i >= 4
        attrs = forest(rng, n_trees, n_targets, dtype, member)
        n = helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", name="trees0",
                             aggregate_function=agg, post_transform=post, **attrs)
        case("tree_ensemble", f"TreeEnsemble_{i}_agg{agg}_post{post}_t{n_trees}",
             [n], [("x", ["n", feats])], ["y"], opset=21, dtypes={"x": dtype},
             out_types={"y": dtype}, shapes=[{"x": [16, feats]}, {"x": [5, feats]}], seed=i,
             gen=gen(dtype), domains={"ai.onnx.ml": 5})
        if member:
            nn_cases.CUSTOM_REFERENCE[nn_cases.CASES["tree_ensemble"][-1][0]] = walk_forest


def diff_fuzz_cases():
    # Found by the differential fuzzer (test/fuzz/diff_fuzz, issue 33).
    # Shrink on integers with a fractional bias: x -/+ bias in float, truncated toward zero
    # (2 - 0.25 -> 1); relaxc truncated the bias first (2 - 0 -> 2).
    for dt, np_t in ((TensorProto.INT8, np.int8), (TensorProto.UINT64, np.uint64)):
        case("diff_fuzz", f"Shrink_{np.dtype(np_t).name}_fractional_bias",
             [node("Shrink", ["x"], bias=0.25, lambd=1.1)], [("x", ["n", 5])], ["y"],
             opset=18, dtypes={"x": dt}, out_types={"y": dt},
             shapes=[{"x": [2, 5]}, {"x": [3, 5]}],
             gen=lambda r, sh, t=np_t: r.integers(0 if t == np.uint64 else -5, 6, sh).astype(t))

    # Atan(Atan(Atan(x))) and Asin(Asin(x)): Atan was a TIR formula naming its operand ~50 times,
    # so nesting multiplied the expression (Atan(Atan(x)) exhausted 22 GB while compiling); it is
    # one intrinsic now.
    case("diff_fuzz", "Atan_nested3",
         [helper.make_node("Atan", [i], [o], name=f"atan{k}")
          for k, (i, o) in enumerate((("x", "a"), ("a", "b"), ("b", "y")))],
         [("x", ["n"])], ["y"], shapes=[{"x": [7]}, {"x": [40]}])
    case("diff_fuzz", "Asin_nested2", [helper.make_node("Asin", ["x"], ["a"], name="asin0"),
                                       helper.make_node("Asin", ["a"], ["y"], name="asin1")],
         [("x", ["n"])], ["y"], shapes=[{"x": [7]}, {"x": [40]}],
         gen=lambda r, sh: r.uniform(-0.8, 0.8, sh).astype(np.float32))

    # NonZero of a scalar was refused ("rank >= 1"); onnxruntime and onnx.reference take it as a
    # 1-element vector: (1, 0) or (1, 1) indices.
    for v in (0.0, 2.5):
        case("diff_fuzz", f"NonZero_scalar_{'zero' if v == 0 else 'nonzero'}",
             [node("NonZero", ["x"])], [("x", [])], ["y"], out_types={"y": TensorProto.INT64},
             gen=lambda r, sh, v=v: np.array(v, np.float32))

    # Slice with a negative step along an empty axis: the start clamp [0, dim - 1] is empty,
    # relaxc gave one element (an out-of-bounds read), onnxruntime none.
    case("diff_fuzz", "Slice_negative_step_empty_axis",
         [node("Slice", ["x", "st", "en", "ax", "sp"])], [("x", [0, "n"])], ["y"],
         inits=[("st", np.array([1], np.int64)), ("en", np.array([-1], np.int64)),
                ("ax", np.array([0], np.int64)), ("sp", np.array([-2], np.int64))],
         shapes=[{"x": [0, 1]}, {"x": [0, 3]}])

    # RoiAlign of a float64 X computed its coordinates and weights in float32 (5e-7 off
    # onnxruntime, 60 float32 ulps); now in float64 (bound: 1/100 of a float32 ulp).
    rois = np.array([[0.3, 0.7, 4.1, 3.9], [1.2, 0.1, 5.3, 4.6], [0.0, 0.0, 2.5, 1.5]])
    case("diff_fuzz", "RoiAlign_float64",
         [node("RoiAlign", ["x", "rois", "b"], output_height=2, output_width=3, sampling_ratio=0)],
         [("x", [1, 2, 5, 6])], ["y"], opset=16, dtypes={"x": TensorProto.DOUBLE},
         out_types={"y": TensorProto.DOUBLE},
         inits=[("rois", rois), ("b", np.zeros(3, np.int64))],
         gen=lambda r, sh: r.standard_normal(sh))
    nn_cases.ULP_LIMIT["RoiAlign_float64"] = (0.01, 0.01)

    # SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss: an ignored target's loss is 0 even
    # where its scores are NaN (relaxc gave NaN: 0 * NaN).
    def nan_scores(r, sh):
        if len(sh) == 1:
            return np.array([0, 1, 0], np.int64)[:sh[0]]
        x = r.standard_normal(sh).astype(np.float32)
        x[0, :] = np.nan
        return x
    for op in ("SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"):
        for red in ("none", "sum"):
            case("diff_fuzz", f"{op}_ignored_nan_{red}",
                 [node(op, ["x", "t"], ignore_index=0, reduction=red)], [("x", [3, 2]), ("t", [3])],
                 ["y"], opset=13, dtypes={"t": TensorProto.INT64}, gen=nan_scores)

    # BatchNormalization (opset 15) with scale / B and mean / var of other float types than X: the
    # legalized kernel mixed f32 and f16 operands (a compile error). onnxruntime has no kernel for
    # the mix: checked against onnx.reference.
    mixed = {"x": TensorProto.FLOAT, "s": TensorProto.FLOAT16, "b": TensorProto.FLOAT16,
             "mu": TensorProto.DOUBLE, "var": TensorProto.DOUBLE}
    np_of = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16,
             TensorProto.DOUBLE: np.float64}

    def bn_gen(r, sh):
        t = np_of[next(bn_types)]
        if len(sh) == 1:
            return r.uniform(0.5, 2.0, sh).astype(t)
        return r.standard_normal(sh).astype(t)
    bn_types = iter([mixed[k] for k in mixed] * 2)
    case("diff_fuzz", "BatchNormalization_mixed_float_types",
         [node("BatchNormalization", ["x", "s", "b", "mu", "var"])],
         [("x", ["n", 3, 4]), ("s", [3]), ("b", [3]), ("mu", [3]), ("var", [3])], ["y"],
         opset=15, dtypes=mixed,
         shapes=[{"x": [n, 3, 4], **{k: [3] for k in ("s", "b", "mu", "var")}} for n in (2, 1)],
         gen=bn_gen)
    nn_cases.ONNX_REFERENCE.add("BatchNormalization_mixed_float_types")

    # LayerNormalization of float64 with its Mean / InvStdDev outputs: those have the stash type
    # (float32 by default), not X's (relaxc computed f64 and refused the declared f32 outputs).
    case("diff_fuzz", "LayerNormalization_f64_stash_outputs",
         [node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv_std"], axis=-1)],
         [("x", ["n", 4]), ("s", [4]), ("b", [4])], ["y", "mean", "inv_std"], opset=17,
         dtypes={k: TensorProto.DOUBLE for k in "xsb"}, out_types={"y": TensorProto.DOUBLE},
         shapes=[{"x": [2, 4], "s": [4], "b": [4]}, {"x": [3, 4], "s": [4], "b": [4]}],
         gen=lambda r, sh: r.standard_normal(sh))

    # Gemm on float16 with alpha / beta: the scalars were f32 constants (a compile error).
    # Small integers and powers of two: exact in float16, whatever the order of the rounding.
    case("diff_fuzz", "Gemm_f16_alpha_beta",
         [node("Gemm", ["a", "b", "c"], alpha=0.5, beta=-2.0, transB=1)],
         [("a", ["m", 3]), ("b", [4, 3]), ("c", [4])], ["y"], opset=13,
         dtypes={k: TensorProto.FLOAT16 for k in "abc"}, out_types={"y": TensorProto.FLOAT16},
         shapes=[{"a": [2, 3], "b": [4, 3], "c": [4]}, {"a": [5, 3], "b": [4, 3], "c": [4]}],
         gen=lambda r, sh: r.integers(-3, 4, sh).astype(np.float16))

    # CumSum along an axis of length 1, exclusive or reversed: the kernel's branch for later
    # elements indexed -1 / 1, which the verifier refused (a compile error).
    for ex, rv in ((1, 0), (0, 1), (1, 1)):
        case("diff_fuzz", f"CumSum_axis_len1_e{ex}_r{rv}",
             [node("CumSum", ["x", "axis"], exclusive=ex, reverse=rv)], [("x", [4, 1, "n"])],
             ["y"], inits=[("axis", np.array(1, np.int32))], opset=14,
             shapes=[{"x": [4, 1, 2]}, {"x": [4, 1, 3]}])

    # ReduceLogSumExp over +inf: the max is subtracted for stability, and inf - inf gave NaN
    # where the result is +inf. Rows: finite, one +inf, all -inf (-inf), a NaN (NaN).
    def lse_rows(r, sh, np_t):
        x = r.standard_normal(sh).astype(np_t)
        x[1, 2] = np.inf
        x[2, :] = -np.inf
        x[3, 0] = np.nan
        return x
    for dt, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64)):
        case("diff_fuzz", f"ReduceLogSumExp_inf_{np.dtype(np_t).name}",
             [node("ReduceLogSumExp", ["x", "axes"], keepdims=0)], [("x", [4, 5])], ["y"],
             inits=[("axes", np.array([1], np.int64))], opset=18, dtypes={"x": dt},
             out_types={"y": dt}, gen=lambda r, sh, t=np_t: lse_rows(r, sh, t))

    # Ceil / Floor of values whose result is zero keep IEEE's sign: ceil(-0.3) and floor(-0.0)
    # are -0.0, seen through Sign(1 / y) = -1 (relaxc gave +0.0: 1 / y = +inf, sign 1).
    zeros = np.array([-0.3, -0.9, 0.3, 0.9, -0.0, 0.0, -1.5, 2.5] * 2, np.float32)
    for op in ("Ceil", "Floor", "Round"):
        for dt, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64)):
            case("diff_fuzz", f"{op}_signed_zero_{np.dtype(np_t).name}",
                 [node(op, ["x"], ["r"]), node("Div", ["one", "r"], ["q"]), node("Sign", ["q"])],
                 [("x", [16])], ["y"],
                 inits=[("one", np.array(1, np_t))], opset=13, dtypes={"x": dt},
                 out_types={"y": dt}, gen=lambda r, sh, t=np_t: zeros.astype(t))

    # A symmetric window of size 1: the formula's 0 / 0 is NaN (onnxruntime and onnx.reference);
    # relaxc gave alpha - beta.
    for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        case("diff_fuzz", f"{op}_size1_symmetric", [node(op, ["n"], periodic=0)], [], ["y"],
             inits=[("n", np.array(1, np.int64))], opset=17)


FAMILIES = {"pool_edge": pool_edge_cases, "scan_edge": scan_edge_cases,
            "intmm_edge": intmm_edge_cases, "math_edge": math_edge_cases, "math_ulp": math_ulp_cases,
            "shape_value_edge": shape_value_edge_cases, "special_values": special_value_cases,
            "einsum_edge": einsum_edge_cases, "tree_ensemble": tree_ensemble_cases,
            "slice_edge": slice_edge_cases, "symbolic_shape": symbolic_shape_cases,
            "diff_fuzz": diff_fuzz_cases}

if __name__ == "__main__":
    nn_cases.FAMILIES.clear()
    nn_cases.FAMILIES.update(FAMILIES)
    sys.exit(nn_cases.main())

#!/usr/bin/env python3
# relaxc vs onnxruntime on small models of the nn op families (reductions, pooling, normalization,
# convolution, resize, matmul/gemm) whose parameters are constants, including symbolic input dims
# run at two sizes from one artifact. The ONNX node tests cover the ops with runtime-valued
# parameters; these cover the attribute and mode combinations relaxc compiles.
"""Usage: nn_cases.py --relaxc RELAXC --work DIR [FAMILY ...] (default: every family)."""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import compare  # noqa: E402

F32 = TensorProto.FLOAT
CASES = {}  # family -> list of (name, model, [feeds dicts])
# Cases whose reference is the ONNX reference implementation (onnx.reference) instead of
# onnxruntime, where onnxruntime departs from the operator spec (see each use).
ONNX_REFERENCE = set()
# Cases whose reference is an evaluator written from the operator text (name -> fn(model,
# feeds) -> (output names, outputs)), where neither onnxruntime nor onnx.reference follows it.
CUSTOM_REFERENCE = {}
# Cases checked in ulps of the float32 result against a float64 reference (name -> (bound on
# the cpu, bound on a GPU target)) instead of by rtol/atol.
ULP_LIMIT = {}


def ulp_error(got, ref):
    """|got - ref| in units of the float32 spacing at ref rounded to float32 (NaN must meet
    NaN, an infinity itself)."""
    got = got.astype(np.float64)
    w = ref.astype(np.float32)
    spacing = np.spacing(np.abs(w)).astype(np.float64)
    err = np.abs(got - ref) / spacing
    nan_ref, nan_got = np.isnan(ref), np.isnan(got)
    err = np.where(nan_ref | nan_got, np.where(nan_ref & nan_got, 0.0, np.inf), err)
    inf = np.isinf(w)
    return np.where(inf, np.where(got == w, 0.0, np.inf), np.nan_to_num(err, nan=np.inf))


def case(family, name, nodes, inputs, outputs, inits=(), opset=13, shapes=None, dtypes=None,
         seed=0, gen=None, out_types=None, domains=None):
    """inputs: [(name, shape with str for symbolic dims)]; shapes: list of concrete shape dicts
    (input name -> shape) to run, default one run with the declared static shape; domains:
    {domain: opset} imported besides the default one (e.g. {"ai.onnx.ml": 5})."""
    dtypes = dtypes or {}
    out_types = out_types or {}
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, dtypes.get(n, F32), s) for n, s in inputs],
        [helper.make_tensor_value_info(o, out_types.get(o, F32), None) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in (domains or {}).items()],
                          ir_version=8)
    # Output shapes from ONNX shape inference (relaxc's checker wants them declared).
    im = onnx.shape_inference.infer_shapes(m).graph
    inferred = {v.name: v for v in list(im.value_info) + list(im.output)}
    for o in m.graph.output:
        if o.name in inferred and inferred[o.name].type.tensor_type.HasField("shape"):
            o.CopyFrom(inferred[o.name])
        else:
            for _ in inputs[0][1]:  # not inferred (a function op): the first input's rank
                o.type.tensor_type.shape.dim.add()
    rng = np.random.default_rng(seed)
    runs = []
    for sh in shapes or [{n: s for n, s in inputs}]:
        feeds = {}
        for n, _ in inputs:
            if gen:
                feeds[n] = gen(rng, sh[n])
            elif dtypes.get(n) == TensorProto.INT32:
                feeds[n] = rng.integers(-5, 6, sh[n]).astype(np.int32)
            else:
                feeds[n] = rng.standard_normal(sh[n]).astype(np.float32)
        runs.append(feeds)
    CASES.setdefault(family, []).append((name, m, runs))


def node(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower() + "0", **attrs)


def rnd(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- reductions ------------------------------------------------------------------------------
def reduce_cases():
    kinds = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
             "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
    sym = [("x", ["n", 3, "w"])]
    shapes = [{"x": [2, 3, 5]}, {"x": [1, 3, 7]}]
    pos = lambda rng, s: rng.uniform(0.5, 2.0, s).astype(np.float32)  # noqa: E731 (LogSum, Prod)
    for k in kinds:
        for axes, keep in (([1], 1), ([0, 2], 0), ([-1], 1), (None, 0)):
            tag = f"{k}_{'all' if axes is None else '_'.join(map(str, axes))}_k{keep}"
            attrs = {"keepdims": keep}
            if axes is not None:
                attrs["axes"] = axes
            case("reduce", tag + "_attr", [node(k, ["x"], **attrs)], sym, ["y"],
                 opset=11 if k == "ReduceSum" else 13,
                 shapes=shapes, gen=pos if k in ("ReduceLogSum", "ReduceProd") else None)
            # opset 18: axes as a constant input.
            ins, inits = ["x"], []
            if axes is not None:
                ins.append("axes")
                inits.append(("axes", np.array(axes, np.int64)))
            case("reduce", tag + "_input", [node(k, ins, keepdims=keep)], sym, ["y"], inits,
                 opset=18, shapes=shapes, gen=pos if k in ("ReduceLogSum", "ReduceProd") else None)
    for noop in (0, 1):
        case("reduce", f"sum_empty_axes_noop{noop}",
             [node("ReduceSum", ["x", "axes"], noop_with_empty_axes=noop)], [("x", [2, 3])], ["y"],
             [("axes", np.array([], np.int64))], opset=13)
    case("reduce", "sum_int32", [node("ReduceSum", ["x", "axes"], keepdims=0)], [("x", [3, 4])],
         ["y"], [("axes", np.array([1], np.int64))], dtypes={"x": TensorProto.INT32},
         out_types={"y": TensorProto.INT32})
    case("reduce", "max_int32", [node("ReduceMax", ["x"], axes=[0])], [("x", [3, 4])], ["y"],
         dtypes={"x": TensorProto.INT32}, out_types={"y": TensorProto.INT32})
    for op in ("ArgMax", "ArgMin"):
        for last in (0, 1):
            for axis, keep in ((1, 1), (-1, 0), (0, 1)):
                # small integers as floats: many ties, so select_last_index matters.
                ties = lambda rng, s: rng.integers(0, 3, s).astype(np.float32)  # noqa: E731
                case("reduce", f"{op}_a{axis}_k{keep}_last{last}",
                     [node(op, ["x"], axis=axis, keepdims=keep, select_last_index=last)],
                     [("x", ["n", 4, 5])], ["y"], shapes=[{"x": [2, 4, 5]}, {"x": [3, 4, 5]}],
                     gen=ties, out_types={"y": TensorProto.INT64})


# ---- pooling ---------------------------------------------------------------------------------
def pool_cases():
    for k in (1, 2, 3):
        sp = [9, 8, 7][:k] if k < 3 else [6, 7, 5]
        sym_in = [("x", ["n", 2] + [f"s{i}" for i in range(k)])]
        shapes = [{"x": [1, 2] + sp}, {"x": [2, 2] + [s + 3 for s in sp]}]
        for op in ("MaxPool", "AveragePool", "LpPool"):
            for ceil in (0, 1):
                attrs = dict(kernel_shape=[3] * k, strides=[2] * k, pads=[1] * k + [0] * k)
                if op != "LpPool":
                    attrs["ceil_mode"] = ceil
                elif ceil:
                    continue
                if op == "AveragePool":
                    for cip in (0, 1):
                        case("pool", f"{op}{k}d_ceil{ceil}_cip{cip}",
                             [node(op, ["x"], count_include_pad=cip, **attrs)], sym_in, ["y"],
                             opset=19, shapes=shapes)
                elif op == "LpPool":
                    for p in (1, 2, 3):
                        case("pool", f"{op}{k}d_p{p}", [node(op, ["x"], p=p, **attrs)], sym_in,
                             ["y"], opset=18, shapes=shapes)
                else:
                    case("pool", f"{op}{k}d_ceil{ceil}", [node(op, ["x"], **attrs)], sym_in,
                         ["y"], opset=12, shapes=shapes)
        case("pool", f"MaxPool{k}d_dilated", [node("MaxPool", ["x"], kernel_shape=[2] * k,
                                                   dilations=[2] * k, strides=[1] * k)],
             sym_in, ["y"], opset=12, shapes=shapes)
        case("pool", f"AveragePool{k}d_same_upper_s1",
             [node("AveragePool", ["x"], kernel_shape=[3] * k, auto_pad="SAME_UPPER")], sym_in,
             ["y"], opset=19, shapes=shapes)
        # auto_pad SAME_* with stride > 1 over symbolic dims: the pads depend on each input
        # extent mod the stride (issue 32), so sizes of every residue run one artifact.
        same_shapes = shapes + [{"x": [1, 2] + [s + 1 for s in sp]}, {"x": [1, 2] + [s + 2 for s in sp]}]
        for pad in ("SAME_UPPER", "SAME_LOWER"):
            tag = pad.lower()
            case("pool", f"MaxPool{k}d_{tag}_s2", [node("MaxPool", ["x"], kernel_shape=[3] * k,
                                                        strides=[2] * k, auto_pad=pad)],
                 sym_in, ["y"], opset=12, shapes=same_shapes)
            for cip in (0, 1):
                case("pool", f"AveragePool{k}d_{tag}_s3_cip{cip}",
                     [node("AveragePool", ["x"], kernel_shape=[2] * k, strides=[3] * k,
                           auto_pad=pad, count_include_pad=cip)],
                     sym_in, ["y"], opset=19, shapes=same_shapes)
            case("pool", f"LpPool{k}d_{tag}_s2", [node("LpPool", ["x"], kernel_shape=[3] * k,
                                                       strides=[2] * k, auto_pad=pad)],
                 sym_in, ["y"], opset=18, shapes=same_shapes)
        for order in (0, 1):
            case("pool", f"MaxPool{k}d_indices_order{order}",
                 [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2] * k, strides=[2] * k,
                       pads=[1] * k + [1] * k, storage_order=order)],
                 [("x", [2, 3] + sp)], ["y", "i"], opset=12, out_types={"i": TensorProto.INT64})
        for op in ("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"):
            case("pool", f"{op}{k}d", [node(op, ["x"])], sym_in, ["y"], shapes=shapes)


# ---- normalization ---------------------------------------------------------------------------
def norm_cases():
    for axis in (-1, 1, 2):
        case("norm", f"LayerNorm_axis{axis}",
             [node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=axis,
                   epsilon=1e-3)],
             [("x", [2, 3, 4])], ["y", "mean", "inv"],
             [("s", rnd([3, 4][axis if axis < 0 else axis - 1:] if axis != -1 else [4])),
              ("b", rnd([4] if axis == -1 else [3, 4][axis - 1:], 2))], opset=17)
    case("norm", "LayerNorm_sym_nobias",
         [node("LayerNormalization", ["x", "s"], axis=-1)], [("x", ["n", "t", 8])], ["y"],
         [("s", rnd([8]))], opset=17, shapes=[{"x": [1, 5, 8]}, {"x": [2, 3, 8]}])
    case("norm", "InstanceNorm", [node("InstanceNormalization", ["x", "s", "b"], epsilon=1e-2)],
         [("x", ["n", 3, "h", "w"])], ["y"], [("s", rnd([3])), ("b", rnd([3], 2))],
         shapes=[{"x": [2, 3, 4, 5]}, {"x": [1, 3, 6, 2]}])
    case("norm", "GroupNorm18", [node("GroupNormalization", ["x", "s", "b"], num_groups=2)],
         [("x", [2, 4, 3, 3])], ["y"], [("s", rnd([2])), ("b", rnd([2], 2))], opset=18)
    case("norm", "GroupNorm21", [node("GroupNormalization", ["x", "s", "b"], num_groups=2,
                                      epsilon=1e-3)],
         [("x", ["n", 6, "h", "w"])], ["y"], [("s", rnd([6])), ("b", rnd([6], 2))], opset=21,
         shapes=[{"x": [2, 6, 3, 4]}, {"x": [1, 6, 5, 2]}])
    # A symbolic channel count (issue 32): per-group scale (opset 18) and per-channel scale and
    # bias given as inputs of the same symbolic length (opset 21).
    case("norm", "GroupNorm18_sym_channels",
         [node("GroupNormalization", ["x", "s", "b"], num_groups=2)],
         [("x", ["n", "c", "h", "w"])], ["y"], [("s", rnd([2])), ("b", rnd([2], 2))], opset=18,
         shapes=[{"x": [2, 4, 3, 3]}, {"x": [1, 6, 2, 5]}])
    case("norm", "GroupNorm21_sym_channels",
         [node("GroupNormalization", ["x", "s", "b"], num_groups=3, epsilon=1e-3)],
         [("x", ["n", "c", "h", "w"]), ("s", ["c"]), ("b", ["c"])], ["y"], opset=21,
         shapes=[{"x": [2, 6, 3, 4], "s": [6], "b": [6]}, {"x": [1, 9, 5, 2], "s": [9], "b": [9]}])
    for size in (3, 5):  # onnxruntime refuses even sizes
        case("norm", f"LRN_size{size}", [node("LRN", ["x"], size=size, alpha=1e-2, beta=0.6,
                                              bias=2.0)],
             [("x", ["n", 5, "h", "w"])], ["y"], shapes=[{"x": [2, 5, 3, 4]}, {"x": [1, 5, 6, 2]}])
    # LayerNorm as exporters spell it out (ReduceMean, Sub, Pow(., 2), ReduceMean, Add, Sqrt,
    # Div): relaxc imports Pow(d, 2) as d * d; with NaN/Inf inputs too.
    def nonfinite(rng, shape):
        v = rng.standard_normal(shape).astype(np.float32)
        v.flat[:3] = [np.nan, np.inf, -np.inf]
        return v
    for tag, gen in (("", None), ("_nonfinite", nonfinite)):
        case("norm", f"LayerNorm_decomposed{tag}",
             [node("ReduceMean", ["x"], ["m"], axes=[-1]), node("Sub", ["x", "m"], ["d"]),
              helper.make_node("Pow", ["d", "two"], ["p"], name="pow0"),
              helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1], name="reducemean1"),
              node("Add", ["v", "eps"], ["ve"]), node("Sqrt", ["ve"], ["s"]),
              node("Div", ["d", "s"], ["y"])],
             [("x", ["n", 8])], ["y"],
             [("two", np.array(2.0, np.float32)), ("eps", np.array(1e-5, np.float32))],
             shapes=[{"x": [3, 8]}, {"x": [1, 8]}], gen=gen)
    case("norm", "MVN", [node("MeanVarianceNormalization", ["x"])], [("x", [2, 3, 4, 5])], ["y"])
    case("norm", "MVN_axes", [node("MeanVarianceNormalization", ["x"], axes=[1, -1])],
         [("x", [2, 3, 4])], ["y"])
    case("norm", "BatchNorm_inference",
         [node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3)],
         [("x", ["n", 3, "h"])], ["y"],
         [("s", rnd([3])), ("b", rnd([3], 2)), ("m", rnd([3], 3)),
          ("v", np.abs(rnd([3], 4)) + 0.5)], shapes=[{"x": [2, 3, 4]}, {"x": [1, 3, 7]}])
    case("norm", "BatchNorm_training",
         [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], momentum=0.8,
               training_mode=1)],
         [("x", [2, 3, 4, 5])], ["y", "rm", "rv"],
         [("s", rnd([3])), ("b", rnd([3], 2)), ("m", rnd([3], 3)),
          ("v", np.abs(rnd([3], 4)) + 0.5)], opset=15)


# ---- convolution -----------------------------------------------------------------------------
def conv_cases():
    for k in (1, 2, 3):
        sp = [8, 7, 6][:k]
        sym_in = [("x", ["n", 4] + [f"s{i}" for i in range(k)])]
        shapes = [{"x": [1, 4] + sp}, {"x": [2, 4] + [s + 2 for s in sp]}]
        for groups, dil, stride, pads in ((1, 1, 1, 0), (2, 2, 1, 1), (4, 1, 2, 1), (1, 1, 2, 0)):
            w = rnd([6 if groups != 4 else 8, 4 // groups] + [3] * k)
            case("conv", f"Conv{k}d_g{groups}_d{dil}_s{stride}_p{pads}",
                 [node("Conv", ["x", "w", "b"], group=groups, dilations=[dil] * k,
                       strides=[stride] * k, pads=[pads] * (2 * k))],
                 sym_in, ["y"], [("w", w), ("b", rnd([w.shape[0]], 2))], shapes=shapes)
        if k == 2:
            # Groups of whole channel blocks (RegNet's 16-channel groups): alter-layout makes them
            # grouped channel-blocked convs, each output block reading its own group's blocks.
            for cin, groups, cout, stride in ((48, 3, 96, 2), (64, 2, 64, 1), (32, 2, 32, 1)):
                case("conv", f"Conv2d_blockgroups_c{cin}_g{groups}_o{cout}_s{stride}",
                     [node("Conv", ["x", "w", "b"], ["y0"], group=groups, strides=[stride] * 2,
                           pads=[1] * 4),
                      node("Relu", ["y0"], ["y"])],
                     [("x", ["n", cin, "h", "w"])], ["y"],
                     [("w", rnd([cout, cin // groups, 3, 3])), ("b", rnd([cout], 2))],
                     shapes=[{"x": [1, cin, 9, 11]}, {"x": [2, cin, 14, 14]}])
        case("conv", f"Conv{k}d_same_lower",
             [node("Conv", ["x", "w"], auto_pad="SAME_LOWER", kernel_shape=[2] * k)], sym_in,
             ["y"], [("w", rnd([3, 4] + [2] * k))], shapes=shapes)
        # Stride > 1 over symbolic dims: run-time pads (issue 32); every residue mod the stride.
        same_shapes = shapes + [{"x": [1, 4] + [s + 1 for s in sp]}, {"x": [1, 4] + [s + 3 for s in sp]}]
        for pad, kern, stride, dil in (("SAME_UPPER", 3, 2, 1), ("SAME_LOWER", 4, 2, 1),
                                       ("SAME_UPPER", 2, 3, 1), ("SAME_LOWER", 1, 2, 1)):
            case("conv", f"Conv{k}d_{pad.lower()}_k{kern}_s{stride}_d{dil}",
                 [node("Conv", ["x", "w", "b"], auto_pad=pad, strides=[stride] * k,
                       dilations=[dil] * k)],
                 sym_in, ["y"], [("w", rnd([5, 4] + [kern] * k)), ("b", rnd([5], 2))],
                 shapes=same_shapes)
        # ConvTranspose
        for groups, stride, pads, opad, dil in ((1, 2, 1, 1, 1), (2, 2, 0, 0, 1), (1, 1, 1, 0, 2),
                                                (2, 3, 2, 1, 2)):
            w = rnd([4, 6 // groups] + [3] * k)
            case("conv", f"ConvTranspose{k}d_g{groups}_s{stride}_p{pads}_op{opad}_d{dil}",
                 [node("ConvTranspose", ["x", "w", "b"], group=groups, strides=[stride] * k,
                       pads=[pads] * (2 * k), output_padding=[opad] * k, dilations=[dil] * k)],
                 sym_in, ["y"], [("w", w), ("b", rnd([6], 2))], shapes=shapes)
        case("conv", f"ConvTranspose{k}d_k2s2", [node("ConvTranspose", ["x", "w"], strides=[2] * k)],
             sym_in, ["y"], [("w", rnd([4, 3] + [2] * k))], shapes=shapes)
        case("conv", f"ConvTranspose{k}d_k2s2_outpad",
             [node("ConvTranspose", ["x", "w"], strides=[2] * k, output_padding=[1] * k)],
             sym_in, ["y"], [("w", rnd([4, 3] + [2] * k))], shapes=shapes)
        static = [("x", [1, 4] + sp)]
        case("conv", f"ConvTranspose{k}d_output_shape",
             [node("ConvTranspose", ["x", "w"], strides=[2] * k,
                   output_shape=[2 * s + 1 for s in sp])],
             static, ["y"], [("w", rnd([4, 3] + [3] * k))])
        for ap in ("SAME_UPPER", "SAME_LOWER"):
            case("conv", f"ConvTranspose{k}d_{ap}",
                 [node("ConvTranspose", ["x", "w"], strides=[2] * k, auto_pad=ap)],
                 static, ["y"], [("w", rnd([4, 3] + [3] * k))])
            # Symbolic spatial dims (issue 32): SAME's total pad does not depend on the input
            # extent (s*(in-1) + (k-1)*d + 1 - in*s), output_padding included.
            case("conv", f"ConvTranspose{k}d_{ap}_sym",
                 [node("ConvTranspose", ["x", "w"], strides=[2] * k, auto_pad=ap,
                       output_padding=[1] * k)],
                 sym_in, ["y"], [("w", rnd([4, 3] + [4] * k))], shapes=shapes)

    # 30 output channels, widths past one 16-column tile and below it, a ReLU epilogue: the
    # shapes a register-tiled conv would cross (convs stay with cpu.anchor-epilogue for now;
    # see docs/design.md, "Register tiles").
    for kk, pads in ((3, 1), (1, 0)):
        case("conv", f"Conv2d_tiles_k{kk}_relu",
             [node("Conv", ["x", "w", "b"], ["c"], pads=[pads] * 4), node("Relu", ["c"])],
             [("x", ["n", 5, "h", "w"])], ["y"],
             [("w", rnd([30, 5, kk, kk])), ("b", rnd([30], 2))],
             shapes=[{"x": [1, 5, 3, 20]}, {"x": [2, 5, 4, 7]}])


# ---- resize ----------------------------------------------------------------------------------
def resize_cases():
    sym = [("x", ["n", 2, "h", "w"])]
    shapes = [{"x": [1, 2, 4, 5]}, {"x": [2, 2, 7, 3]}]
    empty = np.array([], np.float32)
    coords = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
    for scales in ([1, 1, 2, 3], [1, 1, 0.6, 1.5], [1, 1, 0.5, 0.5], [1, 1, 1.25, 2.5]):
        tag = "x".join(str(s).replace(".", "p") for s in scales[2:])
        sc = np.array(scales, np.float32)
        for coord in coords + ["half_pixel_symmetric"]:
            modes = (("nearest", "round_prefer_floor"), ("nearest", "round_prefer_ceil"),
                     ("nearest", "floor"), ("nearest", "ceil"), ("linear", None), ("cubic", None))
            if scales[2] in (0.5, 1.25):  # the full matrix at the first two scales only
                modes = (("nearest", "floor"), ("linear", None))
            for mode, nm in modes:
                if mode == "nearest" and coord == "half_pixel_symmetric":
                    continue
                attrs = dict(mode=mode, coordinate_transformation_mode=coord)
                if nm:
                    attrs["nearest_mode"] = nm
                opset = 19 if coord == "half_pixel_symmetric" else 13
                name = f"{mode}_{nm or ''}_{coord}_{tag}"
                if coord == "align_corners" and scales[2] in (0.6, 0.5, 1.25):
                    # in * scale is not an integer at some axis (4 * 0.6, 5 * 1.5, 5 * 0.5,
                    # 5 * 2.5): the spec's align_corners divides by (in * scale - 1), as the ONNX
                    # reference and the node test test_resize_downsample_scales_linear_
                    # align_corners do; onnxruntime divides by (out - 1).
                    ONNX_REFERENCE.add(name)
                # (onnx.reference cannot take an empty roi tensor: those cases omit it.)
                ref = name in ONNX_REFERENCE
                case("resize", name,
                     [node("Resize", ["x", "" if ref else "roi", "scales"], **attrs)], sym,
                     ["y"], ([] if ref else [("roi", empty)]) + [("scales", sc)], opset=opset,
                     shapes=shapes)
    for ex, a in ((1, -0.5), (0, -0.5), (1, -0.75)):
        case("resize", f"cubic_exclude{ex}_A{a}",
             [node("Resize", ["x", "roi", "scales"], mode="cubic", exclude_outside=ex,
                   cubic_coeff_a=a)], sym, ["y"],
             [("roi", empty), ("scales", np.array([1, 1, 0.8, 1.7], np.float32))], shapes=shapes)
    for mode in ("nearest", "linear", "cubic"):
        case("resize", f"sizes_{mode}", [node("Resize", ["x", "roi", "", "sizes"], mode=mode)],
             [("x", [1, 2, 5, 4])], ["y"],
             [("roi", empty), ("sizes", np.array([1, 2, 3, 7], np.int64))])
    # Sizes from Shape ops (F.interpolate(size=ref.shape[-2:]), as LR-ASPP exports): N and C
    # keep the input's own dims and are not resized (only H and W are).
    for mode in ("nearest", "linear", "cubic"):
        case("resize", f"sizes_from_shapes_{mode}",
             [helper.make_node("Shape", ["x"], ["xs"], name="shape_x"),
              helper.make_node("Shape", ["ref"], ["rs"], name="shape_ref"),
              helper.make_node("Slice", ["xs", "zero", "two"], ["nc"], name="slice_nc"),
              helper.make_node("Slice", ["rs", "two", "four"], ["hw"], name="slice_hw"),
              node("Concat", ["nc", "hw"], ["sizes"], axis=0),
              node("Resize", ["x", "", "", "sizes"], mode=mode)],
             [("x", ["n", 2, "h", "w"]), ("ref", [1, 1, "H", "W"])], ["y"],
             [("zero", np.array([0], np.int64)), ("two", np.array([2], np.int64)),
              ("four", np.array([4], np.int64))],
             shapes=[{"x": [1, 2, 4, 5], "ref": [1, 1, 9, 7]},
                     {"x": [2, 2, 6, 3], "ref": [1, 1, 4, 8]}])
    for pol in ("not_larger", "not_smaller"):
        case("resize", f"sizes_axes_{pol}",
             [node("Resize", ["x", "", "", "sizes"], mode="linear", axes=[2, 3],
                   keep_aspect_ratio_policy=pol)],
             [("x", [1, 2, 5, 4])], ["y"], [("sizes", np.array([7, 9], np.int64))], opset=19)
    case("resize", "scales_axes_opset19",
         [node("Resize", ["x", "", "scales"], mode="linear", axes=[3, 2])], sym, ["y"],
         [("scales", np.array([2.0, 1.5], np.float32))], opset=19, shapes=shapes)
    case("resize", "linear_3d", [node("Resize", ["x", "", "scales"], mode="linear")],
         [("x", [1, 1, 3, 4, 2])], ["y"],
         [("scales", np.array([1, 1, 2, 0.5, 3], np.float32))], opset=13)
    case("resize", "opset10_nearest", [node("Resize", ["x", "scales"], mode="nearest")], sym,
         ["y"], [("scales", np.array([1, 1, 2, 3], np.float32))], opset=10, shapes=shapes)
    case("resize", "opset11_linear_roi_unused",
         [node("Resize", ["x", "roi", "scales"], mode="linear")], sym, ["y"],
         [("roi", empty), ("scales", np.array([1, 1, 2, 2], np.float32))], opset=11,
         shapes=shapes)
    case("resize", "upsample7_nearest", [node("Upsample", ["x"], mode="nearest",
                                              scales=[1.0, 1.0, 2.0, 3.0])], sym, ["y"], opset=7,
         shapes=shapes)
    for mode in ("nearest", "linear"):
        case("resize", f"upsample9_{mode}", [node("Upsample", ["x", "scales"], mode=mode)], sym,
             ["y"], [("scales", np.array([1, 1, 2, 3], np.float32))], opset=9, shapes=shapes)


# ---- matmul / gemm ---------------------------------------------------------------------------
def matmul_cases():
    for name, a, b in (("1dx2d", [4], [4, 3]), ("2dx1d", [3, 4], [4]), ("1dx1d", [4], [4]),
                       ("1dx3d", [4], [2, 4, 3]), ("3dx1d", [2, 3, 4], [4]),
                       ("bcast", [2, 1, 3, 4], [5, 4, 2]), ("2dx3d", [3, 4], [2, 4, 5])):
        case("matmul", f"MatMul_{name}", [node("MatMul", ["a", "b"])], [("a", a), ("b", b)],
             ["y"])
    case("matmul", "MatMul_sym", [node("MatMul", ["a", "b"])], [("a", ["n", "t", 4])], ["y"],
         [("b", rnd([4, 6]))], shapes=[{"a": [1, 3, 4]}, {"a": [2, 5, 4]}])
    # Register tiles (6x16, cpu.register-tile): row and column tails, B packed into panels
    # (symbolic rows), a whole-tile shape and a smaller-than-one-tile shape.
    case("matmul", "MatMul_tiles_sym", [node("MatMul", ["a", "b"])], [("a", ["m", 37]),
                                                                     ("b", [37, "n"])], ["y"],
         shapes=[{"a": [29, 37], "b": [37, 35]}, {"a": [12, 37], "b": [37, 32]},
                 {"a": [1, 37], "b": [37, 5]}])
    for ta in (0, 1):
        for tb in (0, 1):
            for cshape in ([3, 5], [5], [1], [3, 1], []):
                a = [4, 3] if ta else [3, 4]
                b = [5, 4] if tb else [4, 5]
                case("matmul", f"Gemm_ta{ta}_tb{tb}_c{'x'.join(map(str, cshape)) or 'scalar'}",
                     [node("Gemm", ["a", "b", "c"], transA=ta, transB=tb, alpha=0.5, beta=2.0)],
                     [("a", a)], ["y"], [("b", rnd(b)), ("c", rnd(cshape, 2))])
    # Activations spelled out after a matmul / conv (recognize-activations makes them one op that
    # joins the epilogue): GELU's erf form, GELU's tanh form, Mish.
    def chain(ops):
        return [helper.make_node(op, ins, [out], name=f"act{i}") for i, (op, ins, out) in enumerate(ops)]
    case("matmul", "MatMul_gelu_erf_spelled",
         [node("MatMul", ["a", "b"], ["m"])] + chain([
             ("Div", ["m", "sq2"], "d"), ("Erf", ["d"], "e"), ("Add", ["e", "one"], "p"),
             ("Mul", ["m", "p"], "q"), ("Mul", ["q", "half"], "y")]),
         [("a", ["n", 8])], ["y"],
         [("b", rnd([8, 40])), ("sq2", np.array(1.4142135, np.float32)),
          ("one", np.array(1.0, np.float32)), ("half", np.array(0.5, np.float32))],
         shapes=[{"a": [3, 8]}, {"a": [17, 8]}])
    case("matmul", "MatMul_gelu_tanh_spelled",
         [node("MatMul", ["a", "b"], ["m"])] + chain([
             ("Mul", ["m", "half"], "h"), ("Pow", ["m", "three"], "c"), ("Mul", ["c", "k1"], "c1"),
             ("Add", ["m", "c1"], "s"), ("Mul", ["s", "k2"], "s1"), ("Tanh", ["s1"], "t"),
             ("Add", ["t", "one"], "p"), ("Mul", ["h", "p"], "y")]),
         [("a", [5, 8])], ["y"],
         [("b", rnd([8, 24])), ("half", np.array(0.5, np.float32)),
          ("three", np.array(3.0, np.float32)), ("k1", np.array(0.044715, np.float32)),
          ("k2", np.array(0.7978846, np.float32)), ("one", np.array(1.0, np.float32))])
    case("matmul", "Conv_mish_spelled",
         [node("Conv", ["x", "w"], ["c"])] + chain([
             ("Softplus", ["c"], "s"), ("Tanh", ["s"], "t"), ("Mul", ["c", "t"], "y")]),
         [("x", [1, 3, 6, 6])], ["y"], [("w", rnd([20, 3, 3, 3]))])
    case("matmul", "Gemm_noc", [node("Gemm", ["a", "b"], transB=1)], [("a", ["n", 4])], ["y"],
         [("b", rnd([6, 4]))], opset=11, shapes=[{"a": [1, 4]}, {"a": [3, 4]}])


# ---- attention: matmul, score ops, softmax, matmul (fuse-attention, cpu.attention) ----------
def attention_nodes(score_ops, kt="kt"):
    """q [.., L, D] x k^T -> the score ops (each reads the previous value "s<i>") -> softmax ->
    x v; k is given as [.., S, D] and transposed in the graph, as exports do."""
    nodes = [node("Transpose", ["k"], [kt], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", kt], ["s0"], name="scores")]
    for i, (op, other, attrs) in enumerate(score_ops):
        ins = [f"s{i}", other] if op != "Where" else [other, f"s{i}", "big_neg"]
        nodes.append(helper.make_node(op, ins, [f"s{i + 1}"], name=f"score{i}", **attrs))
    nodes.append(node("Softmax", [f"s{len(score_ops)}"], ["p"], axis=-1))
    nodes.append(helper.make_node("MatMul", ["p", "v"], ["y"], name="context"))
    return nodes


def attention_cases():
    def qkv(b, h, L, S, D, E):
        return {"q": [b, h, L, D], "k": [b, h, S, D], "v": [b, h, S, E]}

    def masked(rng, shape):  # scores' additive mask: 0 or -10000
        return np.where(rng.random(shape) < 0.3, -10000.0, 0.0).astype(np.float32)

    # Scale and an attention_mask-style additive mask [b, 1, 1, S]; symbolic batch, query and key
    # lengths: query rows not a multiple of the 32-row block, keys of the 64-key block (a tail
    # block after full ones), and fewer keys than one block.
    inputs = [("q", ["b", 2, "L", 16]), ("k", ["b", 2, "S", 16]), ("v", ["b", 2, "S", 8]),
              ("mask", ["b", 1, 1, "S"])]
    shapes = []
    for b, L, S in ((1, 5, 7), (2, 37, 130), (1, 64, 128), (1, 1, 3)):
        sh = qkv(b, 2, L, S, 16, 8)
        sh["mask"] = [b, 1, 1, S]
        shapes.append(sh)
    rng = np.random.default_rng(3)
    case("attention", "Attention_scale_mask_sym",
         attention_nodes([("Div", "scale", {}), ("Add", "mask", {})]), inputs, ["y"],
         [("scale", np.array(4.0, np.float32))], shapes=shapes,
         gen=lambda r, sh: masked(r, sh) if sh[2] == 1 and len(sh) == 4 and sh[1] == 1
         else r.standard_normal(sh).astype(np.float32))
    # -inf in the mask: a row whose first key block is masked entirely (the running max is -inf
    # until a later block), and a row masked entirely (NaN, as the unfused softmax gives).
    L, S = 3, 150
    m = np.zeros([1, 1, L, S], np.float32)
    m[0, 0, 0, :64] = -np.inf
    m[0, 0, 1, :] = -np.inf
    m[0, 0, 2, ::3] = -np.inf
    case("attention", "Attention_neginf_mask",
         attention_nodes([("Add", "m", {})]), [(n, s) for n, s in qkv(1, 2, L, S, 8, 8).items()],
         ["y"], [("m", m)])
    # GPT-2 style: where(causal mask, scores, -max float) after a scale.
    L, S = 4, 9
    causal = np.tril(np.ones([L, S], bool), S - L)[None, None]
    case("attention", "Attention_where_causal",
         attention_nodes([("Div", "scale", {}), ("Where", "causal", {})]),
         [(n, s) for n, s in qkv(1, 3, L, S, 8, 8).items()], ["y"],
         [("scale", np.array(2.0, np.float32)), ("causal", causal),
          ("big_neg", np.array(-3.4028235e38, np.float32))])
    # Swin style: a per-head scale tensor and a relative-position bias, static shapes with a
    # value width that is not a multiple of 16.
    L = S = 49
    case("attention", "Attention_head_scale_bias",
         attention_nodes([("Mul", "hs", {}), ("Add", "bias", {})]),
         [(n, s) for n, s in qkv(2, 3, L, S, 12, 20).items()], ["y"],
         [("hs", np.abs(rnd([3, 1, 1], 5)) + 0.5), ("bias", rnd([1, 3, L, S], 6))])
    # No score ops (the query pre-scaled, as in Whisper and ViT exports), many key blocks.
    case("attention", "Attention_plain_long",
         attention_nodes([]), [(n, s) for n, s in qkv(1, 2, 40, 300, 32, 32).items()], ["y"])
    # Values broadcast over the batch, head and value widths of 1, one query row (a decode step)
    # at 1 and 200 keys, scores of magnitude 1e6 (every exp but the max underflows).
    kt = lambda b, h, s, d: ("k", [b, h, s, d])  # noqa: E731
    case("attention", "Attention_value_batch_broadcast", attention_nodes([]),
         [("q", [2, 3, 5, 4]), kt(2, 3, 7, 4), ("v", [1, 3, 7, 6])], ["y"])
    case("attention", "Attention_depth_and_width_1", attention_nodes([]),
         [("q", [1, 2, 9, 1]), kt(1, 2, 70, 1), ("v", [1, 2, 70, 1])], ["y"])
    case("attention", "Attention_one_query_row", attention_nodes([("Mul", "scale", {})]),
         [("q", [1, 4, 1, 16]), ("k", [1, 4, "s", 16]), ("v", [1, 4, "s", 16])], ["y"],
         [("scale", np.array(0.25, np.float32))],
         shapes=[{"q": [1, 4, 1, 16], "k": [1, 4, 1, 16], "v": [1, 4, 1, 16]},
                 {"q": [1, 4, 1, 16], "k": [1, 4, 200, 16], "v": [1, 4, 200, 16]}])
    case("attention", "Attention_huge_scores", attention_nodes([("Mul", "scale", {})]),
         [(n, s) for n, s in qkv(1, 1, 33, 65, 8, 8).items()], ["y"],
         [("scale", np.array(1e6, np.float32))])


# ---- errors: clean messages (exit 1), never a crash -----------------------------------------
ERRORS = []  # (name, model, feeds or None (compile error expected), regex)


def error_case(name, nodes, inputs, inits=(), opset=13, run_shapes=None, expect=""):
    dummy = {n: [1 if isinstance(v, str) else v for v in sh] for n, sh in inputs}
    case("errors", name, nodes, inputs, ["y"], inits, opset=opset, shapes=run_shapes or [dummy])
    n, m, runs = CASES["errors"].pop()
    ERRORS.append((n, m, runs if run_shapes else None, expect))


def declare_rank(value_info, rank):
    """Declares `value_info` (a graph output) with `rank` symbolic dims."""
    value_info.type.tensor_type.ClearField("shape")
    for j in range(rank):
        value_info.type.tensor_type.shape.dim.add().dim_param = f"o{j}"


def error_cases():
    x4 = [("x", ["n", 2, "h", "w"])]
    error_case("resize_scales_length", [node("Resize", ["x", "", "s"], mode="linear")],
               x4, [("s", np.array([1, 2, 2], np.float32))],
               expect=r"Resize.*scales.*(3|length|rank)")
    error_case("reduce_float_axes", [node("ReduceSum", ["x", "a"])],
               [("x", [2, 3]), ("a", [1])], expect=r"input 'a' \(axes\) must be an integer tensor")
    error_case("resize_bad_mode", [node("Resize", ["x", "", "s"], mode="bicubic")],
               x4, [("s", np.array([1, 1, 2, 2], np.float32))], opset=18,
               expect="bicubic")
    error_case("conv_4d_window", [node("Conv", ["x", "w"])], [("x", [1, 1, 2, 2, 2, 2])],
               [("w", rnd([1, 1, 1, 1, 1, 1]))], expect="only 1-D, 2-D and 3-D Conv")
    # ConvTranspose's output_shape may exceed the full output extent by less than the stride
    # (onnxruntime's limit): static at import, symbolic at run time (3 x 3 with stride 2 gives 7).
    error_case("convtranspose_output_shape_too_large",
               [node("ConvTranspose", ["x", "w"], strides=[2, 2], output_shape=[9, 7])],
               [("x", [1, 2, 3, 3])], [("w", rnd([2, 1, 3, 3]))],
               expect=r"output_shape\[0\] = 9 exceeds the full output extent 7 by the stride")
    error_case("convtranspose_output_shape_too_large_runtime",
               [node("ConvTranspose", ["x", "w"], strides=[2, 2], output_shape=[9, 7])],
               x4, [("w", rnd([2, 1, 3, 3]))], run_shapes=[{"x": [1, 2, 3, 3]}],
               expect=r"ConvTranspose 'convtranspose0'.*output_shape\[0\] = 9 exceeds")
    # A symbolic GatherND index depth, or number of axes with keepdims = 0, sets the result's
    # rank: the model must declare it.
    error_case("gathernd_symbolic_depth_undeclared", [node("GatherND", ["x", "i"])],
               [("x", [4, 5, 6]), ("i", ["n", "q"])], opset=13,
               expect=r"last dim of indices \(q\) is symbolic and the model declares no rank")
    ERRORS[-1][1].graph.input[1].type.tensor_type.elem_type = TensorProto.INT64
    ERRORS[-1][1].graph.output[0].type.tensor_type.ClearField("shape")
    # Subgraphs' declared element types are checked as the main graph's are (onnxruntime
    # refuses such models): an If branch output, a Loop body's carried input.
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="r")], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.INT64, None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="g")], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    error_case("if_branch_output_declared_type", [node("If", ["c"], then_branch=then_g,
                                                       else_branch=else_g)],
               [("x", [2, 3])], [("c", np.array(True))],
               expect=r"If 'if0'.*then_branch: output 't' is declared as i64 but is f32")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"], name="i1"),
         helper.make_node("Add", ["v", "v"], ["vout"], name="a1")], "body",
        [helper.make_tensor_value_info("it", TensorProto.INT64, []),
         helper.make_tensor_value_info("cin", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.INT64, None)],
        [helper.make_tensor_value_info("cout", TensorProto.BOOL, []),
         helper.make_tensor_value_info("vout", TensorProto.INT64, None)])
    error_case("loop_body_input_declared_type", [node("Loop", ["n", "", "x"], body=body)],
               [("x", [2, 3])], [("n", np.array(2, np.int64))],
               expect=r"Loop 'loop0': subgraph 'body': .*body: input 'v' is declared as i64 but is f32")
    # ... and a run-time value that breaks the declared rank is an error naming the node.
    error_case("gathernd_symbolic_depth_runtime", [node("GatherND", ["x", "i"])],
               [("x", [4, 5, 6]), ("i", ["n", "q"])], opset=13,
               run_shapes=[{"x": [4, 5, 6], "i": [2, 1]}],
               expect=r"GatherND 'gathernd0': the last dim of indices must be 2, the index depth "
                      r"the rank 2 declared")
    ERRORS[-1][1].graph.input[1].type.tensor_type.elem_type = TensorProto.INT64
    declare_rank(ERRORS[-1][1].graph.output[0], 2)
    ERRORS[-1][2][0]["i"] = np.zeros((2, 1), np.int64)
    error_case("reduce_symbolic_axes_keepdims0_runtime",
               [node("ReduceSum", ["x", "a"], keepdims=0)], [("x", [2, 3, 4]), ("a", ["k"])],
               opset=18, run_shapes=[{"x": [2, 3, 4], "a": [1]}],
               expect=r"ReduceSum 'reducesum0': keepdims=0 needs 2 axes for the rank 1 declared")
    ERRORS[-1][1].graph.input[1].type.tensor_type.elem_type = TensorProto.INT64
    declare_rank(ERRORS[-1][1].graph.output[0], 1)
    ERRORS[-1][2][0]["a"] = np.array([0], np.int64)
    # int4 inputs are given one value per byte (int8 bit patterns): a byte outside [-8, 7] is
    # no int4 value.
    error_case("int4_input_out_of_range", [node("Cast", ["x"], to=TensorProto.FLOAT)],
               [("x", [3])], opset=21, run_shapes=[{"x": [3]}],
               expect=r"input 'x': element 0 is 100, outside int4's range \[-8, 7\]")
    ERRORS[-1][1].graph.input[0].type.tensor_type.elem_type = TensorProto.INT4
    ERRORS[-1][2][0]["x"] = np.array([100, -100, 5], np.int8)
    # A graph input that declares no shape (past IR version 8 the ONNX checker, which wants
    # one, is skipped): its rank is unknown, not 0.
    error_case("input_without_shape_ir9", [node("Relu", ["x"])], [("x", [2, 3])], opset=19,
               expect=r"graph input 'x' declares no shape; its rank is needed")
    ERRORS[-1][1].ir_version = 9
    ERRORS[-1][1].graph.input[0].type.tensor_type.ClearField("shape")
    error_case("convtranspose_output_shape_huge",
               [node("ConvTranspose", ["x", "w"], strides=[2, 2],
                     output_shape=[9223372036854775807, 7])],
               [("x", [1, 2, 3, 3])], [("w", rnd([2, 1, 3, 3]))],
               expect=r"ConvTranspose 'convtranspose0'.*output_shape entry 9223372036854775807 is "
                      r"outside \[0, 2\^48\]")
    error_case("reduce_symbolic_axes_keepdims0_undeclared", [node("ReduceSum", ["x", "a"], keepdims=0)],
               [("x", [2, 3]), ("a", ["k"])], opset=18,
               expect=r"keepdims=0 with axes of symbolic length \(k\)")
    ERRORS[-1][1].graph.input[1].type.tensor_type.elem_type = TensorProto.INT64
    ERRORS[-1][1].graph.output[0].type.tensor_type.ClearField("shape")
    error_case("maxpool3d_input_too_small", [node("MaxPool", ["x"], kernel_shape=[3, 3, 3])],
               [("x", ["n", 1, "d", 4, 4])], opset=12, run_shapes=[{"x": [1, 1, 2, 4, 4]}],
               expect="max_pool3d output depth")
    error_case("resize_zero_scale", [node("Resize", ["x", "", "s"])], x4,
               [("s", np.array([1, 1, 0, 2], np.float32))], expect="scales must be positive")
    # A 1-D conv runs as a 2-D one; its errors still name the 1-D width (static and run-time).
    error_case("conv1d_input_too_small", [node("Conv", ["x", "w"])], [("x", [1, 2, 3])],
               [("w", rnd([4, 2, 5]))], expect="conv1d output width")
    # Concat of shape values (1-D) checks its axis as Concat of data does (any axis meant 0).
    error_case("concat_shape_values_axis", [node("Shape", ["x"], ["s"]),
                                            node("Concat", ["s", "s"], ["c"], axis=1),
                                            node("Reshape", ["x", "c"])],
               [("x", ["n", 3])], expect="Concat 'concat0': axis 1 out of range for rank 1")
    error_case("conv1d_input_too_small_runtime", [node("Conv", ["x", "w"])],
               [("x", ["n", 2, "w"])], [("w", rnd([4, 2, 5]))],
               run_shapes=[{"x": [1, 2, 3]}], expect="conv1d output width")
    # The importer's own model checks (issue 32), at opsets past libonnx 1.12's checker (17):
    # attribute names, types and required attributes from the operator version's schema,
    # single static assignment, duplicate graph inputs; an op used before its opset (at IR
    # version 8 and opset 3 libonnx's checker names it).
    error_case("check_unknown_attribute_opset18", [node("Relu", ["x"], alpha=1.0)], [("x", [2, 3])],
               opset=18, expect=r"Relu 'relu0' \(opset 18\): unknown attribute 'alpha'")
    error_case("check_attribute_type_opset19", [node("LeakyRelu", ["x"], alpha=1)], [("x", [2, 3])],
               opset=19, expect="attribute 'alpha' must be FLOAT, got INT")
    error_case("check_required_attribute_opset21", [node("Cast", ["x"])], [("x", [2, 3])],
               opset=21, expect="required attribute 'to' is missing")
    error_case("check_ssa_opset20", [node("Relu", ["x"], ["y"]), node("Neg", ["x"], ["y"])],
               [("x", [2, 3])], opset=20, expect="output 0 'y' is already defined")
    error_case("check_duplicate_input_opset18", [node("Relu", ["x"])], [("x", [2, 3]), ("x", [2, 3])],
               opset=18, expect="graph input 'x' is declared more than once")
    error_case("expand_before_its_opset", [node("Expand", ["x", "s"])], [("x", [2, 1])],
               [("s", np.array([2, 3], np.int64))], opset=3,
               expect=r"No Op registered for Expand with domain_version of 3")


def save_and_compile(relaxc, work, name, m, extra=()):
    """Saves `m` to work/name/model.onnx and compiles it to model.so there: (folder, model
    path, artifact path, the finished relaxc compile process)."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    so = os.path.join(d, "model.so")
    p = subprocess.run([relaxc, "compile", path, "-o", so] + list(extra), capture_output=True,
                       text=True)
    return d, path, so, p


def run_error_case(relaxc, work, name, m, runs, expect):
    import re
    d, path, so, p = save_and_compile(relaxc, work, name, m)
    if runs is not None and p.returncode == 0:
        args = [relaxc, "run", so, "--output-dir", os.path.join(d, "out")]
        for n, v in runs[0].items():
            f = os.path.join(d, f"in_{n}.npy")
            np.save(f, v)
            args += ["--input", f"{n}={f}"]
        p = subprocess.run(args, capture_output=True, text=True)
    text = (p.stderr + p.stdout).strip()
    if p.returncode != 1 or not re.search(expect, text):
        return False, f"expected exit 1 with /{expect}/, got exit {p.returncode}: {text[:300]}"
    return True, text.splitlines()[0][:200]


FAMILIES = {"reduce": reduce_cases, "pool": pool_cases, "norm": norm_cases, "conv": conv_cases,
            "resize": resize_cases, "matmul": matmul_cases, "errors": error_cases,
            "attention": attention_cases}


def ort_run(model_path, feeds, onnx_reference=False):
    if onnx_reference:
        from onnx.reference import ReferenceEvaluator
        ev = ReferenceEvaluator(model_path)
        return list(ev.output_names), ev.run(None, feeds)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    return [o.name for o in s.get_outputs()], s.run(None, feeds)


TARGET = None  # relaxc compile --target (main's --target), None: the default (cpu)


def relaxc_run(relaxc, d, so, k, feeds):
    """`relaxc run` of artifact `so` on `feeds` (written to d/in{k}_<name>.npy), outputs to
    d/out{k}/<name>.npy; None, or the failure's message."""
    args = [relaxc, "run", so, "--output-dir", os.path.join(d, f"out{k}")]
    for n, v in feeds.items():
        f = os.path.join(d, f"in{k}_{n}.npy")
        np.save(f, v)
        args += ["--input", f"{n}={f}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return f"run exit {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    return None


def run_case(relaxc, work, name, m, runs):
    d, path, so, p = save_and_compile(relaxc, work, name, m,
                                      ["--target", TARGET] if TARGET else [])
    if p.returncode != 0:
        return False, f"compile exit {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    msgs = []
    for k, feeds in enumerate(runs):
        try:
            if name in CUSTOM_REFERENCE:
                names, refs = CUSTOM_REFERENCE[name](m, feeds)
            else:
                names, refs = ort_run(path, feeds, name in ONNX_REFERENCE)
        except Exception as e:  # noqa: BLE001 (the reference itself failed: report the case)
            return False, f"the reference failed: {str(e)[:200]}"
        err = relaxc_run(relaxc, d, so, k, feeds)
        if err:
            return False, err
        for n, ref in zip(names, refs):
            got = np.load(os.path.join(d, f"out{k}", n + ".npy"))
            if name in ULP_LIMIT:
                limit = ULP_LIMIT[name][0 if TARGET in (None, "cpu") else 1]
                err = ulp_error(got, ref).reshape(-1)
                worst = int(np.argmax(err))
                ok = bool(err[worst] <= limit)
                msg = (f"max {err[worst]:.2f} ulp (bound {limit}) at x[{worst}]: got {got.flat[worst]!r},"
                       f" want {ref.flat[worst]!r}")
            else:
                ok, msg = compare.compare(got, ref)
            if not ok:
                return False, f"run {k} ({', '.join(str(list(v.shape)) for v in feeds.values())}) output {n}: {msg}"
            msgs.append(msg)
    return True, f"{len(runs)} run(s)"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default=None, help="only cases whose name contains this")
    ap.add_argument("--target", default=None, help="relaxc compile --target (default: cpu)")
    ap.add_argument("families", nargs="*", default=sorted(FAMILIES))
    args = ap.parse_args()
    global TARGET
    TARGET = args.target
    for f in args.families:
        FAMILIES[f]()
    passed = failed = 0
    for name, m, runs, expect in ERRORS:
        if args.filter and args.filter not in name:
            continue
        ok, msg = run_error_case(args.relaxc, os.path.join(args.work, "errors"), name, m, runs, expect)
        passed += ok
        failed += not ok
        if not ok:
            print(f"FAIL errors/{name}: {msg}", flush=True)
    for fam in args.families:
        for name, m, runs in CASES.get(fam, []):
            if args.filter and args.filter not in name:
                continue
            ok, msg = run_case(args.relaxc, os.path.join(args.work, fam), name, m, runs)
            passed += ok
            failed += not ok
            if not ok:
                print(f"FAIL {fam}/{name}: {msg}", flush=True)
    print(f"nn cases: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

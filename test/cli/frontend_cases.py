#!/usr/bin/env python3
# Regression cases for importer, op and tool bugs (issue 6 section 4). `make DIR` writes the
# models the CLI error tests (tests.cmake) compile; `run CASE` compiles and runs one model with
# relaxc and checks the outputs against onnxruntime or numpy (or checks the tool's behaviour).
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializer=(), opset=13, ir_version=8, opsets=None):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializer))
    return helper.make_model(graph, opset_imports=opsets or [helper.make_opsetid("", opset)],
                             ir_version=ir_version, producer_name="relaxc-frontend-cases")


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def relu_model(x_shape, opset=13, ir_version=8, opsets=None):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                 [vi("x", TensorProto.FLOAT, x_shape)], [vi("y", TensorProto.FLOAT, x_shape)],
                 opset=opset, ir_version=ir_version, opsets=opsets)


def huge_tensor(name, dims):
    """A float tensor declaring `dims` but holding only 4 bytes of data."""
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.raw_data = np.float32(1).tobytes()
    return t


# ---- models for the CLI error tests -------------------------------------------------------
def error_models():
    m = {}
    x = vi("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = vi("y", TensorProto.FLOAT, [None] * 4)
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 1, 1], [1.0])
    # Conv auto_pad=SAME_UPPER with zero strides (was SIGFPE).
    m["conv_same_strides0"] = model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", auto_pad="SAME_UPPER",
                          strides=[0, 0])], [x], [y], [w])
    # Conv with a 0-D bias (was SIGSEGV).
    b0 = helper.make_tensor("b", TensorProto.FLOAT, [], [1.0])
    m["conv_bias_0d"] = model([helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv0")],
                              [x], [y], [w, b0])
    # Constant and initializer declaring 2^40 elements with 4 bytes of data (was bad_alloc).
    cy = vi("c", TensorProto.FLOAT, [None])
    for tag, dims in (("1d", [1 << 40]), ("2d", [1 << 20, 1 << 20])):
        m["const_huge_" + tag] = model(
            [helper.make_node("Constant", [], ["c"], name="const0", value=huge_tensor("v", dims))],
            [], [cy], ir_version=9)
        m["init_huge_" + tag] = model(
            [helper.make_node("Identity", ["big"], ["c"], name="id0")], [], [cy],
            [huge_tensor("big", dims)], ir_version=9)
    # The same with the value in float_data instead of raw_data.
    floats = helper.make_tensor("big", TensorProto.FLOAT, [1], [1.0])
    floats.dims[0] = 1 << 40
    m["init_huge_floats"] = model([helper.make_node("Identity", ["big"], ["c"], name="id0")], [],
                                  [cy], [floats], ir_version=9)
    # Declared sizes whose byte count overflows int64.
    m["init_overflow"] = model([helper.make_node("Identity", ["big"], ["c"], name="id0")], [], [cy],
                               [huge_tensor("big", [1 << 62, 4])], ir_version=9)
    m["input_overflow"] = relu_model([1 << 31, 1 << 31])
    a = vi("a", TensorProto.INT64, [1 << 31, 1])
    b = vi("b", TensorProto.INT64, [1, 1 << 31])
    m["add_output_overflow"] = model([helper.make_node("Add", ["a", "b"], ["s"], name="add0")],
                                     [a, b], [vi("s", TensorProto.INT64, [None, None])])
    # Folding a binary op on shape values of lengths 2 and 3 (not broadcastable).
    m["fold_bad_broadcast"] = model(
        [helper.make_node("Constant", [], ["p"], name="cp", value_ints=[1, 2]),
         helper.make_node("Constant", [], ["q"], name="cq", value_ints=[1, 2, 3]),
         helper.make_node("Add", ["p", "q"], ["s"], name="add0")], [],
        [vi("s", TensorProto.INT64, [None])])
    # Opset 7 BatchNormalization with spatial=0 (per-activation statistics) is refused, not
    # computed per channel.
    bn_x = vi("x", TensorProto.FLOAT, [1, 2, 2, 2])
    bn_params = [numpy_helper.from_array(np.ones((2, 2, 2), np.float32), nm)
                 for nm in ("scale", "bias", "mean", "var")]
    m["bn_spatial0"] = model(
        [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"],
                          name="bn0", spatial=0)],
        [bn_x] + [vi(t.name, TensorProto.FLOAT, [2, 2, 2]) for t in bn_params],
        [vi("y", TensorProto.FLOAT, [1, 2, 2, 2])], bn_params, opset=7, ir_version=3)
    # Models to refuse.
    m["opset99"] = relu_model([2], opset=99, ir_version=10)
    m["ir_version11"] = relu_model([2], ir_version=11)
    m["two_default_opsets"] = relu_model(
        [2], opsets=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx", 14)], ir_version=9)
    undef = relu_model([2])
    undef.graph.output[0].type.tensor_type.elem_type = TensorProto.UNDEFINED
    m["output_undefined_type"] = undef
    # A [0, 3] input accepts only dim 0: compiled by the run case input_dim0.
    return m


# ---- run cases -------------------------------------------------------------------------------
class Runner:
    def __init__(self, relaxc, work):
        self.relaxc = relaxc
        self.work = work

    def path(self, name):
        return os.path.join(self.work, name)

    def compile(self, m, name):
        onnx_path = self.path(name + ".onnx")
        onnx.save(m, onnx_path)
        so = self.path(name + ".so")
        self.check_call([self.relaxc, "compile", onnx_path, "-o", so])
        return so

    def check_call(self, cmd, env=None):
        print("+ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != 0:
            raise SystemExit(f"FAIL: exit code {p.returncode}")
        return p

    def run(self, so, inputs, out_dir=None, expect_error=None, tool=None):
        """Runs the artifact on `inputs` (name -> array) with `tool` (the command before the
        artifact; default `relaxc run`); returns the outputs in order."""
        args = (tool or [self.relaxc, "run"]) + [so]
        for k, v in inputs.items():
            f = self.path(f"{os.path.basename(so)}.{k}.npy")
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        out_dir = out_dir or tempfile.mkdtemp(dir=self.work)
        args += ["--output-dir", out_dir]
        print("+ " + " ".join(args), flush=True)
        p = subprocess.run(args, capture_output=True, text=True)
        sys.stdout.write(p.stdout + p.stderr)
        if expect_error is not None:
            if p.returncode != 1 or expect_error not in p.stderr:
                raise SystemExit(f"FAIL: expected exit 1 with '{expect_error}', got {p.returncode}")
            return None
        if p.returncode != 0:
            raise SystemExit(f"FAIL: exit code {p.returncode}")
        names = [line.split(":", 1)[0] for line in p.stdout.splitlines() if ": shape=" in line]
        return [np.load(os.path.join(out_dir, n + ".npy")) for n in names]


def ort(m, inputs):
    import onnxruntime as rt

    sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def same(got, want, what=""):
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype or not np.allclose(g, w, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"FAIL{what}: output {i}: got {g.dtype}{list(g.shape)} "
                             f"{g.ravel()[:16]}"
                             f", expected {w.dtype}{list(w.shape)} {w.ravel()[:16]}")
    if len(got) != len(want):
        raise SystemExit(f"FAIL{what}: {len(got)} outputs, expected {len(want)}")
    print(f"PASS{what}: {len(got)} outputs match")


def cases_main(cases, doc=None):
    """The command line of a case file: `CASE --relaxc PATH --work DIR` runs cases[CASE] with a
    Runner working in DIR/CASE."""
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("case", choices=sorted(cases))
    p.add_argument("--relaxc", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    work = os.path.join(args.work, args.case)
    os.makedirs(work, exist_ok=True)
    cases[args.case](Runner(args.relaxc, work))
    return 0


def case_const_dedupe_shape(r):
    """Zero constants of shapes [4] and [2, 2] have the same bytes: each output keeps its shape."""
    z4 = numpy_helper.from_array(np.zeros(4, np.float32), "z4")
    z22 = numpy_helper.from_array(np.zeros((2, 2), np.float32), "z22")
    x = vi("x", TensorProto.FLOAT, [2, 2])
    m = model([helper.make_node("Identity", ["z4"], ["a"], name="id_a"),
               helper.make_node("Identity", ["z22"], ["b"], name="id_b"),
               helper.make_node("Add", ["x", "z22"], ["c"], name="add_c")],
              [x], [vi("a", TensorProto.FLOAT, [4]), vi("b", TensorProto.FLOAT, [2, 2]),
                    vi("c", TensorProto.FLOAT, [2, 2])], [z4, z22])
    inputs = {"x": np.arange(4, dtype=np.float32).reshape(2, 2)}
    same(r.run(r.compile(m, "const_dedupe_shape"), inputs), ort(m, inputs))


def case_div_trunc_fold(r):
    """Integer Div of shape values known at compile time truncates toward zero."""
    a = helper.make_node("Constant", [], ["a"], name="ca", value_ints=[-3, 7, -7, 3, -1, 5])
    b = helper.make_node("Constant", [], ["b"], name="cb", value_ints=[2, -2, 2, -2, 4, 5])
    m = model([a, b, helper.make_node("Div", ["a", "b"], ["q"], name="div0")], [],
              [vi("q", TensorProto.INT64, [6])])
    want = ort(m, {})
    np.testing.assert_array_equal(want[0], [-1, -3, -3, -1, 0, 1])
    same(r.run(r.compile(m, "div_trunc_fold"), {}), want)
    # The same on int32 values: the folded output keeps its dtype.
    a32 = helper.make_node("Constant", [], ["a"], name="ca",
                           value=numpy_helper.from_array(np.array([-3, 7, -7], np.int32), "va"))
    b32 = helper.make_node("Constant", [], ["b"], name="cb",
                           value=numpy_helper.from_array(np.array([2, -2, 2], np.int32), "vb"))
    m = model([a32, b32, helper.make_node("Div", ["a", "b"], ["q"], name="div0")], [],
              [vi("q", TensorProto.INT32, [3])])
    same(r.run(r.compile(m, "div_trunc_fold_i32"), {}), ort(m, {}), " int32")


def case_div_trunc_symbolic(r):
    """Div of a symbolic shape value by a negative constant truncates: x (n, 6) is reshaped to
    (-1, -(n / -2)), i.e. (3n, n // 2) at n = 4, 5, 8 (flooring gives a different width)."""
    x = vi("x", TensorProto.FLOAT, ["n", 6])
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape0"),
             helper.make_node("Constant", [], ["i0"], name="c_i0", value_int=0),
             helper.make_node("Gather", ["s", "i0"], ["g"], name="gather0", axis=0),
             helper.make_node("Constant", [], ["k"], name="c_k", value_int=-2),
             helper.make_node("Div", ["g", "k"], ["q"], name="div0"),
             helper.make_node("Sub", ["i0", "q"], ["w"], name="neg0"),
             helper.make_node("Constant", [], ["ax"], name="c_ax", value_ints=[0]),
             helper.make_node("Unsqueeze", ["w", "ax"], ["w1"], name="unsq0"),
             helper.make_node("Constant", [], ["m1"], name="c_m1", value_ints=[-1]),
             helper.make_node("Concat", ["m1", "w1"], ["shape"], name="cat0", axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape0")]
    m = model(nodes, [x], [vi("y", TensorProto.FLOAT, [None, None])])
    so = r.compile(m, "div_trunc_symbolic")
    for n in (4, 5, 8):
        inputs = {"x": np.arange(n * 6, dtype=np.float32).reshape(n, 6)}
        same(r.run(so, inputs), ort(m, inputs), f" n={n}")


def case_mod_fold(r):
    """Integer Mod of known shape values folds at import (fmod=0: the divisor's sign; fmod=1: the
    dividend's), and a Reshape of a known value to [1] keeps it known: torch's attention
    export slices Shape(x) up to Reshape(Mod(2, 3), [1]) and reshapes by the result, which needs
    a length known at compile time. Checked against onnxruntime at n = 3 and 5."""
    x = vi("x", TensorProto.FLOAT, ["n", 6])
    nodes = [helper.make_node("Constant", [], ["a"], name="ca", value_ints=[-3, 7, -7, 3, 9]),
             helper.make_node("Constant", [], ["b"], name="cb", value_ints=[2, -2, 2, -2, -1]),
             helper.make_node("Mod", ["a", "b"], ["m0"], name="mod0"),
             helper.make_node("Mod", ["a", "b"], ["m1"], name="mod1", fmod=1),
             helper.make_node("Constant", [], ["two"], name="c2", value_int=2),
             helper.make_node("Constant", [], ["three"], name="c3", value_int=3),
             helper.make_node("Mod", ["two", "three"], ["e0"], name="mod2"),
             helper.make_node("Constant", [], ["one"], name="c1", value_ints=[1]),
             helper.make_node("Reshape", ["e0", "one"], ["end"], name="reshape_end"),
             helper.make_node("Constant", [], ["zero"], name="c0", value_ints=[0]),
             helper.make_node("Shape", ["x"], ["s"], name="shape0"),
             helper.make_node("Slice", ["s", "zero", "end"], ["s2"], name="slice0"),
             helper.make_node("Relu", ["x"], ["xr"], name="relu0"),
             helper.make_node("Reshape", ["xr", "s2"], ["y"], name="reshape0")]
    m = model(nodes, [x], [vi("m0", TensorProto.INT64, [5]), vi("m1", TensorProto.INT64, [5]),
                           vi("y", TensorProto.FLOAT, ["n", 6])])
    so = r.compile(m, "mod_fold")
    for n in (3, 5):
        inputs = {"x": np.arange(n * 6, dtype=np.float32).reshape(n, 6) - 7}
        want = ort(m, inputs)
        np.testing.assert_array_equal(want[0], [1, -1, 1, -1, 0])
        np.testing.assert_array_equal(want[1], [-1, 1, -1, 1, 0])
        same(r.run(so, inputs), want, f" n={n}")


def case_known_int_dtypes(r):
    """Integer values known at compile time keep their dtype when they become outputs: Shape ->
    Cast(int32), and constants Cast to uint8 / int8 wrap as the cast does."""
    x = vi("x", TensorProto.FLOAT, [3, 300])
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape0"),
             helper.make_node("Cast", ["s"], ["s32"], name="cast0", to=TensorProto.INT32),
             helper.make_node("Constant", [], ["c"], name="c0", value_ints=[300, -1, 127, 128]),
             helper.make_node("Cast", ["c"], ["u8"], name="cast1", to=TensorProto.UINT8),
             helper.make_node("Cast", ["c"], ["i8"], name="cast2", to=TensorProto.INT8)]
    m = model(nodes, [x], [vi("s32", TensorProto.INT32, [2]), vi("u8", TensorProto.UINT8, [4]),
                           vi("i8", TensorProto.INT8, [4])])
    inputs = {"x": np.zeros((3, 300), np.float32)}
    same(r.run(r.compile(m, "known_int_dtypes"), inputs), ort(m, inputs))


def case_div_trunc_kernel(r):
    """Integer Div computed by the kernel at run time truncates toward zero."""
    a = vi("a", TensorProto.INT64, [5])
    b = vi("b", TensorProto.INT64, [5])
    m = model([helper.make_node("Div", ["a", "b"], ["q"], name="div0")], [a, b],
              [vi("q", TensorProto.INT64, [5])])
    inputs = {"a": np.array([-3, 7, -7, 3, -9], np.int64),
              "b": np.array([2, -2, 2, -2, 4], np.int64)}
    same(r.run(r.compile(m, "div_trunc_kernel"), inputs), ort(m, inputs))


def case_input_dim0(r):
    """A declared dim 0 is static: [0, 3] runs, [5, 3] is rejected."""
    m = relu_model([0, 3])
    so = r.compile(m, "input_dim0")
    inputs = {"x": np.zeros((0, 3), np.float32)}
    same(r.run(so, inputs), ort(m, inputs))
    r.run(so, {"x": np.ones((5, 3), np.float32)}, expect_error="dim 0 must be 0, got 5")


def case_declared_output_rank(r):
    """A graph output declared with a rank the graph does not compute (a trained CRNN declares
    its rank-3 output with rank 2): compiled with a warning, the computed shape used, as
    onnxruntime runs it; at two sizes of the symbolic dim."""
    m = model([helper.make_node("Transpose", ["x"], ["t"], name="transpose0", perm=[1, 0, 2]),
               helper.make_node("Relu", ["t"], ["y"], name="relu0")],
              [vi("x", TensorProto.FLOAT, ["n", 4, 5])], [vi("y", TensorProto.FLOAT, ["a", "b"])])
    onnx_path = r.path("declared_rank.onnx")
    onnx.save(m, onnx_path)
    so = r.path("declared_rank.so")
    p = r.check_call([r.relaxc, "compile", onnx_path, "-o", so])
    if "warning: graph output 'y' is declared with rank 2 but the graph computes" not in p.stderr:
        raise SystemExit("FAIL: no warning about the declared rank")
    rng = np.random.default_rng(5)
    for n in (1, 3):
        inputs = {"x": rng.standard_normal((n, 4, 5)).astype(np.float32)}
        same(r.run(so, inputs), ort(m, inputs), f" declared_rank n={n}")


def case_dim_param_names(r):
    """dim_params 'batch-size' and 'batch_size' are different dims; a generated name for an
    unnamed dim of 'c' ('c_d0') does not capture the model's own dim_param 'c_d0'."""
    a = vi("a", TensorProto.FLOAT, ["batch-size", 3])
    b = vi("b", TensorProto.FLOAT, ["batch_size", 3])
    c = vi("c", TensorProto.FLOAT, [None, 2])
    d = vi("d", TensorProto.FLOAT, ["c_d0", 2])
    nodes = [helper.make_node("Relu", [i], [i + "_out"], name="relu_" + i) for i in "abcd"]
    outs = [vi(i + "_out", TensorProto.FLOAT, [None, None]) for i in "abcd"]
    m = model(nodes, [a, b, c, d], outs)
    so = r.compile(m, "dim_param_names")
    rng = np.random.default_rng(0)
    inputs = {"a": rng.standard_normal((2, 3)).astype(np.float32),
              "b": rng.standard_normal((5, 3)).astype(np.float32),
              "c": rng.standard_normal((4, 2)).astype(np.float32),
              "d": rng.standard_normal((1, 2)).astype(np.float32)}
    same(r.run(so, inputs), ort(m, inputs))


def pool_model(kind, x_shape, **attrs):
    x = vi("x", TensorProto.FLOAT, x_shape)
    return model([helper.make_node(kind, ["x"], ["y"], name="pool0", **attrs)], [x],
                 [vi("y", TensorProto.FLOAT, [None] * 4)])


def reference(m, inputs):
    """The ONNX reference implementation (onnx.reference), for ops where onnxruntime 1.19
    disagrees with the spec (MaxPool ceil_mode windows starting in the trailing pad)."""
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(m).run(None, inputs)


def case_maxpool_ceil(r):
    """MaxPool ceil_mode: the last window starts inside the input plus the leading pad (ONNX spec:
    windows that would start in the right padded region are ignored)."""
    rng = np.random.default_rng(1)
    attrs = dict(kernel_shape=[2, 2], strides=[3, 3], pads=[0, 0, 1, 1], ceil_mode=1)
    m = pool_model("MaxPool", [1, 1, 5, 5], **attrs)
    inputs = {"x": rng.standard_normal((1, 1, 5, 5)).astype(np.float32)}
    want = reference(m, inputs)
    assert want[0].shape == (1, 1, 2, 2), want[0].shape
    same(r.run(r.compile(m, "maxpool_ceil"), inputs), want)
    # The same window arithmetic on symbolic dims, at several sizes from one artifact.
    for name, attrs in (("maxpool_ceil_sym", attrs),
                        ("maxpool_ceil_sym2", dict(kernel_shape=[3, 2], strides=[2, 3],
                                                   pads=[1, 0, 1, 2], ceil_mode=1))):
        m = pool_model("MaxPool", [1, 2, "h", "w"], **attrs)
        so = r.compile(m, name)
        for h, w in ((5, 5), (6, 7), (7, 4), (4, 9)):
            inputs = {"x": rng.standard_normal((1, 2, h, w)).astype(np.float32)}
            same(r.run(so, inputs), reference(m, inputs), f" {name} {h}x{w}")


def avgpool_numpy(x, k, s, pads, ceil_mode, count_include_pad):
    """AveragePool written out: a window starting in the trailing pad is dropped (ceil_mode);
    the divisor counts the taps inside the input, or with count_include_pad the taps inside the
    input and its explicit pads, never the positions past the end pad that ceil_mode adds
    (onnxruntime 1.32 and PyTorch; the ONNX reference implementation counts those too)."""
    n, c, h, w = x.shape
    dims = []
    for ax, size in ((0, h), (1, w)):
        pb, pe = pads[ax], pads[ax + 2]
        span = size + pb + pe - k[ax]
        out = (-(-span // s[ax]) if ceil_mode else span // s[ax]) + 1
        if ceil_mode and (out - 1) * s[ax] >= size + pb:
            out -= 1
        dims.append(out)
    y = np.zeros((n, c, dims[0], dims[1]), x.dtype)
    for i in range(dims[0]):
        for j in range(dims[1]):
            h0, w0 = i * s[0] - pads[0], j * s[1] - pads[1]
            hs = [p for p in range(h0, h0 + k[0]) if 0 <= p < h]
            ws = [p for p in range(w0, w0 + k[1]) if 0 <= p < w]
            total = x[:, :, hs][:, :, :, ws].sum(axis=(2, 3))
            if count_include_pad:
                ch = len([p for p in range(h0, h0 + k[0]) if p < h + pads[2]])
                cw = len([p for p in range(w0, w0 + k[1]) if p < w + pads[3]])
            else:
                ch, cw = len(hs), len(ws)
            y[:, :, i, j] = total / (ch * cw)
    return y


def case_avgpool(r):
    """AveragePool shares the window arithmetic: ceil_mode drops a window starting in the
    trailing pad; count_include_pad 0/1; static and symbolic dims. Checked against the
    operator written out in numpy and against onnxruntime."""
    rng = np.random.default_rng(3)
    configs = [dict(kernel_shape=[2, 2], strides=[3, 3], pads=[0, 0, 1, 1], ceil_mode=1),
               dict(kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 1, 2], ceil_mode=1,
                    count_include_pad=1),
               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
               dict(kernel_shape=[3, 3], strides=[1, 2], pads=[1, 2, 0, 1])]
    for idx, attrs in enumerate(configs):
        m = pool_model("AveragePool", [1, 2, "h", "w"], **attrs)
        so = r.compile(m, f"avgpool{idx}")
        for h, w in ((5, 5), (6, 7), (7, 4)):
            x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
            want = avgpool_numpy(x, attrs["kernel_shape"], attrs["strides"], attrs["pads"],
                                 attrs.get("ceil_mode", 0), attrs.get("count_include_pad", 0))
            got = r.run(so, {"x": x})
            same(got, [want], f" avgpool{idx} {h}x{w}")
            k, p = attrs["kernel_shape"], attrs["pads"]
            if all(p[a] < k[a % 2] for a in range(4)):  # onnxruntime refuses a pad >= kernel
                same(got, ort(m, {"x": x}), f" avgpool{idx} {h}x{w} vs onnxruntime")


def case_fold_broadcast_empty(r):
    """Folding Add on shape values [5] and [] broadcasts to [] (was SIGSEGV)."""
    nodes = [helper.make_node("Constant", [], ["a"], name="ca", value_ints=[5]),
             helper.make_node("Constant", [], ["e"], name="ce",
                              value=numpy_helper.from_array(np.zeros(0, np.int64), "e")),
             helper.make_node("Add", ["a", "e"], ["s"], name="add0"),
             helper.make_node("Add", ["e", "a"], ["t"], name="add1")]
    m = model(nodes, [], [vi("s", TensorProto.INT64, [None]), vi("t", TensorProto.INT64, [None])])
    same(r.run(r.compile(m, "fold_broadcast_empty"), {}), ort(m, {}))


def case_opset6(r):
    """An opset-6 model: Relu, Add with legacy broadcast=1 axis=1, Mul with broadcast=1 (no axis),
    checked against numpy (onnxruntime no longer loads opsets below 7)."""
    x = vi("x", TensorProto.FLOAT, [2, 3, 4])
    b = numpy_helper.from_array(np.array([1, -2, 3], np.float32), "b")
    s = numpy_helper.from_array(np.array([0.5, 2, -1, 3], np.float32), "s")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
             helper.make_node("Add", ["r", "b"], ["y"], name="add0", broadcast=1, axis=1),
             helper.make_node("Mul", ["y", "s"], ["z"], name="mul0", broadcast=1)]
    # IR version 3: initializers are also graph inputs.
    m = model(nodes, [x, vi("b", TensorProto.FLOAT, [3]), vi("s", TensorProto.FLOAT, [4])],
              [vi("z", TensorProto.FLOAT, [2, 3, 4])], [b, s], opset=6, ir_version=3)
    onnx.checker.check_model(m)
    xv = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)
    want = (np.maximum(xv, 0) + np.array([1, -2, 3], np.float32)[None, :, None]) * \
        np.array([0.5, 2, -1, 3], np.float32)
    same(r.run(r.compile(m, "opset6"), {"x": xv}), [want])


def case_output_dir_symlink(r):
    """--output-dir replaces a symlink at DIR/<output>.npy instead of writing through it."""
    m = relu_model([3])
    so = r.compile(m, "symlink_relu")
    out_dir = r.path("symlink_out")
    os.makedirs(out_dir, exist_ok=True)
    target = r.path("symlink_target.txt")
    with open(target, "w") as f:
        f.write("precious\n")
    link = os.path.join(out_dir, "y.npy")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(target, link)
    x = np.array([-1, 2, -3], np.float32)
    got = r.run(so, {"x": x}, out_dir=out_dir)
    with open(target, "rb") as f:
        if f.read() != b"precious\n":
            raise SystemExit("FAIL: the symlink's target was overwritten")
    if os.path.islink(link):
        raise SystemExit("FAIL: DIR/y.npy is still a symlink")
    same(got, [np.maximum(x, 0)])
    leftovers = [f for f in os.listdir(out_dir) if f != "y.npy"]
    if leftovers:
        raise SystemExit(f"FAIL: temporary files left in DIR: {leftovers}")


def compile_error(r, onnx_path, needle):
    """Compiling `onnx_path` must exit 1 with an `error:` line containing `needle`."""
    cmd = [r.relaxc, "compile", onnx_path, "-o", onnx_path + ".so"]
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 1 or "error:" not in p.stderr or needle not in p.stderr:
        raise SystemExit(f"FAIL: expected exit 1 with '{needle}', got {p.returncode}")
    print(f"PASS: refused ({needle})")


def case_external_data(r):
    """Weights saved as external data (onnx.save_model(save_as_external_data=True)) import and
    match onnxruntime; a location outside the model's folder (absolute, '..', a symlink out) or
    a range past the end of the file is refused with an error naming the initializer."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b")
    m = model([helper.make_node("MatMul", ["x", "w"], ["t"], name="mm"),
               helper.make_node("Add", ["t", "b"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, ["n", 64])], [vi("y", TensorProto.FLOAT, ["n", 32])],
              [w, b])
    d = r.path("external_data")
    os.makedirs(d, exist_ok=True)
    onnx_path = os.path.join(d, "mlp.onnx")
    onnx.save_model(m, onnx_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="mlp.weights", size_threshold=0)
    assert os.path.getsize(onnx_path) < 1024, "the weights were not written externally"
    so = os.path.join(d, "mlp.so")
    r.check_call([r.relaxc, "compile", onnx_path, "-o", so])
    x = rng.standard_normal((3, 64)).astype(np.float32)
    same(r.run(so, {"x": x}), ort(onnx.load(onnx_path), {"x": x}))

    def edited(name, location, extra=()):
        mm = onnx.load(onnx_path, load_external_data=False)
        t = mm.graph.initializer[0]
        del t.external_data[:]
        for k, v in (("location", location),) + tuple(extra):
            e = t.external_data.add()
            e.key, e.value = k, v
        p = os.path.join(d, name + ".onnx")
        onnx.save(mm, p)
        return p

    secret = r.path("secret.bin")
    with open(secret, "wb") as f:
        f.write(b"\0" * 8192)
    link = os.path.join(d, "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(secret, link)
    compile_error(r, edited("abs", secret), "is an absolute path")
    compile_error(r, edited("dotdot", "../secret.bin"), "outside the model's folder")
    compile_error(r, edited("symlink", "link.bin"), "outside the model's folder")
    compile_error(r, edited("missing", "nope.bin"), "cannot open external data file 'nope.bin'")
    compile_error(r, edited("past_end", "mlp.weights", (("offset", "100000000"),)),
                  "past the end")
    compile_error(r, edited("bad_len", "mlp.weights", (("length", "-4"),)),
                  "not a non-negative integer")
    compile_error(r, edited("short", "mlp.weights", (("length", "16"),)), "initializer 'w'")


def case_non_utf8_names(r):
    """A graph input or output whose name is not UTF-8 (the artifact's signature is JSON) is an
    error naming the input/output and the bytes, not the JSON library's exception."""
    for which, idx in (("input", 0), ("output", 0)):
        m = relu_model([2])
        # A placeholder name (graph and node agree), replaced by raw bytes below.
        getattr(m.graph, which)[0].name = "\u00e9\u00e9"
        getattr(m.graph.node[0], which)[0] = "\u00e9\u00e9"
        b = m.SerializeToString().replace("\u00e9\u00e9".encode(), b"\xff\xfe\xc3\xa9")
        p = r.path(f"non_utf8_{which}.onnx")
        with open(p, "wb") as f:
            f.write(b)
        compile_error(r, p, f"graph {which} {idx} has a name that is not valid UTF-8: "
                            "'\\xFF\\xFE\\xC3\\xA9'")


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make", help="write the error-test models")
    mk.add_argument("dir")
    rn = sub.add_parser("run", help="run one case")
    rn.add_argument("case", choices=sorted(CASES))
    rn.add_argument("--relaxc", required=True)
    rn.add_argument("--work", required=True)
    sub.add_parser("list", help="list the run cases")
    args = p.parse_args()
    if args.cmd == "make":
        os.makedirs(args.dir, exist_ok=True)
        for name, m in error_models().items():
            onnx.save(m, os.path.join(args.dir, name + ".onnx"))
        np.save(os.path.join(args.dir, "relu_x.npy"), np.array([-1, 2], np.float32))
        print(f"wrote {len(error_models())} models to {args.dir}")
    elif args.cmd == "list":
        print("\n".join(sorted(CASES)))
    else:
        work = os.path.join(args.work, args.case)
        os.makedirs(work, exist_ok=True)
        CASES[args.case](Runner(args.relaxc, work))
    return 0


if __name__ == "__main__":
    sys.exit(main())

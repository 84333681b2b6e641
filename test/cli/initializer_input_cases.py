#!/usr/bin/env python3
# Initializers that are also graph inputs (ONNX issue 32). From IR version 4 on, onnxruntime
# treats such an initializer as an overridable default: the caller may feed it, and a run that
# does not takes the initializer. relaxc makes it an optional input whose default is the
# initializer, and `relaxc compile --freeze-initializers` makes it a constant; below IR version 4
# it stays a constant (onnxruntime does not let the caller feed it). Every expected value comes
# from onnxruntime, fed the same tensors; runs go through `relaxc run`, `relax-run` and
# python/relaxrt.py (the C API, through the relaxc package it aliases).
#
#   initializer_input_cases.py CASE --relaxc PATH --work DIR [--relax-run PATH] [--lib PATH]
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import Runner, model, same, vi  # noqa: E402

B = np.array([1, 2, 3], np.float32)
W = np.arange(6, dtype=np.float32).reshape(3, 2) - 2.5


def add_matmul(ir_version=8, w_shape=(3, "m")):
    """y = (x + b) @ w with b and w initializers that are also graph inputs; x is [n, 3], w is
    declared with a symbolic column count `m` (the default has 2)."""
    inits = [numpy_helper.from_array(B, "b"), numpy_helper.from_array(W, "w")]
    return model([helper.make_node("Add", ["x", "b"], ["s"], name="add0"),
                  helper.make_node("MatMul", ["s", "w"], ["y"], name="matmul0")],
                 [vi("x", TensorProto.FLOAT, ["n", 3]), vi("b", TensorProto.FLOAT, [3]),
                  vi("w", TensorProto.FLOAT, list(w_shape))],
                 [vi("y", TensorProto.FLOAT, ["n", None])], inits, ir_version=ir_version)


def ort_session(m):
    import onnxruntime as rt

    opts = rt.SessionOptions()
    opts.log_severity_level = 3  # no "initializer appears in graph inputs" warnings
    return rt.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def ort(m, feeds):
    return ort_session(m).run(None, feeds)


class Case:
    def __init__(self, args):
        self.r = Runner(args.relaxc, args.work)
        self.relax_run = args.relax_run
        self.lib = args.lib

    def compile(self, m, name, *extra, expect_error=None):
        """Compiles `m`; returns the artifact and the compiler's stdout + stderr."""
        onnx_path = self.r.path(name + ".onnx")
        onnx.save(m, onnx_path)
        so = self.r.path(name + ".so")
        cmd = [self.r.relaxc, "compile", onnx_path, "-o", so, *extra]
        print("+ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(p.stdout + p.stderr)
        if expect_error is not None:
            if p.returncode != 1 or expect_error not in p.stderr:
                raise SystemExit(f"FAIL: expected exit 1 with '{expect_error}', got "
                                 f"{p.returncode}")
            return None, p.stdout + p.stderr
        if p.returncode != 0:
            raise SystemExit(f"FAIL: compile exit code {p.returncode}")
        return so, p.stdout + p.stderr

    def run_tool(self, tool, so, feeds, expect_error=None):
        """`relaxc run` or `relax-run` on `feeds`: the outputs in order (None for an expected
        error, or for relax-run when it was not given)."""
        if tool == "relax-run" and not self.relax_run:
            return None
        return self.r.run(so, feeds, expect_error=expect_error,
                          tool=[self.relax_run] if tool == "relax-run" else None)

    def check_both_tools(self, so, feeds, want, what):
        for tool in ("relaxc run", "relax-run"):
            got = self.run_tool(tool, so, feeds)
            if got is not None:
                same(got, want, f" {tool} {what}")


def case_defaults(c):
    """IR 8: b and w are optional inputs. Left out they take the initializers (as onnxruntime
    without feeds); fed, they replace them (as onnxruntime fed the same), w with another
    column count bound to the symbolic dim m. --stats counts them."""
    m = add_matmul()
    so, out = c.compile(m, "defaults", "--stats")
    if "initializer inputs: 2 optional inputs (36 bytes of defaults" not in out:
        raise SystemExit("FAIL: --stats does not count the 2 optional inputs")
    names = [i.name for i in ort_session(m).get_overridable_initializers()]
    if names != ["b", "w"]:
        raise SystemExit(f"FAIL: onnxruntime's overridable initializers are {names}")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    for feeds, what in [({"x": x}, "defaults"), ({"x": x, "b": b}, "b fed"),
                        ({"x": x[:1], "w": w}, "w fed (m = 5)"),
                        ({"x": x, "b": b, "w": w}, "both fed")]:
        c.check_both_tools(so, feeds, ort(m, feeds), what)
    # An optional input that declares only its element type (no shape: the ONNX checker wants
    # one, onnxruntime runs it) takes the initializer's shape.
    m.graph.input[1].type.tensor_type.ClearField("shape")
    so, _ = c.compile(m, "defaults_no_shape")
    for feeds, what in [({"x": x}, "no declared shape, default"),
                        ({"x": x, "b": b}, "no declared shape, b fed")]:
        c.check_both_tools(so, feeds, ort(m, feeds), what)


def case_ir3(c):
    """IR 3: every initializer had to be a graph input; onnxruntime keeps them constants and
    refuses a feed. relaxc bakes them in: the artifact's only input is x."""
    m = add_matmul(ir_version=3, w_shape=(3, 2))
    so, _ = c.compile(m, "ir3", "--print-ir-after=import")
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    if [i.name for i in ort_session(m).get_inputs()] != ["x"]:
        raise SystemExit("FAIL: onnxruntime lists more inputs than x at IR 3")
    c.check_both_tools(so, {"x": x}, ort(m, {"x": x}), "IR 3")
    c.run_tool("relaxc run", so, {"x": x, "b": B},
               expect_error="unknown input 'b' (expected inputs: x)")


def case_freeze(c):
    """--freeze-initializers: b and w are constants (--stats says so, the artifact has one input
    and weight packing applies); the result is onnxruntime's with the initializers."""
    m = add_matmul(w_shape=(3, 2))
    so, out = c.compile(m, "freeze", "--freeze-initializers", "--stats")
    if "initializer inputs: 2 frozen into constants (--freeze-initializers)" not in out:
        raise SystemExit("FAIL: --stats does not report the frozen initializers")
    x = np.linspace(-2, 2, 9, dtype=np.float32).reshape(3, 3)
    c.check_both_tools(so, {"x": x}, ort(m, {"x": x}), "frozen")
    c.run_tool("relaxc run", so, {"x": x, "b": B},
               expect_error="unknown input 'b' (expected inputs: x)")
    # A converter that needs a constant (Resize's antialias with keep_aspect_ratio_policy and
    # run-time sizes): the error says why and names the option, which then compiles it.
    rs = model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="rs0",
                                 mode="linear", antialias=1, axes=[2, 3],
                                 keep_aspect_ratio_policy="not_larger")],
               [vi("x", TensorProto.FLOAT, [1, 1, 4, 6]), vi("sizes", TensorProto.INT64, [2])],
               [vi("y", TensorProto.FLOAT, None)],
               [numpy_helper.from_array(np.array([2, 2], np.int64), "sizes")], opset=18)
    _, out = c.compile(rs, "resize_sizes", expect_error="needs constant sizes")
    if "input 'sizes' is an initializer that is also a graph input" not in out or \
            "--freeze-initializers" not in out:
        raise SystemExit("FAIL: the error does not point at --freeze-initializers")
    so, _ = c.compile(rs, "resize_sizes_frozen", "--freeze-initializers")
    x = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6)
    c.check_both_tools(so, {"x": x}, ort(rs, {"x": x}), "Resize, frozen sizes")


def case_errors(c):
    """A fed override is checked like any input (shape, rank, dtype: errors naming it, where
    onnxruntime refuses it too); a required input left out is an error listing the optional
    ones; a declared shape or type the initializer does not have is a compile error (onnxruntime
    refuses to load such a model)."""
    m = add_matmul()
    so, _ = c.compile(m, "errors")
    x = np.ones((2, 3), np.float32)
    for bad, msg in [(np.ones(4, np.float32), "input 'b': dim 0 must be 3, got 4"),
                     (np.ones((1, 3), np.float32), "input 'b': expected 1 dims, got 2"),
                     (np.ones(3, np.float64), "input 'b': expected dtype float32, got float64")]:
        try:
            ort(m, {"x": x, "b": bad})
            raise SystemExit(f"FAIL: onnxruntime accepted b of {bad.dtype}{list(bad.shape)}")
        except SystemExit:
            raise
        except Exception as e:  # onnxruntime refuses it as well
            print(f"onnxruntime refuses it: {str(e).splitlines()[0]}")
        for tool in ("relaxc run", "relax-run"):
            c.run_tool(tool, so, {"x": x, "b": bad}, expect_error=msg)
    for tool in ("relaxc run", "relax-run"):
        c.run_tool(tool, so, {"b": B}, expect_error="missing input 'x' (expected inputs: x, "
                                                    "b (optional), w (optional))")
    bad_decl = add_matmul(w_shape=(3, 4))
    c.compile(bad_decl, "bad_decl", expect_error="graph input 'w' is declared with shape [3, 4] "
                                                  "but its initializer (its default) has shape "
                                                  "[3, 2]")
    bad_type = model([helper.make_node("Add", ["x", "b"], ["y"])],
                     [vi("x", TensorProto.FLOAT, [3]), vi("b", TensorProto.DOUBLE, [3])],
                     [vi("y", TensorProto.FLOAT, [3])], [numpy_helper.from_array(B, "b")])
    c.compile(bad_type, "bad_type", expect_error="graph input 'b' is declared as f64 but its "
                                                  "initializer is f32")


def case_many(c):
    """A keep_initializers_as_inputs export (every weight an optional input): the compiler warns
    and suggests --freeze-initializers; both artifacts match onnxruntime."""
    rng = np.random.default_rng(5)
    nodes, inputs, inits, prev = [], [vi("x", TensorProto.FLOAT, [1, 4])], [], "x"
    for k in range(8):
        w = rng.standard_normal((4, 4)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{k}"))
        inputs.append(vi(f"w{k}", TensorProto.FLOAT, [4, 4]))
        nodes.append(helper.make_node("MatMul", [prev, f"w{k}"], [f"h{k}"]))
        prev = f"h{k}"
    m = model(nodes, inputs, [vi(prev, TensorProto.FLOAT, [1, 4])], inits)
    so, out = c.compile(m, "many")
    if "warning: 8 initializers are also graph inputs" not in out or \
            "--freeze-initializers" not in out:
        raise SystemExit("FAIL: no warning suggesting --freeze-initializers")
    x = rng.standard_normal((1, 4)).astype(np.float32)
    c.check_both_tools(so, {"x": x}, ort(m, {"x": x}), "8 defaults")
    so, out = c.compile(m, "many_frozen", "--freeze-initializers")
    if "warning:" in out:
        raise SystemExit("FAIL: a warning with --freeze-initializers")
    c.check_both_tools(so, {"x": x}, ort(m, {"x": x}), "8 frozen")


def case_relaxrt(c):
    """python/relaxrt.py (the C API through the relaxc package): has_default per input, the default itself, runs without
    and with overrides as onnxruntime, and the errors of a bad override or a missing x."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    import relaxrt

    m = add_matmul()
    so, _ = c.compile(m, "relaxrt")
    mod = relaxrt.Module(so, lib=c.lib)
    flags = [(i.name, i.has_default) for i in mod.inputs]
    if flags != [("x", False), ("b", True), ("w", True)]:
        raise SystemExit(f"FAIL: has_default flags {flags}")
    if not np.array_equal(mod.input_default("b"), B) or \
            not np.array_equal(mod.input_default("w"), W):
        raise SystemExit("FAIL: input_default differs from the initializers")
    try:
        mod.input_default("x")
        raise SystemExit("FAIL: input_default('x') did not raise")
    except relaxrt.Error as e:
        if "input 'x' has no default" not in str(e):
            raise SystemExit(f"FAIL: {e}")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 3)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    for feeds, what in [({"x": x}, "defaults"), ({"x": x, "w": w}, "w fed"),
                        ({"x": x, "b": -B}, "b fed"), ({"x": x}, "defaults again")]:
        same(mod.run(feeds), ort(m, feeds), f" relaxrt {what}")
    for feeds, msg in [({"x": x, "b": np.ones(2, np.float32)}, "input 'b': dim 0 must be 3, got 2"),
                       ({"b": B}, "missing input 'x'")]:
        try:
            mod.run(feeds)
            raise SystemExit(f"FAIL: no error for {sorted(feeds)}")
        except relaxrt.Error as e:
            if msg not in str(e):
                raise SystemExit(f"FAIL: '{e}' does not contain '{msg}'")
            print(f"PASS: relaxrt error: {e}")
    mod.close()


def case_vulkan(c):
    """The vulkan target (lavapipe here): the defaults are copied to the device like a host
    input; results as onnxruntime with and without overrides."""
    m = add_matmul()
    so, _ = c.compile(m, "vulkan", "--target", "vulkan")
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    w = np.linspace(1, 2, 9, dtype=np.float32).reshape(3, 3)
    for feeds, what in [({"x": x}, "defaults"), ({"x": x, "b": 2 * B, "w": w}, "both fed")]:
        c.check_both_tools(so, feeds, ort(m, feeds), f"vulkan {what}")


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--relaxc", required=True)
    p.add_argument("--relax-run", default="")
    p.add_argument("--lib", default=None, help="librelax_runtime.so (relaxrt case)")
    p.add_argument("--work", required=True)
    args = p.parse_args()
    args.work = os.path.join(args.work, args.case)
    os.makedirs(args.work, exist_ok=True)
    CASES[args.case](Case(args))
    print(f"PASS: {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# The cublas and cudnn BYOC plugins on the CUDA target (byoc_cuda_cases.py CASE --relaxc PATH
# --relax-run PATH --lib-dir DIR --work DIR): small models (dense [+ bias] [+ relu | gelu] with a
# symbolic batch, 2-D and 3-D; conv2d [+ bias] [+ batch_norm] [+ relu], depthwise with
# asymmetric padding) and the PP-OCR classifier compile for `cuda -arch=sm_90` with
# --byoc=cublas,cudnn; --partition-report takes every Conv/MatMul (or names the refusing
# predicate); the artifact records the plugins' runtime libraries; `ldd` resolves those
# libraries. Where a CUDA device is usable the artifacts run and match onnxruntime at two
# batch sizes (rtol 1e-3, atol 1e-4); elsewhere relax-run must fail cleanly with an `error:` line
# naming the missing CUDA device or driver.
import argparse
import ctypes
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import model, ort, vi  # noqa: E402

TARGET = "cuda -arch=sm_90"
LIBS = {"cublas": ("librelax_byoc_cublas.so", "relax_byoc_cublas_dense"),
        "cudnn": ("librelax_byoc_cudnn.so", "relax_byoc_cudnn_conv2d")}


def cuda_device():
    """Whether the driver API finds a device (so the artifacts can run here)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and \
        count.value > 0


class Runner:
    def __init__(self, args):
        self.relaxc, self.relax_run, self.lib_dir = args.relaxc, args.relax_run, args.lib_dir
        self.work = os.path.join(args.work, args.case)
        os.makedirs(self.work, exist_ok=True)
        self.gpu = cuda_device()
        print(f"CUDA device: {'yes' if self.gpu else 'no (runs must fail cleanly)'}")

    def path(self, name):
        return os.path.join(self.work, name)

    def call(self, cmd, expect_rc=0):
        print("+ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != expect_rc:
            raise SystemExit(f"FAIL: exit code {p.returncode}, expected {expect_rc}")
        return p

    def compile(self, onnx_path, name, *flags):
        so = self.path(name + ".so")
        p = self.call([self.relaxc, "compile", onnx_path, "-o", so, "--target", TARGET,
                       "--byoc=cublas,cudnn", "--partition-report", *flags])
        return so, p.stdout

    def run(self, so, inputs, m, what):
        """Runs `so` on `inputs` with relax-run: compared with onnxruntime on a GPU machine,
        otherwise a clean error naming CUDA or the driver."""
        args = [self.relax_run, so]
        for k, v in inputs.items():
            f = self.path(f"{os.path.basename(so)}.{k}.{'x'.join(map(str, v.shape))}.npy")
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        out = self.path("out_" + what)
        os.makedirs(out, exist_ok=True)
        args += ["--output-dir", out]
        if not self.gpu:
            p = self.call(args, expect_rc=1)
            err = [line for line in p.stderr.splitlines() if line.startswith("error:")]
            if len(err) != 1 or not re.search(r"no CUDA device|libcuda\.so\.1|driver", err[0]):
                raise SystemExit("FAIL: expected one `error:` line naming CUDA or its driver")
            if "Traceback" in p.stderr or "Segmentation" in p.stderr:
                raise SystemExit("FAIL: not a clean error")
            print(f"PASS {what}: fails cleanly without a CUDA device: {err[0]}")
            return
        p = self.call(args)
        names = [line.split(":", 1)[0] for line in p.stdout.splitlines() if ": shape=" in line]
        got = [np.load(os.path.join(out, n + ".npy")) for n in names]
        want = ort(m, inputs)
        for g, w in zip(got, want):
            if g.shape != w.shape or not np.allclose(g, w, rtol=1e-3, atol=1e-4):
                raise SystemExit(f"FAIL {what}: max abs diff {np.abs(g - w).max()}")
        print(f"PASS {what}: matches onnxruntime (max abs diff "
              f"{max(float(np.abs(g - w).max()) for g, w in zip(got, want)):.2e})")


def expect(text, what, where):
    if what not in text:
        raise SystemExit(f"FAIL: expected {what!r} in the {where}")
    print(f"PASS: {where} has {what!r}")


def expect_libraries(so, plugins):
    """The artifact's `byoc` section names each plugin's runtime library and function."""
    with open(so, "rb") as f:
        data = f.read()
    for p in plugins:
        lib, fn = LIBS[p]
        expect(data.decode("latin-1"), f"{lib}\t{fn}\t{p}", f"byoc section of {so}")


def dense_model():
    """Dense layers with a symbolic batch: MatMul + Add + Relu, Gemm(transB) + bias + Gelu (tanh),
    a 3-D MatMul + Add, and an exact Gelu, which the cublas table refuses (its epilogue is tanh)."""
    rng = np.random.default_rng(7)

    def const(name, shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)
    inits = [const("w0", (16, 32)), const("b0", (32,)), const("w1", (24, 32)), const("b1", (24,)),
             const("w2", (16, 8)), const("b2", (8,)), const("w3", (24, 4))]
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["m0"], name="matmul0"),
        helper.make_node("Add", ["m0", "b0"], ["a0"], name="add0"),
        helper.make_node("Relu", ["a0"], ["r0"], name="relu0"),
        helper.make_node("Gemm", ["r0", "w1", "b1"], ["g1"], name="gemm1", transB=1),
        helper.make_node("Gelu", ["g1"], ["y0"], name="gelu1", approximate="tanh"),
        helper.make_node("MatMul", ["s", "w2"], ["m2"], name="matmul2"),
        helper.make_node("Add", ["b2", "m2"], ["y1"], name="add2"),
        helper.make_node("MatMul", ["y0", "w3"], ["m3"], name="matmul3"),
        helper.make_node("Gelu", ["m3"], ["y2"], name="gelu3"),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, ["batch", 16]),
                         vi("s", TensorProto.FLOAT, ["batch", 5, 16])],
                 [vi("y0", TensorProto.FLOAT, ["batch", 24]),
                  vi("y1", TensorProto.FLOAT, ["batch", 5, 8]),
                  vi("y2", TensorProto.FLOAT, ["batch", 4])], inits, opset=20, ir_version=9)


def conv_model():
    """Conv + bias + Relu, a depthwise Conv with stride 2 and asymmetric pads, Conv +
    BatchNormalization + Relu, with a symbolic batch."""
    rng = np.random.default_rng(8)

    def const(name, shape, scale=0.3, offset=0.0):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale + offset).astype(np.float32), name)
    inits = [const("w0", (8, 3, 3, 3)), const("b0", (8,)), const("w1", (8, 1, 3, 3)),
             const("w2", (6, 8, 1, 1)), const("g", (6,), 0.2, 1.0), const("beta", (6,)),
             const("mean", (6,)), numpy_helper.from_array(
                 (rng.random(6) + 0.5).astype(np.float32), "var")]
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], name="conv1_dw", group=8, strides=[2, 2],
                         pads=[0, 0, 1, 1]),
        helper.make_node("Conv", ["c1", "w2"], ["c2"], name="conv2"),
        helper.make_node("BatchNormalization", ["c2", "g", "beta", "mean", "var"], ["n2"],
                         name="bn2"),
        helper.make_node("Relu", ["n2"], ["y"], name="relu2"),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, ["n", 3, 16, 12])],
                 [vi("y", TensorProto.FLOAT, ["n", 6, 8, 6])], inits)


def case_dense(r):
    m = dense_model()
    onnx_path = r.path("dense.onnx")
    onnx.save(m, onnx_path)
    so, report = r.compile(onnx_path, "dense")
    expect(report, "plugin cublas: 4 regions, 4 composites, 1 refused", "report")
    for pat in ("cublas.dense_bias_relu", "cublas.dense_bias_gelu", "cublas.dense_bias",
                "cublas.dense ("):
        expect(report, pat, "report")
    expect(report, "matmul((batch, 5, 16), (16, 8)) -> (batch, 5, 8)", "report")
    expect(report, "refused %y2 = nn.gelu((batch, 4)) -> (batch, 4)", "report")
    expect(report, "predicate `attr.approximate == 1` failed: attr approximate is 0", "report")
    expect_libraries(so, ["cublas"])
    rng = np.random.default_rng(1)
    for b in (1, 3):
        r.run(so, {"x": rng.standard_normal((b, 16)).astype(np.float32),
                   "s": rng.standard_normal((b, 5, 16)).astype(np.float32)}, m, f"dense_b{b}")


def case_conv(r):
    m = conv_model()
    onnx_path = r.path("conv.onnx")
    onnx.save(m, onnx_path)
    # fold-batch-norm (default pipeline) turns Conv + BatchNormalization into conv + bias first;
    # without it the cudnn composite takes the batch_norm and its runtime folds it.
    so, report = r.compile(onnx_path, "conv")
    bn_so, bn_report = r.compile(onnx_path, "conv_bn", "--disable-pass=fold-batch-norm")
    for rep in (report, bn_report):
        expect(rep, "plugin cudnn: 3 regions, 3 composites, 0 refused", "report")
        expect(rep, "nn.conv2d((n, 8, 16, 12), (8, 1, 3, 3)) -> (n, 8, 8, 6)", "report")
    expect(report, "add((n, 6, 8, 6), (1, 6, 1, 1)) -> (n, 6, 8, 6)", "report")
    expect(bn_report, "nn.batch_norm((n, 6, 8, 6), (6), (6), (6), (6)) -> (n, 6, 8, 6)", "report")
    rng = np.random.default_rng(2)
    for so_path, tag in ((so, "conv"), (bn_so, "conv_bn")):
        expect_libraries(so_path, ["cudnn"])
        for b in (1, 2):
            r.run(so_path, {"x": rng.standard_normal((b, 3, 16, 12)).astype(np.float32)}, m,
                  f"{tag}_b{b}")


def case_cls(r):
    """The PP-OCR classifier: every Conv goes to cudnn, every MatMul to cublas."""
    path = os.environ.get("RELAX_CLS_MODEL")
    if not path or not os.path.exists(path):
        raise SystemExit("FAIL: RELAX_CLS_MODEL is not set (source scripts/env.sh)")
    m = onnx.load(path)
    convs = sum(n.op_type == "Conv" for n in m.graph.node)
    matmuls = sum(n.op_type in ("MatMul", "Gemm") for n in m.graph.node)
    so, report = r.compile(path, "cls")
    expect(report, f"plugin cudnn: {convs} regions, {convs} composites, 0 refused", "report")
    expect(report, f"plugin cublas: {matmuls} regions, {matmuls} composites", "report")
    expect_libraries(so, ["cublas", "cudnn"])
    rng = np.random.default_rng(3)
    for shape in ((1, 3, 48, 192), (3, 3, 48, 100)):
        r.run(so, {"x": rng.standard_normal(shape).astype(np.float32)}, m,
              "cls_" + "x".join(map(str, shape)))


def case_ldd(r):
    """The runtime libraries resolve every dependency and export their entry points."""
    for plugin, (lib, fn) in LIBS.items():
        path = os.path.join(r.lib_dir, lib)
        if not os.path.exists(path):
            raise SystemExit(f"FAIL: {path} is not built")
        p = r.call(["ldd", path])
        if "not found" in p.stdout:
            raise SystemExit(f"FAIL: {lib} has unresolved dependencies")
        want = {"cublas": ["libcublasLt.so", "libcudart.so"],
                "cudnn": ["libcudnn.so", "libcudart.so"]}[plugin]
        for w in want:
            expect(p.stdout, w, f"ldd {lib}")
        p = r.call(["nm", "-D", "--defined-only", path])
        for sym in (fn, "__relax_init"):
            if not re.search(rf"\bT {sym}$", p.stdout, re.M):
                raise SystemExit(f"FAIL: {lib} does not export {sym}")
        exported = [line for line in p.stdout.splitlines() if " T " in line]
        if len(exported) != 2:
            raise SystemExit(f"FAIL: {lib} exports {len(exported)} functions, expected 2")
        print(f"PASS: {lib} resolves and exports {fn} and __relax_init only")


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8),
                ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class RelaxValue(ctypes.Structure):
    _fields_ = [("type_code", ctypes.c_int32), ("pad", ctypes.c_int32), ("v", ctypes.c_void_p)]


ERROR_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p)


class RuntimeTable(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("num_entries", ctypes.c_uint32),
                ("set_last_error", ERROR_FN)] + [(f"f{k}", ctypes.c_void_p) for k in range(6)]


class Library:
    """A plugin runtime library called directly, as the VM would: payload, tensors, output."""

    def __init__(self, path, fn):
        self.lib = ctypes.CDLL(path)
        self.fn = getattr(self.lib, fn)
        self.last_error = ""

        def on_error(msg):
            self.last_error = msg.decode()
        self.on_error = ERROR_FN(on_error)
        self.table = RuntimeTable(1, 7, self.on_error)
        if getattr(self.lib, "__relax_init")(ctypes.byref(self.table)) != 0:
            raise SystemExit(f"FAIL: {path} refused the runtime table")

    def call(self, payload, arrays):
        keep, args = [], (RelaxValue * (len(arrays) + 1))()
        text = ctypes.c_char_p(payload.encode())
        args[0].type_code, args[0].v = 5, ctypes.cast(text, ctypes.c_void_p)
        for k, a in enumerate(arrays):
            shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            code = {"f": 2, "i": 0}[a.dtype.kind]
            t = DLTensor(a.ctypes.data, 1, 0, a.ndim, code, a.dtype.itemsize * 8, 1, shape, None, 0)
            keep += [shape, t]
            args[k + 1].type_code, args[k + 1].v = 3, ctypes.cast(ctypes.pointer(t), ctypes.c_void_p)
        self.last_error = ""
        rc = self.fn(args, len(arrays) + 1, None)
        return rc, self.last_error


def case_errors(r):
    """The runtime libraries called directly: bad payloads, arguments and shapes are errors that
    name the region, never crashes; a valid call runs on a GPU (checked against numpy) or fails
    with "no CUDA device" without one."""
    rng = np.random.default_rng(4)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    cublas = Library(os.path.join(r.lib_dir, LIBS["cublas"][0]), LIBS["cublas"][1])
    dense = "relax-cublas 1 region=r0 a=0 b=1 bias=2 transb=0 epilogue=relu const=0,1,1"
    x, w, b = f32(3, 5, 16), f32(16, 8), f32(8)
    bad = [
        ("nonsense", [x, w, b, f32(3, 5, 8)], "payload is not a relax-cublas 1 descriptor"),
        (dense, [x, w, b], "expected 5 arguments (payload, 3 parameters, output), got 4"),
        (dense, [x, f32(12, 8), b, f32(3, 5, 8)], "the input's last dim 16 differs from the "
                                                  "weight's 12"),
        (dense, [x, w, f32(5), f32(3, 5, 8)], "the bias has 5 values, expected 8"),
        (dense, [x, w, b, f32(3, 5, 9)], "the output has 135 elements, expected 15 x 8"),
        (dense, [x.astype(np.int32), w, b, f32(3, 5, 8)], "input is not float32"),
    ]
    for payload, arrays, msg in bad:
        rc, err = cublas.call(payload, arrays)
        if rc != 1 or msg not in err:
            raise SystemExit(f"FAIL: expected an error with {msg!r}, got rc {rc}: {err!r}")
        print(f"PASS: cublas error: {err}")
    expect(cublas.call(dense, [x, f32(12, 8), b, f32(3, 5, 8)])[1], "cublas region 'r0': ",
           "error")
    cudnn = Library(os.path.join(r.lib_dir, LIBS["cudnn"][0]), LIBS["cudnn"][1])
    conv = ("relax-cudnn 1 region=r1 x=0 w=1 bias=2 bn=-1 eps=1e-05 relu=1 strides=1,1 "
            "pads=1,0,1,0 dilation=1,1 groups=2 const=0,1,1")
    cx, cw, cb = f32(2, 4, 6, 5), f32(6, 2, 3, 3), f32(6)
    rc, err = cudnn.call(conv, [cx, f32(6, 4, 3, 3), cb, f32(2, 6, 6, 3)])
    if rc != 1 or "cudnn region 'r1': the weight's 4 input channels x 2 groups differ from the " \
                  "input's 4" not in err:
        raise SystemExit(f"FAIL: group mismatch: rc {rc}: {err!r}")
    print(f"PASS: cudnn error: {err}")
    rc, err = cudnn.call(conv.replace("relax-cudnn 1", "relax-cudnn 2"), [cx, cw, cb, f32(2, 6, 6, 3)])
    expect(err, "payload is not a relax-cudnn 1 descriptor", "error")
    # Valid calls: numpy references (dense + bias + relu; grouped conv + bias + relu).
    y = np.zeros((3, 5, 8), np.float32)
    want_y = np.maximum(x @ w + b, 0)
    yc = np.zeros((2, 6, 6, 3), np.float32)
    xp = np.pad(cx, ((0, 0), (0, 0), (1, 1), (0, 0)))
    want_c = np.zeros_like(yc)
    for g in range(2):
        for o in range(3 * g, 3 * g + 3):
            for i in range(6):
                for j in range(3):
                    patch = xp[:, 2 * g:2 * g + 2, i:i + 3, j:j + 3]
                    want_c[:, o, i, j] = (patch * cw[o]).sum(axis=(1, 2, 3)) + cb[o]
    want_c = np.maximum(want_c, 0)
    for name, lib, payload, arrays, out, want in (
            ("cublas", cublas, dense, [x, w, b, y], y, want_y),
            ("cudnn", cudnn, conv, [cx, cw, cb, yc], yc, want_c)):
        rc, err = lib.call(payload, arrays)
        if not r.gpu:
            if rc != 1 or "no CUDA device: " not in err:
                raise SystemExit(f"FAIL: {name}: expected 'no CUDA device', got rc {rc}: {err!r}")
            print(f"PASS: {name} without a device: {err}")
        elif rc != 0 or not np.allclose(out, want, rtol=1e-4, atol=1e-4):
            raise SystemExit(f"FAIL: {name}: rc {rc} {err!r}, max abs diff "
                             f"{np.abs(out - want).max()}")
        else:
            print(f"PASS: {name} matches numpy (max abs diff {np.abs(out - want).max():.2e})")


CASES = {"dense": case_dense, "conv": case_conv, "cls": case_cls, "ldd": case_ldd,
         "errors": case_errors}

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    CASES[a.case](Runner(a))

#!/usr/bin/env python3
# Ops whose output shape depends on tensor data (TopK with a run-time K, Unique, Compress,
# NonMaxSuppression, windows of a run-time size, STFT) and CumSum/DFT with a run-time axis:
# one artifact serves several operand values and output shapes, a data-dependent output feeds
# an ordinary shape-generic kernel, and bad run-time operands are errors naming the node.
# Outputs are checked against onnxruntime.
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, same, vi  # noqa: E402
from movement_cases import compile_error, i64  # noqa: E402


def vo(name, dtype, rank):
    """An output of `rank` symbolic dims."""
    return vi(name, dtype, [f"{name}_{i}" for i in range(rank)])


def close(got, want, what):
    """onnxruntime sums a DFT in float32 (errors ~1e-5 relative); compare at rtol 1e-4."""
    if len(got) != len(want):
        raise SystemExit(f"FAIL{what}: {len(got)} outputs, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
            raise SystemExit(f"FAIL{what}: output {i}: got {g.dtype}{list(g.shape)}, expected "
                             f"{w.dtype}{list(w.shape)}, max diff {np.abs(g - w).max()}")
    print(f"PASS{what}: {len(got)} outputs match")


def case_select(r):
    """TopK (run-time K, ties, negative axis), Unique (all outputs), Compress, NonZero and
    NonMaxSuppression, each followed by an elementwise kernel on its data-dependent output."""
    m = model([
        helper.make_node("TopK", ["x", "k"], ["tv", "ti"], name="topk0", axis=-1),
        helper.make_node("TopK", ["x", "k"], ["sv", "si"], name="topk1", axis=0, largest=0),
        helper.make_node("Add", ["tv", "tv"], ["tv2"]),
        helper.make_node("Unique", ["x"], ["uy", "ui", "uinv", "uc"], name="uniq0", sorted=1),
        helper.make_node("Unique", ["x"], ["ay", "ai", "ainv", "ac"], name="uniq1", axis=0,
                         sorted=0),
        helper.make_node("Compress", ["x", "c"], ["cy"], name="comp0", axis=1),
        helper.make_node("Relu", ["cy"], ["cr"]),
        helper.make_node("NonMaxSuppression", ["b", "s", "mo", "iou", "st"], ["nms"],
                         name="nms0"),
        helper.make_node("CumSum", ["x", "cax"], ["cs"], name="cs0", exclusive=1, reverse=1),
        # A constant axis compiles to a kernel (relax.cumsum); on a symbolic dim.
        helper.make_node("CumSum", ["cy", "kax"], ["ck"], exclusive=1),
        helper.make_node("CumSum", ["x", "kax0"], ["ck0"], reverse=1),
        helper.make_node("NonZero", ["cy"], ["nz"]),
    ], [vi("x", TensorProto.FLOAT, [4, 5]), vi("k", TensorProto.INT64, [1]),
        vi("c", TensorProto.BOOL, ["nc"]), vi("b", TensorProto.FLOAT, [1, 5, 4]),
        vi("s", TensorProto.FLOAT, [1, 2, 5]), vi("mo", TensorProto.INT64, [1]),
        vi("iou", TensorProto.FLOAT, [1]), vi("st", TensorProto.FLOAT, [1]),
        vi("cax", TensorProto.INT32, [])],
        [vo(n, TensorProto.FLOAT, 2) for n in ("tv", "tv2")]
        + [vo("ti", TensorProto.INT64, 2), vo("sv", TensorProto.FLOAT, 2),
           vo("si", TensorProto.INT64, 2), vo("uy", TensorProto.FLOAT, 1)]
        + [vo(n, TensorProto.INT64, 1) for n in ("ui", "uinv", "uc")]
        + [vo("ay", TensorProto.FLOAT, 2)]
        + [vo(n, TensorProto.INT64, 1) for n in ("ai", "ainv", "ac")]
        + [vo("cy", TensorProto.FLOAT, 2), vo("cr", TensorProto.FLOAT, 2),
           vo("nms", TensorProto.INT64, 2), vo("cs", TensorProto.FLOAT, 2),
           vo("ck", TensorProto.FLOAT, 2), vo("ck0", TensorProto.FLOAT, 2),
           vo("nz", TensorProto.INT64, 2)], opset=14,
        initializer=[i64("kax", -1), i64("kax0", 0)])
    so = r.compile(m, "select")
    ir = r.check_call([r.relaxc, "compile", r.path("select.onnx"), "-o", r.path("select2.so"),
                       "--print-ir-after=import"]).stdout
    for want in ("Tensor[(4, cy_n1), f32] = relax.cumsum(%cy)", "= relax.cumsum(%x)"):
        if want not in ir:
            raise SystemExit(f"FAIL: '{want}' not in the imported IR")
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (4, 5)).astype(np.float32)  # many ties
    x[2] = x[0]
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11], [1, 1, 0, 0],
                       [0, 10.1, 1, 11.1]]], np.float32)
    scores = rng.random((1, 2, 5)).astype(np.float32)
    for k, (kk, cond, mo, cax) in enumerate([(3, [1, 0, 1], 2, 1), (1, [0, 1, 1, 0, 1], 5, -2),
                                            (4, [], 0, 0)]):
        feeds = dict(x=x, k=np.array([kk], np.int64), c=np.array(cond, bool), b=boxes, s=scores,
                     mo=np.array([mo], np.int64), iou=np.array([0.5], np.float32),
                     st=np.array([0.1], np.float32), cax=np.array(cax, np.int32))
        same(r.run(so, feeds), ort(m, feeds), f" set {k}")
    bad = dict(feeds, k=np.array([6], np.int64))
    r.run(so, bad, expect_error="TopK 'topk0'")
    bad = dict(feeds, c=np.ones(6, bool))
    r.run(so, bad, expect_error="Compress 'comp0'")
    bad = dict(feeds, cax=np.array(2, np.int32))
    r.run(so, bad, expect_error="CumSum 'cs0'")
    print("PASS: bad run-time operands refused")


def case_signal(r):
    """Windows of a run-time size, DFT with a run-time axis and length, STFT with a run-time
    frame step (opset 20)."""
    m = model([
        helper.make_node("HannWindow", ["n"], ["hw"], name="hann0"),
        helper.make_node("BlackmanWindow", ["n"], ["bw"], periodic=0),
        helper.make_node("HammingWindow", ["n"], ["mw"], output_datatype=TensorProto.DOUBLE),
        helper.make_node("DFT", ["sig", "len", "ax"], ["d"], name="dft0"),
        helper.make_node("DFT", ["sig", "", "ax"], ["di"], inverse=1),
        helper.make_node("STFT", ["sig3", "step", "win"], ["st"], name="stft0"),
    ], [vi("n", TensorProto.INT64, []), vi("sig", TensorProto.FLOAT, [2, 6, 5, 2]),
        vi("len", TensorProto.INT64, []), vi("ax", TensorProto.INT64, []),
        vi("sig3", TensorProto.FLOAT, [2, 32, 1]), vi("step", TensorProto.INT64, []),
        vi("win", TensorProto.FLOAT, [8])],
        [vo(n, TensorProto.FLOAT, 1) for n in ("hw", "bw")]
        + [vo("mw", TensorProto.DOUBLE, 1)]
        + [vo(n, TensorProto.FLOAT, 4) for n in ("d", "di", "st")], opset=20)
    so = r.compile(m, "signal")
    rng = np.random.default_rng(1)
    sig = rng.random((2, 6, 5, 2)).astype(np.float32)
    sig3 = rng.random((2, 32, 1)).astype(np.float32)
    win = np.hanning(8).astype(np.float32)
    for k, (n, ln, ax, step) in enumerate([(10, 4, 1, 4), (7, 9, -2, 3)]):
        feeds = dict(n=np.array(n, np.int64), sig=sig, len=np.array(ln, np.int64),
                     ax=np.array(ax, np.int64), sig3=sig3, step=np.array(step, np.int64),
                     win=win)
        close(r.run(so, feeds), ort(m, feeds), f" set {k}")
    r.run(so, dict(feeds, ax=np.array(3, np.int64)), expect_error="DFT 'dft0'")
    r.run(so, dict(feeds, step=np.array(0, np.int64)), expect_error="STFT 'stft0'")
    print("PASS: bad run-time operands refused")


def case_mel(r):
    """MelWeightMatrix with every input a run-time scalar (both output dims bound at run time),
    against the ONNX reference implementation; edges beyond what dft_length resolves are a
    run-time error naming the node."""
    from onnx.reference import ReferenceEvaluator
    f = TensorProto.FLOAT
    m = model([helper.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lo", "hi"], ["w"],
                                name="mel0")],
              [vi("mels", TensorProto.INT64, []), vi("dft", TensorProto.INT64, []),
               vi("rate", TensorProto.INT64, []), vi("lo", f, []), vi("hi", f, [])],
              [vo("w", f, 2)], opset=17)
    so = r.compile(m, "mel")
    for k, (mels, dft, rate, lo, hi) in enumerate([(8, 64, 8000, 0.0, 4000.0),
                                                   (5, 30, 16000, 100.0, 3000.0),
                                                   (12, 512, 22050, 20.0, 8000.0)]):
        feeds = dict(mels=np.array(mels, np.int64), dft=np.array(dft, np.int64),
                     rate=np.array(rate, np.int64), lo=np.array(lo, np.float32),
                     hi=np.array(hi, np.float32))
        close(r.run(so, feeds), ReferenceEvaluator(m).run(None, feeds), f" set {k}")
    r.run(so, dict(feeds, hi=np.array(40000.0, np.float32)), expect_error="MelWeightMatrix 'mel0'")
    print("PASS: edges beyond the spectrogram refused")


def case_errors(r):
    """Bad attributes, constant operands and dtypes are compile errors naming the node."""
    x = vi("x", TensorProto.FLOAT, [2, 3])
    y = vi("y", TensorProto.FLOAT, [None, None])
    yi = vi("yi", TensorProto.INT64, [None, None])
    compile_error(r, model([helper.make_node("TopK", ["x", "k"], ["y", "yi"], name="tk0")],
                           [x], [y, yi], [i64("k", [4])]),
                  "topk_k", "TopK 'tk0': K = 4 is out of range for axis 1")
    compile_error(r, model([helper.make_node("Unique", ["x"], ["y"], name="u0", axis=2)],
                           [x], [y]), "unique_axis", "Unique 'u0': attribute 'axis' 2")
    xh = vi("xh", TensorProto.FLOAT16, [2, 3])
    compile_error(r, model([helper.make_node("CumSum", ["xh", "a"], ["y"], name="cs0")],
                           [xh], [vi("y", TensorProto.FLOAT16, [2, 3])], [i64("a", 0)]),
                  "cumsum_f16", "CumSum 'cs0': input 'x' of dtype")
    xs = vi("xs", TensorProto.FLOAT, [1, 8, 2])
    compile_error(r, model([helper.make_node("DFT", ["xs"], ["y"], name="dft0", inverse=1,
                                             onesided=1)], [xs], [vi("y", TensorProto.FLOAT,
                                                                     [None, None, None])],
                           opset=17), "dft_onesided_inverse",
                  "DFT 'dft0': onesided inverse DFT is not supported")


CASES = {f.__name__[5:]: f for f in (case_select, case_signal, case_mel, case_errors)}


def main():
    return cases_main(CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())

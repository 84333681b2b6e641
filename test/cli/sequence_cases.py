#!/usr/bin/env python3
# ONNX sequences (run-time VM tuples of tensors): positions that are graph inputs, one artifact
# serving several positions and element shapes, SplitToSequence -> ConcatFromSequence round
# trips, a sequence graph output written as a directory, and bad positions as run-time errors
# naming the node. Outputs are checked against onnxruntime.
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, same, vi  # noqa: E402
from movement_cases import compile_error  # noqa: E402


def pos_model():
    x = vi("x", TensorProto.FLOAT, ["a", 3])
    y = vi("y", TensorProto.FLOAT, ["b", 3])
    p = vi("p", TensorProto.INT64, [])
    q = vi("q", TensorProto.INT64, [])
    return model([
        helper.make_node("SequenceConstruct", ["x", "y"], ["s0"], name="cons0"),
        helper.make_node("SequenceInsert", ["s0", "x", "p"], ["s1"], name="ins0"),
        helper.make_node("SequenceErase", ["s1", "q"], ["s2"], name="erase0"),
        helper.make_node("SequenceAt", ["s2", "q"], ["at"], name="at0"),
        helper.make_node("Relu", ["at"], ["r"]),
        helper.make_node("SequenceLength", ["s2"], ["n"], name="len0"),
        helper.make_node("ConcatFromSequence", ["s1"], ["c"], name="cat0", axis=0),
    ], [x, y, p, q], [vi("r", TensorProto.FLOAT, [None, 3]), vi("n", TensorProto.INT64, []),
                      vi("c", TensorProto.FLOAT, [None, 3])], opset=13)


def case_positions(r):
    """Run-time positions (negative ones included) for SequenceInsert/Erase/At, one artifact for
    several element shapes; a Relu kernel on the SequenceAt result."""
    m = pos_model()
    so = r.compile(m, "positions")
    rng = np.random.default_rng(0)
    for a, b, p, q in [(2, 1, 0, 1), (1, 4, -1, -2), (3, 2, 2, 0), (2, 2, -2, 1)]:
        inputs = {"x": rng.standard_normal((a, 3)).astype(np.float32),
                  "y": rng.standard_normal((b, 3)).astype(np.float32),
                  "p": np.array(p, np.int64), "q": np.array(q, np.int64)}
        same(r.run(so, inputs), ort(m, inputs), f" p={p} q={q}")


def case_errors(r):
    """Out-of-range positions and SequenceAt on an empty sequence are run-time errors naming the
    node; an element of the wrong dtype is a compile error naming the node."""
    so = r.compile(pos_model(), "errors")
    x = np.ones((2, 3), np.float32)
    base = {"x": x, "y": x, "p": np.array(0, np.int64), "q": np.array(0, np.int64)}
    r.run(so, {**base, "p": np.array(3, np.int64)},
          expect_error="SequenceInsert 'ins0': position 3 is out of range")
    r.run(so, {**base, "q": np.array(-4, np.int64)},
          expect_error="SequenceErase 'erase0': position -4 is out of range")
    m = model([helper.make_node("SequenceEmpty", [], ["s"], name="empty0"),
               helper.make_node("SequenceAt", ["s", "q"], ["y"], name="at_empty")],
              [vi("q", TensorProto.INT64, [])], [vi("y", TensorProto.FLOAT, [None])])
    # The empty sequence has no element rank at compile time: a compile error naming the node.
    compile_error(r, m, "at_empty", "SequenceAt 'at_empty'")
    m = model([helper.make_node("SplitToSequence", ["x"], ["s"], name="split0", axis=0),
               helper.make_node("SequenceErase", ["s"], ["s1"], name="erase1"),
               helper.make_node("SequenceErase", ["s1"], ["s2"], name="erase2"),
               helper.make_node("SequenceAt", ["s2", "q"], ["y"], name="at1")],
              [vi("x", TensorProto.FLOAT, ["n", 3]), vi("q", TensorProto.INT64, [])],
              [vi("y", TensorProto.FLOAT, [1, 3])])
    so = r.compile(m, "at_run_empty")
    r.run(so, {"x": x, "q": np.array(0, np.int64)},
          expect_error="SequenceAt 'at1': SequenceAt on an empty sequence")
    m = model([helper.make_node("SequenceConstruct", ["x"], ["s"], name="cons1"),
               helper.make_node("SequenceInsert", ["s", "i"], ["s1"], name="ins_dtype"),
               helper.make_node("SequenceLength", ["s1"], ["n"])],
              [vi("x", TensorProto.FLOAT, [2]), vi("i", TensorProto.INT64, [2])],
              [vi("n", TensorProto.INT64, [])])
    compile_error(r, m, "insert_dtype", "SequenceInsert 'ins_dtype': input 'i' of dtype")


def case_roundtrip(r):
    """SplitToSequence (run-time 1-D split, scalar split, no split with keepdims 0) ->
    ConcatFromSequence (concat, and stacking with new_axis) reproduce onnxruntime; a sequence
    graph output is written as a directory of 0.npy, 1.npy, ..."""
    m = model([
        helper.make_node("SplitToSequence", ["x", "sp"], ["s"], name="split1", axis=1),
        helper.make_node("ConcatFromSequence", ["s"], ["c"], name="cat1", axis=1),
        helper.make_node("SplitToSequence", ["x", "k"], ["t"], name="split2", axis=-1),
        helper.make_node("ConcatFromSequence", ["t"], ["d"], name="cat2", axis=-1),
        helper.make_node("SplitToSequence", ["x"], ["u"], name="split3", axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["u"], ["e"], name="cat3", axis=-1, new_axis=1),
    ], [vi("x", TensorProto.FLOAT, ["n", "m"]), vi("sp", TensorProto.INT64, [3]),
        vi("k", TensorProto.INT64, [])],
        [vi("c", TensorProto.FLOAT, [None, None]), vi("d", TensorProto.FLOAT, [None, None]),
         vi("e", TensorProto.FLOAT, [None, None])], opset=13)
    so = r.compile(m, "roundtrip")
    rng = np.random.default_rng(1)
    for n, sp, k in [(2, [1, 3, 2], 4), (3, [0, 5, 1], 6), (1, [2, 2, 2], 5)]:
        inputs = {"x": rng.standard_normal((n, 6)).astype(np.float32),
                  "sp": np.array(sp, np.int64), "k": np.array(k, np.int64)}
        same(r.run(so, inputs), ort(m, inputs), f" n={n} split={sp} k={k}")
    r.run(so, {"x": np.ones((2, 6), np.float32), "sp": np.array([1, 1, 1], np.int64),
               "k": np.array(2, np.int64)},
          expect_error="SplitToSequence 'split1': split lengths add up to 3")
    # A sequence output: the directory <out>/s/ holds one .npy per element.
    m = model([helper.make_node("SplitToSequence", ["x", "k"], ["s"], name="split4", axis=0)],
              [vi("x", TensorProto.FLOAT, ["n", 2]), vi("k", TensorProto.INT64, [])],
              [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)], opset=13)
    so = r.compile(m, "seq_out")
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = tempfile.mkdtemp(dir=r.work)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "k.npy"), np.array(2, np.int64))
    r.check_call([r.relaxc, "run", so, "--input", f"x={out}/x.npy", "--input", f"k={out}/k.npy",
                  "--output-dir", out])
    want = ort(m, {"x": x, "k": np.array(2, np.int64)})[0]
    got = [np.load(os.path.join(out, "s", f"{i}.npy")) for i in range(len(want))]
    if len(os.listdir(os.path.join(out, "s"))) != len(want):
        raise SystemExit(f"FAIL: sequence output has {len(os.listdir(out + '/s'))} files")
    same(got, want, " sequence output")
    # ... and the same directory form as a sequence input.
    m = model([helper.make_node("ConcatFromSequence", ["s"], ["y"], name="cat4", axis=0)],
              [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, ["n", 2])],
              [vi("y", TensorProto.FLOAT, [None, 2])], opset=13)
    so = r.compile(m, "seq_in")
    p = subprocess.run([r.relaxc, "run", so, "--input", f"s={out}/s"], capture_output=True,
                       text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 0 or "y: shape=[5, 2]" not in p.stdout:
        raise SystemExit("FAIL: sequence input from a directory")
    print("PASS: sequence input from a directory")


CASES = {f.__name__[5:]: f for f in (case_positions, case_errors, case_roundtrip)}


def main():
    return cases_main(CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""ONNX If / Loop / Scan models built with the onnx helper, compiled with relaxc, run with
`relaxc run` (under a 1 MiB stack limit) and compared with onnxruntime (exact for integers,
rtol 1e-5 / atol 1e-5 for floats). Each case runs the same artifact on several inputs (run-time
trip counts and conditions, shapes that differ between calls).

Cases:
  loop_scan      Loop with a run-time trip count and condition input, a carried vector, a scan
                 output, and a read of a graph input from inside the body (outer scope).
  loop_grow      Loop whose carried tensor grows by one element per iteration; the body's
                 condition output stops it early (data-dependent length).
  loop_while     Loop without a trip count (M = ""): a while loop on the body's condition.
  loop_long      100,000 iterations of a while loop written with M = INT64_MAX.
  if_shapes      If whose branches give different shapes (match_cast after the If) and read
                 outer values; nested in a Loop body.
  scan_reverse   Scan with a reversed scan input on axis 1 and a reversed scan output on axis 1.
  error_body     A Loop body with an invalid node: the error names the Loop and the inner node.
  unsupported_body  An unsupported op inside a Loop body inside an If branch: relaxc exits 2 and
                 the report names the op and the node's path.
  ir_loop        The imported IR of loop_grow: a loop function that calls itself in tail position
                 from an If, its growing carried dim a fresh var, and a match_cast in @main.
"""
import argparse
import os
import re
import resource
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name + "_const",
                            value=onnx.numpy_helper.from_array(np.array(value, dtype=dtype)))


def model(nodes, inputs, outputs, opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m)
    return m


def loop_scan():
    # y_{k+1} = y_k * 0.5 + a + iter; scan = y_{k+1}.
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"], name="c_id"),
         helper.make_node("Cast", ["it"], ["itf"], name="it_cast", to=F),
         const("half", 0.5, np.float32),
         helper.make_node("Mul", ["y_in", "half"], ["t0"], name="mul"),
         helper.make_node("Add", ["t0", "a"], ["t1"], name="add_outer"),
         helper.make_node("Add", ["t1", "itf"], ["y_out"], name="add_it"),
         helper.make_node("Identity", ["y_out"], ["scan"], name="scan_id")],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("y_in", F, [2])],
        [vi("c_out", B, []), vi("y_out", F, [2]), vi("scan", F, [2])])
    m = model([helper.make_node("Loop", ["M", "cond", "y0"], ["y", "ys"], name="loop0", body=body)],
              [vi("M", I64, []), vi("cond", B, []), vi("y0", F, [2]), vi("a", F, [2])],
              [vi("y", F, [2]), vi("ys", F, [None, 2])])
    rng = np.random.default_rng(0)
    feeds = []
    for trip, cond in ((0, True), (1, True), (5, True), (3, False), (40, True)):
        feeds.append({"M": np.array(trip, np.int64), "cond": np.array(cond),
                      "y0": rng.standard_normal(2).astype(np.float32),
                      "a": rng.standard_normal(2).astype(np.float32)})
    return m, feeds


def loop_grow():
    # y grows by one element (the iteration number) per iteration; stop when sum(y) > limit.
    body = helper.make_graph(
        [helper.make_node("Cast", ["it"], ["itf"], name="it_cast", to=F),
         const("ax0", [0]),
         helper.make_node("Unsqueeze", ["itf", "ax0"], ["itv"], name="unsq"),
         helper.make_node("Concat", ["y_in", "itv"], ["y_out"], name="grow", axis=0),
         helper.make_node("ReduceSum", ["y_out"], ["s"], name="sum", keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["c_out"], name="stop")],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("y_in", F, [None])],
        [vi("c_out", B, []), vi("y_out", F, [None])])
    m = model([const("c0", True, np.bool_),
               helper.make_node("Loop", ["M", "c0", "y0"], ["y"], name="loop_grow", body=body)],
              [vi("M", I64, []), vi("y0", F, ["n"]), vi("limit", F, [])], [vi("y", F, [None])])
    feeds = []
    for trip, n, limit in ((0, 2, 100.0), (4, 1, 100.0), (100, 3, 20.0), (7, 0, 1e9)):
        feeds.append({"M": np.array(trip, np.int64), "y0": np.arange(n, dtype=np.float32),
                      "limit": np.array(limit, np.float32)})
    return m, feeds


def loop_while():
    # No trip count: x doubles while max(x) < bound.
    body = helper.make_graph(
        [const("two", 2.0, np.float32),
         helper.make_node("Mul", ["x_in", "two"], ["x_out"], name="dbl"),
         helper.make_node("ReduceMax", ["x_out"], ["mx"], name="mx", keepdims=0),
         helper.make_node("Less", ["mx", "bound"], ["c_out"], name="lt")],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("x_in", F, [None, 3])],
        [vi("c_out", B, []), vi("x_out", F, [None, 3])])
    m = model([helper.make_node("Loop", ["", "c0", "x0"], ["x"], name="while0", body=body)],
              [vi("c0", B, []), vi("x0", F, ["b", 3]), vi("bound", F, [])],
              [vi("x", F, ["b", 3])])
    feeds = [{"c0": np.array(True), "x0": np.full((2, 3), 0.75, np.float32),
              "bound": np.array(1000.0, np.float32)},
             {"c0": np.array(False), "x0": np.ones((1, 3), np.float32),
              "bound": np.array(10.0, np.float32)}]
    return m, feeds


def loop_long():
    # 100,000 iterations (under the 1 MiB stack limit: no C++ frame per iteration); M is
    # INT64_MAX as exporters write for while loops, the condition stops it.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "it"], ["s_out"], name="acc"),
         helper.make_node("Less", ["it", "stop"], ["c_out"], name="lt")],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("s_in", I64, [])],
        [vi("c_out", B, []), vi("s_out", I64, [])])
    m = model([const("big", np.iinfo(np.int64).max),
               helper.make_node("Loop", ["big", "c0", "s0"], ["s"], name="long0", body=body)],
              [vi("c0", B, []), vi("s0", I64, []), vi("stop", I64, [])], [vi("s", I64, [])])
    feeds = [{"c0": np.array(True), "s0": np.array(5, np.int64),
              "stop": np.array(n, np.int64)} for n in (0, 3, 99999)]
    return m, feeds


def if_shapes():
    # Top-level If: then = x + a (shape n), else = concat(x, x) (shape 2n); then a Loop whose
    # body holds an If choosing by the iteration's parity.
    then_g = helper.make_graph([helper.make_node("Add", ["x", "a"], ["t"], name="then_add")],
                               "then", [], [vi("t", F, [None])])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e"], name="else_cat",
                                                 axis=0)], "else", [], [vi("e", F, [None])])
    inner_then = helper.make_graph([helper.make_node("Add", ["acc", "a"], ["it_t"], name="it_add")],
                                   "ithen", [], [vi("it_t", F, ["n"])])
    inner_else = helper.make_graph([helper.make_node("Sub", ["acc", "a"], ["it_e"], name="it_sub")],
                                   "ielse", [], [vi("it_e", F, ["n"])])
    body = helper.make_graph(
        [const("two_i", 2),
         helper.make_node("Mod", ["it", "two_i"], ["par"], name="par"),
         const("zero_i", 0),
         helper.make_node("Equal", ["par", "zero_i"], ["even"], name="even"),
         helper.make_node("If", ["even"], ["acc_out"], name="inner_if", then_branch=inner_then,
                          else_branch=inner_else),
         helper.make_node("Identity", ["c_in"], ["c_out"], name="cid")],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("acc", F, ["n"])],
        [vi("c_out", B, []), vi("acc_out", F, ["n"])])
    m = model([helper.make_node("If", ["c"], ["y"], name="top_if", then_branch=then_g,
                                else_branch=else_g),
               helper.make_node("Loop", ["M", "", "x"], ["z"], name="loop_if", body=body)],
              [vi("c", B, [1]), vi("x", F, ["n"]), vi("a", F, ["n"]), vi("M", I64, [])],
              [vi("y", F, [None]), vi("z", F, ["n"])])
    rng = np.random.default_rng(1)
    feeds = []
    for c, n, trip in ((True, 3, 4), (False, 3, 5), (False, 1, 0), (True, 6, 1)):
        feeds.append({"c": np.array([c]), "x": rng.standard_normal(n).astype(np.float32),
                      "a": rng.standard_normal(n).astype(np.float32),
                      "M": np.array(trip, np.int64)})
    return m, feeds


def scan_reverse():
    # Running sum over axis 1 of x (b, t) read backwards, outputs stacked on axis 1, reversed.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_out"], name="acc"),
         helper.make_node("Mul", ["s_out", "w"], ["o"], name="scale")],
        "body", [vi("s_in", F, ["b"]), vi("xt", F, ["b"])],
        [vi("s_out", F, ["b"]), vi("o", F, ["b"])])
    m = model([helper.make_node("Scan", ["s0", "x"], ["s", "ys"], name="scan0", body=body,
                                num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                                scan_output_axes=[1], scan_output_directions=[1])],
              [vi("s0", F, ["b"]), vi("x", F, ["b", "t"]), vi("w", F, ["b"])],
              [vi("s", F, ["b"]), vi("ys", F, ["b", "t"])], opset=16)
    rng = np.random.default_rng(2)
    feeds = [{"s0": rng.standard_normal(b).astype(np.float32),
              "x": rng.standard_normal((b, t)).astype(np.float32),
              "w": rng.standard_normal(b).astype(np.float32)} for b, t in ((2, 5), (3, 1), (1, 7))]
    return m, feeds


def error_body():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"], name="cid"),
         helper.make_node("Transpose", ["y_in"], ["y_out"], name="bad_transpose", perm=[0, 5])],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("y_in", F, [2, 2])],
        [vi("c_out", B, []), vi("y_out", F, [2, 2])])
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "y0"], ["y"], name="loop_bad",
                                            body=body)],
                          "g", [vi("M", I64, []), vi("y0", F, [2, 2])], [vi("y", F, [2, 2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), None


def unsupported_body():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"], name="cid"),
         helper.make_node("Frobnicate", ["y_in"], ["y_out"], name="frob_node",
                          domain="org.example")],
        "body", [vi("it", I64, []), vi("c_in", B, []), vi("y_in", F, [2, 2])],
        [vi("c_out", B, []), vi("y_out", F, [2, 2])])
    then_g = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["t"], name="loop_u", body=body)], "then", [],
        [vi("t", F, [2, 2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["y0"], ["e"], name="eid")], "else",
                               [], [vi("e", F, [2, 2])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], name="if_u", then_branch=then_g,
                                            else_branch=else_g)], "g",
                          [vi("c", B, []), vi("M", I64, []), vi("y0", F, [2, 2])],
                          [vi("y", F, [2, 2])])
    # IR version 9: libonnx's checker (which rejects unknown domains) is not run.
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("org.example", 1)],
                             ir_version=9), None


def rank_if(tail, y_shape):
    """torch's `x.squeeze(-1) if x.shape[-1] == 1` followed by `unsqueeze if x.dim() == 2`: an If
    whose branches give ranks 2 and 3 (x is (b, c, t) with t symbolic), then a rank test that
    the importer folds in each copy of the rest of the graph, then `tail`."""
    then_g = helper.make_graph([const("ax_s", [2]),
                                helper.make_node("Squeeze", ["x", "ax_s"], ["sq"], name="sq")],
                               "then", [], [vi("sq", F, ["b", 4])])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["id"], name="id")], "else",
                               [], [vi("id", F, ["b", 4, "t"])])
    un_then = helper.make_graph([const("ax_u", [2]),
                                 helper.make_node("Unsqueeze", ["v", "ax_u"], ["un"], name="un")],
                                "uthen", [], [vi("un", F, ["b", 4, 1])])
    un_else = helper.make_graph([helper.make_node("Identity", ["v"], ["vid"], name="vid")],
                                "uelse", [], [vi("vid", F, ["b", 4, "t"])])
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape_x"), const("i2", 2),
             helper.make_node("Gather", ["s", "i2"], ["t"], name="t_dim"), const("one", 1),
             helper.make_node("Equal", ["t", "one"], ["t_is_1"], name="t_is_1"),
             helper.make_node("If", ["t_is_1"], ["v"], name="squeeze_if", then_branch=then_g,
                              else_branch=else_g),
             helper.make_node("Shape", ["v"], ["vs"], name="shape_v"),
             helper.make_node("Size", ["vs"], ["rank"], name="rank_v"),
             helper.make_node("Equal", ["rank", "i2"], ["is2"], name="is2"),
             helper.make_node("If", ["is2"], ["w"], name="unsqueeze_if", then_branch=un_then,
                              else_branch=un_else)] + tail
    return model(nodes, [vi("x", F, ["b", 4, "t"])], [vi("y", F, y_shape)])


def if_rank():
    # Both copies are valid: y = relu(sum over the last axis of w).
    m = rank_if([const("ax_r", [2]),
                 helper.make_node("ReduceSum", ["w", "ax_r"], ["r"], name="sum_t", keepdims=0),
                 helper.make_node("Relu", ["r"], ["y"], name="relu")], ["b", 4])
    rng = np.random.default_rng(5)
    return m, [{"x": rng.standard_normal(s).astype(np.float32)}
               for s in ((2, 4, 1), (3, 4, 5), (1, 4, 1))]


def if_rank_gemm():
    # Gemm needs a 2-D A: the copy for t != 1 cannot be compiled (onnxruntime fails there at
    # run time too); it becomes a run-time error of that branch, the t == 1 copy runs.
    m = rank_if([const("wt", np.arange(12).reshape(4, 3) / 10, np.float32),
                 helper.make_node("Gemm", ["v", "wt"], ["y"], name="gemm")], ["b", 3])
    rng = np.random.default_rng(6)
    return m, [{"x": rng.standard_normal(s).astype(np.float32)} for s in ((2, 4, 1), (5, 4, 1))]


# Data sets that must fail at run time with these words (after the others matched onnxruntime).
RUN_ERRORS = {"if_rank_gemm": ({"x": np.ones((2, 4, 3), np.float32)}, ["error:", "Gemm 'gemm'"])}


def ir_loop():
    return loop_grow()[0], None


EXPECT = {
    "error_body": (1, ["error:", "Loop 'loop_bad'", "subgraph 'body'", "Transpose 'bad_transpose'"]),
    "unsupported_body": (2, ["unsupported op type", "org.example.Frobnicate (first at node "
                                                    "'if_u/then_branch/loop_u/body/frob_node')"]),
}
IR_PATTERNS = [r"func @loop_loop_grow\(%iter: Tensor\[\(\), i64\], %trip_count: Tensor\[\(\), "
               r"i64\], %cond: Tensor\[\(\), bool\], %v0: Tensor\[\((\w+),\), f32\]",
               r"= if %keep then \{",
               r"%next: .* = @loop_loop_grow\(%iter_next, %trip_count, %c_out, %y_out, %limit\)",
               r"return %next",
               r"match_cast\(%y, Tensor\[\(\w+,\), f32\]\)"]


CASES = {f.__name__: f for f in (loop_scan, loop_grow, loop_while, loop_long, if_shapes, scan_reverse,
                                 error_body, unsupported_body, ir_loop, if_rank, if_rank_gemm)}


def small_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    m, feeds = CASES[a.case]()
    path = os.path.join(a.work, a.case + ".onnx")
    onnx.save(m, path)
    art = os.path.join(a.work, a.case + ".so")
    extra = ["--print-ir-after", "import"] if a.case == "ir_loop" else []
    r = subprocess.run([a.relaxc, "compile", path, "-o", art] + extra, capture_output=True,
                       text=True)
    if a.case == "ir_loop":
        if r.returncode != 0:
            sys.exit(f"FAIL: compile exited {r.returncode}\n{r.stderr}")
        for pat in IR_PATTERNS:
            if not re.search(pat, r.stdout):
                sys.exit(f"FAIL: pattern {pat!r} not in the imported IR:\n{r.stdout}")
        # The carried param's dim is a fresh var, not the input's `n` (it grows per iteration).
        dim = re.search(IR_PATTERNS[0], r.stdout).group(1)
        if dim == "n":
            sys.exit("FAIL: the carried value's dim stayed the input's 'n'")
        print(f"PASS {a.case}")
        return
    if feeds is None:  # error case
        code, want = EXPECT[a.case]
        if r.returncode != code or any(w not in r.stderr for w in want):
            sys.exit(f"FAIL: expected exit {code} and {want}, got {r.returncode}\n{r.stderr}")
        print(f"PASS {a.case}: {r.stderr.strip()}")
        return
    if r.returncode != 0:
        sys.exit(f"FAIL: compile exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for k, feed in enumerate(feeds):
        want = sess.run(None, feed)
        out = os.path.join(a.work, f"out{k}")
        os.makedirs(out, exist_ok=True)
        cmd = [a.relaxc, "run", art, "--output-dir", out]
        for name, v in feed.items():
            p = os.path.join(a.work, f"in{k}_{name}.npy")
            np.save(p, v)
            cmd += ["--input", f"{name}={p}"]
        r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=small_stack)
        if r.returncode != 0:
            sys.exit(f"FAIL: data set {k}: run exited {r.returncode}\n{r.stdout}\n{r.stderr}")
        for i, w in enumerate(want):
            got = np.load(os.path.join(out, sess.get_outputs()[i].name + ".npy"))
            if got.shape != w.shape or got.dtype != w.dtype:
                sys.exit(f"FAIL: data set {k} output {i}: {got.dtype}{list(got.shape)}, "
                         f"onnxruntime {w.dtype}{list(w.shape)}")
            ok = (np.array_equal(got, w) if w.dtype.kind in "iub"
                  else np.allclose(got, w, rtol=1e-5, atol=1e-5))
            if not ok:
                sys.exit(f"FAIL: data set {k} output {i} differs\n got {got}\n onnxruntime {w}")
    if a.case in RUN_ERRORS:
        feed, want = RUN_ERRORS[a.case]
        cmd = [a.relaxc, "run", art]
        for name, v in feed.items():
            p = os.path.join(a.work, f"bad_{name}.npy")
            np.save(p, v)
            cmd += ["--input", f"{name}={p}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 1 or any(w not in r.stderr for w in want):
            sys.exit(f"FAIL: expected a run-time error with {want}, got {r.returncode}\n{r.stderr}")
        print(f"PASS {a.case}: the invalid path fails at run time: {r.stderr.strip()[:200]}")
    print(f"PASS {a.case}: {len(feeds)} data sets")


if __name__ == "__main__":
    main()

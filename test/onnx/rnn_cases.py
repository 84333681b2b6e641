#!/usr/bin/env python3
# relaxc vs onnxruntime on recurrent layers (LSTM, GRU, RNN) in the variants the ONNX node tests
# leave out: bidirectional with sequence_lens, layout=1, symbolic batch and sequence run at two
# sizes from one artifact, initial states and peepholes as run-time inputs, clip, input_forget,
# linear_before_reset, activations with alpha/beta, outputs left out (empty names), weights as
# run-time inputs with symbolic dims (and the run-time checks of those dims), and clean errors.
"""Usage: rnn_cases.py --relaxc RELAXC --work DIR [--filter SUBSTRING]."""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nn_cases  # noqa: E402  (run_case: compile, run at each size, compare with onnxruntime)

F32 = TensorProto.FLOAT
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
CASES = []  # (name, model, reference model, [feeds])
ERRORS = []  # (name, model, regex of the expected compile error)
RUN_ERRORS = []  # (name, model, [feeds], regex of the expected run-time error)


def rnn_case(name, op, hidden, inp, direction="forward", layout=0, seq_lens=False, init_h=False,
             init_c=False, peep=False, bias=True, outputs=("Y", "Y_h", "Y_c"), sizes=((5, 3), (2, 1)),
             opset=14, seed=0, expect=None, **attrs):
    """sizes: (seq, batch) pairs run from one artifact (both dims symbolic). With `expect` (a
    regex), the model must fail to compile with a clean error matching it."""
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(hidden)
    inits = [("W", rng.uniform(-scale, scale, (dirs, g * hidden, inp))),
             ("R", rng.uniform(-scale, scale, (dirs, g * hidden, hidden)))]
    node_in = ["X", "W", "R"]
    if bias:
        inits.append(("B", rng.uniform(-scale, scale, (dirs, 2 * g * hidden))))
    node_in.append("B" if bias else "")
    x_shape = ["b", "s", inp] if layout else ["s", "b", inp]
    st_shape = ["b", dirs, hidden] if layout else [dirs, "b", hidden]
    inputs = [("X", x_shape, F32)]
    node_in.append("seq_lens" if seq_lens else "")
    if seq_lens:
        inputs.append(("seq_lens", ["b"], TensorProto.INT32))
    node_in.append("h0" if init_h else "")
    if init_h:
        inputs.append(("h0", st_shape, F32))
    if op == "LSTM":
        node_in.append("c0" if init_c else "")
        if init_c:
            inputs.append(("c0", st_shape, F32))
        if peep:
            inits.append(("P", rng.uniform(-scale, scale, (dirs, 3 * hidden))))
        node_in.append("P" if peep else "")
    while node_in and node_in[-1] == "":
        node_in.pop()
    outs = [o if o in outputs else "" for o in (["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"])]
    while outs and outs[-1] == "":
        outs.pop()
    y_shape = ["b", "s", dirs, hidden] if layout else ["s", dirs, "b", hidden]
    shapes = {"Y": y_shape, "Y_h": st_shape, "Y_c": st_shape}

    def model(nodes):
        graph = helper.make_graph(
            nodes, name,
            [helper.make_tensor_value_info(n, t, s) for n, s, t in inputs],
            [helper.make_tensor_value_info(o, F32, shapes[o]) for o in outs if o],
            initializer=[numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
        onnx.checker.check_model(m)
        return m

    kw = dict(name=op.lower() + "0", hidden_size=hidden, direction=direction, **attrs)
    m = model([helper.make_node(op, node_in, outs, layout=layout, **kw)] if layout else
              [helper.make_node(op, node_in, outs, **kw)])
    if expect:
        ERRORS.append((name, m, expect))
        return
    ref = m
    if layout:
        # onnxruntime refuses layout=1: the reference is the layout-0 node between transposes.
        perm_in = {"X": [1, 0, 2], "h0": [1, 0, 2], "c0": [1, 0, 2]}
        perm_out = {"Y": [2, 0, 1, 3], "Y_h": [1, 0, 2], "Y_c": [1, 0, 2]}
        nodes, rin, rout = [], [], []
        for n in node_in:
            if n in perm_in:
                nodes.append(helper.make_node("Transpose", [n], [n + "_t"], perm=perm_in[n]))
            rin.append(n + "_t" if n in perm_in else n)
        for o in outs:
            rout.append(o + "_t" if o else "")
        nodes.append(helper.make_node(op, rin, rout, **kw))
        for o in outs:
            if o:
                nodes.append(helper.make_node("Transpose", [o + "_t"], [o], perm=perm_out[o]))
        ref = model(nodes)
    runs = []
    for seq, batch in sizes:
        feeds = {}
        for n, s, _ in inputs:
            shape = [{"s": seq, "b": batch}.get(d, d) for d in s]
            if n == "seq_lens":
                lens = rng.integers(1, seq + 1, batch).astype(np.int32)
                lens[0] = seq  # one full-length entry
                feeds[n] = lens
            else:
                feeds[n] = rng.standard_normal(shape).astype(np.float32)
        runs.append(feeds)
    CASES.append((name, m, ref, runs))


def runtime_weight_cases():
    """W and R as graph inputs with symbolic dims: their agreement with hidden_size and X is a
    run-time check that names the node and the dims."""
    node = helper.make_node("GRU", ["X", "W", "R"], ["Y", "Y_h"], name="gru0", hidden_size=3)
    g = helper.make_graph(
        [node], "gru_runtime_weights",
        [helper.make_tensor_value_info("X", F32, ["s", "b", "i"]),
         helper.make_tensor_value_info("W", F32, ["d", "g", "i2"]),
         helper.make_tensor_value_info("R", F32, ["d2", "g2", "h"])],
        [helper.make_tensor_value_info("Y", F32, ["s", 1, "b", 3]),
         helper.make_tensor_value_info("Y_h", F32, [1, "b", 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    rng = np.random.default_rng(5)

    def feeds(seq, batch, w_shape):
        return {"X": rng.standard_normal((seq, batch, 4)).astype(np.float32),
                "W": rng.standard_normal(w_shape).astype(np.float32),
                "R": rng.standard_normal((1, 9, 3)).astype(np.float32)}
    CASES.append(("gru_runtime_weights", m, m, [feeds(5, 2, (1, 9, 4)), feeds(3, 1, (1, 9, 4))]))
    RUN_ERRORS.append(("err_runtime_weight_rows", m, [feeds(5, 2, (1, 12, 4))],
                       r"GRU 'gru0'.*W dim 1 \(gates x hidden_size\).*12 vs 9"))
    RUN_ERRORS.append(("err_runtime_input_size", m, [feeds(5, 2, (1, 9, 5))],
                       r"GRU 'gru0'.*W dim 2 vs X input size.*5 vs 4"))


def cases():
    full = dict(seq_lens=True, init_h=True, init_c=True)
    # The case the brief names: bidirectional LSTM, sequence_lens, dynamic batch and sequence,
    # layout=1, with initial states and peepholes.
    rnn_case("lstm_bidir_seqlens_layout1", "LSTM", 4, 3, "bidirectional", layout=1, peep=True,
             sizes=((5, 3), (7, 2), (2, 1)), **full)
    rnn_case("lstm_bidir_seqlens_layout0", "LSTM", 5, 2, "bidirectional", peep=True, **full)
    # Gate rows span several 64-row chunks of the kernel, the last one partial.
    rnn_case("lstm_bidir_seqlens_wide", "LSTM", 37, 20, "bidirectional", peep=True,
             sizes=((9, 4), (3, 2)), **full)
    rnn_case("gru_wide", "GRU", 40, 70, "bidirectional", seq_lens=True, init_h=True,
             sizes=((6, 3), (4, 1)))
    rnn_case("gru_wide_lbr_layout1", "GRU", 45, 8, layout=1, linear_before_reset=1,
             sizes=((5, 2), (2, 3)))
    rnn_case("rnn_wide", "RNN", 100, 30, "reverse", seq_lens=True, sizes=((7, 2), (3, 3)))
    rnn_case("lstm_reverse_seqlens_clip", "LSTM", 3, 4, "reverse", clip=0.5, **full)
    rnn_case("lstm_input_forget_nobias", "LSTM", 3, 2, bias=False, input_forget=1, init_h=True,
             init_c=True, opset=7)
    rnn_case("lstm_only_yh", "LSTM", 4, 3, "bidirectional", outputs=("Y_h",), seq_lens=True)
    rnn_case("lstm_only_yc_layout1", "LSTM", 4, 3, layout=1, outputs=("Y_c",))
    rnn_case("lstm_bidir_activations", "LSTM", 3, 2, "bidirectional",
             activations=["HardSigmoid", "LeakyRelu", "Softsign",
                          "Sigmoid", "ScaledTanh", "Tanh"],
             activation_alpha=[0.3, 0.05, 0.9], activation_beta=[0.4, 1.2])
    rnn_case("gru_bidir_lbr_seqlens_layout1", "GRU", 4, 3, "bidirectional", layout=1,
             linear_before_reset=1, seq_lens=True, init_h=True, sizes=((6, 3), (3, 2)))
    rnn_case("gru_bidir_seqlens", "GRU", 5, 3, "bidirectional", seq_lens=True, init_h=True)
    rnn_case("gru_reverse_activations_clip", "GRU", 4, 2, "reverse", clip=1.5,
             activations=["HardSigmoid", "Elu"], activation_alpha=[0.25, 0.7],
             activation_beta=[0.45])
    rnn_case("gru_only_yh", "GRU", 3, 2, outputs=("Y_h",), opset=7)
    rnn_case("rnn_bidir_seqlens_layout1", "RNN", 4, 3, "bidirectional", layout=1, seq_lens=True,
             init_h=True)
    # onnxruntime's RNN reads activation_alpha/beta by position in the activation list, its LSTM
    # and GRU consume them in list order: these lists mean the same under both readings.
    rnn_case("rnn_bidir_activations", "RNN", 3, 2, "bidirectional",
             activations=["ScaledTanh", "HardSigmoid"], activation_alpha=[0.8, 0.3],
             activation_beta=[1.3, 0.4])
    rnn_case("rnn_leaky_thresholded", "RNN", 3, 2, "bidirectional",
             activations=["LeakyRelu", "ThresholdedRelu"], activation_alpha=[0.2, 0.1])
    rnn_case("rnn_relu_reverse", "RNN", 4, 3, "reverse", activations=["Relu"], init_h=True)

    # Malformed nodes: a clean error naming the node and the attribute, never a crash.
    rnn_case("err_activation", "GRU", 3, 2, activations=["Sigmoid", "Swish"],
             expect=r"GRU 'gru0'.*unsupported activation \"swish\"")
    rnn_case("err_activation_count", "LSTM", 3, 2, "bidirectional",
             activations=["Sigmoid", "Tanh"], expect=r"LSTM 'lstm0'.*'activations' lists 2")
    rnn_case("err_direction", "RNN", 3, 2, direction="sideways",
             expect=r"RNN 'rnn0'.*'direction' must be")
    rnn_case("err_clip", "LSTM", 3, 2, clip=-1.0, expect=r"LSTM 'lstm0'.*'clip' must be positive")
    rnn_case("err_layout", "GRU", 3, 2, layout=2, expect=r"GRU 'gru0'.*'layout' must be 0 or 1")
    m = CASES[0][1]  # a hidden_size that R's shape contradicts
    bad = onnx.ModelProto()
    bad.CopyFrom(m)
    for a in bad.graph.node[0].attribute:
        if a.name == "hidden_size":
            a.i = 5
    ERRORS.append(("err_hidden_size", bad, r"LSTM 'lstm0'.*R dim 2 vs hidden_size"))


def run_case(relaxc, work, name, m, ref, runs):
    """Compiles `m` once, runs it on each feed set and compares with onnxruntime on `ref` (the
    same computation in a form onnxruntime runs)."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path, ref_path = os.path.join(d, "model.onnx"), os.path.join(d, "reference.onnx")
    onnx.save(m, path)
    onnx.save(ref, ref_path)
    so = os.path.join(d, "model.so")
    p = subprocess.run([relaxc, "compile", path, "-o", so], capture_output=True, text=True)
    if p.returncode != 0:
        return False, f"compile exit {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    for k, feeds in enumerate(runs):
        names, refs = nn_cases.ort_run(ref_path, feeds)
        err = nn_cases.relaxc_run(relaxc, d, so, k, feeds)
        if err:
            return False, err
        for n, want in zip(names, refs):
            got = np.load(os.path.join(d, f"out{k}", n + ".npy"))
            ok, msg = nn_cases.compare.compare(got, want)
            if not ok:
                sizes = ", ".join(str(list(v.shape)) for v in feeds.values())
                return False, f"run {k} ({sizes}) output {n}: {msg}"
    return True, f"{len(runs)} run(s)"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default=None, help="only cases whose name contains this")
    args = ap.parse_args()
    cases()
    runtime_weight_cases()
    passed = failed = 0
    for name, m, runs, expect in RUN_ERRORS:
        if args.filter and args.filter not in name:
            continue
        ok, msg = nn_cases.run_error_case(args.relaxc, args.work, name, m, runs, expect)
        passed += ok
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {msg}", flush=True)
    for name, m, expect in ERRORS:
        if args.filter and args.filter not in name:
            continue
        ok, msg = nn_cases.run_error_case(args.relaxc, args.work, name, m, None, expect)
        passed += ok
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {msg}", flush=True)
    for name, m, ref, runs in CASES:
        if args.filter and args.filter not in name:
            continue
        ok, msg = run_case(args.relaxc, args.work, name, m, ref, runs)
        passed += ok
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {msg}", flush=True)
    print(f"rnn cases: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# relaxc vs onnxruntime (the test venv's pin, 1.32) on single-node models of the com.microsoft
# contrib ops that onnxruntime's transformers optimizer and its saved ORT_ENABLE_ALL graphs write
# (issue 33): the attention ops (mask forms, unidirectional, past / present), the fused norms and
# Gelus, EmbedLayerNormalization, RotaryEmbedding, GroupQueryAttention, FusedConv, FusedMatMul,
# NhwcConv; symbolic batch / sequence dims run at two sizes from one artifact; and the errors for
# forms relaxc does not implement. Where onnxruntime's CPU kernels lack a form (NhwcConv, BiasAdd,
# packed QKV / KV MultiHeadAttention), the reference is onnxruntime running the equivalent graph.
"""Usage: contrib_transformer_cases.py --relaxc RELAXC --work DIR [FAMILY ...]."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nn_cases  # noqa: E402

F32, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
MS = {"com.microsoft": 1}


def ms(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower() + "0",
                            domain="com.microsoft", **attrs)


def rnd(shape, seed=1, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def ccase(family, name, nodes, inputs, outputs, runs, inits=(), out_ranks=None, out_types=None,
          opset=17, dtypes=None, domains=MS):
    """inputs: [(name, declared shape)]; runs: list of feed dicts; out_ranks: {output: rank}
    declared with symbolic dims (onnx shape inference does not know the contrib ops)."""
    nn_cases.case(family, name, nodes, inputs, outputs, inits, opset=opset, dtypes=dtypes,
                  out_types=out_types, domains=domains,
                  shapes=[{n: [1 if isinstance(d, str) else d for d in s] for n, s in inputs}])
    n, m, _ = nn_cases.CASES[family].pop()
    for o in m.graph.output:
        if out_ranks and o.name in out_ranks:
            nn_cases.declare_rank(o, out_ranks[o.name])
    nn_cases.CASES[family].append((n, m, runs))
    return m


def ort_equivalent(nodes, inputs, outputs, inits=(), opset=17):
    """A CUSTOM_REFERENCE: onnxruntime running the standard-op graph `nodes`."""
    def ref(_model, feeds):
        g = helper.make_graph(
            nodes, "ref", [helper.make_tensor_value_info(n, F32, None) for n in inputs],
            [helper.make_tensor_value_info(o, F32, None) for o in outputs],
            initializer=[numpy_helper.from_array(v, k) for k, v in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
        import onnxruntime as ort
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return outputs, s.run(None, feeds)
    return ref


# ---- Gelu family, BiasAdd ----------------------------------------------------------------
def gelu_cases():
    x = [("x", ["b", "s", 16])]
    runs = [{"x": rnd([2, 3, 16], 3, 2.0)}, {"x": rnd([1, 5, 16], 4, 2.0)}]
    ccase("gelu", "Gelu", [ms("Gelu", ["x"])], x, ["y"], runs, out_ranks={"y": 3})
    ccase("gelu", "BiasGelu", [ms("BiasGelu", ["x", "b"])], x, ["y"], runs,
          [("b", rnd([16], 5))], out_ranks={"y": 3})
    ccase("gelu", "FastGelu_bias", [ms("FastGelu", ["x", "b"])], x, ["y"], runs,
          [("b", rnd([16], 5))], out_ranks={"y": 3})
    ccase("gelu", "FastGelu", [ms("FastGelu", ["x"])], x, ["y"], runs, out_ranks={"y": 3})
    b = rnd([16], 6)
    ccase("gelu", "BiasAdd", [ms("BiasAdd", ["x", "b", "skip"])],
          [("x", ["n", "s", 16]), ("skip", ["n", "s", 16])], ["y"],
          [{"x": rnd([2, 3, 16], 1), "skip": rnd([2, 3, 16], 2)},
           {"x": rnd([1, 4, 16], 3), "skip": rnd([1, 4, 16], 4)}], [("b", b)], out_ranks={"y": 3})
    nn_cases.CUSTOM_REFERENCE["BiasAdd"] = ort_equivalent(
        [helper.make_node("Add", ["x", "b"], ["t"]), helper.make_node("Add", ["t", "skip"], ["y"])],
        ["x", "skip"], ["y"], [("b", b)])


# ---- normalizations, embeddings, rotary ---------------------------------------------------
def norm_cases():
    H = 16
    g, be, bi = rnd([H], 7), rnd([H], 8), rnd([H], 9)
    x = [("x", ["b", "s", H]), ("skip", ["b", "s", H])]
    runs = [{"x": rnd([2, 3, H], 1), "skip": rnd([2, 3, H], 2)},
            {"x": rnd([1, 6, H], 3), "skip": rnd([1, 6, H], 4)}]
    outs4 = ["y", "mean", "inv", "sum"]
    ranks4 = {o: 3 for o in outs4}
    ccase("norm", "SkipLayerNorm_all_outputs",
          [ms("SkipLayerNormalization", ["x", "skip", "g", "be", "bi"], outs4, epsilon=1e-5)],
          x, outs4, runs, [("g", g), ("be", be), ("bi", bi)], out_ranks=ranks4)
    ccase("norm", "SkipLayerNorm_nobeta_sum_only",
          [ms("SkipLayerNormalization", ["x", "skip", "g"], ["y", "", "", "sum"])],
          x, ["y", "sum"], runs, [("g", g)], out_ranks={"y": 3, "sum": 3})
    ccase("norm", "SkipLayerNorm_skip_2d",
          [ms("SkipLayerNormalization", ["x", "skip", "g", "be"], epsilon=1e-6)],
          [("x", [2, "s", H]), ("skip", ["s", H])], ["y"],
          [{"x": rnd([2, 4, H], 1), "skip": rnd([4, H], 2)},
           {"x": rnd([2, 2, H], 3), "skip": rnd([2, H], 4)}], [("g", g), ("be", be)],
          out_ranks={"y": 3})
    ccase("norm", "SkipSimplifiedLayerNorm_all_outputs",
          [ms("SkipSimplifiedLayerNormalization", ["x", "skip", "g", "bi"], outs4, epsilon=1e-6)],
          x, outs4, runs, [("g", g), ("bi", bi)], out_ranks=ranks4)
    ccase("norm", "SkipSimplifiedLayerNorm",
          [ms("SkipSimplifiedLayerNormalization", ["x", "skip", "g"])], x, ["y"], runs,
          [("g", g)], out_ranks={"y": 3})
    # SimplifiedLayerNormalization: onnxruntime registers it in the default domain.
    for axis in (-1, 1):
        ccase("norm", f"SimplifiedLayerNorm_axis{axis}",
              [helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y", "inv"],
                                axis=axis, epsilon=1e-5, name="sln0")],
              [("x", ["b", 3, H])], ["y", "inv"],
              [{"x": rnd([2, 3, H], 1)}, {"x": rnd([4, 3, H], 2)}],
              [("g", rnd([H] if axis == -1 else [3, H], 7))], out_ranks={"y": 3, "inv": 3},
              domains={})
    # EmbedLayerNormalization: with segments and a mask (mask_index: the count of 1s per row),
    # without either, with position_ids.
    V, P = 30, 24
    we, pe, se = rnd([V, H], 11), rnd([P, H], 12), rnd([2, H], 13)
    embeds = [("we", we), ("pe", pe), ("se", se), ("g", g), ("be", be)]
    r = np.random.default_rng(5)

    def ids(b, s):
        return r.integers(0, V, (b, s)).astype(np.int32)
    mask_runs = [{"ids": ids(2, 5), "seg": r.integers(0, 2, (2, 5)).astype(np.int32),
                  "mask": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)},
                 {"ids": ids(3, 7), "seg": r.integers(0, 2, (3, 7)).astype(np.int32),
                  "mask": np.array([[1] * 7, [1, 1, 0, 0, 0, 0, 0], [1, 0, 1, 2, 0, 1, 1]],
                                   np.int32)}]
    ccase("norm", "EmbedLayerNorm_segment_mask",
          [ms("EmbedLayerNormalization", ["ids", "seg", "we", "pe", "se", "g", "be", "mask"],
              ["y", "mi", "sum"], epsilon=1e-5)],
          [("ids", ["b", "s"]), ("seg", ["b", "s"]), ("mask", ["b", "s"])], ["y", "mi", "sum"],
          mask_runs, embeds, out_ranks={"y": 3, "mi": 1, "sum": 3}, out_types={"mi": I32},
          dtypes={"ids": I32, "seg": I32, "mask": I32})
    ccase("norm", "EmbedLayerNorm_plain",
          [ms("EmbedLayerNormalization", ["ids", "", "we", "pe", "", "g", "be"], ["y", "mi"])],
          [("ids", ["b", "s"])], ["y", "mi"], [{"ids": ids(2, 4)}, {"ids": ids(1, 9)}],
          [("we", we), ("pe", pe), ("g", g), ("be", be)], out_ranks={"y": 3, "mi": 1},
          out_types={"mi": I32}, dtypes={"ids": I32})
    ccase("norm", "EmbedLayerNorm_position_ids",
          [ms("EmbedLayerNormalization", ["ids", "", "we", "pe", "", "g", "be", "", "pos"],
              ["y", "mi"])],
          [("ids", ["b", "s"]), ("pos", ["b", "s"])], ["y", "mi"],
          [{"ids": ids(2, 4), "pos": r.integers(0, P, (2, 4)).astype(np.int32)},
           {"ids": ids(1, 6), "pos": r.integers(0, P, (1, 6)).astype(np.int32)}],
          [("we", we), ("pe", pe), ("g", g), ("be", be)], out_ranks={"y": 3, "mi": 1},
          out_types={"mi": I32}, dtypes={"ids": I32, "pos": I32})


def rotary_cases():
    M = 32
    for inter in (0, 1):
        for rot, heads, D in ((0, 2, 8), (4, 2, 8)):
            half = (rot or D) // 2
            cos, sin = rnd([M, half], 21), rnd([M, half], 22)
            attrs = {"interleaved": inter}
            if rot:
                attrs.update(rotary_embedding_dim=rot, num_heads=heads)
            tag = f"i{inter}_rot{rot or D}"
            r = np.random.default_rng(3)
            runs = [{"x": rnd([2, 3, heads * D], 1),
                     "pos": r.integers(0, M, (2, 3)).astype(np.int64)},
                    {"x": rnd([1, 5, heads * D], 2),
                     "pos": r.integers(0, M, (1, 5)).astype(np.int64)}]
            ccase("rotary", f"RotaryEmbedding_3d_{tag}",
                  [ms("RotaryEmbedding", ["x", "pos", "cos", "sin"], **attrs)],
                  [("x", ["b", "s", heads * D]), ("pos", ["b", "s"])], ["y"], runs,
                  [("cos", cos), ("sin", sin)], out_ranks={"y": 3}, dtypes={"pos": I64})
            ccase("rotary", f"RotaryEmbedding_4d_{tag}",
                  [ms("RotaryEmbedding", ["x", "pos", "cos", "sin"], **attrs)],
                  [("x", ["b", heads, "s", D]), ("pos", ["b", "s"])], ["y"],
                  [{"x": rnd([2, heads, 3, D], 1), "pos": runs[0]["pos"]},
                   {"x": rnd([1, heads, 5, D], 2), "pos": runs[1]["pos"]}],
                  [("cos", cos), ("sin", sin)], out_ranks={"y": 4}, dtypes={"pos": I64})
    cos, sin = rnd([M, 4], 21), rnd([M, 4], 22)
    ccase("rotary", "RotaryEmbedding_offset",
          [ms("RotaryEmbedding", ["x", "pos", "cos", "sin"])],
          [("x", ["b", "s", 16])], ["y"],
          [{"x": rnd([2, 3, 16], 1)}, {"x": rnd([1, 6, 16], 2)}],
          [("cos", cos), ("sin", sin), ("pos", np.array([5], np.int64))], out_ranks={"y": 3})


def ort_mha_unpacked(num_heads, bias=None):
    """A CUSTOM_REFERENCE for packed-QKV / packed-KV MultiHeadAttention, which onnxruntime's CPU
    kernel does not take: onnxruntime's MultiHeadAttention on the unpacked Q, K, V."""
    def ref(_model, feeds):
        if "qkv" in feeds:
            p = feeds["qkv"]
            q, k, v = (p[:, :, :, i].reshape(p.shape[0], p.shape[1], -1) for i in range(3))
        else:
            q, kv = feeds["q"], feeds["kv"]
            k, v = (kv[:, :, :, i].reshape(kv.shape[0], kv.shape[1], -1) for i in range(2))
        ins = ["q", "k", "v"] + (["bias"] if bias is not None else [])
        g = helper.make_graph(
            [ms("MultiHeadAttention", ins, num_heads=num_heads)], "ref",
            [helper.make_tensor_value_info(n, F32, None) for n in ("q", "k", "v")],
            [helper.make_tensor_value_info("y", F32, None)],
            initializer=[] if bias is None else [numpy_helper.from_array(bias, "bias")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("com.microsoft", 1)],
                              ir_version=8)
        import onnxruntime as ort
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return ["y"], s.run(None, {"q": q, "k": np.ascontiguousarray(k),
                                   "v": np.ascontiguousarray(v)})
    return ref


# ---- attention ------------------------------------------------------------------------------
def attention_cases():
    B, S, Hin, N = 2, 5, 16, 4
    w, bias = rnd([Hin, 3 * Hin], 31, 0.3), rnd([3 * Hin], 32)
    wb = [("w", w), ("bias", bias)]
    xin = [("x", ["b", "s", Hin])]
    xruns = [{"x": rnd([B, S, Hin], 1)}, {"x": rnd([1, 7, Hin], 2)}]
    ccase("attention", "Attention_nomask", [ms("Attention", ["x", "w", "bias"], num_heads=N)],
          xin, ["y"], xruns, wb, out_ranks={"y": 3})
    ccase("attention", "Attention_unidirectional",
          [ms("Attention", ["x", "w", "bias"], num_heads=N, unidirectional=1)],
          xin, ["y"], xruns, wb, out_ranks={"y": 3})
    lens = [np.array([3, 5], np.int32), np.array([7], np.int32)]
    ccase("attention", "Attention_mask_1d_lengths",
          [ms("Attention", ["x", "w", "bias", "m"], num_heads=N)],
          xin + [("m", ["b"])], ["y"], [dict(r, m=l) for r, l in zip(xruns, lens)], wb,
          out_ranks={"y": 3}, dtypes={"m": I32})
    m2 = [np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]], np.int32), np.ones((1, 7), np.int32)]
    m2[1][0, 4:] = 0
    for tag, mfv in (("", None), ("_filter_min", -3.4028234663852886e38)):
        kw = {} if mfv is None else {"mask_filter_value": mfv}
        ccase("attention", f"Attention_mask_2d{tag}",
              [ms("Attention", ["x", "w", "bias", "m"], num_heads=N, **kw)],
              xin + [("m", ["b", "s"])], ["y"], [dict(r, m=k) for r, k in zip(xruns, m2)], wb,
              out_ranks={"y": 3}, dtypes={"m": I32})
    m3 = [(np.random.default_rng(4).random((B, S, S)) > 0.3).astype(np.int32),
          (np.random.default_rng(5).random((1, 7, 7)) > 0.3).astype(np.int32)]
    ccase("attention", "Attention_mask_3d",
          [ms("Attention", ["x", "w", "bias", "m"], num_heads=N, mask_filter_value=-50.0)],
          xin + [("m", ["b", "s", "s"])], ["y"], [dict(r, m=k) for r, k in zip(xruns, m3)], wb,
          out_ranks={"y": 3}, dtypes={"m": I32})
    # Left padding (2B: ends then starts), static batch.
    ccase("attention", "Attention_mask_left_padding",
          [ms("Attention", ["x", "w", "bias", "m"], num_heads=N)],
          [("x", [B, "s", Hin]), ("m", [2 * B])], ["y"],
          [{"x": rnd([B, S, Hin], 1), "m": np.array([5, 5, 2, 0], np.int32)},
           {"x": rnd([B, 3, Hin], 2), "m": np.array([3, 2, 1, 0], np.int32)}], wb,
          out_ranks={"y": 3}, dtypes={"m": I32})
    # GPT-2 style: past (2, B, N, P, H) -> present, unidirectional, 2-D mask over past + new.
    D = Hin // N
    prun = [{"x": rnd([B, 1, Hin], 1), "past": rnd([2, B, N, 4, D], 2),
             "m": np.array([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]], np.int32)},
            {"x": rnd([1, 3, Hin], 3), "past": rnd([2, 1, N, 6, D], 4), "m": np.ones((1, 9), np.int32)}]
    ccase("attention", "Attention_past_present_unidirectional",
          [ms("Attention", ["x", "w", "bias", "m", "past"], ["y", "present"], num_heads=N,
              unidirectional=1)],
          xin + [("past", [2, "b", N, "p", D]), ("m", ["b", "t"])], ["y", "present"], prun, wb,
          out_ranks={"y": 3, "present": 5}, dtypes={"m": I32})
    ab = [rnd([B, N, S, S], 6), rnd([1, N, 7, 7], 7)]
    ccase("attention", "Attention_bias_qkv_sizes",
          [ms("Attention", ["x", "w2", "", "", "", "ab"], num_heads=N,
              qkv_hidden_sizes=[16, 16, 8], scale=0.2)],
          xin + [("ab", ["b", N, "s", "s"])], ["y"],
          [dict(r, ab=a) for r, a in zip(xruns, ab)], [("w2", rnd([Hin, 40], 33, 0.3))],
          out_ranks={"y": 3})
    # MultiHeadAttention.
    q = [("q", ["b", "s", Hin]), ("k", ["b", "l", Hin]), ("v", ["b", "l", Hin])]
    qruns = [{"q": rnd([B, S, Hin], 1), "k": rnd([B, 3, Hin], 2), "v": rnd([B, 3, Hin], 3)},
             {"q": rnd([1, 2, Hin], 4), "k": rnd([1, 6, Hin], 5), "v": rnd([1, 6, Hin], 6)}]
    ccase("attention", "MHA_bias", [ms("MultiHeadAttention", ["q", "k", "v", "bias"],
                                       num_heads=N)],
          q, ["y"], qruns, [("bias", bias)], out_ranks={"y": 3})
    kpm = [np.array([[1, 0, 1], [1, 1, 1]], np.int32), np.array([[1, 1, 1, 1, 0, 0]], np.int32)]
    ccase("attention", "MHA_key_padding_2d",
          [ms("MultiHeadAttention", ["q", "k", "v", "", "m"], num_heads=N)],
          q + [("m", ["b", "l"])], ["y"], [dict(r, m=k) for r, k in zip(qruns, kpm)],
          out_ranks={"y": 3}, dtypes={"m": I32})
    ccase("attention", "MHA_key_padding_1d",
          [ms("MultiHeadAttention", ["q", "k", "v", "bias", "m"], num_heads=N,
              mask_filter_value=-1e9)],
          q + [("m", ["b"])], ["y"],
          [dict(r, m=k) for r, k in zip(qruns, [np.array([2, 3], np.int32), np.array([4], np.int32)])],
          [("bias", bias)], out_ranks={"y": 3}, dtypes={"m": I32})
    ccase("attention", "MHA_packed_qkv",
          [ms("MultiHeadAttention", ["qkv"], num_heads=N)],
          [("qkv", ["b", "s", N, 3, D])], ["y"],
          [{"qkv": rnd([B, S, N, 3, D], 1)}, {"qkv": rnd([1, 3, N, 3, D], 2)}],
          out_ranks={"y": 3})
    nn_cases.CUSTOM_REFERENCE["MHA_packed_qkv"] = ort_mha_unpacked(N)
    ccase("attention", "MHA_packed_kv",
          [ms("MultiHeadAttention", ["q", "kv", "", "bias"], num_heads=N)],
          [("q", ["b", "s", Hin]), ("kv", ["b", "l", N, 2, D])], ["y"],
          [{"q": rnd([B, S, Hin], 1), "kv": rnd([B, 3, N, 2, D], 2)},
           {"q": rnd([1, 2, Hin], 3), "kv": rnd([1, 4, N, 2, D], 4)}], [("bias", bias)],
          out_ranks={"y": 3})
    nn_cases.CUSTOM_REFERENCE["MHA_packed_kv"] = ort_mha_unpacked(N, bias)
    ccase("attention", "MHA_past_unidirectional",
          [ms("MultiHeadAttention", ["q", "k", "v", "bias", "", "", "pk", "pv"],
              ["y", "present_k", "present_v"], num_heads=N, unidirectional=1)],
          [("q", ["b", "s", Hin]), ("k", ["b", "s", Hin]), ("v", ["b", "s", Hin]),
           ("pk", ["b", N, "p", D]), ("pv", ["b", N, "p", D])], ["y", "present_k", "present_v"],
          [{"q": rnd([B, 1, Hin], 1), "k": rnd([B, 1, Hin], 2), "v": rnd([B, 1, Hin], 3),
            "pk": rnd([B, N, 4, D], 4), "pv": rnd([B, N, 4, D], 5)},
           {"q": rnd([1, 3, Hin], 6), "k": rnd([1, 3, Hin], 7), "v": rnd([1, 3, Hin], 8),
            "pk": rnd([1, N, 2, D], 9), "pv": rnd([1, N, 2, D], 10)}],
          [("bias", bias)], out_ranks={"y": 3, "present_k": 4, "present_v": 4})
    ccase("attention", "MHA_cross_bnsh_attention_bias",
          [ms("MultiHeadAttention", ["q", "k", "v", "", "", "ab"], num_heads=N, scale=0.3)],
          [("q", ["b", "s", Hin]), ("k", ["b", N, "l", D]), ("v", ["b", N, "l", D]),
           ("ab", [1, N, "s", "l"])], ["y"],
          [{"q": rnd([B, S, Hin], 1), "k": rnd([B, N, 3, D], 2), "v": rnd([B, N, 3, D], 3),
            "ab": rnd([1, N, S, 3], 4)},
           {"q": rnd([1, 2, Hin], 5), "k": rnd([1, N, 6, D], 6), "v": rnd([1, N, 6, D], 7),
            "ab": rnd([1, N, 2, 6], 8)}], out_ranks={"y": 3})


def gqa_cases():
    N, KV, D = 4, 2, 8

    def runs(packed, past):
        out = []
        for b, s, p in ((2, 1, 5), (1, 4, 3)) if past else ((2, 3, 0), (1, 6, 0)):
            r = {"q": rnd([b, s, (N + 2 * KV) * D if packed else N * D], 1)}
            if not packed:
                r.update(k=rnd([b, s, KV * D], 2), v=rnd([b, s, KV * D], 3))
            if past:
                r.update(pk=rnd([b, KV, p, D], 4), pv=rnd([b, KV, p, D], 5))
            r["lens"] = np.full([b], p + s - 1, np.int32)
            r["total"] = np.array(p + s, np.int32)
            out.append(r)
        return out
    for packed in (0, 1):
        for past in (0, 1):
            ins = ["q", "", ""] if packed else ["q", "k", "v"]
            ins += ["pk", "pv"] if past else ["", ""]
            decl = [("q", ["b", "s", (N + 2 * KV) * D if packed else N * D])]
            if not packed:
                decl += [("k", ["b", "s", KV * D]), ("v", ["b", "s", KV * D])]
            if past:
                decl += [("pk", ["b", KV, "p", D]), ("pv", ["b", KV, "p", D])]
            decl += [("lens", ["b"]), ("total", [])]
            ccase("gqa", f"GroupQueryAttention_packed{packed}_past{past}",
                  [ms("GroupQueryAttention", ins + ["lens", "total"], ["y", "pk_out", "pv_out"],
                      num_heads=N, kv_num_heads=KV)],
                  decl, ["y", "pk_out", "pv_out"], runs(packed, past),
                  out_ranks={"y": 3, "pk_out": 4, "pv_out": 4},
                  dtypes={"lens": I32, "total": I32})


# ---- ORT_ENABLE_ALL fusions ---------------------------------------------------------------
def fused_cases():
    x = [("x", ["n", 4, "h", "w"])]
    xruns = [{"x": rnd([2, 4, 7, 6], 1)}, {"x": rnd([1, 4, 5, 9], 2)}]
    wb = [("w", rnd([6, 4, 3, 3], 3, 0.4)), ("b", rnd([6], 4))]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1)
    for act, params in (("Relu", None), ("Tanh", None), ("Sigmoid", None),
                        ("LeakyRelu", [0.2]), ("Clip", [-0.5, 0.7]), ("HardSigmoid", [0.3, 0.4])):
        kw = dict(conv, activation=act)
        if params:
            kw["activation_params"] = params
        ccase("fused", f"FusedConv_{act}", [ms("FusedConv", ["x", "w", "b"], **kw)], x, ["y"],
              xruns, wb, out_ranks={"y": 4})
    ccase("fused", "FusedConv_sum_relu",
          [ms("FusedConv", ["x", "w", "b", "z"], activation="Relu", **conv)],
          x + [("z", ["n", 6, "h", "w"])], ["y"],
          [dict(xruns[0], z=rnd([2, 6, 7, 6], 5)), dict(xruns[1], z=rnd([1, 6, 5, 9], 6))], wb,
          out_ranks={"y": 4})
    ccase("fused", "FusedConv_strided_noact",
          [ms("FusedConv", ["x", "w"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 0])],
          x, ["y"], xruns, wb[:1], out_ranks={"y": 4})
    for ta, tb, alpha in ((0, 0, 1.0), (0, 1, 1.0), (1, 0, 0.5), (1, 1, 2.0)):
        a = [3, "m", 5] if not ta else [3, 5, "m"]
        b = [3, 5, 4] if not tb else [3, 4, 5]
        ccase("fused", f"FusedMatMul_tA{ta}_tB{tb}",
              [ms("FusedMatMul", ["a", "b"], transA=ta, transB=tb, alpha=alpha)],
              [("a", a), ("b", b)], ["y"],
              [{"a": rnd([3, 2, 5] if not ta else [3, 5, 2], 1), "b": rnd(b, 2)},
               {"a": rnd([3, 6, 5] if not ta else [3, 5, 6], 3), "b": rnd(b, 4)}],
              out_ranks={"y": 3})
    ccase("fused", "FusedMatMul_broadcast_transB",
          [ms("FusedMatMul", ["a", "b"], transB=1, alpha=0.25)],
          [("a", [2, 3, "m", 8]), ("b", [3, 5, 8])], ["y"],
          [{"a": rnd([2, 3, 4, 8], 1), "b": rnd([3, 5, 8], 2)},
           {"a": rnd([2, 3, 1, 8], 3), "b": rnd([3, 5, 8], 4)}], out_ranks={"y": 4})
    # NhwcConv: X (N, H, W, C), W (M, kH, kW, C / group); reference: the NCHW Conv between
    # Transposes in onnxruntime.
    w = rnd([6, 3, 3, 2], 7, 0.4)
    bb = rnd([6], 8)
    attrs = dict(kernel_shape=[3, 3], pads=[1, 0, 1, 2], strides=[2, 1], group=2)
    ccase("fused", "NhwcConv_grouped", [ms("NhwcConv", ["x", "w", "b"], **attrs)],
          [("x", ["n", "h", "w", 4])], ["y"],
          [{"x": rnd([2, 7, 6, 4], 1)}, {"x": rnd([1, 5, 9, 4], 2)}], [("w", w), ("b", bb)],
          out_ranks={"y": 4})
    nn_cases.CUSTOM_REFERENCE["NhwcConv_grouped"] = ort_equivalent(
        [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]),
         helper.make_node("Conv", ["xt", "wt", "b"], ["yt"], **attrs),
         helper.make_node("Transpose", ["yt"], ["y"], perm=[0, 2, 3, 1])],
        ["x"], ["y"], [("wt", np.ascontiguousarray(w.transpose(0, 3, 1, 2))), ("b", bb)])


# ---- errors: forms relaxc does not implement name the node and op ---------------------------
def error_cases():
    def err(name, nodes, inputs, inits, expect, dtypes=None):
        ccase("errors", name, nodes, inputs, ["y"], [None], inits, out_ranks={"y": 3},
              dtypes=dtypes)
        n, m, _ = nn_cases.CASES["errors"].pop()
        nn_cases.ERRORS.append((n, m, None, expect))
    w = [("w", rnd([16, 48], 1))]
    err("attention_do_rotary", [ms("Attention", ["x", "w"], num_heads=4, do_rotary=1)],
        [("x", [1, 2, 16])], w, r"Attention 'attention0'.*do_rotary=1 is not supported")
    err("attention_mask_4d", [ms("Attention", ["x", "w", "", "m"], num_heads=4)],
        [("x", [1, 2, 16]), ("m", [1, 1, 2, 2])], w,
        r"Attention 'attention0'.*mask of rank 4 is not supported", dtypes={"m": I32})
    err("attention_heads_mismatch", [ms("Attention", ["x", "w"], num_heads=5)],
        [("x", [1, 2, 16])], w, r"Attention 'attention0'.*do not fit weights of 48 columns")
    err("gqa_local_window", [ms("GroupQueryAttention", ["q", "k", "v", "", "", "l", "t"],
                                num_heads=2, kv_num_heads=1, local_window_size=4)],
        [("q", [1, 2, 16]), ("k", [1, 2, 8]), ("v", [1, 2, 8]), ("l", [1]), ("t", [])], [],
        r"GroupQueryAttention 'groupqueryattention0'.*local_window_size=4 is not supported",
        dtypes={"l": I32, "t": I32})
    # A padded KV cache (seqlens_k shorter than past + new for one sequence) is refused at run
    # time: the new keys would go after the valid past, not after the buffer.
    gqa = [ms("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "l", "t"], ["y"], num_heads=2,
              kv_num_heads=1)]
    ccase("errors", "gqa_padded_seqlens", gqa,
          [("q", [2, 1, 16]), ("k", [2, 1, 8]), ("v", [2, 1, 8]), ("pk", [2, 1, 3, 8]),
           ("pv", [2, 1, 3, 8]), ("l", [2]), ("t", [])], ["y"],
          [{"q": rnd([2, 1, 16], 1), "k": rnd([2, 1, 8], 2), "v": rnd([2, 1, 8], 3),
            "pk": rnd([2, 1, 3, 8], 4), "pv": rnd([2, 1, 3, 8], 5),
            "l": np.array([3, 2], np.int32), "t": np.array(4, np.int32)}],
          out_ranks={"y": 3}, dtypes={"l": I32, "t": I32})
    n, m, runs = nn_cases.CASES["errors"].pop()
    nn_cases.ERRORS.append((n, m, runs, r"GroupQueryAttention 'groupqueryattention0'.*seqlens_k"
                            r".*\[1\] = 2; it must be 3"))
    err("fusedconv_activation", [ms("FusedConv", ["x", "w"], activation="Elu",
                                    kernel_shape=[1, 1])],
        [("x", [1, 2, 3, 3])], [("w", rnd([2, 2, 1, 1], 2))],
        r"FusedConv 'fusedconv0'.*activation 'Elu' is not supported")
    err("fusedmatmul_trans_batch", [ms("FusedMatMul", ["a", "b"], transBatchA=1)],
        [("a", [2, 3, 4]), ("b", [2, 4, 5])], [],
        r"FusedMatMul 'fusedmatmul0'.*transBatchA / transBatchB are not supported")
    err("rotary_packed_batching", [ms("RotaryEmbedding", ["x", "p", "c", "s"],
                                      is_packed_batching=1)],
        [("x", [1, 2, 8]), ("p", [1, 2])], [("c", rnd([4, 4], 3)), ("s", rnd([4, 4], 4))],
        r"RotaryEmbedding 'rotaryembedding0'.*is_packed_batching=1 is not supported",
        dtypes={"p": I64})


FAMILIES = {"gelu": gelu_cases, "norm": norm_cases, "rotary": rotary_cases,
            "attention": attention_cases, "gqa": gqa_cases, "fused": fused_cases,
            "errors": error_cases}

if __name__ == "__main__":
    nn_cases.FAMILIES.clear()
    nn_cases.FAMILIES.update(FAMILIES)
    sys.exit(nn_cases.main())

#!/usr/bin/env python3
# relaxc vs onnxruntime (the test venv's pin, 1.32) on the com.microsoft contrib ops that
# onnxruntime's quantization tools write (issue 33): QLinearAdd / Mul / Sigmoid / LeakyRelu /
# GlobalAveragePool / Concat and QGemm (quantize_static, QOperator format), DynamicQuantizeMatMul,
# MatMulIntegerToFloat, DynamicQuantizeLSTM, QAttention and QEmbedLayerNormalization
# (quantize_dynamic), MatMulNBits
# (MatMulNBitsQuantizer), one node per model: uint8 and int8, per-tensor and per-column
# parameters where the op takes them, values at the type's ends and results that saturate.
#
# Tolerances: a quantized (int8 / uint8) output may differ from onnxruntime's by one quantization
# step (its kernels round a float32 product whose last bit can differ from ours on a .5 tie);
# float outputs rtol 1e-4 / atol 1e-5 (DynamicQuantizeLSTM's too: relaxc quantizes X and each
# step's h as onnxruntime's kernel does, so no quantization-step difference arises).
"""Usage: contrib_quant_cases.py --relaxc RELAXC --work DIR [--filter TEXT] [FAMILY ...]."""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import compare  # noqa: E402
from nn_cases import ort_run, relaxc_run, save_and_compile  # noqa: E402

U8, I8, I32, F32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32, TensorProto.FLOAT
NP = {U8: np.uint8, I8: np.int8, I32: np.int32, F32: np.float32}
CASES = {}  # family -> [(name, model, [feeds], float tolerance (rtol, atol))]
ERRORS = []  # (name, model, expected message regex)


def model(nodes, inputs, outputs, inits=(), opset=17):
    """inputs: [(name, elem type, shape)]; outputs: [(name, elem type, rank)]; inits: [(name,
    array)]. Contrib ops have no ONNX shape inference: outputs declare their rank only."""
    def out_info(name, t, rank):
        return helper.make_tensor_value_info(name, t, [None] * rank)
    g = helper.make_graph(
        nodes, "contrib_quant",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [out_info(*o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                               helper.make_opsetid("com.microsoft", 1)],
                             ir_version=8)


def ms(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower() + "0",
                            domain="com.microsoft", **attrs)


def qdata(rng, t, shape):
    """Random 8-bit data with the type's two ends in the first elements."""
    info = np.iinfo(NP[t])
    v = rng.integers(info.min, info.max + 1, shape).astype(NP[t])
    flat = v.reshape(-1)
    flat[:4] = [info.min, info.max, info.min, info.max][:flat.size]
    return v


def case(family, name, m, feeds_list, tol=(compare.RTOL, compare.ATOL)):
    CASES.setdefault(family, []).append((name, m, feeds_list, tol))


def scalar(v, t):
    return np.array(v, NP[t])


TNAME = {U8: "u8", I8: "i8"}
ZP = {U8: 128, I8: -3}  # a zero point inside each type


# ---- quantize_static (QOperator) ops ---------------------------------------------------------
def qlinear_binary_cases():
    rng = np.random.default_rng(1)
    for op in ("QLinearAdd", "QLinearMul"):
        for t in (U8, I8):
            for tag, sa, sb in (("same", [2, 3, 4, 5], [2, 3, 4, 5]), ("bcast", [2, 3, 4, 5], [1, 3, 1, 1]),
                                ("scalar_b", [2, 3, 4, 5], [])):
                inits = [("as", scalar(0.05, F32)), ("az", scalar(ZP[t], t)),
                         ("bs", scalar(0.02, F32)), ("bz", scalar(ZP[t] - 7, t)),
                         ("cs", scalar(0.09 if op == "QLinearAdd" else 0.3, F32)),
                         ("cz", scalar(ZP[t] + 5, t))]
                m = model([ms(op, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"])],
                          [("a", t, sa), ("b", t, sb)], [("y", t, 4)], inits)
                case("qlinear_binary", f"{op}_{TNAME[t]}_{tag}", m,
                     [{"a": qdata(rng, t, sa), "b": qdata(rng, t, sb)}])
            # Saturation: a tiny output scale pushes most results past the type's ends; zero
            # points 0 (onnxruntime 1.32 refuses the node with them left out).
            inits = [("as", scalar(0.5, F32)), ("bs", scalar(0.25, F32)), ("cs", scalar(0.01, F32)),
                     ("z", scalar(0, t))]
            m = model([ms(op, ["a", "as", "z", "b", "bs", "z", "cs", "z"])],
                      [("a", t, [3, 7]), ("b", t, [3, 7])], [("y", t, 2)], inits)
            case("qlinear_binary", f"{op}_{TNAME[t]}_saturate_zp0", m,
                 [{"a": qdata(rng, t, [3, 7]), "b": qdata(rng, t, [3, 7])}])


def qlinear_unary_cases():
    rng = np.random.default_rng(2)
    for op, attrs in (("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1}),
                      ("QLinearLeakyRelu", {})):
        for t in (U8, I8):
            tag = f"{op}_{TNAME[t]}" + ("_alpha" if attrs else "")
            inits = [("xs", scalar(0.06, F32)), ("xz", scalar(ZP[t], t)),
                     ("ys", scalar(1 / 255 if op == "QLinearSigmoid" else 0.05, F32)),
                     ("yz", scalar(0 if t == U8 or op == "QLinearLeakyRelu" else -128, t))]
            m = model([ms(op, ["x", "xs", "xz", "ys", "yz"], **attrs)], [("x", t, [2, 3, 16])],
                      [("y", t, 3)], inits)
            # Random values, and every value of the type once (the table onnxruntime builds).
            info = np.iinfo(NP[t])
            every = np.arange(info.min, info.max + 1).astype(NP[t])
            x = qdata(rng, t, [2, 3, 16])
            m2 = model([ms(op, ["x", "xs", "xz", "ys", "yz"], **attrs)], [("x", t, [256])],
                       [("y", t, 1)], inits)
            case("qlinear_unary", tag, m, [{"x": x}])
            case("qlinear_unary", tag + "_every_value", m2, [{"x": every}])


def qlinear_pool_cases():
    rng = np.random.default_rng(3)
    for t in (U8, I8):
        for last in (0, 1):
            shape = [2, 5, 6, 3] if last else [2, 3, 5, 6]
            inits = [("xs", scalar(0.04, F32)), ("xz", scalar(ZP[t], t)),
                     ("ys", scalar(0.01, F32)), ("yz", scalar(ZP[t] - 20, t))]
            m = model([ms("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"],
                          channels_last=last)], [("x", t, shape)], [("y", t, 4)], inits)
            case("qlinear_pool", f"QLinearGlobalAveragePool_{TNAME[t]}_last{last}", m,
                 [{"x": qdata(rng, t, shape)}])
        # 1-D spatial and a symbolic spatial size.
        inits = [("xs", scalar(0.1, F32)), ("xz", scalar(ZP[t], t)), ("ys", scalar(0.1, F32)),
                 ("yz", scalar(ZP[t], t))]
        m = model([ms("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"])],
                  [("x", t, [1, 4, "w"])], [("y", t, 3)], inits)
        case("qlinear_pool", f"QLinearGlobalAveragePool_{TNAME[t]}_1d_symbolic", m,
             [{"x": qdata(rng, t, [1, 4, 9])}, {"x": qdata(rng, t, [1, 4, 25])}])


def qlinear_concat_cases():
    rng = np.random.default_rng(4)
    for t in (U8, I8):
        for axis in (1, -1):
            sh = [[2, 3, 4], [2, 5, 4], [2, 1, 4]] if axis == 1 else [[2, 3, 4], [2, 3, 2], [2, 3, 5]]
            inits = [("ys", scalar(0.05, F32)), ("yz", scalar(ZP[t], t)),
                     ("s0", scalar(0.05, F32)), ("z0", scalar(ZP[t], t)),  # Y's parameters
                     ("s1", scalar(0.2, F32)), ("z1", scalar(ZP[t] - 9, t)),
                     ("s2", scalar(0.013, F32)), ("z2", scalar(ZP[t] + 11, t))]
            m = model([ms("QLinearConcat", ["ys", "yz", "x0", "s0", "z0", "x1", "s1", "z1",
                                            "x2", "s2", "z2"], axis=axis)],
                      [("x0", t, sh[0]), ("x1", t, sh[1]), ("x2", t, sh[2])], [("y", t, 3)], inits)
            case("qlinear_concat", f"QLinearConcat_{TNAME[t]}_axis{axis}", m,
                 [{f"x{i}": qdata(rng, t, s) for i, s in enumerate(sh)}])


def qgemm_cases():
    rng = np.random.default_rng(5)
    M, K, N = 5, 12, 7
    for ta_t, tb_t in ((U8, I8), (I8, I8), (U8, U8)):
        for ta, tb in ((0, 0), (0, 1), (1, 1)):
            for out in ("float", "quant"):
                for per_col in (0, 1):
                    for bias in (0, 1):
                        if per_col and (ta, tb) == (1, 1):
                            continue
                        name = f"QGemm_{TNAME[ta_t]}{TNAME[tb_t]}_t{ta}{tb}_{out}" \
                               f"{'_percol' if per_col else ''}{'_bias' if bias else ''}"
                        bzs = (rng.integers(-3, 4, N) + (128 if tb_t == U8 else 0)).astype(NP[tb_t])
                        inits = [("as", scalar(0.03, F32)), ("az", scalar(ZP[ta_t], ta_t)),
                                 ("bs", rng.uniform(0.005, 0.02, N).astype(np.float32) if per_col
                                  else scalar(0.01, F32)),
                                 ("bz", bzs if per_col else scalar(ZP[tb_t] if tb_t == U8 else 0, tb_t)),
                                 ("c", rng.integers(-2000, 2000, [N]).astype(np.int32))]
                        ins = ["a", "as", "az", "b", "bs", "bz", "c" if bias else ""]
                        yt = F32
                        if out == "quant":
                            yt = ta_t
                            inits += [("ys", scalar(0.05, F32)), ("yz", scalar(ZP[ta_t], ta_t))]
                            ins += ["ys", "yz"]
                        a_sh = [K, M] if ta else [M, K]
                        b_sh = [N, K] if tb else [K, N]
                        m = model([ms("QGemm", ins, transA=ta, transB=tb, alpha=0.75)],
                                  [("a", ta_t, a_sh), ("b", tb_t, b_sh)], [("y", yt, 2)], inits)
                        case("qgemm", name, m, [{"a": qdata(rng, ta_t, a_sh),
                                                 "b": qdata(rng, tb_t, b_sh)}])


# ---- quantize_dynamic ops --------------------------------------------------------------------
def dynamic_matmul_cases():
    rng = np.random.default_rng(6)
    K, N = 16, 9
    for bt in (I8, U8):
        for per_col in (0, 1):
            for bias in (0, 1):
                bs = rng.uniform(0.005, 0.02, N).astype(np.float32) if per_col else scalar(0.01, F32)
                bz = ((rng.integers(-3, 4, N) + (128 if bt == U8 else 0)).astype(NP[bt]) if per_col
                      else scalar(ZP[bt] if bt == U8 else 0, bt))
                inits = [("bs", bs), ("bz", bz), ("bias", rng.standard_normal(N).astype(np.float32))]
                ins = ["a", "b", "bs", "bz"] + (["bias"] if bias else [])
                tag = f"{TNAME[bt]}{'_percol' if per_col else ''}{'_bias' if bias else ''}"
                m = model([ms("DynamicQuantizeMatMul", ins)], [("a", F32, ["n", "s", K]), ("b", bt, [K, N])],
                          [("y", F32, 3)], inits)
                case("dynamic_matmul", f"DynamicQuantizeMatMul_{tag}", m,
                     [{"a": rng.standard_normal([2, 3, K]).astype(np.float32), "b": qdata(rng, bt, [K, N])},
                      {"a": rng.uniform(0.1, 2, [1, 4, K]).astype(np.float32), "b": qdata(rng, bt, [K, N])}])
                for at in (U8, I8):
                    if at == I8 and bt == U8:  # onnxruntime 1.32 has no int8 x uint8 kernel
                        continue
                    inits2 = [("as", scalar(0.02, F32)), ("az", scalar(ZP[at], at))] + inits
                    ins2 = ["a", "b", "as", "bs", "az", "bz"] + (["bias"] if bias else [])
                    m2 = model([ms("MatMulIntegerToFloat", ins2)], [("a", at, [2, 3, K]), ("b", bt, [K, N])],
                               [("y", F32, 3)], inits2)
                    case("dynamic_matmul", f"MatMulIntegerToFloat_{TNAME[at]}_{tag}", m2,
                         [{"a": qdata(rng, at, [2, 3, K]), "b": qdata(rng, bt, [K, N])}])


def lstm_cases():
    # DynamicQuantizeLSTM as quantize_dynamic writes it (W [dirs, input, 4H], R [dirs, H, 4H], 8-bit
    # per tensor or per gate row), every direction, with and without the optional inputs.
    rng = np.random.default_rng(8)
    I, H = 6, 5

    def quant(w, t, per_row):  # w [dirs, K, 4H] float -> (q, scale, zero point)
        axes = (1,) if per_row else (1, 2)
        lo = np.minimum(w.min(axis=axes, keepdims=True), 0)
        hi = np.maximum(w.max(axis=axes, keepdims=True), 0)
        if t == I8 or per_row:  # onnxruntime takes per-row uint8 only with one zero point
            scale = np.maximum(np.abs(lo), hi) / 127
            zp = np.zeros_like(scale) + (128 if t == U8 else 0)
        else:
            scale = (hi - lo) / 255
            zp = np.round(-lo / scale)
        info = np.iinfo(NP[t])
        q = np.clip(np.round(w / scale) + zp, info.min, info.max).astype(NP[t])
        squeeze = (lambda a: a.reshape(a.shape[0], -1)) if per_row else (lambda a: a.reshape(-1))
        return q, squeeze(scale).astype(np.float32), squeeze(zp).astype(NP[t])

    for direction in ("forward", "reverse", "bidirectional"):
        D = 2 if direction == "bidirectional" else 1
        for t in (I8, U8):
            for per_row in (0, 1):
                for opt in (0, 1):
                    W, ws, wz = quant(rng.standard_normal([D, I, 4 * H]).astype(np.float32) * 0.5, t, per_row)
                    R, rs, rz = quant(rng.standard_normal([D, H, 4 * H]).astype(np.float32) * 0.5, t, per_row)
                    inits = [("W", W), ("R", R), ("ws", ws), ("wz", wz), ("rs", rs), ("rz", rz)]
                    ins = ["x", "W", "R", "", "", "", "", "", "ws", "wz", "rs", "rz"]
                    inputs = [("x", F32, ["s", "b", I])]
                    if opt:
                        inits.append(("B", rng.standard_normal([D, 8 * H]).astype(np.float32) * 0.1))
                        inits.append(("P", rng.standard_normal([D, 3 * H]).astype(np.float32) * 0.1))
                        ins[3], ins[7] = "B", "P"
                        ins[5], ins[6] = "h0", "c0"
                        inputs += [("h0", F32, [D, "b", H]), ("c0", F32, [D, "b", H])]
                    node = ms("DynamicQuantizeLSTM", ins, ["y", "yh", "yc"], hidden_size=H,
                              direction=direction)
                    m = model([node], inputs, [("y", F32, 4), ("yh", F32, 3), ("yc", F32, 3)], inits)

                    def feeds(S, B, opt=opt, D=D):
                        f = {"x": rng.standard_normal([S, B, I]).astype(np.float32)}
                        if opt:
                            f["h0"] = rng.standard_normal([D, B, H]).astype(np.float32) * 0.5
                            f["c0"] = rng.standard_normal([D, B, H]).astype(np.float32) * 0.5
                        return f
                    case("lstm", f"DynamicQuantizeLSTM_{direction}_{TNAME[t]}"
                                 f"{'_perrow' if per_row else ''}{'_bias_peep_init' if opt else ''}",
                         m, [feeds(4, 1), feeds(7, 3)])


# ---- MatMulNBits (MatMulNBitsQuantizer) ------------------------------------------------------
def pack_bits(vals, bits):
    """vals: [..., L] small ints -> [..., ceil(L * bits / 8)] uint8, low bits first."""
    per = 8 // bits
    L = vals.shape[-1]
    pad = (-L) % per
    v = np.concatenate([vals, np.zeros(vals.shape[:-1] + (pad,), vals.dtype)], -1).astype(np.uint8)
    v = v.reshape(vals.shape[:-1] + (-1, per))
    out = np.zeros(v.shape[:-1], np.uint8)
    for i in range(per):
        out |= (v[..., i] << (i * bits)).astype(np.uint8)
    return out


def nbits_cases():
    rng = np.random.default_rng(7)
    for bits in (4, 8):
        for K, N, bs in ((64, 24, 32), (256, 16, 128), (80, 12, 32), (128, 10, 16)):
            if bits == 8 and bs not in (32, 128):
                continue
            blocks = (K + bs - 1) // bs
            q = rng.integers(0, 2 ** bits, [N, blocks * bs])
            q[:, K:] = 0
            B = pack_bits(q.reshape(N, blocks, bs), bits)
            scales = rng.uniform(0.01, 0.1, [N * blocks]).astype(np.float32)
            zps = rng.integers(0, 2 ** bits, [N, blocks])
            for zp in (0, 1):
                for bias in (0, 1):
                    inits = [("B", B), ("scales", scales)]
                    ins = ["a", "B", "scales"]
                    if zp:
                        inits.append(("zp", pack_bits(zps, bits)))
                        ins.append("zp")
                    if bias:
                        inits.append(("bias", rng.standard_normal(N).astype(np.float32)))
                        ins += [""] * (5 - len(ins)) + ["bias"]
                    m = model([ms("MatMulNBits", ins, K=K, N=N, bits=bits, block_size=bs)],
                              [("a", F32, ["n", "s", K])], [("y", F32, 3)], inits, opset=21)
                    case("nbits", f"MatMulNBits_b{bits}_K{K}_N{N}_bs{bs}{'_zp' if zp else ''}"
                                  f"{'_bias' if bias else ''}", m,
                         [{"a": rng.standard_normal([1, 1, K]).astype(np.float32)},
                          {"a": rng.standard_normal([2, 5, K]).astype(np.float32)}])


# ---- quantize_dynamic on an optimized transformer: QAttention, QEmbedLayerNormalization ------
def qattention_cases():
    rng = np.random.default_rng(9)
    hin, heads, head = 12, 2, 4
    d = heads * head
    for xt, wt in ((U8, I8), (U8, U8)):  # onnxruntime 1.32 has no int8-input QAttention kernel
        for per_col in (0, 1):
            for extra in ("", "mask", "past", "unidir"):
                if per_col and extra:
                    continue
                ws = rng.uniform(0.005, 0.02, 3 * d).astype(np.float32) if per_col \
                    else scalar(0.01, F32)
                wz = ((rng.integers(-2, 3, 3 * d) + (128 if wt == U8 else 0)).astype(NP[wt])
                      if per_col else scalar(ZP[wt] if wt == U8 else 1, wt))
                inits = [("w", qdata(rng, wt, [hin, 3 * d])),
                         ("bias", rng.standard_normal(3 * d).astype(np.float32)),
                         ("xs", scalar(0.03, F32)), ("ws", ws), ("xz", scalar(ZP[xt], xt)),
                         ("wz", wz)]
                ins = ["x", "w", "bias", "xs", "ws", "mask" if extra == "mask" else "", "xz", "wz"]
                inputs = [("x", xt, ["b", "s", hin])]
                outs = [("y", F32, 3)]
                attrs = {"num_heads": heads}
                if extra == "mask":
                    inputs.append(("mask", I32, ["b", "s"]))
                if extra == "past":
                    ins.append("past")
                    inputs.append(("past", F32, [2, "b", heads, "p", head]))
                    outs.append(("present", F32, 5))
                if extra == "unidir":
                    attrs["unidirectional"] = 1
                node = ms("QAttention", ins, [o[0] for o in outs], **attrs)
                m = model([node], inputs, outs, inits)
                tag = f"{TNAME[xt]}{TNAME[wt]}{'_percol' if per_col else ''}{'_' + extra if extra else ''}"
                runs = []
                for b, sl in ((2, 3), (1, 5)):
                    f = {"x": qdata(rng, xt, [b, sl, hin])}
                    if extra == "mask":
                        f["mask"] = np.ones([b, sl], np.int32)
                        f["mask"][0, -1] = 0
                    if extra == "past":
                        f["past"] = rng.standard_normal([2, b, heads, 2, head]).astype(np.float32)
                    runs.append(f)
                case("qattention", f"QAttention_{tag}", m, runs)


def qembed_cases():
    rng = np.random.default_rng(10)
    vocab, maxpos, hidden = 20, 16, 8
    for t in (U8, I8):
        for seg in (0, 1):
            for mask in (0, 1):
                tables = {"word": [vocab, hidden], "pos": [maxpos, hidden]}
                if seg:
                    tables["seg"] = [2, hidden]
                inits = []
                for k, sh in list(tables.items()) + [("gamma", [hidden]), ("beta", [hidden])]:
                    inits += [(k, qdata(rng, t, sh)), (k + "_s", scalar(rng.uniform(0.01, 0.05), F32)),
                              (k + "_z", scalar(ZP[t] + int(rng.integers(-2, 3)), t))]
                ins = ["ids", "segs" if seg else "", "word", "pos", "seg" if seg else "", "gamma",
                       "beta", "mask" if mask else "", "word_s", "pos_s", "seg_s" if seg else "",
                       "gamma_s", "beta_s", "word_z", "pos_z", "seg_z" if seg else "", "gamma_z",
                       "beta_z"]
                inputs = [("ids", I32, ["b", "s"])]
                if seg:
                    inputs.append(("segs", I32, ["b", "s"]))
                if mask:
                    inputs.append(("mask", I32, ["b", "s"]))
                m = model([ms("QEmbedLayerNormalization", ins, ["y", "mask_index"], epsilon=1e-5)],
                          inputs, [("y", F32, 3), ("mask_index", I32, 1)], inits)
                runs = []
                for b, sl in ((2, 5), (1, 9)):
                    f = {"ids": rng.integers(0, vocab, [b, sl]).astype(np.int32)}
                    if seg:
                        f["segs"] = rng.integers(0, 2, [b, sl]).astype(np.int32)
                    if mask:
                        f["mask"] = (rng.random([b, sl]) < 0.8).astype(np.int32)
                    runs.append(f)
                tag = f"{TNAME[t]}{'_seg' if seg else ''}{'_mask' if mask else ''}"
                case("qembed", f"QEmbedLayerNormalization_{tag}", m, runs)


# ---- unsupported forms: a clear error naming node and op --------------------------------------
def error_cases():
    m = model([ms("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"])],
              [("a", U8, [2, 3]), ("b", U8, [2, 3])], [("y", U8, 2)],
              [("as", np.array([0.1, 0.2, 0.3], np.float32)), ("az", scalar(1, U8)),
               ("bs", scalar(0.1, F32)), ("bz", scalar(1, U8)), ("cs", scalar(0.1, F32)),
               ("cz", scalar(1, U8))])
    ERRORS.append(("QLinearAdd_per_channel_scale", m,
                   r"error: .*QLinearAdd 'qlinearadd0'.*A_scale must be a scalar"))
    m = model([ms("MatMulNBits", ["a", "B", "scales"], K=16, N=4, bits=3, block_size=16)],
              [("a", F32, [1, 16]), ("B", U8, [4, 1, 6]), ("scales", F32, [4])], [("y", F32, 2)])
    ERRORS.append(("MatMulNBits_bits3", m, r"error: .*MatMulNBits 'matmulnbits0'.*'bits' = 3"))
    m = model([ms("MatMulNBits", ["a", "B", "scales"], K=16, N=4, bits=4, block_size=16)],
              [("a", F32, [1, 16]), ("B", U8, [4, 1, 8]), ("scales", F32, [4])], [("y", F32, 2)])
    ERRORS.append(("MatMulNBits_runtime_weight", m,
                   r"error: .*MatMulNBits 'matmulnbits0'.*B must be an initializer"))
    m = model([ms("QAttention", ["x", "w", "bias", "xs", "ws"], num_heads=2)],
              [("x", U8, [1, 3, 4]), ("w", I8, [4, 24])], [("y", F32, 3)],
              [("bias", np.zeros(24, np.float32)), ("xs", np.full(24, 0.1, np.float32)),
               ("ws", scalar(0.1, F32))])
    ERRORS.append(("QAttention_per_column_input_scale", m,
                   r"error: .*QAttention 'qattention0'.*input_scale must be a scalar"))


FAMILIES = {"qlinear_binary": qlinear_binary_cases, "qlinear_unary": qlinear_unary_cases,
            "qlinear_pool": qlinear_pool_cases, "qlinear_concat": qlinear_concat_cases,
            "qgemm": qgemm_cases, "dynamic_matmul": dynamic_matmul_cases, "lstm": lstm_cases,
            "nbits": nbits_cases, "qattention": qattention_cases, "qembed": qembed_cases,
            "errors": error_cases}


def compare_output(got, ref, tol):
    """Quantized outputs: within one step; float outputs: compare.compare with `tol`."""
    if ref.dtype in (np.uint8, np.int8):
        if got.shape != ref.shape or got.dtype != ref.dtype:
            return False, f"shape/dtype {got.shape} {got.dtype} vs reference {ref.shape} {ref.dtype}"
        d = np.abs(got.astype(np.int32) - ref.astype(np.int32))
        worst = int(d.max()) if d.size else 0
        msg = f"max step diff {worst}, {int(np.sum(d > 0))}/{d.size} off by one"
        return worst <= 1, msg
    return compare.compare(got, ref, *tol)


def run_case(relaxc, work, name, m, runs, tol):
    d, path, so, p = save_and_compile(relaxc, work, name, m)
    if p.returncode != 0:
        return False, f"compile exit {p.returncode}: {(p.stderr or p.stdout).strip()[:400]}"
    msgs = []
    for k, feeds in enumerate(runs):
        try:
            names, refs = ort_run(path, feeds)
        except Exception as e:  # noqa: BLE001 (the reference itself failed: report the case)
            return False, f"the reference failed: {str(e)[:300]}"
        err = relaxc_run(relaxc, d, so, k, feeds)
        if err:
            return False, err
        for n, ref in zip(names, refs):
            got = np.load(os.path.join(d, f"out{k}", n + ".npy"))
            ok, msg = compare_output(got, ref, tol)
            if not ok:
                return False, f"run {k} output {n}: {msg}"
            msgs.append(f"{n}: {msg}")
    return True, "; ".join(msgs)


def run_error_case(relaxc, work, name, m, expect):
    import re
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    p = subprocess.run([relaxc, "compile", path, "-o", os.path.join(d, "model.so")],
                       capture_output=True, text=True)
    text = (p.stderr + p.stdout).strip()
    if p.returncode != 1 or not re.search(expect, text):
        return False, f"expected exit 1 with /{expect}/, got exit {p.returncode}: {text[:300]}"
    return True, text.splitlines()[0][:200]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default=None, help="only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case's result")
    ap.add_argument("families", nargs="*", default=sorted(FAMILIES))
    args = ap.parse_args()
    for f in args.families:
        FAMILIES[f]()
    passed = failed = 0
    results = [(f"errors/{n}", lambda n=n, m=m, e=e: run_error_case(
        args.relaxc, os.path.join(args.work, "errors"), n, m, e)) for n, m, e in ERRORS]
    for fam in args.families:
        for name, m, runs, tol in CASES.get(fam, []):
            results.append((f"{fam}/{name}", lambda name=name, m=m, runs=runs, tol=tol, fam=fam:
                            run_case(args.relaxc, os.path.join(args.work, fam), name, m, runs, tol)))
    for label, fn in results:
        if args.filter and args.filter not in label:
            continue
        ok, msg = fn()
        passed += ok
        failed += not ok
        if not ok or args.verbose:
            print(f"{'ok  ' if ok else 'FAIL'} {label}: {msg}", flush=True)
    print(f"contrib quant cases: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

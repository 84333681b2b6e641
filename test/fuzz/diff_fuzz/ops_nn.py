"""Neural-network ops: matmuls, convolutions, pooling, normalizations, quantization, Einsum,
Det. Their inputs are fresh graph inputs or the newest value of a fitting rank."""
import numpy as np

import dtypes
import values
from dtypes import TP
from graph import Reject
from registry import op


def nonneg(dt):
    return lambda rng, s, run: values.random_array(rng, dt, s, None, 0.05, 2.0)


@op("MatMul", "matmul")
def build_matmul(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    a = ctx.pick(dt, min_rank=1, max_rank=4, pred=lambda v: ctx.gb.static(v.shape[-1]) is not None)
    k = a.shape[-1]
    if len(a.shape) == 1 or ctx.coin(0.2):
        shape = [k]
    else:
        batch = ctx.bcast_shape(a.shape[:-2]) if ctx.coin(0.7) else []
        shape = batch + [k, ctx.r(1, 5)]
    ctx.node([a, ctx.new(dt, shape)])


@op("Gemm", "matmul")
def build_gemm(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    m, k, n = ctx.r(1, 5), ctx.r(1, 5), ctx.r(1, 5)
    ta, tb = ctx.r(0, 1), ctx.r(0, 1)
    gb = ctx.gb
    mm = ctx.choice([s for s, v in gb.sym.items()]) if gb.sym and ctx.coin(0.4) else m
    a = ctx.new(dt, [k, mm] if ta else [mm, k])
    b = ctx.new(dt, [n, k] if tb else [k, n])
    ins = [a, b]
    if ctx.coin(0.7):
        ins.append(ctx.new(dt, ctx.choice([[n], [1], [], [1, n], [mm, n], [mm, 1]])))
    attrs = {}
    for key, val in (("transA", ta), ("transB", tb)):
        if val or ctx.coin(0.3):
            attrs[key] = val
    if ctx.coin(0.4):
        attrs["alpha"] = ctx.u(-2, 2)
    if ctx.coin(0.4):
        attrs["beta"] = ctx.u(-2, 2)
    ctx.node(ins, attrs=attrs)


def zero_point(ctx, dt, shape):
    return ctx.const(values.random_array(ctx.rng, dt, shape, False, -3, 4), dt)


@op("MatMulInteger", "quant")
def build_matmul_integer(ctx):
    t1, t2 = ctx.choice(ctx.types("T1")), ctx.choice(ctx.types("T2"))
    m, k, n = ctx.r(1, 4), ctx.r(1, 5), ctx.r(1, 4)
    a, b = ctx.new(t1, [m, k]), ctx.new(t2, [k, n])
    ins = [a, b]
    if ctx.coin(0.6):
        ins += [zero_point(ctx, t1, ctx.choice([[], [m]])),
                zero_point(ctx, t2, ctx.choice([[], [n]])) if ctx.coin(0.7) else None]
        while ins[-1] is None:
            ins.pop()
    ctx.node(ins, exact=True)


@op("QLinearMatMul", "quant")
def build_qlinear_matmul(ctx):
    t1 = ctx.choice([t for t in ctx.types("T1") if t in (TP.INT8, TP.UINT8)])
    t2 = ctx.choice([t for t in ctx.types("T2") if t in (TP.INT8, TP.UINT8)])
    t3 = t1 if ctx.coin() else ctx.choice([t for t in ctx.types("T3") if t in (TP.INT8, TP.UINT8)])
    m, k, n = ctx.r(1, 4), ctx.r(1, 5), ctx.r(1, 4)
    sc = lambda: ctx.const(np.array(ctx.u(0.01, 0.2)), TP.FLOAT)  # noqa: E731
    ins = [ctx.new(t1, [m, k]), sc(), zero_point(ctx, t1, []), ctx.new(t2, [k, n]), sc(),
           zero_point(ctx, t2, []), sc(), zero_point(ctx, t3, [])]
    ctx.node(ins, exact=True)


def conv_geometry(ctx, nsp, transpose=False):
    k = [ctx.r(1, 3) for _ in range(nsp)]
    s = [ctx.r(1, 2) for _ in range(nsp)]
    d = [ctx.r(1, 2) for _ in range(nsp)] if ctx.coin(0.3) else [1] * nsp
    attrs = {"kernel_shape": k}
    if ctx.coin(0.6):
        attrs["strides"] = s
    else:
        s = [1] * nsp
    if ctx.coin(0.3):
        attrs["dilations"] = d
    else:
        d = [1] * nsp
    pads = [0] * (2 * nsp)
    if ctx.coin(0.3):
        attrs["auto_pad"] = ctx.choice(["SAME_UPPER", "SAME_LOWER", "VALID"] +
                                       (["NOTSET"] if not transpose else []))
    elif ctx.coin(0.5):
        pads = [ctx.r(0, max(0, (k[i % nsp] - 1) * d[i % nsp])) for i in range(2 * nsp)]
        attrs["pads"] = pads
    ext = [(k[i] - 1) * d[i] + 1 for i in range(nsp)]
    return attrs, k, s, d, pads, ext


def spatial_input(ctx, dt, n, c, ext, pads, min_extra=0):
    gb = ctx.gb
    sp = []
    for i, e in enumerate(ext):
        need = max(1, e - pads[i] - pads[i + len(ext)]) + min_extra
        syms = [s for s, v in gb.sym.items() if min(v) >= need]
        sp.append(ctx.choice(syms) if syms and ctx.coin(0.3) else ctx.r(need, need + 4))
    return ctx.new(dt, [n, c] + sp)


@op("Conv", "conv")
def build_conv(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    nsp = ctx.choice([1, 2, 2, 3])
    attrs, k, s, d, pads, ext = conv_geometry(ctx, nsp)
    g = ctx.choice([1, 1, 2, 3])
    if g > 1:
        attrs["group"] = g
    cin, cout = g * ctx.r(1, 2), g * ctx.r(1, 2)
    x = spatial_input(ctx, dt, ctx.r(1, 2), cin, ext, pads)
    w = ctx.new(dt, [cout, cin // g] + k)
    ins = [x, w] + ([ctx.new(dt, [cout])] if ctx.coin(0.6) else [])
    if ctx.coin(0.5):
        del attrs["kernel_shape"]
    ctx.node(ins, attrs=attrs)


@op("ConvTranspose", "conv")
def build_conv_transpose(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    nsp = ctx.choice([1, 2, 2, 3])
    attrs, k, s, d, pads, ext = conv_geometry(ctx, nsp, transpose=True)
    if attrs.get("auto_pad", "").startswith("SAME"):
        # the spec's SAME output is input * stride; onnxruntime 1.32 and onnx 1.16's shape
        # inference give (input - 1) * stride + kernel: not generated
        attrs["auto_pad"] = "VALID"
    g = ctx.choice([1, 1, 2])
    if g > 1:
        attrs["group"] = g
    if "auto_pad" in attrs:
        attrs.pop("pads", None)
    cin, cout = g * ctx.r(1, 2), g * ctx.r(1, 2)
    x = ctx.new(dt, [ctx.r(1, 2), cin] + [ctx.r(1, 4) for _ in range(nsp)])
    w = ctx.new(dt, [cin, cout // g] + k)
    if ctx.coin(0.3) and "auto_pad" not in attrs:
        attrs["output_padding"] = [ctx.r(0, max(0, min(s[i], d[i]) - 1)) for i in range(nsp)]
    ins = [x, w] + ([ctx.new(dt, [cout])] if ctx.coin(0.5) else [])
    ctx.node(ins, attrs=attrs)


@op("ConvInteger", "quant")
def build_conv_integer(ctx):
    t1, t2 = ctx.choice(ctx.types("T1")), ctx.choice(ctx.types("T2"))
    attrs, k, s, d, pads, ext = conv_geometry(ctx, 2)
    cin, cout = ctx.r(1, 2), ctx.r(1, 2)
    x = spatial_input(ctx, t1, 1, cin, ext, pads)
    ins = [x, ctx.new(t2, [cout, cin] + k)]
    if ctx.coin(0.6):
        ins += [zero_point(ctx, t1, [])]
        if ctx.coin():
            ins.append(zero_point(ctx, t2, ctx.choice([[], [cout]])))
    ctx.node(ins, attrs=attrs, exact=True)


@op("QLinearConv", "quant")
def build_qlinear_conv(ctx):
    t1 = ctx.choice([t for t in ctx.types("T1") if t in (TP.INT8, TP.UINT8)])
    t2 = ctx.choice([t for t in ctx.types("T2") if t in (TP.INT8, TP.UINT8)])
    t3 = ctx.choice([t for t in ctx.types("T3") if t in (TP.INT8, TP.UINT8)])
    attrs, k, s, d, pads, ext = conv_geometry(ctx, 2)
    cin, cout = ctx.r(1, 2), ctx.r(1, 2)
    sc = lambda shape=(): ctx.const(np.full(shape, ctx.u(0.01, 0.2)), TP.FLOAT)  # noqa: E731
    x = spatial_input(ctx, t1, 1, cin, ext, pads)
    ins = [x, sc(), zero_point(ctx, t1, []), ctx.new(t2, [cout, cin] + k), sc(),
           ctx.const(np.zeros((), dtypes.np_type(t2))) if t2 == TP.INT8 else zero_point(ctx, t2, []),
           sc(), zero_point(ctx, t3, [])]
    if ctx.coin(0.5):
        ins.append(ctx.const(ctx.rng.integers(-50, 50, [cout]), TP.INT32))
    ctx.node(ins, attrs=attrs, exact=True)


def pool(name):
    @op(name, "pool")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        nsp = ctx.choice([1, 2, 2, 3])
        attrs, k, s, d, pads, ext = conv_geometry(ctx, nsp)
        dil_ok = name == "MaxPool" or (name == "AveragePool" and ctx.opset >= 19) or \
            (name == "LpPool" and ctx.opset >= 18)
        if not dil_ok and "dilations" in attrs:
            del attrs["dilations"]
            d = [1] * nsp
        ext = [(k[i] - 1) * d[i] + 1 for i in range(nsp)]
        pads = attrs.get("pads", [0] * 2 * nsp)
        if "pads" in attrs:  # pads must be smaller than the kernel
            pads = [min(p, k[i % nsp] - 1) for i, p in enumerate(pads)]
            attrs["pads"] = pads
        auto = attrs.get("auto_pad", "NOTSET") != "NOTSET"
        # not with SAME_* / VALID: onnx 1.16's shape inference applies ceil_mode on top of the
        # auto_pad size, onnxruntime does not
        if name in ("MaxPool", "AveragePool") and ctx.coin(0.3) and ctx.opset >= 10 and not auto:
            attrs["ceil_mode"] = 1
        if name == "AveragePool" and ctx.coin(0.4):
            attrs["count_include_pad"] = ctx.r(0, 1)
        if name == "LpPool" and ctx.coin():
            attrs["p"] = ctx.r(1, 3)
        if name == "MaxPool" and ctx.coin(0.3) and ctx.opset >= 12:
            attrs["storage_order"] = 0
        x = spatial_input(ctx, dt, ctx.r(1, 2), ctx.r(1, 3), ext, pads)
        if attrs.get("ceil_mode"):
            # A last window that ceil_mode would start in the end padding: onnxruntime (and
            # PyTorch) drop it, onnx 1.16's shape inference counts it, so the declared output
            # shape would be wrong: not generated.
            for i in range(nsp):
                for size in ctx.gb.sizes(x.shape[2 + i])[:ctx.gb.runs]:
                    span = size + pads[i] + pads[i + nsp] - ext[i]
                    if span >= 0 and (-(-span // s[i])) * s[i] >= size + pads[i]:
                        raise Reject("ceil-mode window starting in the padding")
        nout = 2 if name == "MaxPool" and ctx.coin(0.3) and dt != TP.INT8 and dt != TP.UINT8 \
            else 1
        ctx.node([x], n_out=nout, attrs=attrs, exact=True if name == "MaxPool" else None)
    return build


for _n in ["MaxPool", "AveragePool", "LpPool"]:
    pool(_n)


def global_pool(name):
    @op(name, "pool")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        x = ctx.pick(dt, min_rank=3, max_rank=5, min_dim=1)
        attrs = {"p": ctx.r(1, 3)} if name == "GlobalLpPool" and ctx.coin() else {}
        ctx.node([x], attrs=attrs, exact=True if name == "GlobalMaxPool" else None)
    return build


for _n in ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"]:
    global_pool(_n)


@op("BatchNormalization", "norm")
def build_batchnorm(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=2, max_rank=4, min_dim=1,
                 pred=lambda v: ctx.gb.static(v.shape[1]) is not None)
    c = ctx.gb.static(x.shape[1])
    t1 = ctx.choice(ctx.types("T1")) if ctx.opset >= 15 else dt
    t2 = ctx.choice(ctx.types("T2")) if ctx.opset >= 15 else dt
    ins = [x, ctx.new(t1, [c]), ctx.new(t1, [c]), ctx.new(t2, [c]), ctx.new(t2, [c], nonneg(t2))]
    attrs = {"epsilon": ctx.u(1e-5, 0.1)} if ctx.coin() else {}
    ctx.node(ins, attrs=attrs)


@op("InstanceNormalization", "norm")
def build_instancenorm(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=3, max_rank=4, min_dim=1,
                 pred=lambda v: ctx.gb.static(v.shape[1]) is not None)
    c = ctx.gb.static(x.shape[1])
    attrs = {"epsilon": ctx.u(1e-5, 0.1)} if ctx.coin() else {}
    ctx.node([x, ctx.new(dt, [c]), ctx.new(dt, [c])], attrs=attrs)


@op("LayerNormalization", "norm")
def build_layernorm(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, max_rank=4, min_dim=1)
    r = len(x.shape)
    ax = ctx.r(-r, r - 1)
    tail = x.shape[ax % r:]
    sshape = tail if ctx.coin(0.7) else ctx.bcast_shape(tail)
    ins = [x, ctx.new(dt, sshape)] + ([ctx.new(dt, sshape)] if ctx.coin(0.6) else [])
    attrs = {"axis": ax} if ctx.coin(0.8) else {}
    if ctx.coin(0.4):
        attrs["epsilon"] = ctx.u(1e-5, 0.1)
    ctx.node(ins, n_out=ctx.choice([1, 1, 3]), attrs=attrs)


@op("GroupNormalization", "norm")
def build_groupnorm(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    g = ctx.r(1, 3)
    c = g * ctx.r(1, 2)
    x = ctx.new(dt, [ctx.r(1, 2), c] + ctx.gb.random_shape(min_rank=1, max_rank=2, min_dim=1))
    pshape = [c] if ctx.opset >= 21 else [g]
    attrs = {"num_groups": g}
    if ctx.coin(0.4):
        attrs["epsilon"] = ctx.u(1e-5, 0.1)
    ctx.node([x, ctx.new(dt, pshape), ctx.new(dt, pshape)], attrs=attrs)


@op("LRN", "norm")
def build_lrn(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=3, max_rank=4, min_dim=1)
    attrs = {"size": ctx.r(1, 5)}
    for key, lo, hi in (("alpha", 1e-5, 0.5), ("beta", 0.2, 1.0), ("bias", 0.5, 2.0)):
        if ctx.coin():
            attrs[key] = ctx.u(lo, hi)
    ctx.node([x], attrs=attrs)


@op("QuantizeLinear", "quant")
def build_quantize(ctx):
    xt = ctx.dtype(ctx.types("T1"))
    yt = ctx.choice([t for t in ctx.types("T2") if t in dtypes.ALL]) if ctx.coin(0.8) \
        else TP.UINT8
    x = ctx.pick(xt, min_rank=1, exact=True)
    r = len(x.shape)
    attrs, sshape = {}, []
    if ctx.coin(0.4) and ctx.gb.static(x.shape[1 % r]) is not None:
        ax = ctx.axis(r)
        n = ctx.gb.static(x.shape[ax])
        if n is None:
            raise Reject("per-axis needs a static dim")
        attrs["axis"] = ax
        sshape = [n]
    st = xt if ctx.opset >= 19 and ctx.coin(0.5) else TP.FLOAT
    if ctx.opset < 19:
        st = TP.FLOAT
    if st != xt and ctx.opset >= 19:
        st = xt
    scale = ctx.const(ctx.rng.uniform(0.02, 0.5, sshape), st)
    ins = [x, scale]
    if ctx.coin(0.7) or yt != TP.UINT8:
        ins.append(zero_point(ctx, yt, sshape))
    if ctx.opset >= 19 and ctx.coin(0.2):
        attrs["saturate"] = 1
    ctx.node(ins, attrs=attrs, exact=True)


@op("DequantizeLinear", "quant")
def build_dequantize(ctx):
    xt = ctx.choice([t for t in ctx.types("T1") if t in dtypes.ALL])
    x = ctx.pick(xt, min_rank=1)
    r = len(x.shape)
    attrs, sshape = {}, []
    if ctx.coin(0.4):
        ax = ctx.axis(r)
        n = ctx.gb.static(x.shape[ax])
        if n is None:
            raise Reject("per-axis needs a static dim")
        attrs["axis"] = ax
        sshape = [n]
    st = ctx.choice([t for t in ctx.types("T2") if t in dtypes.ALL]) if ctx.opset >= 19 \
        else TP.FLOAT
    ins = [x, ctx.const(ctx.rng.uniform(0.02, 0.5, sshape), st)]
    if ctx.coin(0.7) and xt != TP.INT32:
        ins.append(zero_point(ctx, xt, sshape))
    ctx.node(ins, attrs=attrs)


@op("DynamicQuantizeLinear", "quant")
def build_dynamic_quantize(ctx):
    # not empty: the scale and zero point of an empty tensor (min / max of nothing) are
    # undefined (onnxruntime gives scale 1, onnx.reference fails)
    x = ctx.pick(TP.FLOAT, exact=True, min_dim=1,
                 gen=lambda rng, s, run: values.random_array(rng, TP.FLOAT, s, False))
    ctx.node([x], n_out=3)


@op("Det", "matmul")
def build_det(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n = ctx.r(1, 4)
    batch = ctx.gb.random_shape(max_rank=2, max_dim=3)
    x = ctx.new(dt, batch + [n, n], lambda rng, s, run: values.random_array(rng, dt, s, False))
    ctx.node([x])


EINSUM = ["ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->ji", "ij->", "i,i->", "ij,j->i", "i,j->ij",
          "bhqd,bhkd->bhqk", "ijk->kji", "ij,ij->ij", "...ij,...jk->...ik", "ij->i", "ab,cb->ac",
          "iij->ij"]


@op("Einsum", "matmul")
def build_einsum(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    eq = ctx.choice(EINSUM)
    lhs = eq.split("->")[0].split(",")
    size = {ch: ctx.r(1, 4) for ch in "abcdhijkq"}
    ell = [ctx.r(1, 3) for _ in range(ctx.r(0, 2))]
    ins = []
    for term in lhs:
        shape = ell[:] if term.startswith("...") else []
        shape += [size[ch] for ch in term.replace("...", "")]
        ins.append(ctx.new(dt, shape))
    ctx.node(ins, attrs={"equation": eq})

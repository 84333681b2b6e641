"""Data movement and shape ops: Reshape, Transpose, Flatten, (Un)Squeeze, Concat, Split, Slice,
Expand, Tile, Pad, Shape, Size, Identity-like Dropout, Constant(OfShape), Range, EyeLike, Trilu,
DepthToSpace/SpaceToDepth, CenterCropPad. Index values are drawn inside every run's dims."""
import numpy as np
import onnx
from onnx import numpy_helper

import dtypes
import values
from dtypes import TP
from graph import Reject
from registry import op


def static_known(ctx):
    return lambda v: all(ctx.gb.static(d) is not None for d in v.shape)


def factorize(ctx, n, parts):
    """n as a product of `parts` positive factors (random)."""
    out = []
    for _ in range(parts - 1):
        divs = [d for d in range(1, n + 1) if n % d == 0] if n > 0 else [1]
        f = ctx.choice(divs)
        out.append(f)
        n = n // f if f else n
    out.append(n)
    ctx.rng.shuffle(out)
    return out


@op("Reshape", "movement")
def build_reshape(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt)
    gb = ctx.gb
    sym_idx = [k for k, d in enumerate(x.shape) if gb.static(d) is None]
    p = (max(sym_idx) + 1) if sym_idx else ctx.r(0, len(x.shape))
    tail = [gb.static(d) for d in x.shape[p:]]
    total = int(np.prod(tail)) if tail else 1
    new_tail = factorize(ctx, total, ctx.r(1, 3)) if total > 0 else [0]
    if total > 0 and ctx.coin(0.4):
        new_tail[ctx.r(0, len(new_tail) - 1)] = -1
    attrs = {}
    if sym_idx or ctx.coin(0.3):  # copy the leading dims with 0
        shape = [0] * p + new_tail
    else:
        shape = [gb.static(d) for d in x.shape[:p]] + new_tail
        if ctx.opset >= 14 and ctx.coin(0.3) and 0 not in shape:
            attrs["allowzero"] = 1
    ctx.node([x, ctx.i64(shape)], attrs=attrs, exact=True)


@op("Transpose", "movement")
def build_transpose(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    attrs = {"perm": [int(i) for i in ctx.rng.permutation(len(x.shape))]} if ctx.coin(0.8) \
        else {}
    ctx.node([x], attrs=attrs, exact=True)


@op("Flatten", "movement")
def build_flatten(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    r = len(x.shape)
    ctx.node([x], attrs={"axis": ctx.r(-r, r)} if ctx.coin(0.8) else {}, exact=True)


@op("Squeeze", "movement")
def build_squeeze(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: 1 in v.shape, fresh_p=0.1)
    ones = [k for k, d in enumerate(x.shape) if d == 1]
    if not ones:
        raise Reject("no dim of 1")
    r = len(x.shape)
    axes = sorted(int(a) for a in ctx.rng.choice(ones, ctx.r(1, len(ones)), replace=False))
    axes = [a - r if ctx.coin(0.3) else a for a in axes]
    if ctx.coin(0.15) and all(isinstance(d, int) for d in x.shape):
        ctx.node([x], exact=True)
    elif ctx.opset >= 13:
        ctx.node([x, ctx.i64(axes)], exact=True)
    else:
        ctx.node([x], attrs={"axes": axes}, exact=True)


@op("Unsqueeze", "movement")
def build_unsqueeze(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, max_rank=3)
    k = ctx.r(1, 2)
    out_r = len(x.shape) + k
    axes = sorted(int(a) for a in ctx.rng.choice(out_r, k, replace=False))
    axes = [a - out_r if ctx.coin(0.3) else a for a in axes]
    ctx.node([x, ctx.i64(axes)], exact=True)


@op("Concat", "movement")
def build_concat(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    r = len(x.shape)
    ax = ctx.axis(r)
    ins = [x]
    for _ in range(ctx.r(1, 3)):
        if ctx.coin(0.3):
            ins.append(x)
        else:
            sh = list(x.shape)
            sh[ax] = ctx.r(0 if ctx.coin(0.1) else 1, 4)
            ins.append(ctx.new(dt, sh))
    ctx.rng.shuffle(ins)
    ctx.node(ins, attrs={"axis": ax}, exact=True)


@op("Split", "movement")
def build_split(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: any(ctx.gb.static(d) for d in v.shape))
    cands = [k for k, d in enumerate(x.shape) if ctx.gb.static(d)]
    if not cands:
        raise Reject("no static dim")
    ax = ctx.choice(cands)
    n = ctx.gb.static(x.shape[ax])
    r = len(x.shape)
    attrs = {}
    if ax != 0 or ctx.coin(0.7):
        attrs["axis"] = ax - r if ctx.coin(0.3) else ax
    if ctx.opset >= 18 and ctx.coin(0.4):
        k = ctx.r(1, max(1, min(n, 4)))
        attrs["num_outputs"] = k
        nout = k if n % k == 0 else len(range(0, n, -(-n // k)))
        if nout != k:
            raise Reject("uneven num_outputs")
        ctx.node([x], n_out=k, attrs=attrs, exact=True)
        return
    parts = ctx.r(1, 3)
    cuts = sorted(ctx.rng.integers(0, n + 1, parts - 1).tolist())
    split = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    if ctx.opset >= 13:
        ctx.node([x, ctx.i64(split)], n_out=len(split), attrs=attrs, exact=True)
    else:
        attrs["split"] = split
        ctx.node([x], n_out=len(split), attrs=attrs, exact=True)


@op("Slice", "movement")
def build_slice(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    r = len(x.shape)
    axes = ctx.axes(r, max_k=min(r, 3))
    starts, ends, steps = [], [], []
    for a in axes:
        d = ctx.gb.min_dim(x.shape[a])
        step = ctx.choice([1, 1, 1, 2, 3, -1, -2])
        s = ctx.r(-d - 2, d + 2)
        e = ctx.r(-d - 2, d + 2)
        if ctx.coin(0.15):
            e = ctx.choice([2**63 - 1, -2**63]) if step > 0 else -2**63
        starts.append(s)
        ends.append(e)
        steps.append(step)
    ins = [x, ctx.i64(starts), ctx.i64(ends)]
    if ctx.coin(0.8) or any(s != 1 for s in steps):
        ins.append(ctx.i64(axes))
        if any(s != 1 for s in steps) or ctx.coin(0.5):
            ins.append(ctx.i64(steps))
    elif sorted(a % r for a in axes) != list(range(len(axes))):
        ins.append(ctx.i64(axes))
    ctx.node(ins, exact=True)


@op("Expand", "movement")
def build_expand(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, max_rank=3)
    shape = [d if not isinstance(d, int) else (ctx.r(1, 3) if d == 1 else
                                                 ctx.choice([d, 1])) for d in x.shape]
    shape = [1 if isinstance(d, str) else d for d in shape]
    shape = [ctx.r(1, 3) for _ in range(ctx.r(0, 2))] + shape
    ctx.node([x, ctx.i64(shape)], exact=True)


@op("Tile", "movement")
def build_tile(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    ctx.node([x, ctx.i64([ctx.r(0 if ctx.coin(0.05) else 1, 3) for _ in x.shape])],
             exact=True)


@op("Pad", "movement")
def build_pad(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    modes = ["constant", "reflect", "edge"] + (["wrap"] if ctx.opset >= 19 else [])
    mode = ctx.choice(modes)
    x = ctx.pick(dt, min_rank=1, min_dim=1 if mode != "constant" else 0)
    r = len(x.shape)
    use_axes = ctx.opset >= 18 and ctx.coin(0.3)
    axes = ctx.axes(r) if use_axes else list(range(r))
    pads_b, pads_e = [], []
    for a in axes:
        d = ctx.gb.min_dim(x.shape[a])
        hi = d - 1 if mode == "reflect" else (d if mode == "wrap" else 3)
        lo = -min(d, 2) if mode == "constant" and ctx.coin(0.2) else 0
        pads_b.append(ctx.r(lo, max(lo, min(hi, 3))))
        pads_e.append(ctx.r(lo, max(lo, min(hi, 3))))
    ins = [x, ctx.i64(pads_b + pads_e)]
    if mode == "constant" and ctx.coin(0.5):
        ins.append(ctx.const(np.array(values.random_array(ctx.rng, dt, [], False)), dt))
    elif use_axes:
        ins.append(None)
    if use_axes:
        ins.append(ctx.i64(axes))
    attrs = {"mode": mode} if mode != "constant" or ctx.coin() else {}
    ctx.node(ins, attrs=attrs, exact=True)


@op("Shape", "shape")
def build_shape(ctx):
    x = ctx.pick(ctx.dtype(ctx.input_types(0)))
    attrs = {}
    if ctx.opset >= 15 and ctx.coin(0.4):
        r = len(x.shape)
        attrs["start"] = ctx.r(-r - 1, r + 1)
        if ctx.coin():
            attrs["end"] = ctx.r(-r - 1, r + 1)
    ctx.node([x], attrs=attrs, exact=True)


@op("Size", "shape")
def build_size(ctx):
    ctx.node([ctx.pick(ctx.dtype(ctx.input_types(0)))], exact=True)


@op("Dropout", "unary")
def build_dropout(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt)
    ins = [x]
    if ctx.coin(0.5):
        ins.append(ctx.const(np.array(ctx.u(0.0, 0.9)), ctx.choice(ctx.types("T1"))))
        if ctx.coin(0.5):
            ins.append(ctx.const(np.array(False), TP.BOOL))
    ctx.node(ins, n_out=ctx.r(1, 2), attrs={"seed": 1} if ctx.coin(0.2) else {}, exact=True)


@op("Constant", "shape")
def build_constant(ctx):
    kind = ctx.choice(["value", "value_float", "value_int", "value_floats", "value_ints"])
    if kind == "value":
        dt = ctx.dtype(ctx.types("T"), prefer_pool=0.2)
        arr = values.random_array(ctx.rng, dt, ctx.gb.random_shape(max_rank=3, sym_p=0))
        attrs = {"value": numpy_helper.from_array(arr, "value")}
    elif kind == "value_float":
        attrs = {kind: ctx.u(-3, 3)}
    elif kind == "value_int":
        attrs = {kind: ctx.r(-5, 5)}
    elif kind == "value_floats":
        attrs = {kind: [ctx.u(-3, 3) for _ in range(ctx.r(1, 4))]}
    else:
        attrs = {kind: [ctx.r(-5, 5) for _ in range(ctx.r(1, 4))]}
    ctx.node([], attrs=attrs, exact=True)


@op("ConstantOfShape", "shape")
def build_constant_of_shape(ctx):
    if ctx.coin(0.3):  # the shape computed at run time
        ctx.node([ctx.node([ctx.pick(ctx.choice([TP.FLOAT, TP.INT64]), max_rank=3)],
                           op="Shape", exact=True)[0]], exact=True)
        return
    shape = [ctx.r(0 if ctx.coin(0.1) else 1, 4) for _ in range(ctx.r(0, 3))]
    attrs = {}
    if ctx.coin(0.8):
        dt = ctx.choice(ctx.types("T2"))
        arr = values.random_array(ctx.rng, dt, [1])
        attrs["value"] = numpy_helper.from_array(arr, "value")
    ctx.node([ctx.i64(shape)], attrs=attrs, exact=True)


@op("Range", "shape")
def build_range(ctx):
    dt = ctx.dtype(ctx.input_types(0), prefer_pool=0)
    if dtypes.is_float(dt):
        start, delta = round(ctx.u(-5, 5), 2), ctx.choice([0.5, 1.0, -1.0, 0.25, 1.5, -0.75])
    else:
        start, delta = ctx.r(-5, 5), ctx.choice([1, 2, 3, -1, -2])
    n = ctx.r(0, 12)
    limit = start + delta * n + (ctx.u(-0.4, 0.4) * delta if dtypes.is_float(dt) else 0)
    ins = [ctx.const(np.array(v), dt) for v in (start, limit, delta)]
    ctx.node(ins, exact=not dtypes.is_float(dt))


@op("EyeLike", "shape")
def build_eyelike(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, rank=2)
    attrs = {}
    if ctx.coin():
        attrs["k"] = ctx.r(-3, 3)
    if ctx.coin():
        attrs["dtype"] = ctx.choice([t for t in ctx.types("T2") if t in dtypes.ALL])
    ctx.node([x], attrs=attrs, exact=True)


@op("Trilu", "shape")
def build_trilu(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=2)
    ins = [x]
    if ctx.coin(0.6):
        ins.append(ctx.i64(ctx.r(-4, 4)))
    ctx.node(ins, attrs={"upper": ctx.r(0, 1)} if ctx.coin(0.8) else {}, exact=True)


@op("DepthToSpace", "movement")
def build_d2s(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    b = ctx.r(1, 3)
    x = ctx.new(dt, [ctx.r(1, 2), b * b * ctx.r(1, 2), ctx.r(1, 3), ctx.r(1, 3)])
    attrs = {"blocksize": b}
    if ctx.coin():
        attrs["mode"] = ctx.choice(["DCR", "CRD"])
    ctx.node([x], attrs=attrs, exact=True)


@op("SpaceToDepth", "movement")
def build_s2d(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    b = ctx.r(1, 3)
    x = ctx.new(dt, [ctx.r(1, 2), ctx.r(1, 3), b * ctx.r(1, 2), b * ctx.r(1, 3)])
    ctx.node([x], attrs={"blocksize": b}, exact=True)


@op("CenterCropPad", "movement")
def build_ccp(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=static_known(ctx))
    r = len(x.shape)
    if ctx.coin():
        axes = ctx.axes(r)
        attrs = {"axes": axes}
    else:
        axes, attrs = list(range(r)), {}
    ctx.node([x, ctx.i64([ctx.r(1, 6) for _ in axes])], attrs=attrs, exact=True)

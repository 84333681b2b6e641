"""Index-driven ops: Gather*, Scatter*, Compress, OneHot, TopK, NonZero, Unique,
ReverseSequence. Index operands are constants or graph inputs whose values lie inside every run's
dims (out-of-range indices are an error in both engines, not a comparison)."""
import itertools

import numpy as np

import dtypes
import values
from dtypes import TP
from graph import Reject
from registry import op


def index_gen(ctx, dt, lo_hi_per_run):
    """gen for an index input: lo_hi_per_run(run) -> (lo, hi) inclusive."""
    def gen(rng, shape, run):
        lo, hi = lo_hi_per_run(run)
        return rng.integers(lo, hi + 1, shape).astype(dtypes.np_type(dt))
    return gen


def size_at(ctx, d, run):
    return ctx.gb.sizes(d)[run]


@op("Gather", "index")
def build_gather(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: all(ctx.gb.min_dim(d) > 0 for d in v.shape))
    ax = ctx.axis(len(x.shape))
    d = x.shape[ax]
    it = ctx.choice(ctx.types("Tind"))
    ishape = ctx.gb.random_shape(max_rank=2, min_dim=1, max_dim=4, sym_p=0.2)
    if ctx.coin(0.5) or isinstance(d, str):
        idx = ctx.new(it, ishape, index_gen(ctx, it, lambda run: (-size_at(ctx, d, run),
                                                                   size_at(ctx, d, run) - 1)))
    else:
        ishape = [ctx.gb.static(e) or 2 for e in ishape]
        idx = ctx.const(ctx.rng.integers(-d, d, ishape), it)
    ctx.node([x, idx], attrs={"axis": ax} if ctx.coin(0.8) or ax else {}, exact=True)


def elements_indices(ctx, x, ax, it, unique=False):
    """An indices input for GatherElements / ScatterElements (static shape <= x's dims)."""
    gb = ctx.gb
    shape = []
    for k, d in enumerate(x.shape):
        m = gb.min_dim(d)
        shape.append(d if (isinstance(d, str) and k != ax) else ctx.r(1, max(1, m)))
    if any(gb.min_dim(e) == 0 for e in shape):
        raise Reject("empty")

    def gen(rng, sh, run):
        n = size_at(ctx, x.shape[ax], run)
        if unique:
            if sh[ax] > n:
                raise ValueError("indices longer than the axis")
            perm = np.argsort(rng.random(sh[:ax] + [n] + sh[ax + 1:]), axis=ax)
            a = np.take(perm, range(sh[ax]), axis=ax)
        else:
            a = rng.integers(0, n, sh)
        a = np.where(rng.random(sh) < 0.3, a - n, a)
        return a.astype(dtypes.np_type(it))
    return ctx.new(it, shape, gen)


@op("GatherElements", "index")
def build_gather_elements(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: all(ctx.gb.min_dim(d) > 0 for d in v.shape))
    ax = ctx.axis(len(x.shape), neg=False)
    idx = elements_indices(ctx, x, ax, ctx.choice(ctx.types("Tind")))
    ctx.node([x, idx], attrs={"axis": ax - len(x.shape) if ctx.coin(0.2) else ax}, exact=True)


@op("ScatterElements", "index")
def build_scatter_elements(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: all(
        ctx.gb.static(d) is not None and ctx.gb.min_dim(d) > 0 for d in v.shape))
    ax = ctx.axis(len(x.shape), neg=False)
    reds = ["none"] + (["add", "mul"] if ctx.opset >= 16 else []) + \
        (["max", "min"] if ctx.opset >= 18 else [])
    red = ctx.choice(reds)
    if dt == TP.BOOL and red != "none":
        red = "none"
    idx = elements_indices(ctx, x, ax, ctx.choice(ctx.types("Tind")), unique=red == "none")
    upd = ctx.new(dt, idx.shape)
    attrs = {"axis": ax}
    if red != "none" or ctx.coin(0.3):
        attrs["reduction"] = red
    ctx.node([x, idx, upd], attrs=attrs)


@op("GatherND", "index")
def build_gather_nd(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: all(
        ctx.gb.static(d) is not None and ctx.gb.min_dim(d) > 0 for d in v.shape))
    dims = [ctx.gb.static(d) for d in x.shape]
    r = len(dims)
    b = ctx.r(0, r - 1) if ctx.coin(0.3) else 0
    k = ctx.r(1, r - b)
    mid = [ctx.r(1, 3) for _ in range(ctx.r(0, 1))]
    shape = dims[:b] + mid + [k]
    arr = np.stack([ctx.rng.integers(-dims[b + j], dims[b + j], shape[:-1]) for j in range(k)],
                   axis=-1)
    idx = ctx.const(arr, TP.INT64) if ctx.coin() else \
        ctx.new(TP.INT64, shape, lambda rng, s, run, arr=arr: arr)
    ctx.node([x, idx], attrs={"batch_dims": b} if b or ctx.coin(0.2) else {}, exact=True)


@op("ScatterND", "index")
def build_scatter_nd(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: all(
        ctx.gb.static(d) is not None and ctx.gb.min_dim(d) > 0 for d in v.shape))
    dims = [ctx.gb.static(d) for d in x.shape]
    r = len(dims)
    k = ctx.r(1, r)
    reds = ["none"] + (["add", "mul"] if ctx.opset >= 16 else []) + \
        (["max", "min"] if ctx.opset >= 18 else [])
    red = ctx.choice(reds) if dt != TP.BOOL else "none"
    tuples = list(itertools.product(*[range(n) for n in dims[:k]]))
    m = ctx.r(1, min(4, len(tuples)))
    sel = [tuples[i] for i in ctx.rng.choice(len(tuples), m, replace=red != "none")]
    idx = ctx.const(np.array(sel, np.int64).reshape(m, k), TP.INT64)
    upd = ctx.new(dt, [m] + dims[k:])
    ctx.node([x, idx, upd], attrs={"reduction": red} if red != "none" or ctx.coin(0.3) else {})


@op("Compress", "index")
def build_compress(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, pred=lambda v: all(ctx.gb.static(d) is not None
                                                    for d in v.shape))
    dims = [ctx.gb.static(d) for d in x.shape]
    attrs = {}
    if ctx.coin(0.7):
        ax = ctx.axis(len(dims))
        attrs["axis"] = ax
        n = dims[ax]
    else:
        n = int(np.prod(dims))
    cond = ctx.rng.random(ctx.r(0, n)) < 0.5
    c = ctx.const(cond, TP.BOOL) if ctx.coin() else \
        ctx.new(TP.BOOL, [len(cond)], lambda rng, s, run, c=cond: c)
    ctx.node([x, c], attrs=attrs, exact=True)


@op("OneHot", "index")
def build_onehot(ctx):
    it = ctx.dtype([t for t in ctx.types("T1") if not dtypes.is_float(t)] or ctx.types("T1"))
    depth = ctx.r(1, 5)
    x = ctx.new(it, ctx.gb.random_shape(max_rank=2, max_dim=4),
                lambda rng, s, run: rng.integers(-depth if it not in dtypes.UNSIGNED else 0,
                                                 depth, s).astype(dtypes.np_type(it)))
    dt2 = ctx.choice(ctx.types("T2"))
    vdt = ctx.dtype(ctx.types("T3"), prefer_pool=0.2)
    vals = ctx.const(values.random_array(ctx.rng, vdt, [2], False), vdt)
    attrs = {"axis": ctx.r(-len(x.shape) - 1, len(x.shape))} if ctx.coin(0.6) else {}
    ctx.node([x, ctx.const(np.array(depth), dt2), vals], attrs=attrs, exact=True)


@op("TopK", "index")
def build_topk(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, exact=True,
                 pred=lambda v: all(ctx.gb.min_dim(d) > 0 for d in v.shape),
                 gen=(lambda rng, s, run: values.random_array(rng, dt, s, False))
                 if dtypes.is_float(dt) and ctx.coin(0.5) else None)
    ax = ctx.axis(len(x.shape))
    k = ctx.r(1 if ctx.coin(0.9) else 0, ctx.gb.min_dim(x.shape[ax]))
    attrs = {"axis": ax} if ctx.coin(0.8) else {}
    if ctx.coin():
        attrs["largest"] = ctx.r(0, 1)
    if "axis" not in attrs:
        k = min(k, ctx.gb.min_dim(x.shape[-1]))
    ctx.node([x, ctx.i64([k])], n_out=2, attrs=attrs, exact=True)


@op("NonZero", "index")
def build_nonzero(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    ctx.node([ctx.pick(dt, exact=True)], exact=True)


@op("Unique", "index")
def build_unique(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, max_rank=3, exact=True,
                 gen=lambda rng, s, run: values.random_array(rng, dt, s, False, -2, 3))
    attrs = {}
    if ctx.coin(0.4):
        attrs["axis"] = ctx.axis(len(x.shape))
    if ctx.coin(0.5):
        attrs["sorted"] = ctx.r(0, 1)
    ctx.node([x], n_out=ctx.choice([1, 4]), attrs=attrs, exact=True)


@op("ReverseSequence", "index")
def build_reverse_sequence(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=2, pred=lambda v: ctx.gb.static(v.shape[0]) is not None and
                 ctx.gb.static(v.shape[1]) is not None and ctx.gb.min_dim(v.shape[0]) > 0 and
                 ctx.gb.min_dim(v.shape[1]) > 0)
    bt = ctx.r(0, 1)
    b, t = ctx.gb.static(x.shape[bt]), ctx.gb.static(x.shape[1 - bt])
    lens = ctx.rng.integers(1, t + 1, b)
    ctx.node([x, ctx.i64(lens)], attrs={"batch_axis": bt, "time_axis": 1 - bt}, exact=True)

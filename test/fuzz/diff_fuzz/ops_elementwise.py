"""Elementwise ops: unary math and activations, binary/variadic broadcasting arithmetic,
comparisons, logic, bitwise ops, Where, Clip, Cast/CastLike."""
import numpy as np

import dtypes
import values
from dtypes import TP
from registry import op

# Ops whose result jumps under a tiny input change (or blows up near a point): they only take
# bit-exact float inputs, so rounding differences upstream are not amplified into mismatches.
SENSITIVE = {"Floor", "Ceil", "Round", "Sign", "Sqrt", "Log", "Acos", "Asin", "Acosh", "Atanh",
             "Reciprocal", "Tan", "IsInf", "IsNaN", "Equal", "Greater", "Less", "GreaterOrEqual",
             "LessOrEqual", "Div", "Pow", "Mod", "Cast", "CastLike", "Hardmax", "Det"}
# Ops whose output is bit-exact when the input is (no rounding).
EXACT = {"Abs", "Neg", "Relu", "Identity", "Sign", "Floor", "Ceil", "Round", "Max", "Min",
         "Clip", "Not", "BitwiseNot", "IsInf", "IsNaN"}


def unary(name, attrs=None, family="unary"):
    @op(name, family)
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        x = ctx.pick(dt, exact=name in SENSITIVE)
        a = attrs(ctx) if attrs else {}
        ctx.node([x], attrs=a, exact=True if name in EXACT else None)
    return build


for _n in ["Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh",
           "Erf", "Exp", "Floor", "Log", "Neg", "Reciprocal", "Relu", "Round", "Sigmoid",
           "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "IsNaN",
           "Not", "BitwiseNot", "Identity", "HardSwish", "Mish"]:
    unary(_n)

unary("Elu", lambda c: {"alpha": c.u(0.1, 2.0)} if c.coin() else {}, "activation")
unary("Celu", lambda c: {"alpha": c.u(0.2, 2.0)} if c.coin() else {}, "activation")
unary("LeakyRelu", lambda c: {"alpha": c.u(0.0, 1.0)} if c.coin() else {}, "activation")
unary("ThresholdedRelu", lambda c: {"alpha": c.u(-1.0, 2.0)} if c.coin() else {}, "activation")
unary("Selu", lambda c: {"alpha": c.u(0.5, 2.0), "gamma": c.u(0.5, 2.0)} if c.coin() else {},
      "activation")
unary("HardSigmoid", lambda c: {"alpha": c.u(0.05, 1.0), "beta": c.u(0.0, 1.0)} if c.coin()
      else {}, "activation")
unary("Shrink", lambda c: {"bias": c.u(0.0, 1.0), "lambd": c.u(0.0, 1.5)} if c.coin() else {},
      "activation")
unary("Gelu", lambda c: {"approximate": c.choice(["none", "tanh"])} if c.coin() else {},
      "activation")
unary("IsInf", lambda c: {k: c.r(0, 1) for k in ("detect_negative", "detect_positive")
                          if c.coin()})


def broadcast_pair(ctx, dt, exact=False, second_gen=None):
    a = ctx.pick(dt, exact=exact)
    if second_gen is not None or ctx.coin(0.6) or not a.shape:
        b = ctx.new(dt, ctx.bcast_shape(a.shape), second_gen)
    else:
        same = [v for v in ctx.gb.pool if v.dt == dt and v.shape == a.shape and v is not a
                and (v.exact or not exact)]
        b = ctx.choice(same) if same and ctx.coin(0.7) else a
    return [b, a] if ctx.coin(0.3) and second_gen is None else [a, b]


def binary(name, family="binary"):
    @op(name, family)
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        ins = broadcast_pair(ctx, dt, exact=name in SENSITIVE)
        ctx.node(ins, exact=True if name in EXACT else None)
    return build


for _n in ["Add", "Sub", "Mul", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
           "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    binary(_n)


def nonzero_divisor(dt):
    def gen(rng, shape, run):
        a = values.random_array(rng, dt, shape, edges=dtypes.is_float(dt) and None)
        if not dtypes.is_float(dt):
            a = np.where(a == 0, 1, a).astype(a.dtype)
            if dt in dtypes.SIGNED:  # no INT_MIN / -1 (a trap in C)
                a = np.where(a == -1, 2, a).astype(a.dtype)
        return a
    return gen


@op("Div", "binary")
def build_div(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    if dtypes.is_float(dt):
        ctx.node(broadcast_pair(ctx, dt, exact=True))
    else:
        a = ctx.pick(dt)
        ctx.node([a, ctx.new(dt, ctx.bcast_shape(a.shape), nonzero_divisor(dt))])


@op("Mod", "binary")
def build_mod(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    fmod = 1 if dtypes.is_float(dt) else ctx.r(0, 1)
    a = ctx.pick(dt, exact=True)
    ctx.node([a, ctx.new(dt, ctx.bcast_shape(a.shape), nonzero_divisor(dt))],
             attrs={"fmod": fmod} if fmod or ctx.coin() else {})


@op("Pow", "binary")
def build_pow(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    dt1 = ctx.dtype(ctx.types("T1"), prefer_pool=0.2)
    if dtypes.is_float(dt):
        a = ctx.pick(dt, exact=True)
    else:  # integer powers overflow: small bases
        a = ctx.new(dt, ctx.gb.random_shape(),
                    lambda rng, s, r: values.random_array(rng, dt, s, False, -3, 4))
    lo = 0 if not dtypes.is_float(dt1) or not dtypes.is_float(dt) else -3
    # edge values only when the exponent has the base's type: the precision of a mixed-type
    # power is not specified (a float64 denormal exponent is 0 once cast to float32: x^0 = 1,
    # while onnxruntime computes in float64: NaN for a negative x)
    edges = None if dtypes.is_float(dt1) and dt1 == dt else False
    b = ctx.new(dt1, ctx.bcast_shape(a.shape),
                lambda rng, s, r: values.random_array(rng, dt1, s, edges, lo, 4))
    ctx.node([a, b])


@op("BitShift", "binary")
def build_bitshift(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    a = ctx.pick(dt)
    bits = np.iinfo(dtypes.np_type(dt)).bits
    b = ctx.new(dt, ctx.bcast_shape(a.shape),
                lambda rng, s, r: values.random_array(rng, dt, s, False, 0, bits))
    ctx.node([a, b], attrs={"direction": ctx.choice(["LEFT", "RIGHT"])})


def variadic(name):
    @op(name, "variadic")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        a = ctx.pick(dt)
        ins = [a] + [ctx.new(dt, ctx.bcast_shape(a.shape)) if ctx.coin(0.7) else a
                     for _ in range(ctx.r(0, 3))]
        ctx.rng.shuffle(ins)
        ctx.node(ins, exact=True if name in EXACT else None)
    return build


for _n in ["Max", "Min", "Sum", "Mean"]:
    variadic(_n)


@op("PRelu", "activation")
def build_prelu(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    # slope: unidirectionally broadcastable to x
    shape = list(x.shape)
    shape = [d if ctx.coin(0.4) else 1 for d in shape]
    if ctx.coin(0.4):
        shape = shape[ctx.r(0, len(shape)):]
    ctx.node([x, ctx.new(dt, shape)])


@op("Where", "binary")
def build_where(ctx):
    dt = ctx.dtype(ctx.input_types(1))
    x = ctx.pick(dt)
    c = ctx.pick(TP.BOOL, pred=lambda v: len(v.shape) <= len(x.shape) and all(
        d in (1, e) for d, e in zip(v.shape[::-1], x.shape[::-1])), fresh_p=0.5)
    y = ctx.new(dt, ctx.bcast_shape(x.shape))
    ins = [c, x, y] if ctx.coin() else [c, y, x]
    ctx.node(ins, exact=True)


@op("Clip", "unary")
def build_clip(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt)
    lo_hi = sorted(values.random_array(ctx.rng, dt, [2], False).tolist())
    ins = [x]
    k = ctx.r(0, 2)
    if k >= 1:
        ins.append(ctx.const(np.array(lo_hi[0]), dt) if ctx.coin(0.8) else None)
    if k == 2:
        ins.append(ctx.const(np.array(lo_hi[1]), dt))
    while ins and ins[-1] is None:
        ins.pop()
    ctx.node(ins, exact=True)


def safe_cast_gen(src, dst):
    """Values every implementation casts the same way (float -> int out of range is undefined)."""
    def gen(rng, shape, run):
        if dtypes.is_float(src) and not dtypes.is_float(dst) and dst != TP.BOOL:
            ii = np.iinfo(dtypes.np_type(dst))
            lo, hi = max(float(ii.min), -100.0), min(float(ii.max), 100.0)
            return values.random_array(rng, src, shape, False, lo, hi)
        return values.random_array(rng, src, shape)
    return gen


@op("Cast", "cast")
def build_cast(ctx):
    src = ctx.dtype(ctx.input_types(0))
    dst = ctx.choice([t for t in ctx.types("T2") if t in dtypes.ALL])
    risky = dtypes.is_float(src) and not dtypes.is_float(dst) and dst != TP.BOOL
    x = ctx.pick(src, gen=safe_cast_gen(src, dst) if risky else None, exact=True)
    attrs = {"to": dst}
    if ctx.opset >= 19 and ctx.coin(0.2):
        attrs["saturate"] = 1
    ctx.node([x], attrs=attrs, exact=True if not dtypes.is_float(dst) else None)


@op("CastLike", "cast")
def build_castlike(ctx):
    src = ctx.dtype(ctx.input_types(0))
    dst = ctx.choice([t for t in ctx.types("T2") if t in dtypes.ALL])
    risky = dtypes.is_float(src) and not dtypes.is_float(dst) and dst != TP.BOOL
    x = ctx.pick(src, gen=safe_cast_gen(src, dst) if risky else None, exact=True)
    like = ctx.pick(dst, fresh_p=0.5)
    ctx.node([x, like], exact=True if not dtypes.is_float(dst) else None)

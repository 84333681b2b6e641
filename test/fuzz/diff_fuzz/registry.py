"""The op table: one builder per ONNX op the generator can produce, and the context (Ctx) the
builders use to pick input values, dtypes, shapes and attribute values.

A builder is fn(ctx) that adds one node (plus the constants and graph inputs it needs) through
ctx.node(...); it raises graph.Reject when it cannot build the op validly here. Builders take
the allowed dtypes from the op's schema at the graph's opset (ctx.types('T')), so every type a
constraint allows is generated (minus bfloat16/float8/int4/string/complex, see dtypes.py)."""
import onnx.defs

import dtypes
import values
from graph import Reject

BUILDERS = {}      # op -> builder
FAMILY = {}        # op -> family name (reporting)

# Default-domain ops the generator does not produce, with the reason.
SKIPPED = {
    "Bernoulli": "random output", "Multinomial": "random output",
    "RandomNormal": "random output", "RandomNormalLike": "random output",
    "RandomUniform": "random output", "RandomUniformLike": "random output",
    "If": "control flow (subgraphs)", "Loop": "control flow (subgraphs)",
    "Scan": "control flow (subgraphs)", "SequenceMap": "control flow (subgraphs)",
    "ImageDecoder": "encoded image bytes input",
    "RegexFullMatch": "string tensors", "StringConcat": "string tensors",
    "StringNormalizer": "string tensors", "StringSplit": "string tensors",
    "Optional": "optional type (not a tensor)", "OptionalGetElement": "optional type",
    "OptionalHasElement": "optional type",
    "SequenceAt": "sequence type", "SequenceConstruct": "sequence type",
    "SequenceEmpty": "sequence type", "SequenceErase": "sequence type",
    "SequenceInsert": "sequence type", "SequenceLength": "sequence type",
    "SplitToSequence": "sequence type", "ConcatFromSequence": "sequence type",
    "Scatter": "deprecated (opset < 11 only)", "Upsample": "deprecated (opset < 10 only)",
    "DeformConv": "onnxruntime 1.32 has no CPU kernel",
    "TfIdfVectorizer": "n-gram pool attributes need a structured vocabulary (not generated)",
}


def op(name, family="misc"):
    def deco(fn):
        BUILDERS[name] = fn
        FAMILY[name] = family
        return fn
    return deco


def schema(name, opset):
    """The op's schema at this opset, or None when the op does not exist there."""
    try:
        s = onnx.defs.get_schema(name, opset, "")
    except Exception:  # noqa: BLE001
        return None
    if s.deprecated:
        return None
    return s


def available(opset):
    return [n for n in sorted(BUILDERS) if schema(n, opset) is not None]


# Ops that do integer arithmetic that can overflow: their integer operands are fresh graph inputs
# with small values (values.small_ints), never other nodes' results or extremes. Integer overflow
# is left to the implementation (wraps in one kernel, saturates in another).
INT_ARITH = {"Add", "Sub", "Mul", "Neg", "Abs", "Sum", "Mean", "CumSum", "MatMul", "Gemm",
             "Einsum", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceSumSquare", "ReduceL1",
             "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "Pow", "Det", "Shrink"}

# Ops that weight their inputs by interpolation or transform coefficients that are 0 in exact
# arithmetic but may be computed as tiny non-zeros (cos(pi/2)): 0 * inf is NaN, 1e-17 * inf is
# inf, so infinities and NaN in their inputs give implementation-defined results. They take
# fresh finite inputs. So do the recurrent ops: a gate's sigmoid of -inf is 0 exactly or a tiny
# non-zero (onnxruntime's clamped approximation), and times an infinite state gives NaN or inf.
# LRN too, as neither oracle follows the formula on non-finite inputs: onnxruntime's sliding
# window sum spreads a NaN or inf to channels outside the window, onnx 1.16's reference sums one
# channel too few at the upper end (relaxc matches a float64 evaluation of the formula).
# QuantizeLinear: NaN has no integer value (relaxc gives 0, onnxruntime the minimum).
FINITE = {"Resize", "GridSample", "AffineGrid", "RoiAlign", "DFT", "STFT", "Col2Im", "RNN",
          "GRU", "LSTM", "LRN", "QuantizeLinear"}


class Ctx:
    def __init__(self, gb, name, opset):
        self.gb, self.rng, self.op, self.opset = gb, gb.rng, name, opset
        self.schema = schema(name, opset)
        self.int_arith = name in INT_ARITH
        self.finite = name in FINITE

    # ---- random helpers ----------------------------------------------------------------------
    def coin(self, p=0.5):
        return self.rng.random() < p

    def r(self, lo, hi):
        """int in [lo, hi]"""
        return int(self.rng.integers(lo, hi + 1))

    def u(self, lo, hi):
        return float(self.rng.uniform(lo, hi))

    def choice(self, seq):
        seq = list(seq)
        if not seq:
            raise Reject("empty choice")
        return seq[int(self.rng.integers(len(seq)))]

    def axis(self, rank, neg=True):
        if rank == 0:
            raise Reject("axis of a scalar")
        a = self.r(0, rank - 1)
        return a - rank if neg and self.coin(0.3) else a

    def axes(self, rank, min_k=1, max_k=None, neg=True):
        if rank == 0:
            raise Reject("axes of a scalar")
        k = self.r(min_k, max_k or rank)
        ax = sorted(int(a) for a in self.rng.choice(rank, size=min(k, rank), replace=False))
        return [a - rank if neg and self.coin(0.25) else a for a in ax]

    # ---- dtypes ------------------------------------------------------------------------------
    def types(self, param):
        for tc in self.schema.type_constraints:
            if tc.type_param_str == param:
                return [dtypes.TYPE_STR[t] for t in tc.allowed_type_strs if t in dtypes.TYPE_STR]
        # a fixed type string ('tensor(int64)')
        return [dtypes.TYPE_STR[param]] if param in dtypes.TYPE_STR else []

    def input_types(self, idx):
        return self.types(self.schema.inputs[idx].type_str)

    def dtype(self, allowed, prefer_pool=0.55):
        allowed = [t for t in allowed if t in dtypes.ALL]
        if not allowed:
            raise Reject("no generatable dtype")
        pool = [v for v in self.gb.pool if v.dt in allowed and v.kind != "init"]
        if pool and self.coin(prefer_pool):
            return pool[-1].dt
        if dtypes.TP.FLOAT in allowed and self.coin(0.35):
            return dtypes.TP.FLOAT
        return self.choice(allowed)

    # ---- values ------------------------------------------------------------------------------
    def pick(self, dt, rank=None, min_rank=0, max_rank=4, pred=None, exact=False, fresh_p=0.2,
             min_dim=0, max_dim=5, gen=None, fresh_only=False):
        """An existing value of type dt (the newest one that fits, usually) or a new graph input.
        exact: needs a bit-exact value (for ops that amplify rounding differences)."""
        gb = self.gb
        need_exact = exact and dtypes.is_float(dt)
        if gen is None and ((self.int_arith and dt in dtypes.INTS) or
                            (self.finite and dtypes.is_float(dt))):
            gen = values.small_ints(dt) if dt in dtypes.INTS else values.finite(dt)

        def fits(v):
            if v.dt != dt or not gb.known(v) or v.kind == "init":
                return False
            if rank is not None and v.rank != rank:
                return False
            if rank is None and not (min_rank <= v.rank <= max_rank):
                return False
            if need_exact and not v.exact:
                return False
            if any(gb.min_dim(d) < min_dim for d in v.shape):
                return False
            if sum(gb.min_dim(d) for d in v.shape) > 40:
                return False
            return pred is None or pred(v)
        cands = [] if (fresh_only or gen is not None) else [v for v in gb.pool if fits(v)]
        if cands and not self.coin(fresh_p):
            return cands[-1] if self.coin(0.6) else self.choice(cands)
        for _ in range(20):
            shape = gb.random_shape(rank, min_rank, max_rank, min_dim=min_dim, max_dim=max_dim)
            v = gb.add_input(dt, shape, gen)
            if pred is None or pred(v):
                return v
            gb.inputs.pop()
            gb.pool.pop()
        raise Reject("no value fits")

    def new(self, dt, shape, gen=None):
        if gen is None and ((self.int_arith and dt in dtypes.INTS) or
                            (self.finite and dtypes.is_float(dt))):
            gen = values.small_ints(dt) if dt in dtypes.INTS else values.finite(dt)
        return self.gb.add_input(dt, shape, gen)

    def const(self, array, dt=None):
        return self.gb.add_const(array, dt)

    def i64(self, values):
        return self.gb.add_const(list(values) if not isinstance(values, int) else values,
                                 dtypes.TP.INT64)

    def node(self, ins, n_out=1, attrs=None, exact=None, op=None):
        return self.gb.add_node(op or self.op, ins, n_out, attrs, exact)

    # ---- shapes ------------------------------------------------------------------------------
    def bcast_shape(self, shape):
        """A shape that broadcasts with shape (multidirectional)."""
        out = [d if not self.coin(0.25) else 1 for d in shape]
        if out and self.coin(0.3):
            out = out[self.r(1, len(out)):]
        return out

    def dims(self, v):
        return [self.gb.min_dim(d) for d in v.shape]

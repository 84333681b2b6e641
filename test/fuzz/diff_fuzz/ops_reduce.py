"""Reductions (axes as attribute or input by opset), ArgMax/ArgMin, softmax family, CumSum,
normalizations over axes (LpNormalization, MeanVarianceNormalization)."""
import numpy as np

from registry import op

# opset at which each reduction moved `axes` from an attribute to an input
AXES_INPUT_SINCE = {"ReduceSum": 13}
REDUCES = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]

# Reductions with an elementwise part. With noop_with_empty_axes=1 and no axes the spec says the
# output "would be equivalent to input tensor"; onnxruntime 1.32 applies the elementwise part
# (|x|, x^2, ...) and onnx 1.16's reference reduces every axis: not generated.
ELEMENTWISE_PART = {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                    "ReduceLogSumExp"}


def reduce(name):
    @op(name, "reduce")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        x = ctx.pick(dt, min_rank=1, exact=name in ("ReduceLogSum",))
        r = len(x.shape)
        attrs, ins = {}, [x]
        if ctx.coin(0.7):
            attrs["keepdims"] = ctx.r(0, 1)
        axes = None if ctx.coin(0.2) else ctx.axes(r)
        if ctx.coin(0.1):
            axes = []
        since = AXES_INPUT_SINCE.get(name, 18)
        if ctx.opset >= since:
            if axes is not None:
                ins.append(ctx.i64(axes) if axes or ctx.coin() else ctx.i64(np.zeros(0)))
            if ctx.coin(0.2):
                attrs["noop_with_empty_axes"] = ctx.r(0, 1)
            if not axes and attrs.get("noop_with_empty_axes") and name in ELEMENTWISE_PART:
                del attrs["noop_with_empty_axes"]  # ambiguous: see ELEMENTWISE_PART
        elif axes:
            attrs["axes"] = axes
        ctx.node(ins, attrs=attrs, exact=True if name in ("ReduceMax", "ReduceMin") else None)
    return build


for _n in REDUCES:
    reduce(_n)


def arg(name):
    @op(name, "reduce")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        x = ctx.pick(dt, min_rank=1, exact=True,
                     pred=lambda v: all(ctx.gb.min_dim(d) > 0 for d in v.shape))
        attrs = {"axis": ctx.axis(len(x.shape))}
        for k in ("keepdims", "select_last_index"):
            if ctx.coin():
                attrs[k] = ctx.r(0, 1)
        ctx.node([x], attrs=attrs, exact=True)
    return build


arg("ArgMax")
arg("ArgMin")


def softmaxish(name):
    @op(name, "softmax")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        x = ctx.pick(dt, min_rank=1, exact=name == "Hardmax")
        attrs = {"axis": ctx.axis(len(x.shape))} if ctx.coin(0.8) else {}
        ctx.node([x], attrs=attrs, exact=True if name == "Hardmax" else None)
    return build


for _n in ["Softmax", "LogSoftmax", "Hardmax"]:
    softmaxish(_n)


@op("CumSum", "reduce")
def build_cumsum(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1)
    ax = ctx.axis(len(x.shape))
    axis = ctx.const(np.array(ax), ctx.choice(ctx.types("T2")))
    attrs = {k: ctx.r(0, 1) for k in ("exclusive", "reverse") if ctx.coin()}
    ctx.node([x, axis], attrs=attrs)


@op("LpNormalization", "norm")
def build_lpnorm(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, exact=True)
    attrs = {}
    if ctx.coin(0.7):
        attrs["axis"] = ctx.axis(len(x.shape))
    if ctx.coin(0.7):
        attrs["p"] = ctx.r(1, 2)
    ctx.node([x], attrs=attrs)


@op("MeanVarianceNormalization", "norm")
def build_mvn(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=1, exact=True)
    attrs = {"axes": ctx.axes(len(x.shape), neg=False)} if ctx.coin(0.6) or len(x.shape) < 4 \
        else {}
    ctx.node([x], attrs=attrs)

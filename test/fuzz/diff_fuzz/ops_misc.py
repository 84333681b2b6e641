"""Image/sequence/signal ops: Resize, GridSample, AffineGrid, Col2Im, MaxUnpool, RoiAlign,
MaxRoiPool, NonMaxSuppression, the losses, RNN/GRU/LSTM, DFT, STFT, windows, MelWeightMatrix."""
import numpy as np

import dtypes
import values
from dtypes import TP
from graph import Reject
from registry import op

COORD = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
         "tf_crop_and_resize", "half_pixel_symmetric"]


@op("Resize", "image")
def build_resize(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    x = ctx.pick(dt, min_rank=3, max_rank=4, min_dim=1,
                 pred=lambda v: all(ctx.gb.static(d) is not None for d in v.shape))
    dims = [ctx.gb.static(d) for d in x.shape]
    r = len(dims)
    mode = ctx.choice(["nearest", "linear", "cubic"])
    attrs = {"mode": mode}
    coords = COORD if ctx.opset >= 19 else COORD[:-1]
    ctm = ctx.choice(coords)
    if ctx.coin(0.8):
        attrs["coordinate_transformation_mode"] = ctm
    else:
        ctm = "half_pixel"
    if mode == "nearest" and ctx.coin():
        attrs["nearest_mode"] = ctx.choice(["round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"])
    if mode == "cubic":
        if ctx.coin(0.4):
            attrs["cubic_coeff_a"] = ctx.choice([-0.75, -0.5])
        if ctx.coin(0.3):
            attrs["exclude_outside"] = 1
    if ctx.opset >= 18 and mode != "nearest" and ctx.coin(0.2):
        attrs["antialias"] = 1
    spatial = list(range(2, r))
    roi = None
    if ctm == "tf_crop_and_resize":
        lo = [0.0] * 2 + [round(ctx.u(0, 0.4), 2) for _ in spatial]
        hi = [1.0] * 2 + [round(ctx.u(0.6, 1), 2) for _ in spatial]
        roi = ctx.const(np.array(lo + hi), TP.FLOAT)
        if ctx.coin():
            attrs["extrapolation_value"] = ctx.u(-1, 1)
    if ctx.coin(0.5):
        scales = [1.0, 1.0] + [ctx.choice([0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 0.6]) for _ in spatial]
        ins = [x, roi if roi is not None else (ctx.i64([]) if False else None),
               ctx.const(np.array(scales), TP.FLOAT)]
    else:
        sizes = dims[:2] + [ctx.r(1, 8) for _ in spatial]
        if ctx.opset >= 18 and ctx.coin(0.3):
            attrs["keep_aspect_ratio_policy"] = ctx.choice(["not_larger", "not_smaller"])
        ins = [x, roi, None, ctx.i64(sizes)]
    if ins[1] is None and ctx.opset < 13:
        raise Reject("roi needed before 13")
    ctx.node(ins, attrs=attrs)


@op("GridSample", "image")
def build_grid_sample(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    nsp = 2 if ctx.opset < 20 or ctx.coin(0.7) else 3
    n, c = ctx.r(1, 2), ctx.r(1, 2)
    x = ctx.new(dt, [n, c] + [ctx.r(1, 4) for _ in range(nsp)])
    gt = ctx.choice(ctx.types("T2"))
    grid = ctx.new(gt, [n] + [ctx.r(1, 4) for _ in range(nsp)] + [nsp],
                   lambda rng, s, run: values.random_array(rng, gt, s, False, -1.3, 1.3))
    attrs = {}
    modes = ["bilinear", "nearest", "bicubic"] if ctx.opset < 20 else ["linear", "nearest", "cubic"]
    if ctx.coin(0.8):
        attrs["mode"] = ctx.choice(modes if nsp == 2 else modes[:2])
    if ctx.coin(0.6):
        attrs["padding_mode"] = ctx.choice(["zeros", "border", "reflection"])
    if ctx.coin(0.5):
        attrs["align_corners"] = ctx.r(0, 1)
    ctx.node([x, grid], attrs=attrs)


@op("AffineGrid", "image")
def build_affine_grid(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    nsp = ctx.choice([2, 3])
    n = ctx.r(1, 2)
    theta = ctx.new(dt, [n, nsp, nsp + 1],
                    lambda rng, s, run: values.random_array(rng, dt, s, False, -1, 1))
    size = ctx.i64([n, ctx.r(1, 3)] + [ctx.r(1, 4) for _ in range(nsp)])
    ctx.node([theta, size], attrs={"align_corners": ctx.r(0, 1)} if ctx.coin() else {})


@op("Col2Im", "image")
def build_col2im(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    k = [ctx.r(1, 3), ctx.r(1, 3)]
    img = [ctx.r(k[0], 6), ctx.r(k[1], 6)]
    s = [ctx.r(1, 2), ctx.r(1, 2)] if ctx.coin() else None
    strides = s or [1, 1]
    L = 1
    for i in range(2):
        L *= (img[i] - k[i]) // strides[i] + 1
    c = ctx.r(1, 2)
    x = ctx.new(dt, [ctx.r(1, 2), c * k[0] * k[1], L])
    attrs = {"strides": strides} if s else {}
    ctx.node([x, ctx.i64(img), ctx.i64(k)], attrs=attrs)


@op("MaxUnpool", "pool")
def build_max_unpool(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n, c, h, w = ctx.r(1, 2), ctx.r(1, 2), ctx.r(2, 5), ctx.r(2, 5)
    x = ctx.new(dt, [n, c, h, w], lambda rng, s, run: values.random_array(rng, dt, s, False))
    y, idx = ctx.node([x], n_out=2, attrs={"kernel_shape": [2, 2], "strides": [2, 2]},
                      op="MaxPool", exact=True)
    ctx.node([y, idx], attrs={"kernel_shape": [2, 2], "strides": [2, 2]})


@op("RoiAlign", "image")
def build_roi_align(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n, c, h, w = ctx.r(1, 2), ctx.r(1, 2), ctx.r(2, 6), ctx.r(2, 6)
    x = ctx.new(dt, [n, c, h, w])
    k = ctx.r(1, 3)
    boxes = []
    for _ in range(k):
        x1, y1 = ctx.u(0, w - 1), ctx.u(0, h - 1)
        boxes.append([x1, y1, ctx.u(x1, w), ctx.u(y1, h)])
    rois = ctx.const(np.array(boxes), dt)
    bidx = ctx.i64(ctx.rng.integers(0, n, k))
    attrs = {"output_height": ctx.r(1, 3), "output_width": ctx.r(1, 3)}
    if ctx.coin():
        attrs["sampling_ratio"] = ctx.r(0, 2)
    if ctx.coin():
        attrs["spatial_scale"] = ctx.choice([0.5, 1.0, 2.0])
    if ctx.coin():
        attrs["mode"] = ctx.choice(["avg", "max"])
    if ctx.opset >= 16 and ctx.coin():
        attrs["coordinate_transformation_mode"] = ctx.choice(["half_pixel", "output_half_pixel"])
    ctx.node([x, rois, bidx], attrs=attrs)


@op("MaxRoiPool", "image")
def build_max_roi_pool(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n, c, h, w = ctx.r(1, 2), ctx.r(1, 2), ctx.r(2, 6), ctx.r(2, 6)
    x = ctx.new(dt, [n, c, h, w])
    rois = []
    for _ in range(ctx.r(1, 3)):
        x1, y1 = ctx.r(0, w - 1), ctx.r(0, h - 1)
        rois.append([ctx.r(0, n - 1), x1, y1, ctx.r(x1, w - 1), ctx.r(y1, h - 1)])
    attrs = {"pooled_shape": [ctx.r(1, 3), ctx.r(1, 3)]}
    if ctx.coin():
        attrs["spatial_scale"] = ctx.choice([0.5, 1.0])
    ctx.node([x, ctx.const(np.array(rois, np.float64), dt)], attrs=attrs, exact=True)


@op("NonMaxSuppression", "image")
def build_nms(ctx):
    b, k, c = ctx.r(1, 2), ctx.r(1, 6), ctx.r(1, 2)
    def boxes(rng, s, run):
        a = rng.uniform(0, 10, s).astype(np.float32)
        return a
    # distinct scores (ties order differently between implementations)
    scores = lambda rng, s, run: rng.permutation(int(np.prod(s))).reshape(s).astype(  # noqa
        np.float32) / max(1, int(np.prod(s)))
    ins = [ctx.new(TP.FLOAT, [b, k, 4], boxes), ctx.new(TP.FLOAT, [b, c, k], scores)]
    if ctx.coin(0.8):
        ins.append(ctx.i64([ctx.r(0, 4)]))
        if ctx.coin(0.8):
            ins.append(ctx.const(np.array([ctx.u(0.1, 0.9)]), TP.FLOAT))
            if ctx.coin(0.5):
                ins.append(ctx.const(np.array([ctx.u(0.0, 0.5)]), TP.FLOAT))
    ctx.node(ins, attrs={"center_point_box": ctx.r(0, 1)} if ctx.coin() else {}, exact=True)


@op("NegativeLogLikelihoodLoss", "loss")
def build_nll(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n, c = ctx.r(1, 3), ctx.r(1, 4)
    extra = [ctx.r(1, 3) for _ in range(ctx.r(0, 1))]
    x = ctx.new(dt, [n, c] + extra)
    ignore = ctx.r(0, c - 1) if ctx.coin(0.3) else None
    it = ctx.choice(ctx.types("Tind"))
    t = ctx.new(it, [n] + extra, lambda rng, s, run: rng.integers(0, c, s).astype(
        dtypes.np_type(it)))
    ins = [x, t] + ([ctx.new(dt, [c], lambda rng, s, run: values.random_array(
        rng, dt, s, False, 0.1, 2))] if ctx.coin() else [])
    attrs = {"reduction": ctx.choice(["none", "sum", "mean"])} if ctx.coin(0.8) else {}
    if ignore is not None:
        attrs["ignore_index"] = ignore
    ctx.node(ins, attrs=attrs)


@op("SoftmaxCrossEntropyLoss", "loss")
def build_sce(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n, c = ctx.r(1, 3), ctx.r(1, 4)
    extra = [ctx.r(1, 3) for _ in range(ctx.r(0, 1))]
    x = ctx.new(dt, [n, c] + extra)
    it = ctx.choice(ctx.types("Tind"))
    t = ctx.new(it, [n] + extra, lambda rng, s, run: rng.integers(0, c, s).astype(
        dtypes.np_type(it)))
    ins = [x, t] + ([ctx.new(dt, [c], lambda rng, s, run: values.random_array(
        rng, dt, s, False, 0.1, 2))] if ctx.coin() else [])
    attrs = {"reduction": ctx.choice(["none", "sum", "mean"])} if ctx.coin(0.8) else {}
    if ctx.coin(0.3):
        attrs["ignore_index"] = ctx.r(0, c - 1)
    ctx.node(ins, n_out=ctx.r(1, 2), attrs=attrs)


def recurrent(name, gates):
    @op(name, "rnn")
    def build(ctx):
        dt = ctx.dtype(ctx.input_types(0))
        seq, batch, inp, hid = ctx.r(1, 3), ctx.r(1, 2), ctx.r(1, 3), ctx.r(1, 3)
        direction = ctx.choice(["forward", "reverse", "bidirectional"])
        nd = 2 if direction == "bidirectional" else 1
        layout = ctx.r(0, 1) if ctx.coin(0.3) else 0
        x = ctx.new(dt, [batch, seq, inp] if layout else [seq, batch, inp])
        small = lambda rng, s, run: values.random_array(rng, dt, s, False, -0.8, 0.8)  # noqa
        ins = [x, ctx.new(dt, [nd, gates * hid, inp], small),
               ctx.new(dt, [nd, gates * hid, hid], small)]
        if ctx.coin(0.7):
            ins.append(ctx.new(dt, [nd, 2 * gates * hid], small))
            if ctx.coin(0.4):
                ins.append(ctx.const(ctx.rng.integers(1, seq + 1, batch), TP.INT32))
                if ctx.coin(0.5):
                    ins.append(ctx.new(dt, [batch, nd, hid] if layout else [nd, batch, hid]))
        attrs = {"hidden_size": hid, "direction": direction}
        if layout:
            attrs["layout"] = 1
        if name == "GRU" and ctx.coin():
            attrs["linear_before_reset"] = ctx.r(0, 1)
        if name == "LSTM" and ctx.coin(0.2):
            attrs["input_forget"] = 1
        if ctx.coin(0.2):
            attrs["clip"] = ctx.u(0.5, 3)
        if name == "RNN" and ctx.coin(0.3):
            attrs["activations"] = [ctx.choice(["Tanh", "Relu", "Sigmoid"])] * nd
        ctx.node(ins, n_out=ctx.r(1, 3 if name == "LSTM" else 2), attrs=attrs)
    return build


recurrent("RNN", 1)
recurrent("GRU", 3)
recurrent("LSTM", 4)


@op("DFT", "signal")
def build_dft(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    n = ctx.r(1, 8)
    complex_in = ctx.coin(0.4)
    x = ctx.new(dt, [ctx.r(1, 2), n, 2 if complex_in else 1])
    attrs = {}
    onesided = ctx.coin(0.3) and not complex_in
    if onesided:
        attrs["onesided"] = 1
    if ctx.coin(0.3) and not onesided:
        attrs["inverse"] = 1
    ins = [x]
    if ctx.coin(0.3):
        ins.append(ctx.i64(ctx.r(1, 8)))
    if ctx.opset >= 20:
        if ctx.coin(0.3):
            while len(ins) < 2:
                ins.append(None)
            ins.append(ctx.i64(1))
    else:
        attrs["axis"] = 1
    ctx.node(ins, attrs=attrs)


@op("STFT", "signal")
def build_stft(ctx):
    dt = ctx.dtype(ctx.input_types(0))
    sig = ctx.r(4, 12)
    frame = ctx.r(2, min(sig, 6))
    x = ctx.new(dt, [ctx.r(1, 2), sig, 1])
    step = ctx.i64(ctx.r(1, 3))
    ins = [x, step]
    if ctx.coin(0.6):
        ins += [ctx.new(dt, [frame]), ctx.i64(frame) if ctx.coin() else None]
        if ins[-1] is None:
            ins.pop()
    else:
        ins += [None, ctx.i64(frame)]
    # onesided always explicit: onnx 1.16's shape inference takes an absent onesided as 0 (the
    # spec's default is 1) and declares frame_length bins where the output has frame_length/2+1.
    ctx.node(ins, attrs={"onesided": ctx.r(0, 1)})


def window(name):
    @op(name, "signal")
    def build(ctx):
        it = ctx.choice(ctx.types("T1"))
        attrs = {}
        if ctx.coin():
            attrs["periodic"] = ctx.r(0, 1)
        if ctx.coin():  # float types only: an integer output truncates values such as
            # 0.99999994 vs 1.0000001, which differ by rounding alone
            attrs["output_datatype"] = ctx.choice([t for t in ctx.types("T2")
                                                   if dtypes.is_float(t)])
        ctx.node([ctx.const(np.array(ctx.r(1, 10)), it)], attrs=attrs)
    return build


for _n in ["HannWindow", "HammingWindow", "BlackmanWindow"]:
    window(_n)


@op("MelWeightMatrix", "signal")
def build_mel(ctx):
    it = ctx.choice(ctx.types("T1"))
    ft = ctx.choice(ctx.types("T2"))
    dft = ctx.r(4, 16)
    rate = ctx.r(1000, 16000)
    lo = ctx.u(0, rate / 4)
    ins = [ctx.const(np.array(ctx.r(1, 6)), it), ctx.const(np.array(dft), it),
           ctx.const(np.array(rate), it), ctx.const(np.array(lo), ft),
           ctx.const(np.array(ctx.u(lo + 10, rate / 2)), ft)]
    attrs = {}
    if ctx.coin():
        attrs["output_datatype"] = ctx.choice([t for t in ctx.types("T3") if dtypes.is_float(t)])
    ctx.node(ins, attrs=attrs)

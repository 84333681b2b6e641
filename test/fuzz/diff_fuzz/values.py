"""Random input values, with edge values (NaN, +-Inf, -0, denormals, huge magnitudes, integer
extremes) planted with some probability."""
import numpy as np

import dtypes

EDGE_PROB = 0.2  # chance that one input tensor carries edge values


def float_edges(npdt):
    """No huge finite values (the type's max, 1e30): a sum, dot product or variance over them
    overflows or not depending on the evaluation order and the intermediate precision (float16
    engines that accumulate in float32 stay finite), which ONNX leaves to the implementation.
    Infinities test the same paths deterministically (inf + -inf is NaN in any order)."""
    fi = np.finfo(npdt)
    tiny = float(fi.tiny)
    return [np.nan, np.inf, -np.inf, -0.0, 0.0, tiny / 4, -tiny / 4, tiny, 1.0, -1.0, 0.5, -0.5]


def int_edges(npdt):
    ii = np.iinfo(npdt)
    return [int(ii.min), int(ii.max), 0, 1, -1 if ii.min < 0 else 2, int(ii.max) - 1,
            int(ii.min) + 1]


def finite(dt):
    """gen without edge values."""
    return lambda rng, shape, run: random_array(rng, dt, shape, False)


def small_ints(dt):
    """gen for integer operands of arithmetic: no extremes (signed overflow is undefined in C
    and C++, and onnxruntime's reductions saturate or wrap by kernel)."""
    return lambda rng, shape, run: random_array(rng, dt, shape, False)


def random_array(rng, dt, shape, edges=None, low=None, high=None):
    """An array of ONNX type dt and a concrete shape. edges: True/False force planting edge
    values, None draws it with EDGE_PROB. low/high bound the regular values (ints: [low, high))."""
    npdt = dtypes.np_type(dt)
    shape = tuple(int(s) for s in shape)
    if edges is None:
        edges = rng.random() < EDGE_PROB
    if dt == dtypes.TP.BOOL:
        return rng.random(shape) < 0.5
    if dtypes.is_float(dt):
        lo = -3.0 if low is None else low
        hi = 3.0 if high is None else high
        a = rng.uniform(lo, hi, shape) if rng.random() < 0.3 else \
            np.clip(rng.standard_normal(shape) * (hi - lo) / 4 + (hi + lo) / 2, lo, hi)
        a = a.astype(npdt)
        pool = float_edges(npdt)
    else:
        ii = np.iinfo(npdt)
        lo = (-5 if ii.min < 0 else 0) if low is None else max(low, int(ii.min))
        hi = 6 if high is None else min(high, int(ii.max) + 1)
        a = rng.integers(lo, hi, shape, dtype=np.int64 if npdt != np.uint64 else np.uint64)
        a = a.astype(npdt)
        pool = int_edges(npdt)
    if edges and a.size:
        k = max(1, int(a.size * rng.uniform(0.1, 0.4)))
        idx = rng.choice(a.size, size=k, replace=False)
        flat = a.reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            flat[idx] = np.array([pool[j] for j in rng.integers(0, len(pool), k)]).astype(npdt)
    return a

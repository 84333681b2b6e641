"""Output comparison. Integer and bool outputs, and float outputs the generator marks exact (only
data movement / selection since the inputs), must be identical; other float outputs must agree
within the dtype's tolerance: |got - want| <= atol + rtol * |want| + rtol / 10 * max|want|
(the last term absorbs cancellation in sums of large terms). NaN positions must match and an
infinity must be one in both, with the same sign."""
import numpy as np

# dtype -> (rtol, atol). float16 is looser: implementations differ in where they round to half.
TOL = {np.dtype(np.float64): (1e-6, 1e-7), np.dtype(np.float32): (1e-3, 1e-4),
       np.dtype(np.float16): (1e-2, 1e-2)}


def summary(a):
    """A short description of an array (for reports)."""
    a = np.asarray(a)
    s = {"dtype": str(a.dtype), "shape": list(a.shape)}
    if a.size == 0:
        return s
    if a.dtype.kind == "f":
        fin = a[np.isfinite(a)]
        s.update(nan=int(np.isnan(a).sum()), posinf=int(np.isposinf(a).sum()),
                 neginf=int(np.isneginf(a).sum()))
        if fin.size:
            s.update(min=float(fin.min()), max=float(fin.max()), mean=float(fin.mean()))
    elif a.dtype.kind in "iub":
        s.update(min=int(a.min()), max=int(a.max()), sum=int(a.astype(np.int64).sum())
                 if a.dtype.kind != "u" else int(a.astype(np.uint64).sum()))
    s["head"] = a.reshape(-1)[:8].tolist()
    return s


def _first(mask):
    """Index of the first True (a 0-d mask gives ())."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def compare(got, want, exact=False):
    """None when got matches want, else a one-line reason."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs {list(want.shape)}"
    if got.dtype != want.dtype:
        if got.dtype.kind == want.dtype.kind == "b" or got.size == 0:
            pass
        else:
            return f"dtype {got.dtype} vs {want.dtype}"
    if got.size == 0:
        return None
    if want.dtype.kind != "f":
        bad = got != want
        if bad.any():
            i = _first(bad)
            return (f"{int(bad.sum())}/{bad.size} elements differ (exact {want.dtype}); first at "
                    f"{list(i)}: {got[i].item()!r} vs {want[i].item()!r}")
        return None
    gn, wn = np.isnan(got), np.isnan(want)
    if (gn != wn).any():
        i = _first(gn != wn)
        return (f"NaN positions differ ({int(gn.sum())} vs {int(wn.sum())} NaNs); first at "
                f"{list(i)}: {got[i].item()!r} vs {want[i].item()!r}")
    gi, wi = np.isinf(got), np.isinf(want)
    bad_inf = (gi | wi) & ~(gn | wn) & ((gi != wi) | (np.sign(got) != np.sign(want)))
    if bad_inf.any():
        i = _first(bad_inf)
        return f"infinities differ; first at {list(i)}: {got[i].item()!r} vs {want[i].item()!r}"
    fin = ~(gn | gi | wi)
    g = got[fin].astype(np.float64)
    w = want[fin].astype(np.float64)
    if exact:
        bad = g != w
        if bad.any():
            k = int(np.argmax(bad))
            return (f"{int(bad.sum())}/{bad.size} finite elements differ (exact output); e.g. "
                    f"{g[k]!r} vs {w[k]!r}")
        return None
    rtol, atol = TOL[want.dtype]
    scale = float(np.abs(w).max()) if w.size else 0.0
    err = np.abs(g - w)
    lim = atol + rtol * np.abs(w) + rtol / 10 * scale
    bad = err > lim
    if bad.any():
        k = int(np.argmax(err - lim))
        return (f"{int(bad.sum())}/{bad.size} elements beyond rtol {rtol:g} / atol {atol:g}; "
                f"worst {g[k]!r} vs {w[k]!r} (abs err {err[k]:.3g})")
    return None


def compare_all(got, want, exact_map):
    """got / want: name -> array. {name: reason} for the outputs that differ."""
    out = {}
    for name, w in want.items():
        if name not in got:
            out[name] = "relaxc wrote no output file"
            continue
        why = compare(got[name], w, exact_map.get(name, False))
        if why:
            out[name] = why
    return out

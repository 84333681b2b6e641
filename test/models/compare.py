#!/usr/bin/env python3
# Compares two .npy arrays (actual vs reference) with rtol/atol; prints the max abs diff, exit 1 on mismatch.
import argparse
import sys

import numpy as np

RTOL = 1e-4
ATOL = 1e-5


def compare(actual, ref, rtol=RTOL, atol=ATOL):
    """Returns (ok, message). Shapes and dtypes must match exactly; values |a-r| <= atol + rtol*|r|."""
    if actual.shape != ref.shape:
        return False, f"shape mismatch: {list(actual.shape)} vs reference {list(ref.shape)}"
    if actual.dtype != ref.dtype:
        return False, f"dtype mismatch: {actual.dtype} vs reference {ref.dtype}"
    if actual.size == 0:
        return True, "max abs diff 0 (empty arrays)"
    a = actual.astype(np.float64)
    r = ref.astype(np.float64)
    nan_a, nan_r = np.isnan(a), np.isnan(r)
    if not np.array_equal(nan_a, nan_r):
        return False, f"NaN mismatch at {int(np.sum(nan_a != nan_r))} element(s)"
    diff = np.where(nan_a, 0.0, np.abs(a - r))
    max_abs = float(np.max(diff))
    bad = diff > atol + rtol * np.abs(np.where(nan_r, 0.0, r))
    if np.any(bad):
        idx = np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), a.shape)
        return False, (f"max abs diff {max_abs:.3g}; {int(np.sum(bad))}/{a.size} element(s) exceed "
                       f"rtol={rtol:g} atol={atol:g}, worst at {list(map(int, idx))}: "
                       f"{a[idx]!r} vs reference {r[idx]!r}")
    return True, f"max abs diff {max_abs:.3g} (rtol={rtol:g} atol={atol:g})"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("actual")
    p.add_argument("reference")
    p.add_argument("--rtol", type=float, default=RTOL)
    p.add_argument("--atol", type=float, default=ATOL)
    args = p.parse_args()
    ok, msg = compare(np.load(args.actual), np.load(args.reference), args.rtol, args.atol)
    print(("OK: " if ok else "MISMATCH: ") + msg)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

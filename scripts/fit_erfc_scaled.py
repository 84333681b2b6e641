#!/usr/bin/env python3
"""Regenerates kErfcScaled in lib/codegen/tir_math_to_mlir.cc: g(x) = erfc(x) * exp(x^2) on
[0.875, 4] as a degree-12 polynomial in u = (2x - 4.875) / 3.125 in [-1, 1] (a Chebyshev
least-squares fit weighted by 1/g, i.e. in relative error, converted to the power basis).
Prints the coefficients (u^0 first) and the f32-evaluated erf's worst error in ulps.
Run with the test venv (numpy): bash scripts/venv-python.sh scripts/fit_erfc_scaled.py"""
import math

import numpy as np
from numpy.polynomial import chebyshev

LO, HI, DEGREE = 0.875, 4.0, 12


def main():
    xs = np.linspace(LO, HI, 40001)
    g = np.array([math.erfc(x) * math.exp(x * x) for x in xs])
    u = (2 * xs - (LO + HI)) / (HI - LO)
    coef = chebyshev.cheb2poly(chebyshev.chebfit(u, g, DEGREE, w=1 / g))
    print(",\n".join("%.9e" % c for c in coef))
    f = np.float32
    x = np.linspace(LO, 6, 1000001).astype(f)
    uu = (np.minimum(x, f(HI)) * f(2 / (HI - LO)) - f((LO + HI) / (HI - LO))).astype(f)
    q = f(coef[-1])
    for c in coef[-2::-1]:
        q = (q * uu + f(c)).astype(f)
    e = np.exp(-(np.minimum(x, f(HI)) ** 2).astype(f).astype(np.float64)).astype(f)
    got = (f(1) - (e * q).astype(f)).astype(np.float64)
    want = np.array([math.erf(float(v)) for v in x])
    w = want.astype(f)
    spacing = (np.nextafter(w, f(np.inf)) - w).astype(np.float64)
    print("max error: %.3f ulp" % np.max(np.abs(got - want) / spacing))


if __name__ == "__main__":
    main()

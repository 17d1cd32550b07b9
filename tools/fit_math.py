"""Fits the polynomials and rational functions of src/backends/cpu/math.cpp for the least largest relative
error, in f64 (Lawson reweighting of least squares; for the rational forms, Sanathanan-Koerner linearisation).

usage: python3 tools/fit_math.py tanh|erf L NP NQ   x P(x^2) / Q(x^2) on [0, L], Q(0) = 1, NP and NQ terms
       python3 tools/fit_math.py exp N              exp(r) = 1 + r Q(r) on [-ln 2 / 2, ln 2 / 2], N terms
       python3 tools/fit_math.py log N              log(1 + f) = f - f^2 / 2 + f^3 P(f), 1 + f in [sqrt(1/2), sqrt(2))

Precise math: tanh 7.9 6 4, erf 3.92 6 6, exp 5; fast math: tanh 6.0 4 3, erf 3.5 4 4, exp 4, log 4 (needs numpy;
erf needs scipy). Prints the model's largest relative error and the coefficients, highest power first, as
the code takes them. Check the f32 result with build/xlite-check-math OP (every f32 without --stride).
"""
import sys

import numpy as np


def lawson(columns, target, weight, iterations=300):
    """Coefficients c minimising max |columns @ c - target| * weight."""
    w = np.ones(len(target))
    best = None
    for _ in range(iterations):
        c, *_ = np.linalg.lstsq(columns * (w * weight)[:, None], target * w * weight, rcond=None)
        error = np.abs(columns @ c - target) * weight
        if best is None or error.max() < best[0]:
            best = (error.max(), c)
        w = w * (error / error.max()) ** 0.3
        w /= w.max()
    return best


def odd_rational(fn, L, n_p, n_q):
    k = np.arange(40000)
    x = (L / 2) * (1 - np.cos(np.pi * (k + 0.5) / len(k)))  # Chebyshev points, dense at both ends
    x = np.sort(np.concatenate([x, np.linspace(1e-4, L, 20000)]))
    t = fn(x)
    z = x * x / (L * L)  # scaled for conditioning; the coefficients are rescaled at the end
    w = np.ones_like(x)
    q_prev = np.ones_like(x)
    best = None
    for it in range(400):
        # x P(z) - t (Q(z) - 1) = t, weighted by 1 / (t Q_previous): the relative error, linearised.
        A = np.concatenate([np.stack([x * z**i for i in range(n_p)], 1),
                            np.stack([-t * z**i for i in range(1, n_q)], 1)], 1)
        W = w / (t * q_prev)
        coef, *_ = np.linalg.lstsq(A * W[:, None], t * W, rcond=None)
        a, b = coef[:n_p], np.concatenate([[1.0], coef[n_p:]])
        Q = sum(b[i] * z**i for i in range(n_q))
        rel = np.abs(x * sum(a[i] * z**i for i in range(n_p)) / Q - t) / t
        if best is None or rel.max() < best[0]:
            best = (rel.max(), a.copy(), b.copy())
        q_prev = Q
        if it > 10:  # Lawson: weight up where the error is largest
            w = w * (rel / rel.max()) ** 0.3
            w /= w.max()
    worst, a, b = best
    return worst, a / (L * L) ** np.arange(n_p), b / (L * L) ** np.arange(n_q)


def show(name, values):
    print(name + ":", ", ".join(f"{v:.9e}" for v in values[::-1]))


what = sys.argv[1] if len(sys.argv) > 1 else ""
if what in ("tanh", "erf"):
    L, n_p, n_q = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    if what == "tanh":
        fn = np.tanh
    else:
        from scipy.special import erf as fn
    worst, a, b = odd_rational(fn, L, n_p, n_q)
    print(f"{what} on [0, {L}]: largest relative error {worst:.3e}; 1 - {what}({L}) = {1 - fn(L):.2e}")
    show("P", a)
    show("Q", b)
elif what == "exp":
    n = int(sys.argv[2])
    r = np.linspace(-np.log(2) / 2, np.log(2) / 2, 20001)
    worst, c = lawson(np.stack([r ** (1 + i) for i in range(n)], 1), np.exp(r) - 1, 1 / np.exp(r))
    print(f"exp, Q of {n} terms: largest relative error {worst:.3e}")
    show("Q", c)
elif what == "log":
    n = int(sys.argv[2])
    f = np.linspace(np.sqrt(0.5) - 1, np.sqrt(2) - 1, 40001)
    f = f[np.abs(f) > 1e-6]
    worst, c = lawson(np.stack([f ** (3 + i) for i in range(n)], 1), np.log1p(f) - f + f * f / 2,
                      1 / np.abs(np.log1p(f)))
    print(f"log, P of {n} terms: largest relative error {worst:.3e}")
    show("P", c)
else:
    sys.exit(__doc__)

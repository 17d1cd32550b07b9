"""Fits the rational tanh of src/backends/cpu/math.cpp: tanh(x) ~ x P(x^2) / Q(x^2) on [0, L], Q(0) = 1,
for the least largest relative error (Sanathanan-Koerner linearisation with Lawson reweighting, in f64).

usage: python3 tools/fit_tanh.py [L [numerator terms [denominator terms]]]   (defaults 7.9 6 4; needs numpy)

Prints the model's largest relative error and the coefficients, lowest power first; the code takes them
highest first. Check the f32 result with build/xlite-check-math tanh (every f32).
"""
import sys

import numpy as np

L = float(sys.argv[1]) if len(sys.argv) > 1 else 7.9
n_p = int(sys.argv[2]) if len(sys.argv) > 2 else 6
n_q = int(sys.argv[3]) if len(sys.argv) > 3 else 4

k = np.arange(40000)
x = (L / 2) * (1 - np.cos(np.pi * (k + 0.5) / len(k)))  # Chebyshev points, dense at both ends
x = np.sort(np.concatenate([x, np.linspace(1e-4, L, 20000)]))
t = np.tanh(x)
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
a, b = a / (L * L) ** np.arange(n_p), b / (L * L) ** np.arange(n_q)
print(f"largest relative error of the model on [0, {L}]: {worst:.3e}")
print("P:", ", ".join(f"{v:.9e}" for v in a))
print("Q:", ", ".join(f"{v:.9e}" for v in b))

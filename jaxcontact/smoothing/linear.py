"""Model smoothing of linear elastic parts (docs/theory/smoothing.md) and its exact modal solution.

Replacing the elastic stress by its mean over (t, t + h), with the Taylor
expansion u(t + s) ≈ u + s u̇ + s² ü / 2 averaged over s ∈ (0, h), turns

    M ü + C u̇ + K u = F      into      (M + h²K/6) ü + (C + hK/2) u̇ + K u = F.

Only the elastic force is averaged: the viscous force C u̇ is kept as it is
(the paper smooths the stress of the elastic parts only). h is a parameter
leaf ``p["h"]`` (batchable, differentiable); h = 0 gives the original model.

Because M + h²K/6, hK/2 and K are all combinations of M and K, the modes of
(M, K) still decouple the smoothed system: a mode of frequency ω obeys

    (1 + a) η̈ + (h/2) ω² η̇ + ω² η = φᵀF,    a = h²ω²/6.

Its characteristic roots are s = −σ ± i ω̄ with σ = hω² / (4(1 + a)) and

    ω̄ / ω = (1 + h²ω²/48 · 5)^(1/2) / (1 + h²ω²/6)      (exact, :func:`frequency_ratio`),

since ω̄² = ω²/(1 + a) − σ² = ω² (1 + a − h²ω²/16) / (1 + a)². The paper's form
(1 + h²ω²/6)^(-1/2) (1 + 5h²ω²/48)^(1/2) has the first exponent −1/2 instead
of −1; they differ already at order h²ω² (1 − 3h²ω²/96 against the exact
1 − 11h²ω²/96), so we implement and test the exact ratio.
The amplitude ratio (1 + h²ω²/6)^(-1) is that of the response to a load that
is fast compared with the mode (an impulse or a step): the modal mass grows by
1 + a, so the velocity jump after an impulse, and the acceleration right after
a step load, are divided by 1 + a (:func:`amplitude_ratio`). Rigid modes
(ω = 0) are untouched: a = 0 and no damping.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import scipy.linalg

from jaxcontact.linear import linear_system


def smoothed_linear_system(M, K, C=None, F=None, h=0.0, names=()):
    """``(system, params)`` for the smoothed (M + h²K/6) ü + (C + hK/2) u̇ + K u = F.

    The same parameters as :func:`jaxcontact.linear.linear_system` (no contacts)
    plus ``params["h"]``, the smoothing window (s, ≥ 0). The energy diagnostic
    keeps the unsmoothed potential ½ qᵀKq − Fᵀq.
    """
    h = np.asarray(h, float)
    if h.shape != () or not np.isfinite(h) or h < 0:
        raise ValueError(f"smoothing window h = {h} must be a finite scalar ≥ 0")
    system, params = linear_system(M, K, C, F, names=names)
    params["h"] = jnp.asarray(h, jnp.result_type(float))
    return dataclasses.replace(system, mass=_smoothed_mass, forces=_smoothed_forces), params


def _smoothed_mass(q, p):
    return (p["M"] + p["h"] ** 2 / 6.0 * p["K"]).astype(q.dtype)


def _smoothed_forces(q, u, t, p):
    return (p["F"] - p["K"] @ q - (p["C"] + 0.5 * p["h"] * p["K"]) @ u).astype(q.dtype)


def frequency_ratio(h, omega):
    """ω̄/ω = (1 + 5h²ω²/48)^(1/2) / (1 + h²ω²/6): damped frequency of a smoothed mode (exact)."""
    b = (h * omega) ** 2
    return jnp.sqrt(1.0 + 5.0 * b / 48.0) / (1.0 + b / 6.0)


def amplitude_ratio(h, omega):
    """(1 + h²ω²/6)^(-1): the velocity jump of a smoothed mode after an impulse, over the original's."""
    return 1.0 / (1.0 + (h * omega) ** 2 / 6.0)


def decay_rate(h, omega):
    """σ = hω² / (4(1 + h²ω²/6)): the smoothed mode decays like exp(−σt)."""
    return h * omega**2 / (4.0 * (1.0 + (h * omega) ** 2 / 6.0))


def modal_solution(M, K, F, q0, u0, t, h=0.0):
    """Exact solution of (M + h²K/6) ü + (h/2) K u̇ + K u = F (C = 0) at times ``t`` (numpy).

    The independent truth for any undamped linear chain: eigen-decomposition
    K φ = ω² M φ (φᵀMφ = 1), then each mode's oscillator solved in closed form
    (rigid modes ω = 0: η = η0 + η̇0 t + f t²/2). Returns (q, u), each (len(t), n).
    """
    M, K, F = (np.asarray(a, float) for a in (M, K, F))
    q0, u0, t = (np.asarray(a, float) for a in (q0, u0, t))
    w2, Phi = scipy.linalg.eigh(K, M)
    scale = np.abs(w2).max() if w2.size else 1.0
    w2 = np.where(np.abs(w2) < 1e-12 * scale, 0.0, w2)  # exact rigid modes
    eta0, deta0, force = Phi.T @ M @ q0, Phi.T @ M @ u0, Phi.T @ F
    eta = np.empty((t.size, w2.size))
    deta = np.empty_like(eta)
    for i, (om2, e0, v0, f) in enumerate(zip(w2, eta0, deta0, force)):
        if om2 == 0.0:
            eta[:, i], deta[:, i] = e0 + v0 * t + 0.5 * f * t**2, v0 + f * t
            continue
        m = 1.0 + h**2 * om2 / 6.0
        sigma = h * om2 / (4.0 * m)
        wd = np.sqrt(om2 / m - sigma**2)
        static = f / om2
        A = e0 - static
        B = (v0 + sigma * A) / wd
        c, s, ex = np.cos(wd * t), np.sin(wd * t), np.exp(-sigma * t)
        eta[:, i] = static + ex * (A * c + B * s)
        deta[:, i] = ex * ((-sigma * A + wd * B) * c + (-sigma * B - wd * A) * s)
    return eta @ Phi.T, deta @ Phi.T


def chain_stiffness(stiffnesses):
    """K of a chain: spring k_i between masses i and i+1 (jnp, traceable: vmap over stiffness values)."""
    ks = jnp.asarray(stiffnesses)
    n = ks.shape[0] + 1
    off = jnp.zeros(n).at[:-1].add(ks).at[1:].add(ks)  # diagonal: springs on each side
    return jnp.diag(off) - jnp.diag(ks, 1) - jnp.diag(ks, -1)


def spring_chain(masses, stiffnesses, force, h=0.0):
    """The smoothing paper's chain: masses in a row, spring k_i between masses i and i+1, ``force`` on the last.

    Returns ``(system, params)`` of :func:`smoothed_linear_system` (coordinates x_1..x_n);
    replace ``params["K"]`` by :func:`chain_stiffness` of new values to batch over stiffness.
    """
    masses, ks = np.asarray(masses, float), np.asarray(stiffnesses, float)
    n = masses.size
    if ks.shape != (n - 1,):
        raise ValueError(f"a chain of {n} masses needs {n - 1} stiffnesses; got shape {ks.shape}")
    if np.any(ks < 0):
        raise ValueError(f"stiffnesses = {ks} must be ≥ 0")
    F = np.zeros(n)
    F[-1] = force
    return smoothed_linear_system(
        np.diag(masses), np.asarray(chain_stiffness(ks)), F=F, h=h, names=tuple(f"x{i + 1}" for i in range(n))
    )


__all__ = [
    "amplitude_ratio",
    "chain_stiffness",
    "decay_rate",
    "frequency_ratio",
    "modal_solution",
    "smoothed_linear_system",
    "spring_chain",
]

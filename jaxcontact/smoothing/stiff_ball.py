"""A ball dropped on a stiff compliant ground (K = 1e8 N/m): smoothing of a contact spring (docs/theory/smoothing.md).

Self-contained, one coordinate (height y of the ball's centre, radius R): while the
ball penetrates, δ = R − y > 0, the ground pushes with the linear spring K δ; there is
no damping, so the exact rebound is elastic (rebound speed = impact speed).

Smoothing treats the active contact spring as a linear elastic part (:mod:`.linear`):
while δ > 0 its force is K δ̄ with δ̄ = δ + (h/2) δ̇ + (h²/6) δ̈, i.e.

    (m + [δ > 0] h²K/6) ÿ = −m g + [δ > 0] K (δ − (h/2) ẏ).

The contact mode ω = √(K/m) then has the smoothed frequency and damping of
:func:`.linear.frequency_ratio`/:func:`.linear.decay_rate`, so an explicit step of
order h is stable instead of ≈ 2.8/ω — at the price of the energy the smoothing
damper hK/2 dissipates during the contact (a lower rebound), which
:func:`rebound_speed` measures. The force is not clipped at zero: with a large h the
smoothed spring may pull slightly just before separation (the averaged stress is
tensile there), as the linear smoothing prescribes.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxcontact.system import LagrangianSystem


def stiff_ball(K=1e8, m=1.0, radius=0.1, g=9.81, h=0.0):
    """``(system, params)`` of the dropped ball; every value a parameter leaf (``K, m, R, g, h``)."""
    values = {"K": K, "m": m, "R": radius, "g": g, "h": h}
    for name, v in values.items():
        v = np.asarray(v, float)
        if v.shape != () or not np.isfinite(v) or v < 0 or (v == 0 and name in ("K", "m", "R")):
            raise ValueError(f"stiff_ball: {name} = {v} must be a finite scalar {'≥' if name in ('g', 'h') else '>'} 0")
    params = {k: jnp.asarray(v, jnp.result_type(float)) for k, v in values.items()}

    def active(q, p):
        return (p["R"] - q[0] > 0).astype(q.dtype)

    def mass(q, p):
        return (p["m"] + active(q, p) * p["h"] ** 2 * p["K"] / 6.0)[None, None]

    def forces(q, u, t, p):
        return (-p["m"] * p["g"] + active(q, p) * p["K"] * (p["R"] - q[0] - 0.5 * p["h"] * u[0]))[None]

    def potential(q, t, p):
        return p["m"] * p["g"] * q[0] + 0.5 * p["K"] * jnp.maximum(p["R"] - q[0], 0.0) ** 2

    return LagrangianSystem(n_dof=1, mass=mass, forces=forces, potential=potential, names=("y",)), params


def rebound_speed(ys, p):
    """Speed at which the ball leaves the ground after its first contact, from samples ys = (y, u).

    At the first sample after the contact (y ≥ R again, rising) the separation speed follows
    from free flight: √(u² + 2g(y − R)). NaN if the ball never left the ground in ``ys``, inf
    or NaN if the integration blew up (jnp; vmap over runs).
    """
    y, u = ys[:, 0], ys[:, 1]
    touched = jnp.cumsum(y < p["R"]) > 0
    left = touched & (y >= p["R"]) & (u > 0)
    i = jnp.argmax(left)
    speed = jnp.sqrt(u[i] ** 2 + 2.0 * p["g"] * (y[i] - p["R"]))
    return jnp.where(left.any(), speed, jnp.nan)

"""Continuous contact laws (docs/theory/compliant.md): compliant normal force and regularized Coulomb friction.

Pure elementwise functions of arrays (any broadcastable shapes), finite with
finite gradients at the kinks (δ = 0, v = 0) by the double-``where`` trick, so
they can sit inside jitted, vmapped and differentiated simulations.

Sign conventions: δ = −g_N is the penetration (positive when the bodies
overlap), δ̇ = −γ_N its rate (positive while compressing); the returned normal
force F_N ≥ 0 pushes the bodies apart; the friction force opposes the slip
velocity v = γ_T.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

DAMPING_MODELS = ("hunt_crossley", "paper")
FRICTION_MODELS = ("exponential", "linear")
RESTITUTION_RELATIONS = ("exact", "flores", "lankarani_nikravesh")


def compliant_normal_force(delta, delta_dot, stiffness, exponent, damping, model: str = "hunt_crossley"):
    """F_N = K δ^n + D(δ) δ̇ for δ > 0, 0 otherwise; clipped at 0.

    model (static): "hunt_crossley" — D = c δ^n (Hunt & Crossley 1975: the
    damping vanishes with the penetration, so the force is continuous at first
    touch); "paper" — D = c δ, the form K δ^n + c δ δ̇ of the 2015 slider–bar
    paper. For n = 1 the two coincide.

    Clipping: during restitution (δ̇ < 0) the damping term can exceed the
    elastic one just before separation; a contact cannot pull, so F_N is
    clipped at 0 (the usual choice, e.g. Flores et al.). The clip is
    continuous, so the force stays a continuous function of (δ, δ̇).

    Safe at δ = 0 for any exponent: δ^n is evaluated on max(δ, 1) where δ ≤ 0,
    so neither the value nor the gradient (d/dn δ^n = δ^n log δ) sees log 0.
    """
    if model not in DAMPING_MODELS:
        raise ValueError(f"compliant damping model {model!r} must be one of {DAMPING_MODELS}")
    delta = jnp.asarray(delta)
    closed = delta > 0
    d = jnp.where(closed, delta, 1.0)
    d_n = jnp.where(closed, d**exponent, 0.0)
    if model == "hunt_crossley":
        f = d_n * (stiffness + damping * delta_dot)
    else:
        f = stiffness * d_n + damping * jnp.where(closed, delta, 0.0) * delta_dot
    return jnp.where(f > 0, f, 0.0)


def restitution_damping(stiffness, restitution, impact_speed, relation: str = "exact", iterations: int = 60):
    """Hunt–Crossley damping c (of D = c δ^n) that gives restitution ε ∈ (0, 1] at impact speed v⁻ > 0.

    With D = c δ^n the rebound ratio depends only on ζ = c v⁻ / K (not on the
    mass, the stiffness or n separately), so c must be chosen for an expected
    impact speed. Relations (static choice):

    * "exact" (default): an isolated impact (no other force during contact)
      obeys m v dv/dδ = −K δ^n (1 + (c/K) v); separating variables and
      integrating from δ = 0 at v⁻ to δ = 0 at v⁺ = −ε v⁻ gives
      ln(1 + ζ) − ln(1 − ε ζ) = (1 + ε) ζ, solved for ζ ∈ (0, 1/ε) by
      bisection with a fixed count (jit/vmap-able). On that solution
      1 + (c/K) δ̇ ≥ 1 − εζ > 0, so the force is never clipped.
    * "flores": c = 8 K (1 − ε) / (5 ε v⁻) (Flores, Machado, Silva, Martins,
      Multibody Syst. Dyn. 25, 2011), an approximation for the whole range.
    * "lankarani_nikravesh": c = 3 K (1 − ε²) / (4 v⁻) (Lankarani & Nikravesh,
      J. Mech. Des. 112, 1990), first order in 1 − ε; over-predicts the rebound
      for low ε.

    ε = 0 needs infinite damping and is not allowed here (c would be ∞).
    ``tests/test_contact_laws.py`` integrates single impacts and checks the
    achieved ε of each relation.
    """
    if relation not in RESTITUTION_RELATIONS:
        raise ValueError(f"restitution relation {relation!r} must be one of {RESTITUTION_RELATIONS}")
    eps = jnp.asarray(restitution)
    if relation == "flores":
        return 8.0 * stiffness * (1.0 - eps) / (5.0 * eps * impact_speed)
    if relation == "lankarani_nikravesh":
        return 3.0 * stiffness * (1.0 - eps**2) / (4.0 * impact_speed)

    # f(ζ) = ln(1 + ζ) − ln(1 − εζ) − (1 + ε)ζ is < 0 on (0, ζ*) and > 0 on (ζ*, 1/ε):
    # bisect on x = εζ ∈ (0, 1) so the bracket is fixed whatever ε.
    def f(zeta):
        return jnp.log1p(zeta) - jnp.log1p(-eps * zeta) - (1.0 + eps) * zeta

    def bisect(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        neg = f(mid / eps) < 0
        return jnp.where(neg, mid, lo), jnp.where(neg, hi, mid)

    lo, hi = jax.lax.fori_loop(0, iterations, bisect, (jnp.zeros_like(eps), jnp.ones_like(eps)))
    zeta = 0.5 * (lo + hi) / eps
    return zeta * stiffness / impact_speed


def regularized_friction(slip_velocity, normal_force, friction, model: str = "exponential", width1=1e-3, width0=None):
    """Regularized Coulomb friction force −μ F_N s(v) opposing the slip velocity v.

    model (static):
    * "exponential": s(v) = (1 − exp(−|v| / v_r)) sgn v with v_r = ``width1``
      (the literature's α / v_r1 folded into one width v_r = v_r1 / α);
    * "linear": s(v) = c_d(|v|) sgn v, c_d = 0 below v0 = ``width0`` (default
      0), (|v| − v0)/(v1 − v0) between, 1 above v1 = ``width1``; needs v0 < v1.

    s is odd and continuous, so these laws have no static friction: a body
    under a tangential load creeps at the speed where |s(v)| balances it.
    Both are written without |v| on the branch at v = 0, so the gradient
    there is the slope 1/v_r (exponential) or 1/(v1 − v0) for v0 = 0 (linear).
    """
    v = jnp.asarray(slip_velocity)
    if model == "exponential":
        pos = v >= 0
        vp = jnp.where(pos, v, 0.0)
        vn = jnp.where(pos, 0.0, v)
        # −expm1(−x) = 1 − e^(−x), accurate for small x; each branch only sees its own sign.
        s = jnp.where(pos, -jnp.expm1(-vp / width1), jnp.expm1(vn / width1))
    elif model == "linear":
        v0 = 0.0 if width0 is None else width0
        span = width1 - v0
        s = jnp.clip((v - v0) / span, 0.0, 1.0) - jnp.clip((-v - v0) / span, 0.0, 1.0)
    else:
        raise ValueError(f"friction regularization {model!r} must be one of {FRICTION_MODELS}")
    return -friction * normal_force * s


def regularized_friction_vector(
    slip_velocity, normal_force, friction, model: str = "exponential", width1=1e-3, width0=None
):
    """Isotropic regularized Coulomb friction on a tangent plane: −μ F_N s(|v|) v / |v| for slips v (..., 2).

    The force opposes the slip *direction* with the magnitude of :func:`regularized_friction` at
    the slip speed |v| (applying the scalar law to each tangent component instead would tilt the
    force off −v and let it exceed μ F_N by √2). s(|v|)/|v| is finite at v = 0 (its limit, the
    law's slope there: 1/v_r, or 1/(v1 − v0) for v0 = 0 and 0 for v0 > 0 in the linear model), and
    |v| is taken by the double where, so value and gradient stay finite at rest.
    """
    v = jnp.asarray(slip_velocity)
    sq = jnp.sum(v * v, axis=-1)
    moving = sq > 0
    speed = jnp.sqrt(jnp.where(moving, sq, 1.0))
    magnitude = -regularized_friction(speed, 1.0, 1.0, model, width1, width0)  # s(|v|) ≥ 0
    if model == "exponential":
        slope = 1.0 / jnp.asarray(width1)
    else:
        v0 = 0.0 if width0 is None else width0
        slope = jnp.where(jnp.asarray(v0) > 0, 0.0, 1.0 / (jnp.asarray(width1) - v0))
    ratio = jnp.where(moving, magnitude / speed, slope)
    return -(friction * normal_force * ratio)[..., None] * v

"""Continuous contact laws (docs/theory/compliant.md): compliant normal force, regularized Coulomb friction,
and the hydrodynamic film force of a lubricated journal.

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


FILM_MODELS = ("positive", "fixed")


def short_bearing_force(
    eccentricity_ratio, eccentricity_rate, wedge_rate, viscosity, length, radius, clearance, film: str = "positive"
):
    """Hydrodynamic force (F_r, F_t) on the journal of a short journal bearing with a π film.

    Source: the short-bearing (Ocvirk) solution of Reynolds' equation with a π film, in the closed
    forms of Pinkus & Sternlicht, *Theory of Hydrodynamic Lubrication* (McGraw-Hill, 1961), as used
    for lubricated revolute clearance joints by Flores, Ambrósio, Claro & Lankarani, *Kinematics and
    Dynamics of Multibody Systems with Imperfect Joints* (Springer, 2008) and Flores, Ambrósio, Claro,
    Lankarani & Koshy, "A study on dynamics of mechanical systems including joints with clearance and
    lubrication" (Mech. Mach. Theory 41, 2006) — as we recall them; the test checks every closed form
    against a quadrature of the pressure.

    Geometry: ε = e/c (e the journal centre's distance from the bearing centre, c the radial
    clearance), φ the direction of the eccentricity, θ measured from the line of maximum film
    thickness, film h = c (1 + ε cos θ). With a = ω̄ − φ̇ (``wedge_rate``, ω̄ = (ω_journal +
    ω_bearing)/2; every angle counter-clockwise) the short-bearing pressure is

        p(θ, z) = (6 μ c / h³) (a ε sin θ − ε̇ cos θ) (L²/4 − z²),

    and its z-integral P(θ) = (μ L³ / c²) (a ε sin θ − ε̇ cos θ) / (1 + ε cos θ)³. The force on the
    journal, F_r along the eccentricity (positive away from the bearing centre) and F_t a quarter turn
    counter-clockwise from it, is F_r = R ∫ P cos θ dθ, F_t = R ∫ P sin θ dθ over the film:

    * ``film="positive"`` (default): the half where P > 0 (Gümbel's condition: the rest cavitates at
      ambient pressure), θ ∈ (θ₀, θ₀ + π) with θ₀ = atan2(ε̇, a ε) — it turns with the squeeze rate;
    * ``film="fixed"``: θ ∈ (0, π), the converging half whatever ε̇, which gives the printed
      Pinkus–Sternlicht forms (k = μ R L³ / (2 c²), ω_j + ω_b − 2φ̇ = 2a):

          F_r = −k [2 ε² (2a) / (1 − ε²)² + π ε̇ (1 + 2ε²) / (1 − ε²)^(5/2)]
          F_t =  k [π ε (2a) / (2 (1 − ε²)^(3/2)) + 4 ε ε̇ / (1 − ε²)²].

      The two films coincide when ε̇ = 0 and a > 0; with a squeeze (or a whirl faster than the mean
      speed, a < 0) the fixed half also integrates a sub-ambient pressure — a pull — which the
      positive film leaves out.

    Closed forms: with Sommerfeld's substitution ψ (cos ψ = (ε + cos θ)/(1 + ε cos θ), computed as
    ψ = θ − 2 atan(β sin θ / (1 + β cos θ)), β = ε/(1 + √(1 − ε²)), smooth for every θ) the three
    integrands become trigonometric polynomials:

        ∫ sin θ cos θ/(1+ε cos θ)³ dθ = [sin²ψ/2 + ε cos ψ] / (1 − ε²)²,
        ∫ cos²θ/(1+ε cos θ)³ dθ = [ψ/2 + sin 2ψ/4 − 2ε sin ψ + ε² ψ] / (1 − ε²)^(5/2),
        ∫ sin²θ/(1+ε cos θ)³ dθ = [ψ/2 − sin 2ψ/4] / (1 − ε²)^(3/2),

    so F_r = (μ R L³/c²) (a ε ΔS − ε̇ ΔC) and F_t = (μ R L³/c²) (a ε ΔQ − ε̇ ΔS) with those brackets
    taken between the film's ends. Valid for 0 ≤ ε < 1 (the force grows like (1 − ε²)^(−5/2));
    :func:`lubricated_journal_force` caps it and hands over to dry contact.

    Args:
        eccentricity_ratio: ε = e/c in [0, 1).
        eccentricity_rate: ε̇ [1/s] (positive while the journal moves away from the centre).
        wedge_rate: a = ω̄ − φ̇ [rad/s], the mean surface speed relative to the line of centres.
        viscosity: dynamic viscosity μ [Pa·s].
        length: bearing length L [m].
        radius: journal radius R [m].
        clearance: radial clearance c [m].
        film: "positive" or "fixed" (static), see above.

    Returns:
        (F_r, F_t) in N, arrays of the broadcast shape.
    """
    eps = jnp.asarray(eccentricity_ratio)
    return _film_force(eps, eccentricity_rate, eps * wedge_rate, viscosity * radius * length**3 / clearance**2, film)


def _film_force(eps, eps_dot, eps_wedge, scale, film):
    """(F_r, F_t) of the π film from ε, ε̇ and a ε (finite as ε → 0 even where a is not); ε < 1."""
    if film not in FILM_MODELS:
        raise ValueError(f"film {film!r} must be one of {FILM_MODELS}")
    eps = jnp.asarray(eps)
    eps_dot = jnp.asarray(eps_dot)
    eps_wedge = jnp.asarray(eps_wedge)
    one_m = 1.0 - eps * eps
    root = jnp.sqrt(one_m)
    beta = eps / (1.0 + root)
    if film == "positive":
        # θ₀ = atan2(ε̇, a ε); at rest (both 0) P ≡ 0 and any start gives 0 — the double where keeps
        # the gradient of atan2 finite there.
        moving = eps_wedge * eps_wedge + eps_dot * eps_dot > 0
        theta0 = jnp.where(moving, jnp.arctan2(jnp.where(moving, eps_dot, 0.0), jnp.where(moving, eps_wedge, 1.0)), 0.0)
    else:
        theta0 = jnp.zeros(jnp.broadcast_shapes(eps.shape, eps_dot.shape, eps_wedge.shape), eps.dtype)

    def psi(theta):
        return theta - 2.0 * jnp.arctan(beta * jnp.sin(theta) / (1.0 + beta * jnp.cos(theta)))

    def brackets(p):
        s, c = jnp.sin(p), jnp.cos(p)
        sin2 = 2.0 * s * c
        S = 0.5 * s * s + eps * c
        C = 0.5 * p + 0.25 * sin2 - 2.0 * eps * s + eps * eps * p
        Q = 0.5 * p - 0.25 * sin2
        return S, C, Q

    S1, C1, Q1 = brackets(psi(theta0))
    S2, C2, Q2 = brackets(psi(theta0 + jnp.pi))
    dS = (S2 - S1) / one_m**2
    dC = (C2 - C1) / (one_m**2 * root)
    dQ = (Q2 - Q1) / (one_m * root)
    return scale * (eps_wedge * dS - eps_dot * dC), scale * (eps_wedge * dQ - eps_dot * dS)


def film_breakdown_weight(eccentricity_ratio, threshold):
    """The film's share w(ε) of its force: 1 up to ε_t = ``threshold``, 0 from ε = 1, C¹ between.

    w = 1 − s² (3 − 2s) with s = (ε − ε_t)/(1 − ε_t) clipped to [0, 1]: the film breaks over the last
    (1 − ε_t) c of the clearance and the dry contact (penetration beyond ε = 1) carries the load.
    """
    s = jnp.clip((jnp.asarray(eccentricity_ratio) - threshold) / (1.0 - threshold), 0.0, 1.0)
    return 1.0 - s * s * (3.0 - 2.0 * s)


def lubricated_journal_force(
    eccentricity_ratio, eccentricity_rate, eps_wedge, viscosity, length, radius, clearance, threshold, film="positive"
):
    """The π-film force (F_r, F_t) of :func:`short_bearing_force`, finite for every ε ≥ 0.

    Cap and switch: the film force is evaluated at ε_c = min(ε, ε_t) (ε_t = ``threshold`` ∈ (0, 1);
    the wedge term a ε scaled to a ε_c) and multiplied by :func:`film_breakdown_weight`, which fades it
    to 0 between ε_t and 1. So the force never exceeds the film's value at ε_t (its (1 − ε_t²)^(−5/2)
    growth is cut there) and is continuous in (ε, ε̇, a ε); beyond ε = 1 the film is gone and the dry
    contact of the clearance joint alone acts. Gradients are finite everywhere (the kink of the min
    at ε_t only switches the derivative of the capped argument off).

    Args:
        eccentricity_ratio: ε = e/c ≥ 0 (any value; beyond 1 the film force is 0).
        eccentricity_rate: ε̇ [1/s].
        eps_wedge: a ε = (ω̄ − φ̇) ε [rad/s], finite as ε → 0 (a planar element computes it as
            ω̄ ε − (ê × ė)/c without dividing by e).
        viscosity: μ [Pa·s].
        length: bearing length L [m].
        radius: journal radius R [m].
        clearance: radial clearance c [m].
        threshold: ε_t ∈ (0, 1), where the film starts to break.
        film: "positive" or "fixed" (static), see :func:`short_bearing_force`.

    Returns:
        (F_r, F_t) in N.
    """
    eps = jnp.asarray(eccentricity_ratio)
    over = eps > threshold
    eps_c = jnp.where(over, threshold, eps)
    ratio = jnp.where(over, threshold / jnp.where(over, eps, 1.0), 1.0)
    scale = viscosity * radius * length**3 / clearance**2
    fr, ft = _film_force(eps_c, eccentricity_rate, eps_wedge * ratio, scale, film)
    w = film_breakdown_weight(eps, threshold)
    return w * fr, w * ft

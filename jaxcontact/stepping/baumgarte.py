"""Baumgarte stabilisation of bilateral constraints: Φ̈ + 2αΦ̇ + β²Φ = 0.

Instead of enforcing Φ̈ = 0 (acceleration level) or Φ̇ = 0 (velocity level),
which lets Φ itself drift, the constraint rows enforce the damped oscillator
Φ̈ + 2αΦ̇ + β²Φ = 0, whose solutions decay (α, β > 0; α = β is critical
damping). It is the cheap alternative to projection: no extra solve, but the
constraint is only kept near zero, not on it, and α, β need tuning (too
small: slow decay; too large: a stiff term that explicit schemes must resolve,
β h and α h well below 1).

Acceleration level (event-driven and penalty schemes). With
Φ̇ = Φ_q u + Φ_t and Φ̈ = Φ_q u̇ + (d/dt Φ_q) u + Φ_qt u + Φ_tt, the rows
Φ_q u̇ = −[(d/dt Φ_q) u + Φ_qt u + Φ_tt] + rhs use
:func:`baumgarte_acceleration_rhs` = −2αΦ̇ − β²Φ as ``rhs``.

Velocity level (Moreau–Jean). A step from t_A to t_E = t_A + h sets the
constraint velocity at the end of the step, Φ̇_E = Φ_q u_E + Φ_t. We
discretise the oscillator by implicit Euler over the step, with
Φ_E = Φ_A + h Φ̇_E as the position update the stepper performs:

    (Φ̇_E − Φ̇_A) / h + 2α Φ̇_E + β² Φ_E = 0,   Φ_E = Φ_A + h Φ̇_E
    ⇒  Φ̇_E = (Φ̇_A − h β² Φ_A) / (1 + 2hα + h²β²),

which is what :func:`baumgarte_velocity_target` returns: the stepper
enforces Φ_q u_E + Φ_t = target instead of = 0 (pass Φ and Φ̇ at the start
of the step; for Moreau–Jean's midpoint rule the O(h²) difference between
Φ_A + hΦ̇_E and the actual Φ_E is part of the drift that the loop damps).
Implicit Euler keeps the discrete loop stable for every h, α, β ≥ 0: the
iteration matrix of (Φ, Φ̇) has spectral radius ρ < 1 whenever β > 0 (β = 0
leaves the eigenvalue 1 of an undamped Φ), so a per-step drift e leaves a
bounded ‖Φ‖ of order e / (1 − ρ).

Limits, to read the parameters: α → ∞ gives Φ̇_E = 0, the plain
velocity-level constraint of Moreau–Jean; α = β = 0 gives Φ̇_E = Φ̇_A (Φ̈ = 0,
no stabilisation — note this is *not* the plain Moreau–Jean row, which damps
Φ̇ completely every step). A velocity-level scheme without stabilisation should
enforce 0; with it, α = β = c/h with c ≈ 0.2–1 removes most of a drift
within a few steps.

α and β are array leaves (batchable, differentiable); h may be an array too.
"""

from __future__ import annotations


def baumgarte_acceleration_rhs(phi, phi_dot, alpha, beta):
    """−2αΦ̇ − β²Φ: the stabilisation term added to the acceleration-level constraint rows."""
    return -2.0 * alpha * phi_dot - beta**2 * phi


def baumgarte_velocity_target(phi, phi_dot, h, alpha, beta):
    """Φ̇_E = (Φ̇_A − hβ²Φ_A) / (1 + 2hα + h²β²): the velocity-level right-hand side.

    Args:
      phi: Φ(q_A, t_A), (m,).
      phi_dot: Φ̇_A = Φ_q u_A + Φ_t, (m,).
      h: the step size.
      alpha, beta: stabilisation rates (1/time), ≥ 0.

    Returns:
      (m,) target for Φ_q u_E + Φ_t (see the module docstring for the
      implicit-Euler discretisation it comes from).
    """
    return (phi_dot - h * beta**2 * phi) / (1.0 + 2.0 * h * alpha + (h * beta) ** 2)


def baumgarte_rates(c: float = 0.5):
    """A ``baumgarte`` option α = β = c / h (critical damping at a fixed fraction of the step rate).

    c ≈ 0.2–1 removes most of a drift within a few steps (see ``baumgarte.py``).
    The returned function is cached per c, so equal options compare equal (no recompilation).
    """
    return _BAUMGARTE_RATES.setdefault(float(c), _rates(float(c)))


_BAUMGARTE_RATES: dict = {}


def _rates(c):
    def rates(p, h):
        """Baumgarte rates (α, β) = (c/h, c/h) at step h."""
        return c / h, c / h

    rates.__qualname__ = f"baumgarte_rates(c={c})"
    return rates

"""Siconos' MoreauJeanOSI force treatment and contact activation (``MoreauJean(force_rule="siconos")``).

Siconos 4.4's MoreauJeanOSI discretises the smooth forces by the θ-blend

    M (u_E − u_A) = h [(1 − θ) f(q_A, u_A, t_A) + θ f(q_E, u_E, t_E)] + impulses,
    q_E = q_A + h [(1 − θ) u_A + θ u_E],

and solves it by Newton's method started from u = u_A, q = q_A + h u_A, with the
iteration matrix W = M + hθ C + h²θ² K (K = −∂f/∂q, C = −∂f/∂u). For a
LagrangianLinearTIDS (constant M, K, C; f = F(t) − K q − C u) Siconos declares
the system linear and takes exactly one iteration, which is then exact:

    u_free = u_A + W⁻¹ h [(1 − θ) f(q_A, u_A, t_A) + θ f(q_A + h u_A, u_A, t_E)],
    u_E = u_free + W⁻¹ (W_N P_N + W_T P_T)

— K and C implicit, the external force blended between t_A and t_E. This module
computes that first iteration for any system (Jacobians by ``jax.jacfwd``).
It is Siconos' step exactly when the forces are affine in (q, u) with a constant
mass matrix (every ``linear_system``); for nonlinear forces or a
configuration-dependent M it is one linearised θ-step, where Siconos iterates
its Newton loop (the contact problem inside) to a tolerance.

Contacts enter Siconos' one-step problem by its *prediction*, decided from the
state at the step start: g(q_A) + γ h ġ(q_A, u_A) ≤ threshold with γ = ½ for
every θ and the threshold 0 (MoreauJeanOSI::addInteractionInIndexSet,
``_constraintActivationThreshold``); Newton's law multiplies ε by the local
velocity at the step start, ġ(q_A, u_A), literally, also for a contact that is
already separating.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcontact.stepping.kernels import gaps_and_rates

# Siconos' MoreauJeanOSI predicts the gap half a step ahead whatever θ (its default γ = ½).
PREDICTION_GAMMA = 0.5


def newton_start(system, theta, p, q_A, u_A, t_A, t_E, h):
    """(q_g, W, h f̄): the Newton loop's starting configuration q_A + h u_A, the iteration
    matrix W = M(q_g) + hθ C + h²θ² K and the blended force impulse
    h [(1 − θ) f(q_A, u_A, t_A) + θ f(q_g, u_A, t_E)], so that u_free = u_A + W⁻¹ h f̄."""
    q_g = q_A + h * u_A
    M = system.mass(q_g, p)
    f_A = system.forces(q_A, u_A, t_A, p)
    f_g = system.forces(q_g, u_A, t_E, p)
    K = -jax.jacfwd(system.forces, argnums=0)(q_g, u_A, t_E, p)
    C = -jax.jacfwd(system.forces, argnums=1)(q_g, u_A, t_E, p)
    # The coefficients in Siconos' order (MoreauJeanOSI::initializeIterationMatrixW).
    W = M + (h * theta) * C + (h * h * theta * theta) * K
    return q_g, W, h * ((1.0 - theta) * f_A + theta * f_g)


def start_velocities(system, p, q_A, u_A, t_A):
    """(g, ġ_N, γ_T) at the step start: the gaps, their rates W_Nᵀ u_A + ∂g/∂t and the slip
    velocities (zeros without friction) — the ``y`` and ``ẏ`` of Siconos' interactions."""
    t_A = jnp.asarray(t_A, q_A.dtype)
    gap, gap_dot = gaps_and_rates(system, p, q_A, u_A, t_A)
    if system.slip_velocity is None:
        return gap, gap_dot, jnp.zeros_like(gap)
    return gap, gap_dot, system.slip_velocity(q_A, u_A, t_A, p)


def predicted_active(gap, gap_dot, h, threshold):
    """Siconos' index set: g + γ h ġ ≤ threshold (γ = ½), with (γ h) formed first as Siconos does."""
    return gap + (PREDICTION_GAMMA * h) * gap_dot <= threshold


def position_update(q_A, u_A, u_E, h, theta):
    """q_E = h θ u_E + h (1 − θ) u_A + q_A, summed in MoreauJeanOSI::updatePosition's order."""
    return ((h * theta) * u_E + (h * (1.0 - theta)) * u_A) + q_A

"""Projection of a system whose coordinates move through a velocity map: joints and resting contacts.

Spatial bodies carry unit quaternions, so a correction of q cannot be an arbitrary vector of
the 7 n coordinates: it is a velocity-like δu (6 n) applied by the system's own position
update, q ← advance(q, δu, 1) (for a quaternion the exponential map, which keeps it unit).
Newton's method on the constraint rows C(q) = 0 in the mass metric, with J = ∂C/∂q · T(q)
the Jacobian in u:

    δu = −M⁻¹ Jᵀ (J M⁻¹ Jᵀ)⁻¹ C(q),      q ← advance(q, δu, 1)       (``iterations`` times)

then the velocities onto J u + C_t = 0 in the same metric. The rows are the joints' Φ and,
given a mask of resting contacts, their gaps g_N (put back on the surface, with γ_N = 0: the
policy of :mod:`jaxcontact.stepping.projection`, "Contacts in a time stepper"); the other
contacts get zero rows. Each Newton step is quadratic (the exponential map is a retraction),
so three iterations take a state that a Moreau–Jean step left O(h²) off the constraints to
‖C‖ ~ 1e-15. The unit-quaternion constraint needs no row: the position update keeps every
quaternion unit.

Joints alone are assumed independent (an exact Cholesky of G = J M⁻¹ Jᵀ). Resting contacts
often are not — a box on a face rests on four vertices, three of them enough — so with
contacts G is factorised with the small diagonal shift of
:func:`jaxcontact.stepping.kernels.regularized_solve` (zero rows then get zero corrections).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxcontact.stepping.kernels import (
    mass_solver,
    regularization_shift,
    regularized_solve,
    spd_solve,
)
from jaxcontact.system import LagrangianSystem, advance, velocity_matrix


def _rows(system, resting, q, t, p):
    """C(q, t): the joints' Φ, then the resting contacts' gaps (zero for the others)."""
    parts = []
    if system.constraints is not None:
        parts.append(system.constraints(q, t, p))
    if resting is not None:
        parts.append(jnp.where(resting, system.gaps(q, t, p), 0.0))
    return jnp.concatenate(parts)


def _response(system, resting, q, t, p):
    """(C, J, M⁻¹ Jᵀ, G = J M⁻¹ Jᵀ) at q."""
    rows = functools.partial(_rows, system, resting)
    c = rows(q, t, p)
    J = jax.jacfwd(rows)(q, t, p) @ velocity_matrix(system, q)
    X = mass_solver(system, q, p)(J.T)
    return c, J, X, J @ X


def project_on_manifold(system: LagrangianSystem, q, u, t, p, *, iterations: int = 3, resting=None):
    """(q, u) projected onto Φ(q, t) = 0 and J u + Φ_t = 0, and the ``resting`` contacts ((k,) bool mask, or
    None) onto g_N = 0 and γ_N = 0 (module docstring); unchanged when there is nothing to project."""
    if system.constraints is None and resting is None:
        return q, u
    t = jnp.asarray(t, q.dtype)
    if resting is None:
        solve = spd_solve
    else:
        shift = regularization_shift(q.dtype)
        solve = lambda G, r: regularized_solve(G, r, shift)  # noqa: E731
    for _ in range(iterations):
        c, _, X, G = _response(system, resting, q, t, p)
        q = advance(system, q, -X @ solve(G, c[:, None])[:, 0], jnp.ones((), q.dtype))
    _, J, X, G = _response(system, resting, q, t, p)
    c_t = jax.jacfwd(functools.partial(_rows, system, resting), argnums=1)(q, t, p)
    u = u - X @ solve(G, (J @ u + c_t)[:, None])[:, 0]
    return q, u

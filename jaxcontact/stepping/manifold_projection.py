"""Projection onto the joint constraints of a system whose coordinates move through a velocity map.

Spatial bodies carry unit quaternions, so a correction of q cannot be an arbitrary vector of
the 7 n coordinates: it is a velocity-like δu (6 n) applied by the system's own position
update, q ← advance(q, δu, 1) (for a quaternion the exponential map, which keeps it unit).
Newton's method on Φ(q) = 0 in the mass metric, with J = ∂Φ/∂q · T(q) the Jacobian in u:

    δu = −M⁻¹ Jᵀ (J M⁻¹ Jᵀ)⁻¹ Φ(q),      q ← advance(q, δu, 1)       (``iterations`` times)

then the velocities onto J u + Φ_t = 0 in the same metric. Each Newton step is quadratic
(the exponential map is a retraction), so three iterations take a state that a Moreau–Jean
step left O(h²) off the constraints to ‖Φ‖ ~ 1e-15. The unit-quaternion constraint needs no
row: the position update keeps every quaternion unit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcontact.stepping.kernels import spd_solve
from jaxcontact.system import LagrangianSystem, advance, velocity_matrix


def _response(system, q, t, p):
    """(Φ, J, M⁻¹ Jᵀ, G = J M⁻¹ Jᵀ) at q."""
    phi = system.constraints(q, t, p)
    J = jax.jacfwd(system.constraints)(q, t, p) @ velocity_matrix(system, q)
    M = system.mass(q, p)
    X = J.T / jnp.diagonal(M)[:, None] if system.diagonal_mass else spd_solve(M, J.T)
    return phi, J, X, J @ X


def project_joints(system: LagrangianSystem, q, u, t, p, *, iterations: int = 3):
    """(q, u) projected onto Φ(q, t) = 0 and J u + Φ_t = 0 (module docstring); unchanged without constraints."""
    if system.constraints is None:
        return q, u
    t = jnp.asarray(t, q.dtype)
    for _ in range(iterations):
        phi, _, X, G = _response(system, q, t, p)
        q = advance(system, q, -X @ spd_solve(G, phi[:, None])[:, 0], jnp.ones((), q.dtype))
    _, J, X, G = _response(system, q, t, p)
    phi_t = jax.jacfwd(system.constraints, argnums=1)(q, t, p)
    u = u - X @ spd_solve(G, (J @ u + phi_t)[:, None])[:, 0]
    return q, u

"""Nonsmooth Lagrangian systems: the interface every time-stepping scheme consumes.

Equations of motion (SPEC §1), with generalized coordinates q (n,), velocities u (n,):

    M(q, p) u̇ = h(q, u, t, p) + Φ_q(q, t, p)ᵀ λ + W_N λ_N + W_T λ_T

* Φ(q, t, p) = 0 — bilateral constraints (m,), Jacobian Φ_q (m, n), Φ_t = ∂Φ/∂t.
* g_N(q, t, p) ≥ 0 — contact gaps (k,). W_Nᵀ = ∂g_N/∂q (k, n), so the normal
  relative velocity is γ_N = W_Nᵀ u + ∂g_N/∂t.
* γ_T(q, u, t, p) — tangential (slip) velocity of each contact (k,), affine in
  u: W_Tᵀ = ∂γ_T/∂u and w̃_T = γ_T(q, 0, t, p).
* Contact laws per contact as parameter leaves (:class:`ContactLaws`).

Users write Φ, g_N and γ_T; every Jacobian comes from ``jax.jacfwd`` here.
Structure (sizes, functions) is static; every physical value lives in the
parameter pytree ``p`` so one compiled program serves a batch of variations.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

Params = Any


class ContactLaws(NamedTuple):
    """Per-contact law parameters, each of shape (k,).

    restitution: Newton normal restitution ε_N ∈ [0, 1].
    tangential_restitution: ε_T ∈ [0, 1] (0: no tangential rebound).
    friction: Coulomb coefficient μ ≥ 0 (0: frictionless).
    """

    restitution: jax.Array
    tangential_restitution: jax.Array
    friction: jax.Array


@dataclasses.dataclass(frozen=True, eq=False)
class LagrangianSystem:
    """Static description of a nonsmooth Lagrangian system (hashable by identity).

    Attributes:
      n_dof: number of generalized coordinates n.
      mass: ``M(q, p) -> (n, n)``, symmetric positive definite.
      forces: ``h(q, u, t, p) -> (n,)`` — applied, elastic, damping and gyroscopic forces.
      constraints: ``Φ(q, t, p) -> (m,)`` or None (no bilateral constraint).
      gaps: ``g_N(q, t, p) -> (k,)`` or None (no contact).
      slip_velocity: ``γ_T(q, u, t, p) -> (k,)`` affine in u, or None (frictionless).
      laws: ``p -> ContactLaws`` with (k,) leaves; required when ``gaps`` is given.
      potential: ``V(q, t, p) -> scalar`` for the energy diagnostic, or None
        (energy then reports kinetic energy only).
      names: optional names of the coordinates, for printing and plots.
      diagonal_mass: M(q, p) is diagonal for every q and p (planar bodies in absolute
        coordinates): schemes then divide by its diagonal instead of factorising it.
    """

    n_dof: int
    mass: Callable[..., jax.Array]
    forces: Callable[..., jax.Array]
    constraints: Optional[Callable[..., jax.Array]] = None
    gaps: Optional[Callable[..., jax.Array]] = None
    slip_velocity: Optional[Callable[..., jax.Array]] = None
    laws: Optional[Callable[[Params], ContactLaws]] = None
    potential: Optional[Callable[..., jax.Array]] = None
    names: tuple[str, ...] = ()
    diagonal_mass: bool = False

    def __post_init__(self):
        if not isinstance(self.n_dof, int) or self.n_dof < 1:
            raise ValueError(f"n_dof must be a positive int; got {self.n_dof!r}")
        if self.gaps is not None and self.laws is None:
            raise ValueError("a system with contacts (gaps) needs contact laws (laws=p -> ContactLaws)")
        if self.slip_velocity is not None and self.gaps is None:
            raise ValueError("slip_velocity given without gaps: friction needs a normal contact")
        if self.names and len(self.names) != self.n_dof:
            raise ValueError(f"names has {len(self.names)} entries for n_dof = {self.n_dof}")

    def __repr__(self):
        parts = [f"n_dof={self.n_dof}"]
        for f in ("constraints", "gaps", "slip_velocity", "potential"):
            if getattr(self, f) is not None:
                parts.append(f)
        return f"LagrangianSystem({', '.join(parts)})"


class Kinematics(NamedTuple):
    """Everything a stepper needs at one configuration (fixed shapes).

    phi (m,), phi_q (m, n), phi_t (m,); gap (k,), W_N (n, k), gap_t (k,);
    W_T (n, k), w_T (k,). Empty (size-0) arrays when a part is absent.
    """

    phi: jax.Array
    phi_q: jax.Array
    phi_t: jax.Array
    gap: jax.Array
    W_N: jax.Array
    gap_t: jax.Array
    W_T: jax.Array
    w_T: jax.Array


def _value_and_jacobians(f, q, t, p):
    """f(q, t, p), ∂f/∂q and ∂f/∂t by forward mode (one pass each; n and m are small)."""
    val = f(q, t, p)
    jq = jax.jacfwd(f, argnums=0)(q, t, p)
    jt = jax.jacfwd(f, argnums=1)(q, t, p)
    return val, jq, jt


def kinematics(system: LagrangianSystem, q, t, p) -> Kinematics:
    """Constraint values and Jacobians, contact gaps and Jacobians at (q, t)."""
    n = system.n_dof
    dt = q.dtype
    t = jnp.asarray(t, dt)
    empty_vec, empty_mat = jnp.zeros((0,), dt), jnp.zeros((0, n), dt)
    if system.constraints is not None:
        phi, phi_q, phi_t = _value_and_jacobians(system.constraints, q, t, p)
    else:
        phi, phi_q, phi_t = empty_vec, empty_mat, empty_vec
    if system.gaps is not None:
        gap, gq, gt = _value_and_jacobians(system.gaps, q, t, p)
        W_N = gq.T
        k = gap.shape[0]
        if system.slip_velocity is not None:
            u0 = jnp.zeros_like(q)
            w_T = system.slip_velocity(q, u0, t, p)
            W_T = jax.jacfwd(system.slip_velocity, argnums=1)(q, u0, t, p).T
        else:
            w_T, W_T = jnp.zeros((k,), dt), jnp.zeros((n, k), dt)
    else:
        gap, gt, w_T = empty_vec, empty_vec, empty_vec
        W_N = W_T = empty_mat.T
    return Kinematics(phi, phi_q, phi_t, gap, W_N, gt, W_T, w_T)


def energy(system: LagrangianSystem, q, u, t, p) -> jax.Array:
    """Kinetic energy ½ uᵀ M u plus the potential V(q, t, p) when the system has one."""
    e = 0.5 * u @ (system.mass(q, p) @ u)
    if system.potential is not None:
        e = e + system.potential(q, t, p)
    return e

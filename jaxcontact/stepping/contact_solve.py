"""The per-step contact problem of Moreau–Jean, handed to a solver from ``jaxcontact.lcp``.

The stepper reduces each step to local velocities ξ = D P + c (D the Delassus
matrix, c the free local velocity with restitution folded in). Contacts that
are not active get an identity row/column and c = 1 (normal), 0 (tangent): the
solution there is P = 0 for every solver, so the problem keeps a fixed shape
and no solver needs to understand masks.

Solvers (a static choice, dispatched by the tables :data:`FRICTIONLESS` and :data:`FRICTIONAL`):
* ``"pgs"`` — projected Gauss–Seidel on the normal LCP (frictionless systems).
* ``"nsgs"`` — block nonsmooth Gauss–Seidel on the planar Coulomb problem
  (``jaxcontact.lcp.friction2d.nsgs``); on a frictionless system it is PGS.
* ``"lemke"`` — Lemke on the normal LCP, or on the planar friction LCP (size 3k) built by
  ``friction2d.friction_lcp`` with friction: the exact (pivoting) reference.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxcontact.cones import delassus
from jaxcontact.lcp import friction2d
from jaxcontact.lcp.lemke import lemke
from jaxcontact.lcp.pgs import pgs
from jaxcontact.lcp.rows import decouple_rows
from jaxcontact.lcp.solution import default_tol

# Soft activation: beyond gap/τ = SOFT_LIMIT a contact's weight e^(−SOFT_LIMIT) ≈ 1e-13 counts as off.
SOFT_LIMIT = 30.0


def soften_normal_rows(D, gap, tau, k):
    """Soft contact activation for identification: (D + R, active) with a compliance R on the normal rows
    (D dense or :class:`~jaxcontact.cones.delassus.Factored`).

    The hard law switches a contact on when g_N(q_M) ≤ 0, so an impact's time is
    quantised to the step and anything that only moves the gap (a wall distance,
    a clearance) changes the trajectory in jumps: zero or useless gradients. Here
    each contact gets a weight w = sigmoid(−g_N / τ) ∈ (0, 1) and the regularisation
    R_ii = D_ii (1 − w)/w = D_ii exp(g_N / τ) (MuJoCo's impedance form): a single
    contact then receives exactly w times its hard impulse, so the impulse is smooth
    in the gap and in everything the gap depends on. τ → 0 gives back the hard model.
    Bias (why it is for fitting, annealed to small τ): an approaching contact starts
    pushing a few τ before it touches, impacts spread over several steps (a lower
    apparent restitution) and a resting contact sinks until w ≈ 1 (a few τ deep).
    """
    x = gap / tau
    r = jnp.exp(jnp.clip(x, -SOFT_LIMIT, SOFT_LIMIT))
    diag = delassus.diagonal(D)
    reg = jnp.zeros(diag.shape, diag.dtype).at[:k].set(diag[:k] * r)
    return delassus.add_diagonal(D, reg), x < SOFT_LIMIT


class ContactSolution(NamedTuple):
    """Impulses and solver diagnostics of one step's contact problem."""

    P_N: jax.Array  # (k,)
    P_T: jax.Array  # (k,) zeros on a frictionless system
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array


def mask_problem(D, c, active, k, friction):
    """Decouple inactive contacts: identity rows/columns, c_N = 1 and c_T = 0 there."""
    act = jnp.concatenate([active, active]) if friction else active
    inactive_c = (
        jnp.concatenate([jnp.ones((k,), c.dtype), jnp.zeros((k,), c.dtype)]) if friction else jnp.ones((k,), c.dtype)
    )
    return decouple_rows(D, c, act, outside=inactive_c)


def _pgs(D, c, mu, active, warm, *, iterations, omega, tol, differentiation):
    sol = pgs(D, c, iterations=iterations, omega=omega, z0=warm, tol=tol, differentiation=differentiation)
    return sol.z, jnp.zeros_like(sol.z), sol


def _lemke(D, c, mu, active, warm, *, iterations, omega, tol, differentiation):
    sol = lemke(D, c, tol=tol)
    return sol.z, jnp.zeros_like(sol.z), sol


def _nsgs_friction(D, c, mu, active, warm, *, iterations, omega, tol, differentiation):
    sol = friction2d.nsgs(D, c, mu, iterations=iterations, omega=omega, r0=warm, tol=tol, active=active)
    k = active.shape[0]
    return sol.r[:k], sol.r[k:], sol


def _lemke_friction(D, c, mu, active, warm, *, iterations, omega, tol, differentiation):
    A, b = friction2d.friction_lcp(D, c, mu)
    sol = lemke(A, b, tol=tol)
    r = friction2d.from_lcp_solution(sol.z, mu)  # z = [P_N; P_R; ξ_L]  (the planar friction LCP)
    k = active.shape[0]
    return r[:k], r[k:], sol


# solver name -> solve of the masked problem, returning (P_N, P_T, the solver's solution); one table per problem
# (frictionless: the normal LCP; frictional: the planar Coulomb problem). On a frictionless system NSGS is PGS.
FRICTIONLESS = {"nsgs": _pgs, "pgs": _pgs, "lemke": _lemke}
FRICTIONAL = {"nsgs": _nsgs_friction, "lemke": _lemke_friction}
SOLVERS = tuple(FRICTIONLESS)


def solve_contacts(
    D, c, mu, active, warm, *, solver, iterations, omega, tol, friction, differentiation="unroll"
) -> ContactSolution:
    """Solve the masked local problem ξ = D P + c with Signorini–Newton (+ Coulomb) laws.

    D: (k, k) or, with friction, (2k, 2k) ordered [normal block; tangent block];
    c, warm: matching vectors; mu, active: (k,). ``solver``: a key of :data:`FRICTIONLESS`
    or, with friction, of :data:`FRICTIONAL` (another is refused by name). ``differentiation``
    ("unroll" or "implicit") applies to PGS; NSGS is differentiated through its sweeps, Lemke implicitly.
    """
    table = FRICTIONAL if friction else FRICTIONLESS
    if solver not in table:
        kind = "a frictional" if friction else "a frictionless"
        raise ValueError(f"solver {solver!r} cannot solve {kind} problem; use one of {tuple(table)}")
    D, c = mask_problem(D, c, active, active.shape[0], friction)
    tol = default_tol(D.dtype) if tol is None else tol
    P_N, P_T, sol = table[solver](
        D, c, mu, active, warm, iterations=iterations, omega=omega, tol=tol, differentiation=differentiation
    )
    return ContactSolution(P_N, P_T, sol.residual, sol.iterations, sol.converged)

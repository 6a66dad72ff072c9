"""The state a run starts from: checked outside jit, or projected onto the constraints first.

A time stepper takes whatever (q0, u0) it is given, and three kinds of impossible start do not
fail inside jit: a body that starts buried in a surface (it is pushed out over the first steps,
or stays buried where the contact cannot act); a joint broken at t = 0 (Moreau–Jean holds the
joints at the velocity level, Φ_q u = 0, so a break in Φ itself is kept for the whole run); a
coordinate off its manifold (a zero quaternion makes every later value NaN). They are caught here,
before any compute, by :func:`check_state` — which :func:`jaxcontact.simulate.simulate` calls on
every concrete start — with an error that names the coordinate, joint row or contact and the
value. :func:`project_state` puts a nearly consistent start onto the constraints instead, for a
user who asks for it (``simulate(..., start="project")``, ``--start project`` on the CLI); a run that
continues an earlier one from its last state says so (``start="continue"``), and keeps that state's
small drift and penetration, checked only for being finite and on its manifold.

Names come from the system (``names``, ``constraint_names``, ``contact_names``, which both
builders fill), or are row numbers for a hand-written system.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.system import LagrangianSystem, retract, velocity_matrix

# Largest |Φ_i(q0)|, penetration −g_N(q0) and distance of q0 from its manifold a start may have (model units,
# metres in SI). Far above round-off of a consistently built float32 start (~1e-7 of the model's size), far
# below a visible break: a start off by this much is a mistake, not a rounding.
STATE_TOL = 1e-6

# check: refuse an inconsistent start; project: move it onto the constraints first; continue: the state is the end
# of an earlier run of the same system (the scheme's own O(h) joint drift and contact penetration are part of it):
# only finite and on its manifold is checked.
START_MODES = ("check", "project", "continue")


class StartError(ValueError):
    """An inconsistent start; ``sample`` is the batch sample it was found in (None for one start)."""

    def __init__(self, message: str, sample: int | None = None):
        super().__init__(message)
        self.sample = sample


class StartValues(NamedTuple):
    """What the check reads at one start (a leading batch axis for a batch)."""

    on_manifold: jax.Array  # q0 brought onto its manifold (retract)
    mass: jax.Array  # M(q0)
    phi: jax.Array  # Φ(q0, t0) (m,)
    phi_q: jax.Array  # Φ_q (m, n_u)
    velocity: jax.Array  # Φ_q u0 + Φ_t (m,), zeros without u0
    gap: jax.Array  # rigid contacts' g_N(q0) (k,)


@functools.partial(jax.jit, static_argnames=("system", "batched"))
def start_values(params, q0, u0, t0, *, system: LagrangianSystem, batched: bool) -> StartValues:
    """:class:`StartValues` of one start, or of a batch (every leaf with a leading axis)."""

    def one(p, q, u):  # only what the rules read: no contact Jacobian
        T = velocity_matrix(system, q)
        if system.constraints is None:
            phi, phi_q, phi_t = jnp.zeros((0,), q.dtype), jnp.zeros((0, system.n_u), q.dtype), jnp.zeros((0,), q.dtype)
        else:
            phi = system.constraints(q, t0, p)
            phi_q = jax.jacfwd(system.constraints)(q, t0, p)
            phi_q = phi_q if T is None else phi_q @ T
            phi_t = jax.jacfwd(system.constraints, argnums=1)(q, t0, p)
        gap = jnp.zeros((0,), q.dtype) if system.gaps is None else system.gaps(q, t0, p)
        return StartValues(retract(system, q), system.mass(q, p), phi, phi_q, phi_q @ u + phi_t, gap)

    return jax.vmap(one)(params, q0, u0) if batched else one(params, q0, u0)


class _Where:
    """`` (batch sample i)`` after a name in a batch's errors; which sample a StartError carries."""

    def __init__(self, batched: bool):
        self.batched = batched

    def __call__(self, i) -> str:
        return f" (batch sample {i})" if self.batched else ""

    def error(self, message: str, i) -> StartError:
        return StartError(message, int(i) if self.batched else None)


def _row_name(names, i: int, kind: str) -> str:
    return f"{kind} {names[i]!r}" if i < len(names) else f"{kind} {i}"


def check_state(
    system: LagrangianSystem, params, q0, u0=None, t0=0.0, *, tol: float = STATE_TOL, constraints: bool = True
) -> None:
    """Check a start (q0, u0) of ``system`` outside jit; raise ValueError naming what is broken.

    Rules, for one start or for every sample of a batch (q0 of shape (B, n), parameter leaves with
    a leading axis B):

    * q0 and u0 finite, and q0 on its manifold: ‖retract(q0) − q0‖ ≤ tol (unit quaternions);
    * M(q0) symmetric positive definite;
    * every constraint row |Φ_i(q0, t0)| ≤ tol, and Φ_q(q0) of full row rank (redundant or
      conflicting joints make the stepper's G = Φ_q M⁻¹ Φ_qᵀ singular);
    * every rigid contact's gap g_N(q0) ≥ −tol (compliant contacts start in penetration by design);
    * with u0, |Φ_q u0 + Φ_t| ≤ tol for every row (a velocity the joints allow).

    ``constraints=False`` keeps the first two rules only (a state that ends an earlier run).

    Call it in your own code before a run; :func:`jaxcontact.simulate.simulate` checks every
    concrete start this way (positions only: a velocity the joints do not allow is an impact
    the first step resolves).
    """
    if not isinstance(system, LagrangianSystem):
        raise TypeError(f"system must be a LagrangianSystem; got {type(system).__name__}")
    q0 = jnp.asarray(q0)
    if not jnp.issubdtype(q0.dtype, jnp.floating):
        q0 = q0.astype(jnp.result_type(float))
    batched = q0.ndim == 2
    where = _Where(batched)
    for label, x in (("q0", q0), ("u0", u0)):
        a = None if x is None else np.asarray(x)
        if a is not None and not np.all(np.isfinite(a)):
            i = int(np.argwhere(~np.isfinite(a))[0][0]) if batched else 0
            raise where.error(f"{label}{where(i)} = {a[i] if batched else a} must be finite", i)
    velocity = u0 is not None
    u = jnp.asarray(u0, q0.dtype) if velocity else jnp.zeros(q0.shape[:-1] + (system.n_u,), q0.dtype)
    v = jax.tree.map(np.asarray, start_values(params, q0, u, jnp.asarray(t0, q0.dtype), system=system, batched=batched))
    if not batched:
        v = jax.tree.map(lambda x: x[None], v)
    q = np.asarray(q0).reshape(v.on_manifold.shape)
    _check_manifold(system, q, v.on_manifold, tol, where)
    _check_mass(v.mass, where)
    if not constraints:
        return
    _check_rows(
        system.constraint_names,
        v.phi,
        tol,
        where,
        "Φ",
        "the start does not assemble the joints: fix q0, project it (start='project'), or, "
        "if it ends an earlier run, continue it (start='continue')",
    )
    _check_rank(system.constraint_names, v.phi_q, where)
    if velocity:
        _check_rows(
            system.constraint_names, v.velocity, tol, where, "Φ_q u + Φ_t", "a velocity the joints do not allow"
        )
    gap = v.gap
    if gap.shape[-1] and np.any(gap < -tol):
        b, i = np.unravel_index(int(np.argmin(gap)), gap.shape)
        raise where.error(
            f"{_row_name(system.contact_names, i, 'contact')}{where(b)}: gap = {gap[b, i]:.3e} < "
            f"−tol = {-tol:g}: the start is in penetration; move it out, project it "
            f"(start='project'), or, if it ends an earlier run, continue it (start='continue')",
            b,
        )


def _check_manifold(system, q, on, tol, where):
    off = np.abs(on - q)
    if not np.all(np.isfinite(on)) or np.any(off > tol):
        bad = ~np.isfinite(on) | (off > tol)
        b = int(np.argwhere(bad.any(axis=1))[0][0])
        cols = np.flatnonzero(bad[b])
        names = [system.names[c] if c < len(system.names) else f"q[{c}]" for c in cols]
        raise where.error(
            f"coordinates {names}{where(b)} = {q[b, cols].tolist()} are off their manifold (a "
            f"quaternion must have norm 1; a zero one has no rotation): normalise them",
            b,
        )


def _check_mass(M, where):
    finite = np.isfinite(M).all(axis=(1, 2))
    if not finite.all():
        b = int(np.argmin(finite))
        raise where.error(f"mass matrix M(q0){where(b)} must be finite; got {M[b]}", b)
    MT = np.swapaxes(M, 1, 2)
    symmetric = (np.abs(M - MT) <= 1e-300 + 1e-10 * np.abs(MT)).all(axis=(1, 2))
    if not symmetric.all():
        b = int(np.argmin(symmetric))
        raise where.error(f"mass matrix M(q0){where(b)} must be symmetric; got {M[b]}", b)
    eig = np.linalg.eigvalsh(M)
    bad = np.flatnonzero(eig.min(axis=1) <= 0)
    if bad.size:
        b = int(bad[0])
        raise where.error(
            f"mass matrix M(q0){where(b)} must be positive definite (a mass or inertia ≤ 0?); "
            f"its eigenvalues are {eig[b]}",
            b,
        )


def _check_rows(names, values, tol, where, symbol, why):
    if values.shape[-1] and np.any(np.abs(values) > tol):
        b, i = np.unravel_index(int(np.argmax(np.abs(values))), values.shape)
        raise where.error(
            f"{_row_name(names, i, 'constraint row')}{where(b)}: {symbol} = {values[b, i]:.3e} "
            f"exceeds tol = {tol:g} ({why})",
            b,
        )


def _check_rank(names, J, where):
    m = J.shape[1]
    if not m:
        return
    sv = np.linalg.svd(J, compute_uv=False)
    rank_tol = sv.max(axis=1, keepdims=True) * max(J.shape[1:]) * np.finfo(J.dtype).eps * 1e3
    rank = np.sum(sv > rank_tol, axis=1)
    bad = np.flatnonzero(rank < m)
    if bad.size:
        b = int(bad[0])
        rows = list(names) if len(names) == m else m
        raise where.error(
            f"constraint Jacobian Φ_q(q0){where(b)} is singular: rank {rank[b]} < {m} rows {rows} "
            f"(redundant or conflicting joints, or a singular configuration)",
            b,
        )


@functools.partial(jax.jit, static_argnums=0, static_argnames="iterations")
def project_state(system: LagrangianSystem, params, q0, u0, t0=0.0, *, iterations: int = 20):
    """(q0, u0) moved onto the system's constraints: q0 onto its manifold (unit quaternions), Φ = 0 and every
    penetrating rigid contact onto its surface (Newton in the metric M: :func:`jaxcontact.stepping.projection.project`,
    or :func:`~jaxcontact.stepping.manifold_projection.project_on_manifold` for coordinates with a velocity map),
    then u0 onto the joints' Φ_q u + Φ_t = 0. Pure (jit/vmap-able); check the result with :func:`check_state`: a
    start too far from the constraints for ``iterations`` Newton steps stays off them."""
    from jaxcontact.stepping.manifold_projection import project_on_manifold
    from jaxcontact.stepping.projection import project

    q = retract(system, jnp.asarray(q0))
    u, t = jnp.asarray(u0, q.dtype), jnp.asarray(t0, q.dtype)

    def newton_step(_, state):  # one Newton step in a loop: one copy of the kinematics in the program
        q, u = state
        if system.kinematic_map:
            resting = None if system.gaps is None else system.gaps(q, t, params) < 0
            return project_on_manifold(system, q, u, t, params, iterations=1, resting=resting)
        return project(system, q, u, t, params, position_iterations=1, contacts=system.gaps is not None)

    return jax.lax.fori_loop(0, iterations, newton_step, (q, u))

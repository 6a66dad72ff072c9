"""The result type shared by every LCP solver, its residuals, and input checks.

The linear complementarity problem LCP(M, q): find z with
    z >= 0,  w = M z + q >= 0,  z^T w = 0.

Residual definitions (both are reported, both are scale-aware):

* ``residual`` — the natural-map residual ``‖min(z, w)‖∞``, divided by
  ``max(1, ‖q‖∞)`` so that it is relative for large data and absolute for
  small data. It is zero exactly at a solution.
* ``siconos_error`` (see :func:`siconos_error`) — Siconos numerics'
  ``‖z − max(0, z − w)‖₂ / ‖q‖₂`` (with ``‖q‖`` replaced by 1 when q = 0),
  for side-by-side comparison with Siconos' solvers.

``converged`` is ``residual <= tol`` *and* every entry finite. Solvers never
raise inside ``jit``; a solver that fails says so through ``converged``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class LCPSolution(NamedTuple):
    """Solution of LCP(M, q) with its diagnostics (a pytree; batched under vmap).

    Attributes:
      z: the complementarity variable, shape (n,).
      w: ``M z + q``, shape (n,).
      residual: ``‖min(z, w)‖∞ / max(1, ‖q‖∞)`` (scalar).
      iterations: sweeps (PGS, Jacobi, Newton) or pivots (Lemke) used (int32 scalar).
      converged: ``residual <= tol`` and everything finite (bool scalar).
    """

    z: jax.Array
    w: jax.Array
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array


def natural_residual(z: jax.Array, w: jax.Array, q: jax.Array) -> jax.Array:
    """``‖min(z, w)‖∞ / max(1, ‖q‖∞)`` — zero iff (z, w) is complementary and feasible."""
    scale = jnp.maximum(1.0, jnp.max(jnp.abs(q), initial=0.0))
    return jnp.max(jnp.abs(jnp.minimum(z, w)), initial=0.0) / scale


def siconos_error(z: jax.Array, w: jax.Array, q: jax.Array) -> jax.Array:
    """Siconos numerics' LCP error ``‖z − max(0, z − w)‖₂ / ‖q‖₂`` (‖q‖ → 1 when q = 0)."""
    nq = jnp.linalg.norm(q)
    nq = jnp.where(nq > 0, nq, 1.0)
    return jnp.linalg.norm(z - jnp.maximum(0.0, z - w)) / nq


def make_solution(M, q, z, iterations, tol) -> LCPSolution:
    """Package ``z`` with ``w``, the residual and the convergence flag."""
    w = M @ z + q
    res = natural_residual(z, w, q)
    finite = jnp.all(jnp.isfinite(z)) & jnp.all(jnp.isfinite(w))
    converged = finite & (res <= tol)
    res = jnp.where(finite, res, jnp.inf)
    return LCPSolution(z, w, res, jnp.asarray(iterations, jnp.int32), converged)


def default_tol(dtype) -> float:
    """Convergence tolerance on the natural residual for a dtype (≈ 1e4·eps)."""
    return 1e-10 if jnp.dtype(dtype) == jnp.float64 else 1e-4


def check_problem(M, q, z0=None, *, name: str = "LCP") -> None:
    """Clear Python errors for bad shapes or non-finite data, outside ``jit``.

    Inside ``jit`` (tracers) only the static shape rules are checked; values
    cannot be inspected there, so non-finite data shows up as
    ``converged=False`` instead. Leading batch axes are allowed only under
    ``vmap``: the solvers take one problem, M of shape (n, n) and q of (n,).
    """
    Ms, qs = jnp.shape(M), jnp.shape(q)
    if len(Ms) != 2 or Ms[0] != Ms[1]:
        raise ValueError(
            f"{name}: M must be a square matrix of shape (n, n); got shape {Ms} (for a batch of problems, use jax.vmap)"
        )
    if qs != (Ms[0],):
        raise ValueError(f"{name}: q must have shape (n,) = ({Ms[0]},) to match M {Ms}; got {qs}")
    if z0 is not None and jnp.shape(z0) != qs:
        raise ValueError(f"{name}: z0 must have the shape of q {qs}; got {jnp.shape(z0)}")
    for label, x in (("M", M), ("q", q), ("z0", z0)):
        if x is None or isinstance(x, jax.core.Tracer):
            continue
        a = np.asarray(x)
        if not np.issubdtype(a.dtype, np.floating) and not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"{name}: {label} must be real numbers; got dtype {a.dtype}")
        if not np.all(np.isfinite(a)):
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
            raise ValueError(f"{name}: {label} must be finite; {label}{list(bad)} = {a[bad]}")

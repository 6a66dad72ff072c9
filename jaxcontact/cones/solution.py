"""The result type of the cone solvers, and their shared argument checks."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.cones import delassus
from jaxcontact.cones.laws import fc3d_error


class ContactSolution(NamedTuple):
    """Solution of a frictional contact problem (a pytree; batched under vmap).

    Attributes:
      r: impulses (d nc,), per contact (r_N, r_T…).
      u: local velocities ``W r + q``.
      residual: Siconos' ``fc3d_compute_error`` (:func:`~jaxcontact.cones.laws.fc3d_error`).
      iterations: sweeps or Newton steps performed (int32).
      converged: ``residual <= tol`` and everything finite (bool).
    """

    r: jax.Array
    u: jax.Array
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array


def default_tol(dtype) -> float:
    """Siconos-error tolerance: 1e-8 in float64 (the FCLIB bar), 1e-4 in float32."""
    return 1e-8 if jnp.dtype(dtype) == jnp.float64 else 1e-4


def make_solution(W, q, mu, r, iterations, tol) -> ContactSolution:
    """A :class:`ContactSolution` for r: u = W r + q, Siconos' error and the convergence flag (finite and ≤ tol)."""
    u = delassus.matvec(W, r) + q
    err = fc3d_error(r, u, mu, q)
    finite = jnp.all(jnp.isfinite(r)) & jnp.all(jnp.isfinite(u)) & jnp.isfinite(err)
    err = jnp.where(finite, err, jnp.inf)
    return ContactSolution(r, u, err, jnp.asarray(iterations, jnp.int32), finite & (err <= tol))


def _concrete(x) -> bool:
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(x))


def prepare(W, q, mu, r0, *, name: str, tol, iterations=None):
    """Check shapes and values (outside jit where concrete) and cast to one float dtype.

    Returns ``(W, q, mu, r0, tol, nc, d)``. W is a dense (d nc, d nc) array,
    :class:`~jaxcontact.cones.delassus.BlockRows` or :class:`~jaxcontact.cones.delassus.Factored`.
    """
    if np.ndim(mu) != 1:
        raise ValueError(f"{name}: mu must have shape (nc,); got {np.shape(mu)} (for a batch, use jax.vmap)")
    nc = np.shape(mu)[0]
    if np.ndim(q) != 1 or nc == 0 or np.shape(q)[0] % nc:
        raise ValueError(f"{name}: q must have shape (d nc,) with nc = {nc} contacts; got {np.shape(q)}")
    n = np.shape(q)[0]
    d = n // nc
    if d not in (2, 3):
        raise ValueError(f"{name}: contact dimension d = len(q) / len(mu) must be 2 or 3; got {d}")
    if delassus.is_blocks(W):
        if W.values.shape[0] != nc or W.values.shape[2:] != (d, d) or W.cols.shape != W.values.shape[:2]:
            raise ValueError(
                f"{name}: block W must have values (nc, k, {d}, {d}) and cols (nc, k) with "
                f"nc = {nc}; got {W.values.shape} and {W.cols.shape}"
            )
    elif delassus.is_factored(W):
        m = np.shape(W.H)[0] if np.ndim(W.H) == 2 else None
        if m is None or np.shape(W.H) != (m, n) or np.shape(W.X) != (m, n) or np.shape(W.s) != (n,):
            raise ValueError(
                f"{name}: factored W must have H and X of shape (n_u, {n}) and s of shape ({n},); got "
                f"{np.shape(W.H)}, {np.shape(W.X)} and {np.shape(W.s)}"
            )
    elif np.shape(W) != (n, n):
        raise ValueError(f"{name}: W must have shape ({n}, {n}) to match q; got {np.shape(W)}")
    if r0 is not None and np.shape(r0) != (n,):
        raise ValueError(f"{name}: r0 must have the shape of q ({n},); got {np.shape(r0)}")
    if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0):
        raise ValueError(f"{name}: iterations must be a static int >= 0; got {iterations!r}")
    Wv = W.values if delassus.is_blocks(W) else W
    parts = [("W.H", W.H), ("W.X", W.X), ("W.s", W.s)] if delassus.is_factored(W) else [("W", Wv)]
    for label, x in (*parts, ("q", q), ("mu", mu), ("r0", r0)):
        if x is None or not _concrete(x):
            continue
        a = np.asarray(x)
        if not np.all(np.isfinite(a)):
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
            raise ValueError(f"{name}: {label} must be finite; {label}{list(bad)} = {a[bad]}")
    if _concrete(mu) and np.any(np.asarray(mu) < 0):
        i = int(np.argmin(np.asarray(mu)))
        raise ValueError(f"{name}: friction coefficients must be >= 0; mu[{i}] = {np.asarray(mu)[i]}")
    dtype = jnp.result_type(*(W if delassus.is_factored(W) else [Wv]), q, 1.0)
    if delassus.is_blocks(W):
        W = delassus.BlockRows(jnp.asarray(W.cols, jnp.int32), jnp.asarray(W.values, dtype))
    elif delassus.is_factored(W):
        W = delassus.Factored(*(jnp.asarray(x, dtype) for x in W))
    else:
        W = jnp.asarray(W, dtype)
    q = jnp.asarray(q, dtype)
    mu = jnp.asarray(mu, dtype)
    r0 = jnp.zeros_like(q) if r0 is None else jnp.asarray(r0, dtype)
    tol = default_tol(dtype) if tol is None else tol
    return W, q, mu, r0, tol, nc, d

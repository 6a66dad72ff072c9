"""Exhaustive enumeration of complementary bases for small LCPs, and the basis solve.

Every solution of LCP(M, q) has a complementary index set A (z_i may be
nonzero only for i ∈ A, w_i = 0 there) with

    M_AA z_A = −q_A,   z_A ≥ 0,   w = M z + q ≥ 0 off A.

:func:`enumerate_lcp` solves this linear system for all 2ⁿ sets at once
(one batched solve, fully vectorized, no data-dependent control flow) and
keeps the candidate with the smallest natural residual. It finds a solution
whenever one exists at a vertex of the complementarity structure — which is
every solvable LCP whose solution set has a point with a nonsingular or a
consistent (least-squares exact) basis block — regardless of the matrix
class, so it is the last resort behind Lemke and Newton. Cost grows as 2ⁿ·n³,
hence the static limit ``n ≤ MAX_ENUMERATION_SIZE`` (4096 bases of 12 × 12
at n = 12 take a few milliseconds; every further row doubles it).

The basis block is solved through an SVD pseudo-inverse (singular values
below ``rcond·σ_max`` discarded): where M_AA is singular but the system is
consistent (e.g. CPS_1, M = [[1, 1], [1, 1]]) it returns the minimum-norm
basic solution instead of inf/NaN; an inconsistent singular system gives a
candidate with a large residual that is simply not chosen. Which candidate
wins is decided only by the residual recomputed from (M, q), so a wrong
candidate can never be reported as converged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.lcp.implicit import implicit_solution
from jaxcontact.lcp.rows import decouple_rows
from jaxcontact.lcp.solution import LCPSolution, check_problem, default_tol, natural_residual

MAX_ENUMERATION_SIZE = 14


def basis_solve(M, q, basic, rcond=None, *, pseudo_inverse: bool = True):
    """z with ``M_AA z_A = −q_A`` on A = {basic}, z = 0 off A.

    Fixed shapes: the n × n system ``K = [M_AA on A×A, s·I off A]`` (s = max|M|
    keeps the padding at the data's scale) has the solution z_A on A and 0 off
    A. Used by enumeration and to polish the basis found by Lemke or Newton.
    ``pseudo_inverse=True`` solves through an SVD (finite for singular
    blocks); ``False`` uses an LU solve, several times cheaper, for callers
    whose block is nonsingular in theory (Lemke's basis) and who check the
    result (a singular block then gives inf/NaN, which their residual test rejects).
    """
    n = q.shape[-1]
    rcond = 100.0 * max(n, 1) * float(jnp.finfo(q.dtype).eps) if rcond is None else rcond
    scale = jnp.max(jnp.abs(M), initial=0.0)
    scale = jnp.where(jnp.isfinite(scale) & (scale > 0), scale, 1.0)
    K, rhs = decouple_rows(M, -q, basic, diagonal=scale, outside=0.0)
    if not pseudo_inverse:
        return jnp.where(basic, jnp.linalg.solve(K, rhs), 0.0)
    U, s, Vt = jnp.linalg.svd(K)
    keep = s > rcond * s[0]
    s_inv = jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0), 0.0)
    z = Vt.T @ (s_inv * (U.T @ rhs))
    return jnp.where(basic, z, 0.0)


def _all_index_sets(n: int) -> np.ndarray:
    """Boolean (2ⁿ, n) table: row k is the binary expansion of k (a static constant)."""
    k = np.arange(2**n)[:, None]
    return ((k >> np.arange(n)[None, :]) & 1).astype(bool)


def _enumerate_z(M, q):
    n = q.shape[0]
    sets = jnp.asarray(_all_index_sets(n))
    Z = jax.vmap(lambda a: basis_solve(M, q, a))(sets)
    # Clip tiny negatives of the basic solve: a candidate's residual is judged on
    # what is returned. Non-finite candidates get an infinite score.
    Z = jnp.maximum(Z, 0.0)
    W = Z @ M.T + q
    res = jax.vmap(natural_residual, in_axes=(0, 0, None))(Z, W, q)
    res = jnp.where(jnp.isfinite(res), res, jnp.inf)
    best = jnp.argmin(res)
    return Z[best], jnp.int32(2**n)


def enumerate_lcp(M, q, *, tol=None) -> LCPSolution:
    """Solve a small LCP(M, q) by trying every complementary basis (2ⁿ linear solves).

    Args:
      M: (n, n) matrix, any class; n ≤ ``MAX_ENUMERATION_SIZE`` (static).
      q: (n,) vector.
      tol: ``converged`` threshold on the natural residual (default
        :func:`~jaxcontact.lcp.solution.default_tol` of the dtype).

    Returns:
      :class:`LCPSolution` of the candidate with the smallest residual;
      ``iterations`` = 2ⁿ (bases tried); ``converged`` only if that residual
      is ≤ tol. z is differentiable by the implicit rule
      (:mod:`jaxcontact.lcp.implicit`).
    """
    check_problem(M, q, name="enumerate_lcp")
    n = jnp.shape(q)[0]
    if n > MAX_ENUMERATION_SIZE:
        raise ValueError(
            f"enumerate_lcp: n = {n} exceeds MAX_ENUMERATION_SIZE = "
            f"{MAX_ENUMERATION_SIZE} (2^n bases); use lemke or newton_fb"
        )
    dtype = jnp.result_type(M, q, 1.0)
    M = jnp.asarray(M, dtype)
    q = jnp.asarray(q, dtype)
    tol = default_tol(dtype) if tol is None else tol
    return implicit_solution(_enumerate_z, M, q, tol=tol)

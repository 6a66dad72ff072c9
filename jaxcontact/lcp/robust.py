"""A robust LCP driver: Lemke, then Newton–Fischer–Burmeister, then enumeration.

``robust_solve`` chains the exact methods so that each covers the others'
failures, and returns the first answer whose residual passes:

1. :func:`~jaxcontact.lcp.lemke.lemke` — exact for P-, positive semidefinite
   and copositive-plus matrices; may end on a ray for other classes (CPS_3).
2. :func:`~jaxcontact.lcp.newton.newton_fb` started from Lemke's z — needs
   no matrix class, but converges only locally.
3. :func:`~jaxcontact.lcp.enumeration.enumerate_lcp`, only when
   n ≤ ``enumeration_max_n`` (static): finds a basic solution whenever one
   exists.

Under ``jit``/``vmap`` the stages are not skipped (a batched ``cond`` runs
both branches anyway): every problem pays for every stage, and the result is
selected per problem. For large batches of easy problems call ``lemke``
directly. ``iterations`` is the sum of the stages' counts (pivots + Newton
steps + bases tried), ``converged`` the residual check on the returned z,
whose gradient is the implicit one at that solution.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcontact.lcp.enumeration import MAX_ENUMERATION_SIZE, enumerate_lcp
from jaxcontact.lcp.lemke import lemke
from jaxcontact.lcp.newton import newton_fb
from jaxcontact.lcp.solution import LCPSolution, check_problem, default_tol


def _pick(first: LCPSolution, second: LCPSolution) -> LCPSolution:
    """``first`` if it converged, else whichever has the smaller residual."""
    keep = first.converged | (first.residual <= second.residual)
    out = jax.tree.map(lambda a, b: jnp.where(keep, a, b), first, second)
    return out._replace(iterations=first.iterations + second.iterations)


def robust_solve(M, q, *, tol=None, newton_iterations: int = 50, enumeration_max_n: int = 10) -> LCPSolution:
    """Solve LCP(M, q) by Lemke, then Newton–FB from Lemke's z, then enumeration (small n).

    Args:
      M: (n, n) matrix (any class).
      q: (n,) vector.
      tol: ``converged`` threshold on the natural residual (dtype default).
      newton_iterations: Newton steps of the second stage (static int).
      enumeration_max_n: run the 2ⁿ enumeration stage only for n ≤ this
        (static int, at most ``MAX_ENUMERATION_SIZE``); 0 disables it.

    Returns:
      :class:`LCPSolution` of the first stage that converged, else the one
      with the smallest residual (converged=False).
    """
    check_problem(M, q, name="robust_solve")
    if not 0 <= enumeration_max_n <= MAX_ENUMERATION_SIZE:
        raise ValueError(
            f"robust_solve: enumeration_max_n must be in [0, {MAX_ENUMERATION_SIZE}]; got {enumeration_max_n!r}"
        )
    dtype = jnp.result_type(M, q, 1.0)
    M = jnp.asarray(M, dtype)
    q = jnp.asarray(q, dtype)
    tol = default_tol(dtype) if tol is None else tol
    sol = lemke(M, q, tol=tol)
    sol = _pick(sol, newton_fb(M, q, iterations=newton_iterations, z0=sol.z, tol=tol))
    if q.shape[0] <= enumeration_max_n:
        sol = _pick(sol, enumerate_lcp(M, q, tol=tol))
    return sol

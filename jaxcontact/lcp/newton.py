"""Semismooth Newton on the Fischer–Burmeister reformulation of LCP(M, q).

φ(a, b) = √(a² + b²) − a − b vanishes iff a ≥ 0, b ≥ 0, ab = 0, so the LCP is
the nonsmooth equation Φ(z) = (φ(z_i, w_i))_i = 0 with w = M z + q, and
Ψ = ½‖Φ‖² is a continuously differentiable merit function. This is the
method of De Luca, Facchinei and Kanzow (1996) and of Siconos'
NEWTON_FB_FBLSA:

* Element of the generalized Jacobian: J = D_a + D_b M with
  (D_a)_ii = z_i/r_i − 1, (D_b)_ii = w_i/r_i − 1, r_i = √(z_i² + w_i²); at a
  degenerate index (z_i = w_i = 0) the limit along (1, 1) is used,
  D_a = D_b = 1/√2 − 1.
* Direction: the Newton step J d = −Φ when it is finite and a sufficient
  descent direction (∇Ψᵀd ≤ −ρ‖d‖^p, ρ = 1e-8, p = 2.1, as in DFK).
  Otherwise — beyond Siconos' fallback to the gradient −∇Ψ, which crawls —
  the Levenberg–Marquardt step (JᵀJ + μI) d = −JᵀΦ with μ = ‖Φ‖ (Yamashita–
  Fukushima), always a descent direction and well defined for singular J.
* Armijo backtracking of bounded length: t = βᵏ, k = 0 … ``line_search``−1,
  β = 1/2, first t with Ψ(z + t d) ≤ Ψ(z) + σ t ∇Ψᵀd (σ = 1e-4). All
  candidates are evaluated at once: w(z + t d) = w + t (M d), so the whole
  search costs one matrix–vector product plus O(line_search · n). If no step
  passes, z stays (the residual then says converged=False).
* φ is evaluated as −2ab/(r + a + b) when a + b > 0, which avoids the
  cancellation of r − a − b near the solution (a ≫ 0, b ≈ 0).

Fixed iteration count (``lax.scan``), so a batch under vmap costs the same
per problem; after convergence the steps are zero. At the end the iterate is
polished on its active set {z_i > w_i} by one direct solve (as in
:mod:`jaxcontact.lcp.lemke`) and the better of the two (natural residual) is
returned. Newton converges locally quadratically at a nondegenerate (BD-
regular) solution and, unlike Lemke, needs no matrix class — it solves
problems Lemke misses (CPS_3) — but it can stall at a stationary point of Ψ
that is not a solution; ``converged`` then says so.

Differentiation: only the implicit rule at the returned solution
(:mod:`jaxcontact.lcp.implicit`); unrolling through direction switches and
a discrete line search would be fragile and no more accurate.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcontact.lcp.enumeration import basis_solve
from jaxcontact.lcp.implicit import implicit_solution
from jaxcontact.lcp.solution import LCPSolution, check_problem, default_tol, natural_residual

ARMIJO_SIGMA = 1e-4
ARMIJO_BETA = 0.5
DESCENT_RHO = 1e-8
DESCENT_P = 2.1


def fischer_burmeister(a, b):
    """φ(a, b) = √(a² + b²) − a − b, evaluated without cancellation."""
    r = jnp.sqrt(a * a + b * b)
    s = a + b
    pos = s > 0
    return jnp.where(pos, -2.0 * a * b / jnp.where(pos, r + s, 1.0), r - s)


def _newton_z(M, q, z0, *, iterations, line_search):
    n = q.shape[0]
    dtype = q.dtype
    tiny = jnp.finfo(dtype).tiny
    ts = jnp.asarray(ARMIJO_BETA ** np.arange(line_search), dtype)

    def step(z, _):
        w = M @ z + q
        phi = fischer_burmeister(z, w)
        psi = 0.5 * phi @ phi
        r = jnp.sqrt(z * z + w * w)
        deg = r <= tiny
        safe_r = jnp.where(deg, 1.0, r)
        corner = 1.0 / np.sqrt(2.0) - 1.0
        da = jnp.where(deg, corner, z / safe_r - 1.0)
        db = jnp.where(deg, corner, w / safe_r - 1.0)
        J = jnp.diag(da) + db[:, None] * M
        grad = J.T @ phi
        d_newton = jnp.linalg.solve(J, -phi)
        mu = jnp.sqrt(2.0 * psi)
        d_lm = jnp.linalg.solve(J.T @ J + mu * jnp.eye(n, dtype=dtype), -grad)
        nd = jnp.linalg.norm(d_newton)
        newton_ok = jnp.all(jnp.isfinite(d_newton)) & (grad @ d_newton <= -DESCENT_RHO * nd**DESCENT_P)
        d = jnp.where(newton_ok, d_newton, d_lm)
        d = jnp.where(jnp.all(jnp.isfinite(d)), d, -grad)
        slope = grad @ d
        Md = M @ d
        Z = z[None, :] + ts[:, None] * d[None, :]
        W = w[None, :] + ts[:, None] * Md[None, :]
        P = fischer_burmeister(Z, W)
        psis = 0.5 * jnp.sum(P * P, axis=1)
        ok = jnp.isfinite(psis) & (psis <= psi + ARMIJO_SIGMA * ts * slope)
        k = jnp.argmax(ok)
        t = jnp.where(jnp.any(ok) & (psi > 0), ts[k], 0.0)
        return z + t * d, None

    z, _ = lax.scan(step, z0, None, length=iterations)

    def score(z):
        res = natural_residual(z, M @ z + q, q)
        return jnp.where(jnp.isfinite(res), res, jnp.inf)

    z_newton = jnp.maximum(jnp.where(jnp.all(jnp.isfinite(z)), z, 0.0), 0.0)
    w = M @ z_newton + q
    z_pol = jnp.maximum(basis_solve(M, q, z_newton > w), 0.0)
    return jnp.where(score(z_pol) <= score(z_newton), z_pol, z_newton)


def newton_fb(
    M, q, *, iterations: int = 50, line_search: int = 30, z0=None, tol=None, differentiation: str = "implicit"
) -> LCPSolution:
    """Solve LCP(M, q) by semismooth Newton on the Fischer–Burmeister function.

    Args:
      M: (n, n) matrix, any class (convergence is local; see the module docstring).
      q: (n,) vector.
      iterations: Newton steps (static int); all are performed.
      line_search: backtracking candidates t = 2⁻ᵏ, k < line_search (static int).
      z0: starting point (default zeros), e.g. a failed Lemke iterate.
      tol: ``converged`` threshold on the natural residual; default
        :func:`~jaxcontact.lcp.solution.default_tol` of the dtype.
      differentiation: only ``"implicit"``.

    Returns:
      :class:`LCPSolution` with ``iterations`` = Newton steps performed.
    """
    check_problem(M, q, z0, name="newton_fb")
    if differentiation != "implicit":
        raise ValueError(f"newton_fb: differentiation must be 'implicit'; got {differentiation!r}")
    for label, v, low in (("iterations", iterations, 0), ("line_search", line_search, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ValueError(f"newton_fb: {label} must be a static int >= {low}; got {v!r}")
    dtype = jnp.result_type(M, q, 1.0)
    M = jnp.asarray(M, dtype)
    q = jnp.asarray(q, dtype)
    z0 = jnp.zeros_like(q) if z0 is None else jnp.asarray(z0, dtype)
    tol = default_tol(dtype) if tol is None else tol

    def solve(M, q, z0):
        return _newton_z(M, q, z0, iterations=iterations, line_search=line_search), jnp.int32(iterations)

    return implicit_solution(solve, M, q, z0, tol=tol)

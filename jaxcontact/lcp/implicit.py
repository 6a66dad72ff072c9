"""Differentiating an LCP solution: unrolled sweeps or the implicit function theorem.

Every solver of :mod:`jaxcontact.lcp` takes ``differentiation=`` per call:

``"unroll"``
    Reverse/forward mode runs through the solver's fixed iterations. The
    gradient is the exact derivative of *what was computed*, truncation error
    included (an unconverged solve gives the gradient of the unconverged
    iterate). Cost is proportional to the number of sweeps, and reverse mode
    stores every sweep's iterate (memory ∝ sweeps · n per problem; ∝ sweeps ·
    n² for the row-by-row Gauss–Seidel loop). Once the active set has
    settled, the derivative of the sweeps converges to the implicit one at the
    iterate's linear rate ρ, lagging by a factor of about the sweep count
    (error ∝ k ρᵏ instead of ρᵏ).

``"implicit"``
    The solver's z gets a custom VJP from the implicit function theorem at
    the solution, whatever algorithm produced it: one linear solve of size n,
    independent of the sweep count, no stored iterates, and the gradient of
    the *exact* solution (not of a truncated iterate). It is valid where the
    solution is locally a smooth function of (M, q): strict complementarity
    (no index with z_i = w_i = 0) and a nonsingular active block.

The implicit rule. Let A = {i : z_i > w_i} (the basic, "active" indices,
where z_i > 0 = w_i). Near a strictly complementary solution A is fixed, z is
zero off A and w_A = 0, so ``M_AA z_A = −q_A`` and

    dz_A = −M_AA⁻¹ (dM z + dq)_A,      dz_i = 0 for i ∉ A.

Its VJP: solve ``M_AAᵀ v = ḡ_A``; then ``q̄ = −v`` (zero off A) and
``M̄ = −v zᵀ``. Shapes stay fixed with masks: with a = 1[A], the n × n system
``K = diag(a) M diag(a) + s·diag(1 − a)`` (s = max|M_ij|, so the padding has
the scale of the data) is solved for ``Kᵀ v = a ⊙ ḡ``, which gives v = 0 off A.

Degenerate points. An index with z_i = w_i = 0 is put in the *inactive* set
(the strict test z_i > w_i fails), so the returned gradient is the Jacobian
of the smooth piece on which that index stays inactive (z_i ≡ 0, w_i free):
the one-sided derivative for perturbations that keep w_i ≥ 0, an element of
the B-subdifferential (the limiting Jacobian from the region where i is
strictly inactive) whenever M_AA is nonsingular. With an iterative solver the
test sees the approximate (z, w), so near-degenerate indices are classified
by whichever of z_i, w_i is larger.

Singular or ill-conditioned active blocks (e.g. redundant contacts: a box
with four contacts on three degrees of freedom, whose Delassus block has
rank 3) are solved in the least-squares, minimum-norm sense through an SVD
with singular values below ``rcond · σ_max`` discarded (the pseudo-inverse).
Where M_AA is invertible this is the exact solve; where it is singular the
solution z_A is not unique, no true derivative exists, and the pseudo-inverse
gives the minimum-norm adjoint: finite, never NaN.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxcontact.lcp.rows import decouple_rows
from jaxcontact.lcp.solution import LCPSolution, make_solution

DIFFERENTIATION_MODES = ("unroll", "implicit")


def check_differentiation(mode: str, name: str) -> None:
    """Raise a clear error for an unknown ``differentiation=`` choice."""
    if mode not in DIFFERENTIATION_MODES:
        raise ValueError(f"{name}: differentiation must be one of {DIFFERENTIATION_MODES}; got {mode!r}")


def default_rcond(n: int, dtype) -> float:
    """Relative cut-off for singular values of the active block: 100 · n · eps."""
    return 100.0 * max(n, 1) * float(jnp.finfo(dtype).eps)


def active_set_adjoint(M, q, z, g, rcond=None):
    """Cotangents (M̄, q̄) of the LCP solution map at z for the cotangent g of z.

    Solves ``M_AAᵀ v = g_A`` on the active set A = {z_i > w_i} with the masked
    n × n system and an SVD pseudo-inverse (see the module docstring), then
    returns ``(−v zᵀ, −v)``.
    """
    n = z.shape[-1]
    if n == 0:
        return jnp.zeros_like(M), jnp.zeros_like(q)
    rcond = default_rcond(n, z.dtype) if rcond is None else rcond
    w = M @ z + q
    a = z > w
    scale = jnp.max(jnp.abs(M), initial=0.0)
    scale = jnp.where(jnp.isfinite(scale) & (scale > 0), scale, 1.0)
    K, rhs = decouple_rows(M, g, a, diagonal=scale, outside=0.0)
    U, s, Vt = jnp.linalg.svd(K.T)
    keep = s > rcond * s[0]
    s_inv = jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0), 0.0)
    v = Vt.T @ (s_inv * (U.T @ rhs))
    return -jnp.outer(v, z), -v


def implicit_solve(solve: Callable, M, q, *args, rcond=None):
    """Run ``solve(M, q, *args) -> (z, aux)`` and give z the implicit-function VJP.

    Args:
      solve: any LCP solver returning the solution ``z`` and an auxiliary
        pytree ``aux`` (e.g. an iteration or pivot count) that gets no gradient.
      M, q: the problem (differentiable).
      *args: extra floating-point array inputs of ``solve`` (warm start,
        relaxation, …); the exact solution does not depend on them, so their
        cotangent is zero.
      rcond: relative singular-value cut-off of the active-block solve
        (static float; default ``100 · n · eps``).

    Returns ``(z, aux)``. Works under jit and vmap; reverse mode only
    (``jax.grad``, ``jax.vjp``), as for any ``custom_vjp``.
    """

    @jax.custom_vjp
    def run(M, q, args):
        return solve(M, q, *args)

    def fwd(M, q, args):
        z, aux = solve(M, q, *args)
        return (z, aux), (M, q, z, args)

    def bwd(res, cotangents):
        M, q, z, args = res
        g_z = cotangents[0]
        M_bar, q_bar = active_set_adjoint(M, q, z, g_z, rcond)
        return M_bar, q_bar, jax.tree.map(jnp.zeros_like, args)

    run.defvjp(fwd, bwd)
    return run(M, q, tuple(args))


def implicit_solution(solve: Callable, M, q, *args, tol, rcond=None) -> LCPSolution:
    """:class:`LCPSolution` whose z has the implicit VJP; w, residual, flag recomputed from z.

    ``solve(M, q, *args)`` returns ``(z, iterations)``; see :func:`implicit_solve`.
    ``w = M z + q`` is formed outside the custom rule, so its gradient is the
    chain rule through both M, q and the implicit z.
    """
    z, iterations = implicit_solve(solve, M, q, *args, rcond=rcond)
    return make_solution(M, q, z, jax.lax.stop_gradient(iterations), tol)

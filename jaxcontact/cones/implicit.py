"""Gradients of a frictional contact solution by the implicit function theorem.

At a solution r* the Alart–Curnier function vanishes, F(r*; W, q, μ) = 0
(:func:`~jaxcontact.cones.laws.alart_curnier`). F is piecewise smooth; its
pieces are the contact regimes — separated (r = 0), sticking (u = 0),
sliding (u_N = 0, r on the cone's boundary, friction opposing the slip) —
and on the piece containing r* the solution map is smooth with

    dr = −J⁻¹ (∂F/∂W dW + ∂F/∂q dq + ∂F/∂μ dμ),    J = ∂F/∂r = A + B W,

A, B the block diagonal derivatives of F in r and u. The VJP solves
Jᵀ v = ḡ once and pulls −v back through F's dependence on (W, q, μ) by
``jax.vjp``, whatever algorithm produced r* (no sweeps stored).

Regime boundaries (a grazing contact, a stick–slip transition) take one
side deterministically: a tie in the normal law is the separated piece, a
tangential force exactly on the cone's boundary the sliding piece — an
element of the B-subdifferential. J is often singular — four sticking
vertices of a box resting on a face have twelve rows of rank six — so
Jᵀ v = ḡ is solved in the regularised least-squares sense,

    v = J (JᵀJ + λ I)⁻¹ ḡ  (= (J Jᵀ + λ I)⁻¹ J ḡ),    λ = 100 ε_mach tr(JᵀJ),

by one factorisation of the symmetric positive definite JᵀJ + λ I (an LU
written in jax, :func:`~jaxcontact.cones.linear_solvers.dense_solve`, so that
no LAPACK call enters a batched program). λ sits a hundred times above the
rounding of JᵀJ, so the factorisation never meets a vanishing pivot, and v is
finite, never NaN. Where ḡ has no part in J's null space (the directions in
which r is not unique) v is the minimum-norm solution to a relative λ / σ²
on singular values σ well above √λ, and lies in J's range. A contact's
cotangent has no such part: it reaches r through the impulse on the bodies
Hᵀr, which is unique where r is not. A part there would be amplified by
1/λ before J removes it, leaving errors far above rounding (bench/RESULTS.md
measures them), where an SVD pseudo-inverse, which costs several times
more, drops it exactly.

ρ of the Alart–Curnier function is a numerical setting; F's derivative in
ρ vanishes at a solution, so it gets no gradient.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.cones import delassus
from jaxcontact.cones.laws import alart_curnier, alart_curnier_blocks, alart_curnier_map, alart_curnier_rho, per_contact
from jaxcontact.cones.linear_solvers import dense_solve
from jaxcontact.cones.solution import make_solution


def residual_and_jacobian(W, q, mu, r, rho, law=alart_curnier):
    """F(r) and the dense J = ∂F/∂r = A + B W (W dense or block rows) for a per-contact ``law``."""
    nc = mu.shape[-1]
    n = q.shape[-1]
    d = n // nc
    u = delassus.matvec(W, r) + q
    F = law(per_contact(r, nc), per_contact(u, nc), mu, rho).reshape(-1)
    A, B = alart_curnier_blocks(r, u, mu, rho, law)
    Wd = delassus.to_dense(W)
    J = jnp.einsum("iab,ibn->ian", B, Wd.reshape(nc, d, n)).reshape(n, n)
    idx = jnp.arange(nc)
    Jb = J.reshape(nc, d, nc, d).at[idx, :, idx, :].add(A)
    return F, Jb.reshape(n, n)


def _regularised_transposed_solve(J, g):
    """v = J (JᵀJ + λ I)⁻¹ g, λ = 100 ε_mach tr(JᵀJ): Jᵀv = g regularised (the module docstring says why)."""
    info = jnp.finfo(J.dtype)
    JtJ = J.T @ J
    lam = 100.0 * info.eps * jnp.trace(JtJ) + info.tiny
    # in jax, not LAPACK, for the small systems of a step: a batched program then stays one XLA program that
    # several CPU host devices can run (linear_solvers.dense_solve says why)
    return J @ dense_solve(JtJ + lam * jnp.eye(J.shape[0], dtype=J.dtype), g)


def _adjoint(W, q, mu, r, g):
    nc = mu.shape[-1]
    rho = alart_curnier_rho(delassus.diagonal_blocks(W, nc))
    _, J = residual_and_jacobian(W, q, mu, r, rho)
    v = _regularised_transposed_solve(J, g)

    def F_of(W, q, mu):
        return alart_curnier_map(r, delassus.matvec(W, r) + q, mu, rho)

    _, pull = jax.vjp(F_of, W, q, mu)
    return pull(-v)


def implicit_r(solve, W, q, mu, r0):
    """Run ``solve(W, q, mu, r0) -> (r, iterations)`` and give r the implicit VJP."""

    @jax.custom_vjp
    def run(W, q, mu, r0):
        return solve(W, q, mu, r0)

    def fwd(W, q, mu, r0):
        r, k = solve(W, q, mu, r0)
        return (r, k), (W, q, mu, r, r0)

    def bwd(res, cot):
        W, q, mu, r, r0 = res
        W_bar, q_bar, mu_bar = _adjoint(W, q, mu, r, cot[0])
        if delassus.is_blocks(W):  # integer block columns get the float0 zero cotangent
            W_bar = delassus.BlockRows(np.zeros(W.cols.shape, jax.dtypes.float0), W_bar.values)
        return W_bar, q_bar, mu_bar, jnp.zeros_like(r0)

    run.defvjp(fwd, bwd)
    return run(W, q, mu, r0)


def implicit_solution(solve, W, q, mu, r0, *, tol):
    """:class:`~jaxcontact.cones.solution.ContactSolution` with the implicit VJP on r."""
    r, k = implicit_r(solve, W, q, mu, r0)
    return make_solution(W, q, mu, r, jax.lax.stop_gradient(k), tol)

"""Global semismooth Newton on the Alart–Curnier or Fischer–Burmeister function (Siconos' NSN_AC and NSN_FB).

Solves F(r) = 0 with F the Alart–Curnier function of every contact
(:func:`~jaxcontact.cones.laws.alart_curnier`, the default) or the
Fischer–Burmeister function of the cone
(:func:`~jaxcontact.cones.laws.fischer_burmeister`, ``function=
"fischer_burmeister"``), u = W r + q. Both vanish exactly at the solutions,
so the two Newtons solve the same problems; the first is piecewise linear
per regime, the second smooth away from non-strict complementarity. Per
step:

* J = A + B W, an element of F's generalized Jacobian (A, B block diagonal:
  derivatives of each contact's F in its own r and u, by ``jax.jacfwd`` on
  the d-vector law);
* direction of the proximally regularised Newton system
  (J + σ I) d = −F, σ = min(‖F‖, σ_max): σ → 0 at the solution keeps the
  local superlinear rate, and σ > 0 away from it keeps the step finite where
  J is singular (redundant contacts: four corners of a box on a plane give a
  rank-deficient W). If that d is not a descent direction of
  ψ = ½‖F‖² (or not finite), the Levenberg–Marquardt step
  (JᵀJ + ‖F‖ I) d = −JᵀF is taken, which always is;
* Armijo backtracking on ψ over at most ``line_search`` halvings, one at a
  time (u(t) = u + t W d: no product per candidate); if none passes, the best
  candidate that lowers ψ, else no move.

Stopping: Siconos' error ≤ tol or ``iterations`` steps (``lax.while_loop``;
under vmap, the batch runs until its last problem stops, finished problems
frozen). The Newton system is solved by the ``linear_solver`` object: a dense
LU (the default), an LU within W's band, GMRES from products with J only, or a sparse direct LU on W's
block rows (:mod:`jaxcontact.cones.linear_solvers`). Gradients: implicit at
the result (:mod:`jaxcontact.cones.implicit`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from jaxcontact.cones import delassus
from jaxcontact.cones.implicit import implicit_solution
from jaxcontact.cones.laws import (
    alart_curnier,
    alart_curnier_blocks,
    alart_curnier_rho,
    fc3d_error,
    fischer_burmeister,
    per_contact,
)
from jaxcontact.cones.linear_solvers import GMRES, LINEAR_SOLVERS, BandedLU, DenseLU, SparseLU
from jaxcontact.cones.solution import ContactSolution, prepare

ARMIJO_SIGMA = 1e-4
SIGMA_MAX = 1e-2
DENSE_LU = DenseLU()
FUNCTIONS = {"alart_curnier": alart_curnier, "fischer_burmeister": fischer_burmeister}


def _law(name: str, function):
    if function not in FUNCTIONS:
        raise ValueError(f"{name}: function must be one of {tuple(FUNCTIONS)}; got {function!r}")
    return FUNCTIONS[function]


# Jitted for the same reason as the local solve: the stragglers' rescue calls it from several call sites.
@functools.partial(jax.jit, static_argnames=("iterations", "line_search", "law", "linear_solver"))
def newton_iterate(W, q, mu, r0, *, tol, iterations, line_search, law=alart_curnier, linear_solver=DENSE_LU):
    """The Newton steps of :func:`newton` from r0 on a prepared problem: (r, steps), no checks, no gradient rule."""
    nc = mu.shape[0]
    rho = alart_curnier_rho(delassus.diagonal_blocks(W, nc))

    def err(r):
        e = fc3d_error(r, delassus.matvec(W, r) + q, mu, q)
        return jnp.where(jnp.isfinite(e), e, jnp.inf)

    def step(state):
        r, k, _ = state
        u = delassus.matvec(W, r) + q
        R, U = per_contact(r, nc), per_contact(u, nc)
        F = law(R, U, mu, rho).reshape(-1)
        A, B = alart_curnier_blocks(r, u, mu, rho, law)
        J = delassus.block_diagonal_plus(W, A, B)
        psi = 0.5 * F @ F
        nF = jnp.sqrt(2.0 * psi)
        grad = delassus.transpose_matvec(J, F)
        sigma = jnp.minimum(nF, SIGMA_MAX)
        d = linear_solver.direction(J, F, grad, nF, sigma, nc)
        d = jnp.where(jnp.all(jnp.isfinite(d)), d, -grad)
        Wd = delassus.matvec(W, d)
        slope = grad @ d

        def merit(t):
            Ft = law(per_contact(r + t * d, nc), per_contact(u + t * Wd, nc), mu, rho)
            p = 0.5 * jnp.sum(Ft * Ft)
            return jnp.where(jnp.isfinite(p), p, jnp.inf)

        # Backtracking one candidate at a time: near the solution the full step passes at once.
        def ls_cond(s):
            j, _, found, _, _ = s
            return (j < line_search) & ~found

        def ls_body(s):
            j, t, _, best_t, best_psi = s
            pt = merit(t)
            found = pt <= psi + ARMIJO_SIGMA * t * slope
            take = found | (pt < best_psi)  # the first Armijo step, else the lowest merit seen
            return (
                j + 1,
                jnp.where(found, t, 0.5 * t),
                found,
                jnp.where(take, t, best_t),
                jnp.where(take, pt, best_psi),
            )

        one, zero = jnp.ones((), q.dtype), jnp.zeros((), q.dtype)
        _, _, _, t, _ = lax.while_loop(ls_cond, ls_body, (jnp.int32(0), one, jnp.bool_(False), zero, psi))
        r = r + t * d
        return r, k + 1, err(r)

    def cond(state):
        _, k, e = state
        return (k < iterations) & (e > tol)

    r, k, _ = lax.while_loop(cond, step, (r0, jnp.int32(0), err(r0)))
    return r, k


def newton(
    W,
    q,
    mu,
    *,
    iterations: int = 200,
    line_search: int = 20,
    r0=None,
    tol=None,
    function: str = "alart_curnier",
    linear_solver: DenseLU | BandedLU | GMRES | SparseLU = DENSE_LU,
) -> ContactSolution:
    """Semismooth Newton with line search and proximal regularisation (module docstring).

    Args:
      W: (d nc, d nc) Delassus matrix (or block rows, densified), unknowns
        interleaved per contact; q: (d nc,); mu: (nc,) ≥ 0; d = 3 or 2.
      iterations: maximum Newton steps (static int).
      line_search: backtracking candidates t = 2⁻ᵏ, k < line_search (static int ≥ 1).
      r0: warm start (default zeros).
      tol: Siconos-error threshold for stopping and ``converged``
        (default 1e-8 in float64, 1e-4 in float32).
      function: ``"alart_curnier"`` (Siconos' NSN_AC) or
        ``"fischer_burmeister"`` (NSN_FB), the function whose zero is sought.
      linear_solver: how the Newton system is solved (:mod:`jaxcontact.cones.linear_solvers`):
        ``DenseLU()`` (default; W by block rows is densified), ``BandedLU(lower, upper)`` (the LU within
        W's band, dense where J leaves it), ``GMRES(restart)``
        (products with J only, W by block rows never densified) or ``SparseLU()``
        (SuperLU of J assembled from W's block rows, on the host; needs block rows).

    Returns :class:`~jaxcontact.cones.solution.ContactSolution`; ``r`` has
    implicit-function gradients.
    """
    law = _law("newton", function)
    W, q, mu, r0, tol, nc, d = prepare(W, q, mu, r0, name="newton", tol=tol, iterations=iterations)
    if isinstance(line_search, bool) or not isinstance(line_search, int) or line_search < 1:
        raise ValueError(f"newton: line_search must be a static int >= 1; got {line_search!r}")
    if not isinstance(linear_solver, LINEAR_SOLVERS):
        raise ValueError(
            f"newton: linear_solver must be one of DenseLU(), BandedLU(lower, upper), GMRES(restart), SparseLU() "
            f"(jaxcontact.cones.linear_solvers); got {linear_solver!r}"
        )
    W = linear_solver.prepare(W, "newton")

    def solve(W, q, mu, r0):
        return newton_iterate(
            W,
            q,
            mu,
            r0,
            tol=tol,
            iterations=iterations,
            line_search=line_search,
            law=law,
            linear_solver=linear_solver,
        )

    return implicit_solution(solve, W, q, mu, r0, tol=tol)


def _proximal_r(W, q, mu, r0, *, tol, sigma, outer, inner, line_search, law):
    n = q.shape[0]
    s = sigma * jnp.max(jnp.diagonal(lax.stop_gradient(W)))
    Ws = W + s * jnp.eye(n, dtype=q.dtype)

    def err(r):
        e = fc3d_error(r, W @ r + q, mu, q)
        return jnp.where(jnp.isfinite(e), e, jnp.inf)

    def cond(state):
        _, k, _, e = state
        return (k < outer) & (e > tol)

    def body(state):
        r, k, steps, _ = state
        r, m = newton_iterate(Ws, q - s * r, mu, r, tol=0.1 * tol, iterations=inner, line_search=line_search, law=law)
        return r, k + 1, steps + m, err(r)

    r, _, steps, _ = lax.while_loop(cond, body, (r0, jnp.int32(0), jnp.int32(0), err(r0)))
    return r, steps


def proximal_newton(
    W,
    q,
    mu,
    *,
    sigma: float = 1e-6,
    outer: int = 100,
    inner: int = 100,
    line_search: int = 20,
    r0=None,
    tol=None,
    function: str = "alart_curnier",
) -> ContactSolution:
    """Proximal point iterations, each solved by :func:`newton` (Siconos' PPA family).

    r_{k+1} solves the problem with W + s I and q − s r_k (s = ``sigma`` ·
    max diag W): its fixed points are the original problem's solutions, and
    the shifted matrix is positive definite where W is only semidefinite
    (redundant contacts), which is where plain Newton stalls (a box stack,
    where Siconos' NSN_AC stalls too: bench/RESULTS.md, "Cone solvers:
    speed"). ``iterations`` reports the total Newton steps. Arguments
    otherwise as :func:`newton`.
    """
    law = _law("proximal_newton", function)
    W, q, mu, r0, tol, nc, d = prepare(W, q, mu, r0, name="proximal_newton", tol=tol, iterations=outer)
    for label, v in (("inner", inner), ("line_search", line_search)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"proximal_newton: {label} must be a static int >= 1; got {v!r}")
    if not (isinstance(sigma, (int, float)) and sigma > 0):
        raise ValueError(f"proximal_newton: sigma must be a positive number; got {sigma!r}")
    W = delassus.to_dense(W)

    def solve(W, q, mu, r0):
        return _proximal_r(
            W, q, mu, r0, tol=tol, sigma=float(sigma), outer=outer, inner=inner, line_search=line_search, law=law
        )

    return implicit_solution(solve, W, q, mu, r0, tol=tol)

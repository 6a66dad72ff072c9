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
frozen). By default the Newton system is solved by a dense LU (O(n³) a
step; block-row W is densified); with ``krylov=k`` by preconditioned GMRES
from products with J only, so W by block rows stays sparse (O(nnz) per inner
iteration; the inexact direction is still checked for descent); with
``sparse_lu=True`` by a sparse direct LU of J + σ I assembled from W's block
rows (SciPy's SuperLU through a host callback), exact like the dense LU
where GMRES stalls on near-singular J. Gradients: implicit at the result
(:mod:`jaxcontact.cones.implicit`).
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse
import scipy.sparse.linalg
from jax import lax
from jax.scipy.sparse.linalg import cg, gmres

from jaxcontact.cones import delassus
from jaxcontact.cones.branch import unless
from jaxcontact.cones.implicit import implicit_solution
from jaxcontact.cones.laws import (
    alart_curnier,
    alart_curnier_blocks,
    alart_curnier_rho,
    fc3d_error,
    fischer_burmeister,
    per_contact,
)
from jaxcontact.cones.solution import ContactSolution, prepare

ARMIJO_SIGMA = 1e-4
SIGMA_MAX = 1e-2
KRYLOV_TOL = 1e-12  # relative residual of the inner solves with W by block rows
KRYLOV_RESTARTS = 4
FUNCTIONS = {"alart_curnier": alart_curnier, "fischer_burmeister": fischer_burmeister}


def _law(name: str, function):
    if function not in FUNCTIONS:
        raise ValueError(f"{name}: function must be one of {tuple(FUNCTIONS)}; got {function!r}")
    return FUNCTIONS[function]


def _levenberg_marquardt(J, grad, nF):
    return jnp.linalg.solve(J.T @ J + nF * jnp.eye(J.shape[0], dtype=J.dtype), -grad)


def _dense_directions(J, F, grad, nF, sigma):
    d = jnp.linalg.solve(J + sigma * jnp.eye(J.shape[0], dtype=J.dtype), -F)
    descent = jnp.all(jnp.isfinite(d)) & (grad @ d < 0)
    # The O(n³) fallback only when needed (under vmap: when some problem of the batch needs it).
    return unless(descent, d, _levenberg_marquardt, J, grad, nF)


def _krylov_directions(J, F, grad, nF, sigma, krylov, nc):
    dim = F.shape[0] // nc
    diag = delassus.diagonal_blocks(J, nc) + sigma * jnp.eye(dim, dtype=F.dtype)
    inv = jnp.linalg.inv(diag)  # block-Jacobi preconditioner: nc small inverses
    precond = lambda x: jnp.einsum("iab,ib->ia", inv, x.reshape(nc, dim)).reshape(-1)
    op = lambda x: delassus.matvec(J, x) + sigma * x
    d, _ = gmres(op, -F, tol=KRYLOV_TOL, restart=krylov, maxiter=KRYLOV_RESTARTS, M=precond)
    descent = jnp.all(jnp.isfinite(d)) & (grad @ d < 0)

    def lm(J, grad, nF):  # the normal equations by conjugate gradients: only products with J and Jᵀ
        normal = lambda x: delassus.transpose_matvec(J, delassus.matvec(J, x)) + nF * x
        return cg(normal, -grad, tol=KRYLOV_TOL, maxiter=krylov * KRYLOV_RESTARTS)[0]

    return unless(descent, d, lm, J, grad, nF)


def _host_solve(rows, cols, values, b):
    A = scipy.sparse.csc_matrix((values, (rows, cols)), shape=(b.size, b.size))  # repeated positions summed
    with warnings.catch_warnings():  # a singular matrix gives NaN, which the caller checks for
        warnings.simplefilter("ignore", scipy.sparse.linalg.MatrixRankWarning)
        return scipy.sparse.linalg.spsolve(A, b).astype(b.dtype)


def _sparse_solve(rows, cols, values, b):
    """x with A x = b, A = Σ values at (rows, cols): SciPy's SuperLU on the host, one matrix per call.

    ``jax.experimental.sparse.linalg.spsolve`` calls the same SuperLU on CPU but
    needs canonical CSR (sorted, no repeated entries; else its callback fails
    on read-only buffers) and has no batching rule; this callback takes the
    block-row layout as it is and, under vmap, solves member by member.
    """
    out = jax.ShapeDtypeStruct(b.shape, b.dtype)
    return jax.pure_callback(_host_solve, out, rows, cols, values, b, vmap_method="sequential")


def _sparse_levenberg_marquardt(J, F, nF):
    # (JᵀJ + λ I) d = −JᵀF as the augmented system [[I, J], [Jᵀ, −λ I]] [s; d] = [−F; 0]: JᵀJ, whose
    # pattern reaches two block hops and whose condition number is J's squared, is never formed.
    rows, cols, values = delassus.coo(J)
    n = F.shape[0]
    diag = np.arange(n, dtype=np.int32)
    R = jnp.concatenate([rows, n + cols, diag, n + diag])
    C = jnp.concatenate([n + cols, rows, diag, n + diag])
    V = jnp.concatenate([values, values, jnp.ones(n, F.dtype), jnp.full(n, -nF, F.dtype)])
    return _sparse_solve(R, C, V, jnp.concatenate([-F, jnp.zeros_like(F)]))[n:]


def _sparse_directions(J, F, grad, nF, sigma):
    rows, cols, values = delassus.coo(J)
    diag = np.arange(F.shape[0], dtype=np.int32)
    d = _sparse_solve(
        np.concatenate([rows, diag]),
        jnp.concatenate([cols, diag]),
        jnp.concatenate([values, jnp.full(F.shape, sigma, F.dtype)]),
        -F,
    )
    descent = jnp.all(jnp.isfinite(d)) & (grad @ d < 0)
    return unless(descent, d, _sparse_levenberg_marquardt, J, F, nF)


def newton_iterate(W, q, mu, r0, *, tol, iterations, line_search, law=alart_curnier, krylov=None, sparse_lu=False):
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
        if krylov:
            d = _krylov_directions(J, F, grad, nF, sigma, krylov, nc)
        elif sparse_lu:
            d = _sparse_directions(J, F, grad, nF, sigma)
        else:
            d = _dense_directions(J, F, grad, nF, sigma)
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
    krylov: int = 0,
    sparse_lu: bool = False,
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
      krylov: 0 (default): the Newton system by a dense LU (W given by
        block rows is densified). k > 0: by GMRES with restart length k
        (at most ``KRYLOV_RESTARTS`` cycles, block-Jacobi preconditioned) and
        the fallback by conjugate gradients, from products with J = A + B W
        only: W by block rows is never densified, a step costs O(nnz(W)) per
        inner iteration (static int).
      sparse_lu: the Newton system (J + σ I) d = −F by a sparse direct LU
        (SciPy's SuperLU through a host callback), J assembled from W's
        block rows, and the Levenberg–Marquardt fallback as the equivalent
        sparse augmented system. Needs W by block rows; excludes
        ``krylov``. Runs on the host one matrix at a time: under vmap the
        batch is solved member by member (static bool).

    Returns :class:`~jaxcontact.cones.solution.ContactSolution`; ``r`` has
    implicit-function gradients.
    """
    law = _law("newton", function)
    W, q, mu, r0, tol, nc, d = prepare(W, q, mu, r0, name="newton", tol=tol, iterations=iterations)
    if isinstance(line_search, bool) or not isinstance(line_search, int) or line_search < 1:
        raise ValueError(f"newton: line_search must be a static int >= 1; got {line_search!r}")
    if isinstance(krylov, bool) or not isinstance(krylov, int) or krylov < 0:
        raise ValueError(f"newton: krylov must be a static int >= 0 (0: dense LU); got {krylov!r}")
    if not isinstance(sparse_lu, bool):
        raise ValueError(f"newton: sparse_lu must be a static bool; got {sparse_lu!r}")
    if sparse_lu and krylov:
        raise ValueError(f"newton: sparse_lu=True and krylov={krylov} are two solvers of the Newton system; choose one")
    if sparse_lu and not delassus.is_blocks(W):
        raise ValueError(
            f"newton: sparse_lu=True needs W by block rows (BlockRows, from block_rows): the "
            f"sparsity pattern is read from its block columns; got a dense array {np.shape(W)}"
        )
    if not (krylov or sparse_lu):
        W = delassus.to_dense(W)

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
            krylov=krylov,
            sparse_lu=sparse_lu,
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
    (redundant contacts), which is where plain Newton stalls (a box stack:
    Siconos' NSN_AC stops at 3e-3 there). ``iterations`` reports the total
    Newton steps. Arguments otherwise as :func:`newton`.
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

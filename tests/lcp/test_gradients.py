"""Gradients of LCP solutions: unrolled sweeps, implicit function theorem, finite differences.

Non-degenerate problems are built with a known solution and a strict
complementarity margin: pick the active set A, z*_A ∈ [0.5, 2], w*_N ∈ [0.5, 2],
and q = w* − M z*. M is symmetric positive definite, so z* is the unique solution
and stays on the same active set for perturbations far smaller than the margin
(the finite-difference step is 1e-6).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

from jaxcontact.lcp.implicit import implicit_solution
from jaxcontact.lcp.jacobi import projected_jacobi
from jaxcontact.lcp.lemke import lemke
from jaxcontact.lcp.pgs import pgs

FD_STEP = 1e-6


def nondegenerate_problem(seed, n, cond=10.0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    M = (Q * np.geomspace(1.0, cond, n)) @ Q.T
    M = 0.5 * (M + M.T)
    active = rng.random(n) < 0.6
    active[0], active[-1] = True, False  # both kinds present
    z = np.where(active, rng.uniform(0.5, 2.0, n), 0.0)
    w = np.where(active, 0.0, rng.uniform(0.5, 2.0, n))
    return M, w - M @ z, z, w


def loss_weights(seed, n):
    rng = np.random.default_rng(seed + 1000)
    return rng.standard_normal(n), rng.standard_normal(n)


def make_loss(solver, c, e):
    """A scalar of the solution that uses z and w: the chain rule runs through both."""

    def loss(M, q):
        sol = solver(M, q)
        return c @ sol.z + e @ sol.w

    return loss


SOLVERS = {
    "pgs-unroll": functools.partial(pgs, iterations=300),
    "pgs-implicit": functools.partial(pgs, iterations=300, differentiation="implicit"),
    "jacobi-unroll": functools.partial(projected_jacobi, iterations=1500),
    "jacobi-implicit": functools.partial(projected_jacobi, iterations=1500, differentiation="implicit"),
    "lemke-implicit": lemke,
}


@functools.cache
def grad_fn(name):
    """jit(grad) of the loss for one solver; c and e are arguments so it compiles once per size."""
    solver = SOLVERS[name]

    def loss(M, q, c, e):
        sol = solver(M, q)
        return c @ sol.z + e @ sol.w

    return jax.jit(jax.grad(loss, argnums=(0, 1)))


@jax.jit
def _reference_loss(M, q, c, e):
    sol = pgs(M, q, iterations=400)
    return c @ sol.z + e @ sol.w


_reference_loss_batch = jax.jit(jax.vmap(_reference_loss, in_axes=(0, 0, None, None)))


def central_differences(M, q, c, e, h=FD_STEP):
    """Central differences of the loss of the converged PGS solution, all entries in one vmap."""
    n = len(q)
    dirs_M = np.eye(n * n).reshape(n * n, n, n)
    dirs_q = np.eye(n)
    batch = _reference_loss_batch
    Mp = np.concatenate([M + h * dirs_M, np.broadcast_to(M, (n, n, n))])
    Mm = np.concatenate([M - h * dirs_M, np.broadcast_to(M, (n, n, n))])
    qp = np.concatenate([np.broadcast_to(q, (n * n, n)), q + h * dirs_q])
    qm = np.concatenate([np.broadcast_to(q, (n * n, n)), q - h * dirs_q])
    d = (np.asarray(batch(Mp, qp, c, e)) - np.asarray(batch(Mm, qm, c, e))) / (2 * h)
    return d[: n * n].reshape(n, n), d[n * n :]


def assert_close_rel(actual, expected, rtol, what):
    scale = np.abs(expected).max()
    err = np.abs(np.asarray(actual) - expected).max()
    assert err <= rtol * scale, f"{what}: max error {err:.3e} > {rtol} × {scale:.3e}"


@pytest.mark.parametrize("seed, n", [(0, 6), (1, 6), (2, 6), (3, 3)])
def test_gradients_agree_with_each_other_and_finite_differences(seed, n):
    M, q, z_star, w_star = nondegenerate_problem(seed, n)
    c, e = loss_weights(seed, n)
    # The solver's solution is the constructed one, with its complementarity margin.
    sol = pgs(M, q, iterations=400)
    np.testing.assert_allclose(sol.z, z_star, atol=1e-12)
    assert np.min(np.maximum(sol.z, sol.w)) >= 0.5
    fd_M, fd_q = central_differences(M, q, c, e)
    grads = {name: grad_fn(name)(M, q, c, e) for name in SOLVERS}
    for name, (g_M, g_q) in grads.items():
        assert_close_rel(g_M, fd_M, 1e-6, f"{name} dL/dM vs central differences")
        assert_close_rel(g_q, fd_q, 1e-6, f"{name} dL/dq vs central differences")
    ref_M, ref_q = grads["pgs-implicit"]
    for name in ("pgs-unroll", "jacobi-unroll", "jacobi-implicit", "lemke-implicit"):
        assert_close_rel(grads[name][0], ref_M, 1e-6, f"{name} vs pgs-implicit dL/dM")
        assert_close_rel(grads[name][1], ref_q, 1e-6, f"{name} vs pgs-implicit dL/dq")


def test_implicit_gradient_is_independent_of_sweep_count_unrolled_is_not():
    """Implicit = gradient of the exact solution; unrolled = gradient of the truncated iterate."""
    M, q, _, _ = nondegenerate_problem(4, 6, cond=50.0)
    c, e = loss_weights(4, 6)
    fd_M, fd_q = central_differences(M, q, c, e)
    short_unroll = jax.jit(jax.grad(make_loss(functools.partial(pgs, iterations=15), c, e), argnums=1))(M, q)
    assert np.abs(short_unroll - fd_q).max() > 1e-4 * np.abs(fd_q).max()
    # Implicit at a converged solve is exact: 300 sweeps (the shared compiled function) suffice.
    assert_close_rel(grad_fn("pgs-implicit")(M, q, c, e)[1], fd_q, 1e-6, "implicit after 300 sweeps")


def test_implicit_gradient_of_black_box_solver():
    """implicit_solution gives gradients to a solver JAX cannot differentiate (a host callback)."""
    M, q, _, _ = nondegenerate_problem(5, 6)
    c, e = loss_weights(5, 6)

    def nnls_host(M, q):
        L = np.linalg.cholesky(0.5 * (M + M.T))
        z, _ = scipy.optimize.nnls(L.T, -np.linalg.solve(L, q))
        return z

    def solve(M, q):
        z = jax.pure_callback(nnls_host, jax.ShapeDtypeStruct(q.shape, q.dtype), M, q)
        return z, jnp.int32(0)

    def loss(M, q):
        sol = implicit_solution(solve, M, q, tol=1e-10)
        return c @ sol.z + e @ sol.w

    g_M, g_q = jax.grad(loss, argnums=(0, 1))(M, q)
    fd_M, fd_q = central_differences(M, q, c, e)
    assert_close_rel(g_M, fd_M, 1e-6, "black-box dL/dM")
    assert_close_rel(g_q, fd_q, 1e-6, "black-box dL/dq")


def test_implicit_gradient_under_vmap_equals_single():
    problems = [nondegenerate_problem(s, 6) for s in range(4)]
    Ms = np.stack([p[0] for p in problems])
    qs = np.stack([p[1] for p in problems])
    c, e = loss_weights(0, 6)
    g = grad_fn("pgs-implicit")
    batched = jax.jit(jax.vmap(g, in_axes=(0, 0, None, None)))(Ms, qs, c, e)
    for k in range(len(problems)):
        single = g(Ms[k], qs[k], c, e)
        np.testing.assert_allclose(batched[0][k], single[0], rtol=0, atol=1e-13)
        np.testing.assert_allclose(batched[1][k], single[1], rtol=0, atol=1e-13)


def test_degenerate_index_gets_the_documented_one_sided_gradient():
    """z_i = w_i = 0: the implicit rule treats i as inactive (z_i ≡ 0); check it is that piece."""
    M, q, z_star, w_star = nondegenerate_problem(6, 6)
    inactive = np.flatnonzero(z_star == 0.0)
    k = inactive[0]
    q = q.copy()
    q[k] -= w_star[k]  # now w_k = 0 as well: a degenerate index
    c, e = loss_weights(6, 6)
    sol = pgs(M, q, iterations=400)
    assert abs(float(sol.z[k])) < 1e-12 and abs(float(sol.w[k])) < 1e-12
    g_M, g_q = grad_fn("pgs-implicit")(M, q, c, e)
    assert np.all(np.isfinite(g_M)) and np.all(np.isfinite(g_q))

    # The smooth piece with k inactive: z_A = −M_AA⁻¹ q_A on A = {z* > 0}.
    A = z_star > 0

    def piece_loss(M, q):
        zA = -jnp.linalg.solve(M[np.ix_(A, A)], q[A])
        z = jnp.zeros_like(q).at[np.flatnonzero(A)].set(zA)
        return c @ z + e @ (M @ z + q)

    p_M, p_q = jax.grad(piece_loss, argnums=(0, 1))(M, q)
    assert_close_rel(g_M, p_M, 1e-8, "degenerate dL/dM vs inactive piece")
    assert_close_rel(g_q, p_q, 1e-8, "degenerate dL/dq vs inactive piece")
    # Along a direction that keeps w_k ≥ 0 (raise q_k), the one-sided difference matches it.
    h = FD_STEP
    right = (float(_reference_loss(M, q + h * np.eye(6)[k], c, e)) - float(_reference_loss(M, q, c, e))) / h
    assert right == pytest.approx(float(g_q[k]), rel=1e-6, abs=1e-8)


def box_on_ground():
    """A planar box (m = 2, J = 1/6) resting on four ground contacts: 4 contacts, 3 DOF.

    Contacts along the bottom face at x-offsets (−0.5, −0.2, 0.2, 0.5) from the
    centre: γ_N = W^T u with W^T rows (0, 1, x_k). The Delassus matrix
    W^T M^{-1} W is 4 × 4 of rank 2 — a singular active block (redundant contacts).
    """
    inv_mass = np.diag([1 / 2.0, 1 / 2.0, 6.0])
    WT = np.array([[0.0, 1.0, x] for x in (-0.5, -0.2, 0.2, 0.5)])
    return WT, WT @ inv_mass @ WT.T


def test_singular_active_block_gives_finite_gradients_that_are_right_where_defined():
    WT, M = box_on_ground()
    assert np.linalg.matrix_rank(M) == 2
    h_dt = np.array([0.3, -9.81 * 0.01 * 2.0, 0.05])  # free velocity pushes the box into the ground
    b = h_dt
    c = np.array([0.7, -1.3, 0.4])  # weights on the generalized impulse W z (unique even when z is not)

    def impulse_loss(solver):
        def loss(M, b):
            sol = solver(M, jnp.asarray(WT) @ b)
            return c @ (jnp.asarray(WT).T @ sol.z)

        return loss

    reference = jax.jit(impulse_loss(SOLVERS["pgs-unroll"]))
    fd = np.array(
        [
            (float(reference(M, b + FD_STEP * d)) - float(reference(M, b - FD_STEP * d))) / (2 * FD_STEP)
            for d in np.eye(3)
        ]
    )

    sol = pgs(M, WT @ b, iterations=300)
    assert bool(sol.converged)
    assert np.all(sol.z > sol.w)  # all four contacts active: the active block is the singular M
    for name in ("pgs-implicit", "pgs-unroll", "jacobi-implicit"):
        g_M, g_b = jax.jit(jax.grad(impulse_loss(SOLVERS[name]), argnums=(0, 1)))(M, b)
        assert np.all(np.isfinite(g_M)) and np.all(np.isfinite(g_b)), name
        # W z is unique here, so its derivative w.r.t. the free velocity is well defined.
        assert_close_rel(g_b, fd, 1e-6, f"{name} d(c·Wz)/db on the singular block")


def test_float32_gradients_within_stated_tolerance():
    """float32: unrolled and implicit gradients within 1e-4 relative of the float64 ones
    (condition number 10, eps32 = 1.2e-7; measured about 1e-6)."""
    M, q, _, _ = nondegenerate_problem(0, 6)
    c, e = loss_weights(0, 6)
    g64 = grad_fn("pgs-implicit")(M, q, c, e)
    args32 = [x.astype(np.float32) for x in (M, q, c, e)]
    for name in ("pgs-unroll", "pgs-implicit"):
        g32 = grad_fn(name)(*args32)
        assert g32[0].dtype == np.float32 and g32[1].dtype == np.float32
        assert_close_rel(g32[0], np.asarray(g64[0]), 1e-4, f"{name} float32 dL/dM")
        assert_close_rel(g32[1], np.asarray(g64[1]), 1e-4, f"{name} float32 dL/dq")


def test_nonsymmetric_matrix_gradients():
    """The adjoint solve uses M_AAᵀ: check it on a non-symmetric, diagonally dominant M
    (a P-matrix on which PGS converges), where M ≠ Mᵀ would expose a missing transpose."""
    rng = np.random.default_rng(7)
    n = 6
    M = rng.uniform(-1.0, 1.0, (n, n))
    M[np.diag_indices(n)] = np.abs(M).sum(axis=1) + 0.5
    assert np.abs(M - M.T).max() > 0.5
    active = np.array([True, False, True, True, False, False])
    z_star = np.where(active, rng.uniform(0.5, 2.0, n), 0.0)
    w_star = np.where(active, 0.0, rng.uniform(0.5, 2.0, n))
    q = w_star - M @ z_star
    c, e = loss_weights(7, n)
    np.testing.assert_allclose(pgs(M, q, iterations=400).z, z_star, atol=1e-12)
    fd_M, fd_q = central_differences(M, q, c, e)
    for name in ("pgs-unroll", "pgs-implicit", "lemke-implicit"):
        g_M, g_q = grad_fn(name)(M, q, c, e)
        assert_close_rel(g_M, fd_M, 1e-6, f"{name} non-symmetric dL/dM")
        assert_close_rel(g_q, fd_q, 1e-6, f"{name} non-symmetric dL/dq")

"""Projected Gauss–Seidel and projected Jacobi against independent references.

Reference for symmetric positive definite M: the LCP is the QP
min ½ zᵀMz + qᵀz over z ≥ 0; with M = LLᵀ it is the non-negative least-squares
problem min ‖Lᵀz + L⁻¹q‖ over z ≥ 0, solved exactly by scipy's active-set NNLS
(Lawson–Hanson) — an algorithm unrelated to the projected iterations. The
iterative solvers must also agree with our Lemke (complementary pivoting).

Lemke is compiled once per padded size: a problem of size n is embedded as
diag(M, I) with q padded by ones, whose solution is (z, 0) — exact, and it
saves a compile per size.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxcontact.lcp.jacobi import default_omega, projected_jacobi
from jaxcontact.lcp.lemke import lemke
from jaxcontact.lcp.pgs import pgs
from jaxcontact.lcp.siconos_io import load_collection

SPD_COLLECTION = ("trivial", "deudeu", "mmc")
PROBLEMS = {p.name: p for p in load_collection()}


def nnls_reference(M, q):
    L = np.linalg.cholesky(0.5 * (M + M.T))
    z, _ = scipy.optimize.nnls(L.T, -np.linalg.solve(L, q), maxiter=50 * len(q))
    return z


def random_spd(seed, n, cond=20.0):
    """SPD matrix with eigenvalues spread log-uniformly over [1, cond] (cond ≤ 100 in the tests:
    1000 PGS / 3000 Jacobi sweeps converge there) and a q with mixed signs."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    M = (Q * np.geomspace(1.0, cond, n)) @ Q.T
    q = rng.standard_normal(n) * 2.0
    return 0.5 * (M + M.T), q


# One compiled function per (solver settings, size): shared across tests of this module.
pgs_1000 = jax.jit(functools.partial(pgs, iterations=1000))
pgs_300 = jax.jit(functools.partial(pgs, iterations=300))
pgs_300_batch = jax.jit(jax.vmap(functools.partial(pgs, iterations=300)))
jacobi_3000 = jax.jit(functools.partial(projected_jacobi, iterations=3000))
jacobi_1000 = jax.jit(functools.partial(projected_jacobi, iterations=1000))
jacobi_1000_batch = jax.jit(jax.vmap(functools.partial(projected_jacobi, iterations=1000)))
omega_jit = jax.jit(default_omega)
lemke_jit = jax.jit(lemke)


def lemke_padded(M, q, size):
    n = len(q)
    Mp = np.eye(size)
    Mp[:n, :n] = M
    qp = np.ones(size)
    qp[:n] = q
    sol = lemke_jit(Mp, qp)
    assert bool(sol.converged), float(sol.residual)
    np.testing.assert_array_equal(sol.z[n:], 0.0)
    return np.asarray(sol.z[:n])


# ---------------------------------------------------------------- PGS


@pytest.mark.parametrize("name", SPD_COLLECTION)
@pytest.mark.parametrize("omega", [1.0, 1.5])
def test_pgs_siconos_spd(name, omega):
    p = PROBLEMS[name]
    sol = jax.jit(functools.partial(pgs, iterations=1000, omega=omega))(p.M, p.q)
    ref = nnls_reference(p.M, p.q)
    assert bool(sol.converged)
    assert float(sol.residual) <= 1e-8
    assert int(sol.iterations) == 1000
    np.testing.assert_allclose(sol.w, p.M @ np.asarray(sol.z) + p.q, rtol=0, atol=1e-12 * np.abs(p.q).max())
    np.testing.assert_allclose(sol.z, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))
    np.testing.assert_allclose(sol.z, lemke_padded(p.M, p.q, 26), rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), log_cond=st.floats(0.0, 2.0))
def test_pgs_random_spd_matches_nnls_and_lemke(seed, n, log_cond):
    M, q = random_spd(seed, n, cond=10.0**log_cond)
    sol = pgs_1000(M, q)
    ref = nnls_reference(M, q)
    assert bool(sol.converged), float(sol.residual)
    atol = 1e-8 * max(1.0, np.abs(ref).max())
    np.testing.assert_allclose(sol.z, ref, rtol=0, atol=atol)
    np.testing.assert_allclose(sol.z, lemke_padded(M, q, 12), rtol=0, atol=atol)


def test_pgs_vmap_equals_single_runs():
    problems = [random_spd(s, 7) for s in range(6)]
    Ms = np.stack([p[0] for p in problems])
    qs = np.stack([p[1] for p in problems])
    batch = pgs_300_batch(Ms, qs)
    for k in range(len(problems)):
        single = pgs_300(Ms[k], qs[k])
        np.testing.assert_allclose(batch.z[k], single.z, rtol=0, atol=1e-14)
        np.testing.assert_allclose(batch.residual[k], single.residual, rtol=0, atol=1e-14)
        assert bool(batch.converged[k]) == bool(single.converged)
    assert batch.iterations.shape == (6,)


def test_pgs_float32():
    """float32 reaches its default tolerance (1e-4 natural residual) and z within 1e-5 of float64."""
    for seed in range(5):
        M, q = random_spd(seed, 9)
        s32 = pgs_300(M.astype(np.float32), q.astype(np.float32))
        assert s32.z.dtype == jnp.float32 and s32.residual.dtype == jnp.float32
        assert bool(s32.converged)
        assert float(s32.residual) <= 1e-5
        ref = nnls_reference(M, q)
        np.testing.assert_allclose(s32.z, ref, rtol=0, atol=1e-5 * max(1.0, np.abs(ref).max()))


def test_pgs_warm_start():
    p = PROBLEMS["mmc"]
    ref = nnls_reference(p.M, p.q)
    cold = pgs(p.M, p.q, iterations=20)
    warm = pgs(p.M, p.q, iterations=20, z0=ref)
    assert float(warm.residual) <= 1e-12 < float(cold.residual)
    # zero sweeps return the projected warm start
    np.testing.assert_array_equal(pgs(p.M, p.q, iterations=0, z0=-ref).z, np.zeros_like(ref))


def test_pgs_nonpositive_diagonal_gives_no_nan():
    # Row 1 has M_11 = 0. Case a: the solution has z_1 = 0 (w_1 = 1 > 0) -> solved.
    M = np.array([[2.0, 1.0], [1.0, 0.0]])
    sol = pgs(M, np.array([-2.0, 2.0]), iterations=50)
    assert bool(sol.converged)
    np.testing.assert_allclose(sol.z, [1.0, 0.0], atol=1e-14)
    # Case b: z_1 would have to be positive (q_1 < 0, row 1 of M is ≤ 0): held at 0,
    # reported as not converged, nothing NaN.
    M = np.array([[2.0, 0.0], [0.0, -1.0]])
    sol = pgs(M, np.array([-2.0, -1.0]), iterations=50)
    assert np.all(np.isfinite(sol.z)) and np.all(np.isfinite(sol.w))
    assert sol.z[1] == 0.0
    assert not bool(sol.converged)
    assert float(sol.residual) == pytest.approx(1.0 / 2.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(M=np.eye(3), q=np.ones(2)), "q must have shape"),
        (dict(M=np.ones((2, 3)), q=np.ones(2)), "square"),
        (dict(M=np.eye(2), q=np.array([1.0, np.nan])), "q must be finite"),
        (dict(M=np.array([[1.0, np.inf], [0.0, 1.0]]), q=np.ones(2)), "M must be finite"),
        (dict(M=np.eye(2), q=np.ones(2), z0=np.ones(3)), "z0 must have the shape"),
        (dict(M=np.eye(2), q=np.ones(2), omega=2.0), "omega"),
        (dict(M=np.eye(2), q=np.ones(2), omega=0.0), "omega"),
        (dict(M=np.eye(2), q=np.ones(2), iterations=2.5), "iterations"),
        (dict(M=np.eye(2), q=np.ones(2), differentiation="adjoint"), "differentiation"),
    ],
)
def test_pgs_bad_input_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pgs(**kwargs)


def test_pgs_nonfinite_inside_jit_reports_not_converged():
    M, q = random_spd(0, 4)
    bad_q = q.copy()
    bad_q[2] = np.nan
    assert not bool(pgs_300(M, bad_q).converged)
    bad_M = M.copy()
    bad_M[1, 3] = np.inf
    sol = pgs_300(bad_M, q)
    assert not bool(sol.converged) and float(sol.residual) == np.inf


# ---------------------------------------------------------------- projected Jacobi


@pytest.mark.parametrize("name", SPD_COLLECTION)
def test_jacobi_siconos_spd(name):
    p = PROBLEMS[name]
    sol = jacobi_3000(p.M, p.q)
    ref = nnls_reference(p.M, p.q)
    assert bool(sol.converged)
    assert float(sol.residual) <= 1e-8
    assert int(sol.iterations) == 3000
    np.testing.assert_allclose(sol.z, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))
    np.testing.assert_allclose(sol.z, lemke_padded(p.M, p.q, 26), rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), log_cond=st.floats(0.0, 2.0))
def test_jacobi_random_spd_matches_nnls_and_default_omega_is_safe(seed, n, log_cond):
    M, q = random_spd(seed, n, cond=10.0**log_cond)
    d = np.diag(M)
    lam_max = np.linalg.eigvalsh(M / np.sqrt(np.outer(d, d))).max()
    gershgorin = np.max(np.abs(M).sum(axis=1) / d)
    omega = float(omega_jit(M))
    assert 1.0 / gershgorin * (1 - 1e-12) <= omega < 2.0 / lam_max
    sol = jacobi_3000(M, q)
    ref = nnls_reference(M, q)
    assert bool(sol.converged), float(sol.residual)
    np.testing.assert_allclose(sol.z, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))


def test_jacobi_default_omega_converges_where_omega_one_diverges():
    # Strong coupling: λmax(D⁻¹M) = 1 + 2·0.9 = 2.8 > 2, so ω = 1 is unstable.
    M = np.full((3, 3), 0.9) + 0.1 * np.eye(3)
    ref = np.array([1.0, 2.0, 3.0])  # all rows active: the projection cannot damp the instability
    q = -M @ ref
    plain = projected_jacobi(M, q, iterations=200, omega=1.0)
    default = projected_jacobi(M, q, iterations=1000)
    assert not bool(plain.converged)
    assert bool(default.converged)
    np.testing.assert_allclose(default.z, ref, atol=1e-10)


def test_jacobi_vmap_equals_single_runs():
    problems = [random_spd(s, 5) for s in range(6)]
    Ms = np.stack([p[0] for p in problems])
    qs = np.stack([p[1] for p in problems])
    batch = jacobi_1000_batch(Ms, qs)
    for k in range(len(problems)):
        single = jacobi_1000(Ms[k], qs[k])
        np.testing.assert_allclose(batch.z[k], single.z, rtol=0, atol=1e-14)
        np.testing.assert_allclose(batch.residual[k], single.residual, rtol=0, atol=1e-14)
        assert bool(batch.converged[k]) == bool(single.converged)


def test_jacobi_float32():
    """float32 reaches its default tolerance (1e-4 natural residual) and z within 1e-5 of float64."""
    for seed in range(5):
        M, q = random_spd(seed, 9)
        s32 = jacobi_1000(M.astype(np.float32), q.astype(np.float32))
        assert s32.z.dtype == jnp.float32
        assert bool(s32.converged)
        assert float(s32.residual) <= 1e-5
        ref = nnls_reference(M, q)
        np.testing.assert_allclose(s32.z, ref, rtol=0, atol=1e-5 * max(1.0, np.abs(ref).max()))


def test_jacobi_nonpositive_diagonal_and_bad_input():
    M = np.array([[2.0, 0.0], [0.0, -1.0]])
    sol = projected_jacobi(M, np.array([-2.0, -1.0]), iterations=50)
    assert np.all(np.isfinite(sol.z)) and sol.z[1] == 0.0 and not bool(sol.converged)
    with pytest.raises(ValueError, match="omega"):
        projected_jacobi(np.eye(2), np.ones(2), omega=2.5)
    with pytest.raises(ValueError, match="q must be finite"):
        projected_jacobi(np.eye(2), np.array([np.inf, 1.0]))
    M, q = random_spd(1, 4)
    q[0] = np.nan
    assert not bool(jacobi_1000(M, q).converged)


def random_psd_with_solution(seed, n, rank):
    """Rank-deficient symmetric PSD M = BᵀB and q = w̄ − M z̄ from a complementary pair (z̄, w̄) ≥ 0.

    The LCP is solvable but z is not unique; for a convex QP, w = Mz + q is the
    same at every solution, so w must equal w̄.
    """
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((rank, n))
    M = B.T @ B
    active = rng.random(n) < 0.5
    z_bar = np.where(active, rng.uniform(0.5, 2.0, n), 0.0)
    w_bar = np.where(active, 0.0, rng.uniform(0.5, 2.0, n))
    return M, w_bar - M @ z_bar, w_bar


@pytest.mark.parametrize("seed", range(4))
def test_semidefinite_rank_deficient(seed):
    M, q, w_bar = random_psd_with_solution(seed, 8, rank=4)
    for sol in (jax.jit(functools.partial(pgs, iterations=3000))(M, q), jacobi_3000(M, q)):
        assert bool(sol.converged) and float(sol.residual) <= 1e-8
        np.testing.assert_allclose(sol.w, w_bar, atol=1e-7)


@pytest.mark.parametrize("solver", [pgs, projected_jacobi])
def test_empty_problem_and_integer_input(solver):
    empty = solver(np.zeros((0, 0)), np.zeros(0))
    assert empty.z.shape == (0,) and bool(empty.converged)
    g = jax.grad(lambda q: solver(np.zeros((0, 0)), q, differentiation="implicit").z.sum())(np.zeros(0))
    assert g.shape == (0,)
    ints = solver(np.array([[2, 1], [1, 2]]), np.array([-3, 3]), iterations=200)
    assert jnp.issubdtype(ints.z.dtype, jnp.floating)
    np.testing.assert_allclose(ints.z, [1.5, 0.0], atol=1e-12)

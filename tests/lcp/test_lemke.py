"""Lemke, Newton–Fischer–Burmeister, enumeration and the robust driver: unit behaviour.

Truth: closed-form solutions, independent numpy checks of z ≥ 0, w ≥ 0,
complementarity, central finite differences for gradients, and Murty's
exponential example (2ⁿ pivots, Murty 1978).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.commands.lcp_demo import pad_lcp
from jaxcontact.lcp.enumeration import MAX_ENUMERATION_SIZE, enumerate_lcp
from jaxcontact.lcp.lemke import default_max_pivots, lemke
from jaxcontact.lcp.newton import fischer_burmeister, newton_fb
from jaxcontact.lcp.robust import robust_solve

N = 5  # every problem here is solved at this size (smaller ones padded): few compilations
_lemke = jax.jit(lemke)
_newton = jax.jit(newton_fb)
_enumerate = jax.jit(enumerate_lcp)
_robust = jax.jit(robust_solve)


def padded(fn, M, q):
    """Solve at size N (inert rows M = I, q = 1 appended); z restricted to the problem."""
    sol = fn(*pad_lcp(np.asarray(M), np.asarray(q), N))
    return sol._replace(z=sol.z[: len(q)], w=sol.w[: len(q)])


def assert_solution(M, q, z, tol=1e-10):
    z = np.asarray(z, np.float64)
    w = M @ z + q
    s = tol * max(1.0, np.max(np.abs(q)))
    assert np.all(z >= -s) and np.all(w >= -s)
    assert np.all(np.minimum(np.abs(z), np.abs(w)) <= s)


def murty(n):
    """Murty's example: M_ii = 1, M_ij = 2 (j > i), q_i = −(2^{n+1} − 2^i); Lemke takes 2ⁿ pivots."""
    M = np.triu(2.0 * np.ones((n, n)), 1) + np.eye(n)
    q = -np.array([2.0 ** (n + 1) - 2.0**i for i in range(1, n + 1)])
    return M, q


def nondegenerate_problem():
    """A P-matrix problem (diagonally dominant, non-symmetric) with a strictly complementary solution."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(N, N))
    M = A + np.diag(np.sum(np.abs(A), axis=1) + 1.0)
    z_true = np.array([1.3, 0.0, 0.7, 0.0, 2.1])
    w_true = np.array([0.0, 0.9, 0.0, 1.6, 0.0])
    return M, w_true - M @ z_true, z_true


def test_known_solution_and_fields():
    M, q, z_true = nondegenerate_problem()
    sol = _lemke(M, q)
    np.testing.assert_allclose(sol.z, z_true, atol=1e-13)
    np.testing.assert_allclose(sol.w, M @ np.asarray(sol.z) + q, atol=1e-13)
    assert bool(sol.converged) and float(sol.residual) <= 1e-13
    assert sol.iterations.dtype == jnp.int32 and 1 <= int(sol.iterations) <= 2 * N


def test_nonnegative_q_needs_no_pivot():
    sol = _lemke(np.eye(N) + 0.5, np.linspace(0.0, 1.0, N))
    assert int(sol.iterations) == 0 and bool(sol.converged)
    np.testing.assert_array_equal(sol.z, np.zeros(N))


@pytest.mark.parametrize("n", [3, N])
def test_murty_exponential_pivots(n):
    M, q = murty(n)
    sol = padded(_lemke, M, q)
    assert bool(sol.converged) and int(sol.iterations) == 2**n
    assert_solution(M, q, sol.z)
    assert all(default_max_pivots(k) >= 2**k for k in range(1, 13))


def test_pivot_limit_reports_not_converged():
    M, q = murty(N)
    sol = lemke(M, q, max_pivots=20)
    assert int(sol.iterations) == 20
    assert not bool(sol.converged)


def test_ray_termination_on_infeasible_problem():
    # w = −z − 1 < 0 for every z ≥ 0: no solution; Lemke ends on a ray.
    sol = padded(_lemke, -np.eye(3), -np.ones(3))
    assert not bool(sol.converged)
    assert int(sol.iterations) <= 2
    assert np.all(np.isfinite(sol.z))


def test_degenerate_ties_in_q():
    # Ties in q (q = −1) and a degenerate solution (w_i = z_i = 0 for some i).
    M = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) + 1e-3 * np.eye(3)
    q = np.array([-1.0, -1.0, 0.0])
    sol = padded(_lemke, M, q)
    assert bool(sol.converged)
    assert_solution(M, q, sol.z)


def test_integer_input_promotes_and_float32_dtype():
    sol = padded(_lemke, np.array([[2, 1], [1, 2]]), np.array([-5, -6]))
    assert sol.z.dtype == jnp.float64
    np.testing.assert_allclose(sol.z, [4 / 3, 7 / 3], rtol=1e-13)
    sol32 = padded(_lemke, np.array([[2, 1], [1, 2]], np.float32), np.array([-5, -6], np.float32))
    assert sol32.z.dtype == jnp.float32 and bool(sol32.converged)
    np.testing.assert_allclose(sol32.z, [4 / 3, 7 / 3], rtol=1e-6)


@pytest.mark.parametrize("solver", [lemke, newton_fb, enumerate_lcp, robust_solve])
def test_bad_input_raises(solver):
    with pytest.raises(ValueError, match="square"):
        solver(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="q must have shape"):
        solver(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        solver(np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones(2))


def test_bad_options_raise():
    with pytest.raises(ValueError, match="differentiation"):
        lemke(np.eye(2), -np.ones(2), differentiation="unroll")
    with pytest.raises(ValueError, match="max_pivots"):
        lemke(np.eye(2), -np.ones(2), max_pivots=0)
    with pytest.raises(ValueError, match="iterations"):
        newton_fb(np.eye(2), -np.ones(2), iterations=-1)
    with pytest.raises(ValueError, match="MAX_ENUMERATION_SIZE"):
        n = MAX_ENUMERATION_SIZE + 1
        enumerate_lcp(np.eye(n), -np.ones(n))
    with pytest.raises(ValueError, match="enumeration_max_n"):
        robust_solve(np.eye(2), -np.ones(2), enumeration_max_n=99)


def test_nonfinite_inside_jit_is_reported_not_raised():
    M, q, _ = nondegenerate_problem()
    sol = _lemke(M, np.where(np.arange(N) == 1, np.nan, q))
    assert not bool(sol.converged)


def _fd_jacobian(f, x, h=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        cols.append((np.asarray(f((x + e).reshape(x.shape))) - np.asarray(f((x - e).reshape(x.shape)))) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("solver", [_lemke, _newton])
def test_implicit_gradient_matches_finite_differences(solver):
    """∂z/∂q and ∂z/∂M (reverse mode) vs central differences, 1e-6 relative, float64."""
    M, q, _ = nondegenerate_problem()
    jac_q = jax.jacrev(lambda q: solver(M, q).z)(q)
    fd_q = _fd_jacobian(lambda q: solver(M, q).z, q)
    np.testing.assert_allclose(jac_q, fd_q, rtol=1e-6, atol=1e-8)
    jac_M = jax.jacrev(lambda M: solver(M, q).z)(M).reshape(N, N * N)
    fd_M = _fd_jacobian(lambda Mf: solver(Mf.reshape(N, N), q).z, M.reshape(-1))
    np.testing.assert_allclose(jac_M, fd_M, rtol=1e-6, atol=1e-8)
    # Closed form: dz_A = −M_AA⁻¹ dq_A on the active set A = {z > 0}.
    A = np.array([0, 2, 4])
    expected = np.zeros((N, N))
    expected[np.ix_(A, A)] = -np.linalg.inv(M[np.ix_(A, A)])
    np.testing.assert_allclose(jac_q, expected, rtol=1e-12, atol=1e-12)


def test_newton_fb_and_enumeration_agree_with_lemke():
    M, q, z_true = nondegenerate_problem()
    for sol in (_newton(M, q), _enumerate(M, q), _robust(M, q)):
        assert bool(sol.converged)
        np.testing.assert_allclose(sol.z, z_true, atol=1e-12)
    assert int(_newton(M, q).iterations) == 50


def test_newton_fb_warm_start_from_solution_stays():
    M, q, z_true = nondegenerate_problem()
    sol = _newton(M, q, z0=z_true)
    np.testing.assert_allclose(sol.z, z_true, atol=1e-14)


def test_fischer_burmeister_function():
    a = np.array([0.0, 2.0, 0.0, 1e8, -1.0, 3.0])
    b = np.array([0.0, 0.0, 5.0, 1e-8, 0.0, 4.0])
    expected = np.sqrt(a**2 + b**2) - a - b
    expected[3] = -2 * 1e8 * 1e-8 / (np.hypot(1e8, 1e-8) + 1e8 + 1e-8)  # cancellation-free value
    np.testing.assert_allclose(fischer_burmeister(a, b), expected, rtol=1e-14, atol=1e-300)
    assert float(fischer_burmeister(1e8, 1e-8)) == pytest.approx(-1e-8, rel=1e-12)


def test_enumeration_handles_singular_blocks():
    # CPS_1: M = [[1, 1], [1, 1]], q = −1: solutions z_1 + z_2 = 1 (M singular).
    M, q = np.ones((2, 2)), -np.ones(2)
    sol = padded(_enumerate, M, q)
    assert bool(sol.converged) and int(sol.iterations) == 2**N
    assert_solution(M, q, sol.z)
    assert float(np.sum(sol.z)) == pytest.approx(1.0, abs=1e-14)


def test_robust_driver_falls_back_beyond_lemke():
    # CPS_3 (bimatrix game): Lemke ends on a ray; the driver's Newton stage solves it.
    M = np.array([[0, 0, 10, 20], [0, 0, 30, 15], [10, 20, 0, 0], [30, 15, 0, 0]], float)
    q = -np.ones(4)
    assert not bool(padded(_lemke, M, q).converged)
    sol = padded(_robust, M, q)
    assert bool(sol.converged)
    assert_solution(M, q, sol.z)

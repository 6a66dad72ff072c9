"""Cone-law properties on random problems, closed forms, batching, the planar case, float32, block rows."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from jaxcontact.cones import BlockRows, block_rows, bundled_dir, cone_violations, jacobi, newton, nsgs, read_problem
from jaxcontact.cones.problem import pad_problem

NC_MAX = 6
STATES = ("separate", "stick", "slide")
# Compiled once per shape and reused by the tests below.
NEWTON = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=1e-14, iterations=60))
NSGS = jax.jit(lambda W, q, mu: nsgs(W, q, mu, tol=1e-14, iterations=2000))


def known_solution_problem(rng, states, mu):
    """A well-conditioned W and q built around a solution with the given contact states."""
    nc = len(states)
    n = 3 * nc
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    W = A @ A.T + 0.5 * np.eye(n)
    r, u = np.zeros(n), np.zeros(n)
    for i, s in enumerate(states):
        e = rng.normal(size=2)
        e /= np.linalg.norm(e)
        if s == "separate":
            u[3 * i] = rng.uniform(0.1, 1.0)
            u[3 * i + 1 : 3 * i + 3] = rng.normal(size=2)
        elif s == "stick":
            rn = rng.uniform(0.5, 2.0)
            r[3 * i : 3 * i + 3] = [rn, *(mu[i] * rn * rng.uniform(0, 0.8) * e)]
        else:
            rn = rng.uniform(0.5, 2.0)
            r[3 * i : 3 * i + 3] = [rn, *(mu[i] * rn * e)]
            u[3 * i + 1 : 3 * i + 3] = -rng.uniform(0.1, 1.0) * e
    return W, u - W @ r, r


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    states=st.lists(st.sampled_from(STATES), min_size=1, max_size=NC_MAX),
    mus=st.lists(st.floats(0.0, 1.5), min_size=NC_MAX, max_size=NC_MAX),
)
def test_random_problems_satisfy_the_cone_law(seed, states, mus):
    rng = np.random.default_rng(seed)
    mu = np.array(mus[: len(states)])
    W, q, _ = known_solution_problem(rng, states, mu)
    n = 3 * len(states)
    for solve in (NEWTON, NSGS):
        sol = solve(*pad_problem(W, q, mu, NC_MAX))
        r = np.asarray(sol.r)[:n]
        u = W @ r + q
        v = cone_violations(jnp.asarray(r), jnp.asarray(u), jnp.asarray(mu))
        scale = max(1.0, np.abs(r).max(), np.abs(u).max())
        assert float(v.primal) <= 1e-10 * scale
        assert float(v.dual) <= 1e-10 * scale
        assert float(v.complementarity) <= 1e-10 * scale**2


def enumerate_one_contact(B, c, mu):
    """Every regime of a single contact in numpy/scipy: take-off, stick, each slide root on a fine grid."""
    if c[0] >= 0:
        return np.zeros(3)
    rs = -np.linalg.solve(B, c)
    if rs[0] >= 0 and np.hypot(rs[1], rs[2]) <= mu * rs[0]:
        return rs

    def G(th):
        e = np.array([np.cos(th), np.sin(th)])
        t = np.r_[1.0, mu * e]
        v = -c[0] * (B[1:] @ t) + (B[0] @ t) * c[1:]
        return v[0] * e[1] - v[1] * e[0]

    grid = np.linspace(0, 2 * np.pi, 4001)
    g = np.array([G(t) for t in grid])
    sols = []
    for k in np.nonzero(g[:-1] * g[1:] <= 0)[0]:
        th = brentq(G, grid[k], grid[k + 1], xtol=1e-15)
        e = np.array([np.cos(th), np.sin(th)])
        t = np.r_[1.0, mu * e]
        den = B[0] @ t
        r = -c[0] / den * t
        uT = B[1:] @ r + c[1:]
        if den > 0 and uT @ e <= 0:
            sols.append(r)
    assert len(sols) == 1
    return sols[0]


@pytest.mark.parametrize("seed", range(8))
def test_one_contact_equals_enumeration_and_closed_form(seed):
    rng = np.random.default_rng(100 + seed)
    A = rng.normal(size=(3, 3))
    B = A @ A.T + 0.3 * np.eye(3)
    c = rng.normal(size=3) - np.array([1.0, 0, 0])
    mu = rng.uniform(0.05, 1.0)
    expected = enumerate_one_contact(B, c, mu)
    for solve in (NEWTON, NSGS):
        r = np.asarray(solve(B, c, np.array([mu])).r)
        np.testing.assert_allclose(r, expected, atol=1e-10 * max(1, np.abs(expected).max()))
    # closed form: isotropic, decoupled block diag(a, b, b)
    a, b = 2.0 + seed, 0.5 + 0.1 * seed
    Bd = np.diag([a, b, b])
    rn = -c[0] / a
    stick = -c[1:] / b
    rt = stick if np.linalg.norm(stick) <= mu * rn else -mu * rn * c[1:] / np.linalg.norm(c[1:])
    expected = np.r_[rn, rt] if rn > 0 else np.zeros(3)
    r = np.asarray(NSGS(Bd, c, np.array([mu])).r)
    np.testing.assert_allclose(r, expected, atol=1e-12)


def test_batch_equals_single_solves():
    p = read_problem(bundled_dir() / "Rover1039.dat")
    rng = np.random.default_rng(0)
    B = 256
    qs = p.q * (1 + 0.05 * rng.uniform(-1, 1, size=(B, p.q.size)))
    mus = p.mu * (1 + 0.2 * rng.uniform(-1, 1, size=(B, p.nc)))
    for solver in (newton, nsgs):
        f = jax.jit(lambda q, mu: solver(p.W, q, mu, tol=1e-12))
        batch = jax.jit(jax.vmap(lambda q, mu: solver(p.W, q, mu, tol=1e-12)))(qs, mus)
        assert bool(jnp.all(batch.converged))
        for k in range(0, B, 15):
            single = f(qs[k], mus[k])
            np.testing.assert_allclose(np.asarray(batch.r[k]), np.asarray(single.r), rtol=0, atol=1e-12)
            assert int(batch.iterations[k]) == int(single.iterations)


def test_planar_case_equals_planar_nsgs():
    """d = 2 through the cone code equals the planar nsgs on Siconos' slider–crank problems."""
    from jaxcontact.lcp.fc2d_io import block_permutation, load_bundled
    from jaxcontact.lcp.friction2d import nsgs as nsgs2d

    for prob in load_bundled():
        nc = prob.mu.size
        p = block_permutation(nc)
        inv = np.argsort(p)  # block order → interleaved
        W, q = prob.W[np.ix_(inv, inv)], prob.q[inv]
        ref = nsgs2d(prob.W, prob.q, prob.mu, iterations=2000)
        assert float(ref.residual) < 1e-14
        for solve in (NSGS, NEWTON):
            sol = solve(W, q, prob.mu)
            np.testing.assert_allclose(
                np.asarray(sol.r)[p], np.asarray(ref.r), rtol=0, atol=1e-12 * max(1, np.abs(ref.r).max())
            )


def test_jacobi_converges_on_rovers():
    f = jax.jit(lambda W, q, mu: jacobi(W, q, mu, tol=1e-10, iterations=20000))
    for name in ("Rover1039.dat", "Rover4396.dat", "FrictionContact3D_1c.dat"):
        p = read_problem(bundled_dir() / name)
        sol = f(*pad_problem(p.W, p.q, p.mu, 4))
        assert bool(sol.converged), name
        ref = newton(p.W, p.q, p.mu, tol=1e-14)
        np.testing.assert_allclose(
            np.asarray(sol.r)[: 3 * p.nc], np.asarray(ref.r), rtol=0, atol=1e-6 * np.abs(ref.r).max()
        )


def test_block_rows_sweeps_equal_dense_sweeps():
    """Same iterates, sweep by sweep, with W dense and by block rows (unrolled: exactly 7 sweeps)."""
    for name in ("local_problem_test.hdf5",):
        p = read_problem(bundled_dir() / name)
        Wb = block_rows(p.blocks, p.nc)
        for solver in (nsgs, jacobi):
            a = solver(p.W, p.q, p.mu, iterations=7, differentiation="unroll")
            b = solver(Wb, p.q, p.mu, iterations=7, differentiation="unroll")
            np.testing.assert_allclose(np.asarray(b.r), np.asarray(a.r), rtol=0, atol=1e-11 * max(1, np.abs(a.r).max()))


def test_float32_never_claims_false_convergence():
    p = read_problem(bundled_dir() / "Rover1039.dat")
    W, q, mu = (x.astype(np.float32) for x in (p.W, p.q, p.mu))
    ok = newton(W, q, mu)  # float32 default tol 1e-4
    assert ok.r.dtype == jnp.float32 and bool(ok.converged)
    r = np.asarray(ok.r, np.float64)
    from jaxcontact.cones import fc3d_error

    err64 = float(fc3d_error(jnp.asarray(r), jnp.asarray(p.W @ r + p.q), jnp.asarray(p.mu), jnp.asarray(p.q)))
    assert err64 <= 1e-4
    hard = newton(W, q, mu, tol=1e-12, iterations=50)  # below float32 round-off: must say no
    assert not bool(hard.converged) and float(hard.residual) > 1e-12


def test_bad_arguments_are_named():
    W, q, mu = np.eye(3), np.array([-1.0, 0, 0]), np.array([0.3])
    with pytest.raises(ValueError, match="friction coefficients must be >= 0; mu\\[0\\] = -0.3"):
        nsgs(W, q, -mu)
    with pytest.raises(ValueError, match="W must have shape \\(3, 3\\)"):
        newton(np.eye(4), q, mu)
    with pytest.raises(ValueError, match="contact dimension d"):
        newton(np.eye(4), np.zeros(4), mu)
    with pytest.raises(ValueError, match="q must be finite"):
        nsgs(W, np.array([np.nan, 0, 0]), mu)
    with pytest.raises(ValueError, match="omega must be in \\(0, 2\\)"):
        jacobi(W, q, mu, omega=2.5)
    with pytest.raises(ValueError, match="differentiation must be one of"):
        nsgs(W, q, mu, differentiation="magic")
    with pytest.raises(ValueError, match="block W must have values"):
        nsgs(BlockRows(np.zeros((2, 1), np.int32), np.zeros((2, 1, 3, 3))), q, mu)

"""The Newton system's solvers as objects: each gives the regularised Newton step where it descends."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import GMRES, BandedLU, DenseLU, SparseLU, block_rows, bundled_dir, read_problem
from jaxcontact.cones.delassus import block_diagonal_plus, to_dense
from jaxcontact.cones.linear_solvers import _levenberg_marquardt

FILE = "Confeti-ex13-4contact-Fc3D-SBM.dat"


def newton_system(seed):
    """A random Newton matrix J = A + B W on the file's block rows, F, and the descent data."""
    p = read_problem(bundled_dir() / FILE)
    Wb = block_rows(p.blocks, p.nc)
    rng = np.random.default_rng(seed)
    A, B = (jnp.asarray(rng.normal(size=(p.nc, 3, 3))) for _ in range(2))
    J, F = block_diagonal_plus(Wb, A, B), jnp.asarray(rng.normal(size=p.q.size))
    Jd = to_dense(J)
    return p.nc, J, Jd, F, Jd.T @ F, float(jnp.linalg.norm(F))


# Both branches: with σ = 1e-3 the Newton step descends, with σ = 10 it does not on seed 0.
@pytest.mark.parametrize("seed, sigma, descends", [(0, 1e-3, True), (1, 1e-3, True), (0, 10.0, False)])
def test_each_solver_gives_the_regularised_newton_step(seed, sigma, descends):
    nc, J, Jd, F, grad, nF = newton_system(seed)
    step = jnp.linalg.solve(Jd + sigma * jnp.eye(F.size), -F)
    assert (float(grad @ step) < 0) == descends
    expected = step if descends else _levenberg_marquardt(Jd, grad, nF)
    np.testing.assert_allclose(DenseLU().direction(Jd, F, grad, nF, sigma, nc), expected, rtol=1e-13, atol=1e-15)
    for solver in (GMRES(20), SparseLU()):
        np.testing.assert_allclose(solver.direction(J, F, grad, nF, sigma, nc), expected, rtol=1e-8, atol=1e-10)


def test_each_solver_takes_w_as_it_reads_it():
    p = read_problem(bundled_dir() / FILE)
    Wb = block_rows(p.blocks, p.nc)
    np.testing.assert_array_equal(DenseLU().prepare(Wb, "newton"), to_dense(Wb))
    assert GMRES().prepare(Wb, "newton") is Wb and SparseLU().prepare(Wb, "newton") is Wb
    with pytest.raises(ValueError, match=r"newton: SparseLU\(\) needs W by block rows"):
        SparseLU().prepare(jnp.asarray(p.W), "newton")


def test_solvers_are_static_options():  # hashable and compared by value: a jit cache key
    assert GMRES(30) == GMRES() and hash(GMRES(30)) == hash(GMRES()) and GMRES(20) != GMRES()
    assert DenseLU() == DenseLU() and SparseLU() != DenseLU()


def test_dense_solve_is_lu_with_partial_pivoting_without_lapack():
    import jax

    from jaxcontact.cones.linear_solvers import dense_solve
    from jaxcontact.studies.runner import calls_lapack

    rng = np.random.default_rng(5)
    A = rng.normal(size=(8, 24, 24))
    A[0, 0, 0] = 0.0  # a zero leading pivot: only a row exchange solves it
    b = rng.normal(size=(8, 24))
    solve = jax.jit(jax.vmap(dense_solve))
    np.testing.assert_allclose(solve(A, b), np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10, atol=1e-11)
    assert not calls_lapack(solve.lower(A, b).compile())
    singular = np.ones((3, 3))
    assert not np.all(np.isfinite(dense_solve(jnp.asarray(singular), jnp.ones(3))))


def test_lu_factors_solve_several_right_hand_sides_as_dense_solve_without_lapack():
    import jax

    from jaxcontact.cones.linear_solvers import lu_factor, lu_solve
    from jaxcontact.studies.runner import calls_lapack

    rng = np.random.default_rng(6)
    A = rng.normal(size=(8, 30, 30))
    A[0, 0, 0] = 0.0  # a zero leading pivot: only a row exchange solves it
    b = rng.normal(size=(2, 8, 30))

    def two(A, b1, b2):
        factors = lu_factor(A)
        return lu_solve(factors, b1), lu_solve(factors, b2)

    solve = jax.jit(jax.vmap(two))
    for x, rhs in zip(solve(A, b[0], b[1]), b):
        np.testing.assert_allclose(x, np.linalg.solve(A, rhs[..., None])[..., 0], rtol=1e-10, atol=1e-11)
    assert not calls_lapack(solve.lower(A, b[0], b[1]).compile())
    assert not np.all(np.isfinite(lu_solve(lu_factor(jnp.ones((3, 3))), jnp.ones(3))))


def _in_band(A, lower, upper):
    i = np.arange(A.shape[-1])
    return np.where((i[None, :] - i[:, None] <= upper) & (i[:, None] - i[None, :] <= lower), A, 0.0)


@pytest.mark.parametrize(
    "n, lower, upper", [(1, 0, 0), (6, 0, 0), (9, 2, 1), (9, 0, 4), (9, 4, 0), (30, 5, 5), (12, 11, 11), (12, 20, 3)]
)
def test_banded_solve_is_lu_with_partial_pivoting_within_the_band_without_lapack(n, lower, upper):
    import jax

    from jaxcontact.cones.linear_solvers import banded_solve
    from jaxcontact.studies.runner import calls_lapack

    rng = np.random.default_rng(n + 10 * lower + 100 * upper)
    A = _in_band(rng.normal(size=(4, n, n)) + 3.0 * np.eye(n), lower, upper)
    if lower and upper:  # (a triangular A with a zero pivot is singular)
        A[0, 0, 0] = 0.0  # a zero leading pivot: only a row exchange solves it
    b = rng.normal(size=(4, n))
    solve = jax.jit(jax.vmap(lambda A, b: banded_solve(A, b, lower, upper)))
    np.testing.assert_allclose(solve(A, b), np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10, atol=1e-11)
    assert not calls_lapack(solve.lower(A, b).compile())
    # Entries outside the band are not read: the band's system is solved.
    full = A[1] + _in_band(np.ones((n, n)), n, n) - _in_band(np.ones((n, n)), lower, upper)
    x = banded_solve(jnp.asarray(full), b[1], lower, upper)
    np.testing.assert_allclose(x, solve(A, b)[1], rtol=1e-11, atol=1e-12)
    assert not np.all(np.isfinite(banded_solve(jnp.ones((3, 3)), jnp.ones(3), 2, 2)))


def chain_newton_system(seed, nc=6):
    """J = A + B W, F and the descent data for a chain of contacts: W couples each contact with its neighbours
    only (3 × 3 blocks), so J vanishes beyond 5 diagonals on either side."""
    rng = np.random.default_rng(seed)
    n = 3 * nc
    blocks = np.abs(np.arange(nc)[:, None] - np.arange(nc)[None, :]) <= 1
    W = rng.normal(size=(n, n)) * np.kron(blocks, np.ones((3, 3)))
    W = jnp.asarray(W + W.T + n * np.eye(n))
    A, B = (jnp.asarray(rng.normal(size=(nc, 3, 3))) for _ in range(2))
    J, F = block_diagonal_plus(W, A, B), jnp.asarray(rng.normal(size=n))
    return nc, J, F, J.T @ F, float(jnp.linalg.norm(F))


@pytest.mark.parametrize("seed, sigma", [(0, 1e-3), (1, 1e-3), (2, 1e-3), (0, 100.0), (1, 100.0)])
def test_banded_lu_gives_the_dense_lu_direction_on_a_chain(seed, sigma):
    nc, J, F, grad, nF = chain_newton_system(seed)
    dense = DenseLU().direction(J, F, grad, nF, sigma, nc)
    np.testing.assert_allclose(BandedLU(5, 5).direction(J, F, grad, nF, sigma, nc), dense, rtol=1e-10, atol=1e-12)
    # An entry outside the band: the dense direction, not the band's.
    J_out = J.at[0, -1].set(0.3)
    dense_out = DenseLU().direction(J_out, F, J_out.T @ F, nF, sigma, nc)
    banded_out = BandedLU(5, 5).direction(J_out, F, J_out.T @ F, nF, sigma, nc)
    np.testing.assert_allclose(banded_out, dense_out, rtol=1e-10, atol=1e-12)


def test_the_chain_cases_take_both_branches_of_the_direction():  # the test above checks the Newton and LM steps
    descends = []
    for seed, sigma in [(0, 1e-3), (0, 100.0)]:
        nc, J, F, grad, nF = chain_newton_system(seed)
        step = jnp.linalg.solve(J + sigma * jnp.eye(F.size), -F)
        descends.append(bool(grad @ step < 0))
    assert descends == [True, False]


def test_banded_lu_is_refused_with_a_negative_band_and_is_a_static_option():
    with pytest.raises(ValueError, match=r"BandedLU: lower must be a static int >= 0; got -1"):
        BandedLU(-1, 2)
    with pytest.raises(ValueError, match=r"BandedLU: upper must be a static int >= 0; got 1.5"):
        BandedLU(2, 1.5)
    assert BandedLU(5, 5) == BandedLU(5, 5) and hash(BandedLU(5, 5)) == hash(BandedLU(5, 5))
    assert BandedLU(5, 4) != BandedLU(5, 5) and BandedLU.pays(30, 5, 5) and not BandedLU.pays(24, 11, 11)

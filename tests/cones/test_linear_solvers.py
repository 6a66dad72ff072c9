"""The Newton system's solvers as objects: each gives the regularised Newton step where it descends."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import GMRES, DenseLU, SparseLU, block_rows, bundled_dir, read_problem
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

"""Newton with the Newton system solved by GMRES from products with J (W by block rows never densified)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import GMRES, block_rows, bundled_dir, newton, read_problem
from jaxcontact.cones.delassus import block_diagonal_plus, matvec, to_dense, transpose_matvec
from tests.cones.test_siconos_problems import error

FILES = ["FC3D_Example1_SBM.dat", "Confeti-ex13-4contact-Fc3D-SBM.dat", "NESpheres_10_1.dat", "Rover1040.dat"]


@pytest.mark.parametrize("name", FILES)
def test_equals_the_dense_newton(name):
    p = read_problem(bundled_dir() / name)
    W = block_rows(p.blocks, p.nc) if p.blocks is not None else p.W
    sol = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=1e-12, linear_solver=GMRES(20)))(W, p.q, p.mu)
    ref = newton(p.W, p.q, p.mu, tol=1e-12)
    assert bool(sol.converged) and error(p, np.asarray(sol.r)) <= 1e-11
    np.testing.assert_allclose(sol.r, ref.r, rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(ref.r))))


@pytest.mark.parametrize("name", ["Confeti-ex13-4contact-Fc3D-SBM.dat", "OneObject-i100000-316.hdf5.dat"])
def test_block_products_equal_dense(name):  # OneObject's block rows differ in length: padded slots
    p = read_problem(bundled_dir() / name)
    Wb = block_rows(p.blocks, p.nc)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=p.q.size))
    A, B = (jnp.asarray(rng.normal(size=(p.nc, 3, 3))) for _ in range(2))
    Jb, Jd = block_diagonal_plus(Wb, A, B), block_diagonal_plus(jnp.asarray(p.W), A, B)
    np.testing.assert_allclose(to_dense(Jb), Jd, atol=1e-13)
    np.testing.assert_allclose(matvec(Jb, x), Jd @ x, atol=1e-12)
    np.testing.assert_allclose(transpose_matvec(Jb, x), Jd.T @ x, atol=1e-12)


def test_gmres_restart_must_be_a_positive_int():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match=f"GMRES: restart must be a static int >= 1; got {bad!r}"):
            GMRES(bad)

"""Newton with the Newton system solved by a sparse direct LU (SuperLU) of J + σ I from W's block rows."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import SparseLU, block_rows, bundled_dir, newton, read_problem
from jaxcontact.cones.delassus import block_diagonal_plus, to_dense
from jaxcontact.cones.linear_solvers import _levenberg_marquardt, _sparse_levenberg_marquardt
from tests.cones.test_siconos_problems import error

# Block rows of unequal length (padded slots), a unique solution: r and u compare entry by entry.
FILE = "OneObject-i100000-316.hdf5.dat"


def problem(name=FILE):
    p = read_problem(bundled_dir() / name)
    return p, block_rows(p.blocks, p.nc)


def random_jacobian(p, Wb, seed=0):
    rng = np.random.default_rng(seed)
    A, B = (jnp.asarray(rng.normal(size=(p.nc, 3, 3))) for _ in range(2))
    return block_diagonal_plus(Wb, A, B), jnp.asarray(rng.normal(size=p.q.size))


@pytest.mark.parametrize("function", ["alart_curnier", "fischer_burmeister"])
def test_equals_the_dense_newton(function):
    p, Wb = problem()
    sol = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=1e-12, linear_solver=SparseLU(), function=function))(
        Wb, p.q, p.mu
    )
    ref = newton(p.W, p.q, p.mu, tol=1e-12, function=function)
    assert bool(sol.converged) and error(p, np.asarray(sol.r)) <= 1e-12
    for x, y in ((sol.r, ref.r), (sol.u, ref.u)):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(y))))


def test_directions_equal_the_dense_solves():
    p, Wb = problem()
    J, F = random_jacobian(p, Wb)
    Jd = to_dense(J)
    sigma, nF = 1e-3, float(jnp.linalg.norm(F))
    lm = _sparse_levenberg_marquardt(J, F, nF)
    np.testing.assert_allclose(lm, _levenberg_marquardt(Jd, Jd.T @ F, nF), rtol=1e-9, atol=1e-12)
    grad = Jd.T @ F
    d = SparseLU().direction(J, F, grad, nF, sigma, p.nc)
    newton_d = jnp.linalg.solve(Jd + sigma * jnp.eye(F.size), -F)
    expected = newton_d if float(grad @ newton_d) < 0 else lm  # the rule: the Newton step if it descends
    np.testing.assert_allclose(d, expected, rtol=1e-9, atol=1e-12)


def test_converged_is_honest():
    p, Wb = problem("Capsules-i97-269.hdf5")
    sol = newton(Wb, p.q, p.mu, tol=1e-8, iterations=3, linear_solver=SparseLU())
    assert not bool(sol.converged) and float(sol.residual) > 1e-8
    np.testing.assert_allclose(float(sol.residual), error(p, np.asarray(sol.r)), rtol=1e-6)
    sol = newton(Wb, p.q, p.mu, tol=1e-8, linear_solver=SparseLU())
    assert bool(sol.converged) and error(p, np.asarray(sol.r)) <= 1e-8


def test_vmap_solves_member_by_member():
    p, Wb = problem()
    qs = jnp.stack([p.q, 1.5 * p.q, 0.5 * p.q])  # r(c q) = c r(q) for c > 0
    batch = jax.jit(jax.vmap(lambda q: newton(Wb, q, p.mu, tol=1e-10, linear_solver=SparseLU())))(qs)
    assert bool(jnp.all(batch.converged))
    for c, r in zip((1.0, 1.5, 0.5), batch.r):
        np.testing.assert_allclose(r, c * batch.r[0], rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(batch.r[0]))))


def test_float32():
    p, Wb = problem()
    W32 = Wb._replace(values=Wb.values.astype(np.float32))
    sol = newton(W32, p.q.astype(np.float32), p.mu.astype(np.float32), linear_solver=SparseLU())
    assert sol.r.dtype == jnp.float32 and bool(sol.converged) and error(p, np.asarray(sol.r, np.float64)) <= 1e-4


def test_gradients_equal_the_dense_newtons():
    p, Wb = problem()
    g = jnp.asarray(np.random.default_rng(1).normal(size=p.q.size))

    def grads(W, **kw):
        return jax.jit(jax.grad(lambda q, mu: jnp.sum(newton(W, q, mu, tol=1e-12, **kw).r * g), argnums=(0, 1)))

    for sparse, dense in zip(grads(Wb, linear_solver=SparseLU())(p.q, p.mu), grads(p.W)(p.q, p.mu)):  # in q, in mu
        np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(dense))))


def test_refusals_name_the_value():
    p, Wb = problem("Confeti-ex13-4contact-Fc3D-SBM.dat")
    with pytest.raises(ValueError, match=r"SparseLU\(\) needs W by block rows"):
        newton(p.W, p.q, p.mu, linear_solver=SparseLU())
    with pytest.raises(ValueError, match="linear_solver must be one of .* got True"):
        newton(Wb, p.q, p.mu, linear_solver=True)  # the old flag's value: an object is asked for
    with pytest.raises(ValueError, match="linear_solver must be one of .* got 'gmres'"):
        newton(Wb, p.q, p.mu, linear_solver="gmres")

"""Newton on the Fischer–Burmeister function of the cone: the same solutions as Alart–Curnier Newton and
Siconos' NSN_FB."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import bundled_dir, newton, proximal_newton, read_problem
from jaxcontact.cones.laws import fischer_burmeister
from jaxcontact.cones.problem import pad_problem
from tests.cones.test_properties import known_solution_problem
from tests.cones.test_siconos_problems import NSGS_SMALL, PAD, REF, error, unique_reference

FB = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=1e-13, iterations=100, function="fischer_burmeister"))
AC = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=1e-13, iterations=100))


@pytest.fixture(scope="module")
def ref():
    return np.load(REF)


def padded(fn, p):
    sol = fn(*pad_problem(p.W, p.q, p.mu, PAD))
    n = 3 * p.nc
    return np.asarray(sol.r)[:n]


@pytest.mark.parametrize("name", NSGS_SMALL)
def test_solves_what_alart_curnier_solves_and_equals_siconos(name, ref):
    p = read_problem(bundled_dir() / name)
    r_fb, r_ac = padded(FB, p), padded(AC, p)
    assert error(p, r_fb) <= 1e-10
    if unique_reference(ref, p.name) is None:
        return
    scale = np.abs(r_ac).max()
    np.testing.assert_allclose(r_fb, r_ac, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(
        p.W @ r_fb + p.q, p.W @ r_ac + p.q, rtol=0, atol=1e-8 * max(np.abs(p.W @ r_ac + p.q).max(), scale)
    )
    r_sic = ref[f"{p.name}/NSN_FB/r"]
    assert int(ref[f"{p.name}/NSN_FB/info"]) == 0
    np.testing.assert_allclose(r_fb, r_sic, rtol=0, atol=1e-8 * scale)


def test_zero_exactly_at_every_regime():
    rng = np.random.default_rng(3)
    states = ["separate", "stick", "slide", "slide", "stick", "separate"]
    mu = np.array([0.3, 0.8, 0.5, 0.0, 0.0, 0.0])
    W, q, r = known_solution_problem(rng, states, mu)
    u = W @ r + q
    rho = jnp.ones(6)
    phi = fischer_burmeister(jnp.asarray(r.reshape(6, 3)), jnp.asarray(u.reshape(6, 3)), jnp.asarray(mu), rho)
    assert float(jnp.max(jnp.abs(phi))) <= 1e-13
    # Off the solution it is not zero: a normal force on a separating contact, a stick force outside
    # the cone, a slide force with the slip turned around.
    for i, dr in ((0, [0.1, 0, 0]), (1, [0, 10.0, 0]), (2, [0, 0, 0])):
        r2, u2 = r.copy(), u.copy()
        r2[3 * i : 3 * i + 3] += dr
        if i == 2:
            u2[7:9] *= -1
        phi = fischer_burmeister(jnp.asarray(r2.reshape(6, 3)), jnp.asarray(u2.reshape(6, 3)), jnp.asarray(mu), rho)
        assert float(jnp.max(jnp.abs(phi[i]))) > 1e-3


def test_frictionless_contacts_and_float32():
    """μ = 0 (normal law only) and float32 at its tolerance, on a Rover with half its friction removed."""
    p = read_problem(bundled_dir() / "Rover1040.dat")
    mu = p.mu.copy()
    mu[::2] = 0.0
    sol = newton(p.W, p.q, mu, tol=1e-12, function="fischer_burmeister")
    ref = newton(p.W, p.q, mu, tol=1e-12)
    assert bool(sol.converged)
    np.testing.assert_allclose(sol.r, ref.r, rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(ref.r))))
    s32 = newton(p.W.astype(np.float32), p.q.astype(np.float32), mu.astype(np.float32), function="fischer_burmeister")
    assert s32.r.dtype == jnp.float32 and bool(s32.converged) and float(s32.residual) <= 1e-4


def test_box_stack_where_alart_curnier_newton_stalls():
    """The box stack (W only semidefinite): plain AC Newton stalls above 1e-6; FB Newton gets below 1e-8, as
    Siconos' NSN_FB."""
    p = read_problem(bundled_dir() / "BoxesStack1-i100000-32.hdf5.dat")
    sol = jax.jit(lambda W, q, mu: newton(W, q, mu, function="fischer_burmeister"))(p.W, p.q, p.mu)
    assert bool(sol.converged)
    assert error(p, np.asarray(sol.r)) <= 1e-8


def test_unknown_function_is_refused():
    p = read_problem(bundled_dir() / "Rover1039.dat")
    with pytest.raises(ValueError, match="function must be one of"):
        newton(p.W, p.q, p.mu, function="fb")
    with pytest.raises(ValueError, match="function must be one of"):
        proximal_newton(p.W, p.q, p.mu, function="natural_map")

"""Structured Schur complement (stepping/structured.py): pattern, colouring, sparse Cholesky, step = dense step."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxcontact.models import get_model
from jaxcontact.planar import Mechanism
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.stepping.structured import cholesky_solve, column_colors, sparse_jacobian
from jaxcontact.system import LagrangianSystem


def _all_joints_mechanism():
    """Revolute to the ground, revolute and prismatic between bodies, a driver relative to a body."""
    mech = Mechanism("joints")
    a = mech.body("a", mass=1.0, inertia=0.1)
    b = mech.body("b", mass=2.0, inertia=0.2)
    c = mech.body("c", mass=0.5, inertia=0.05)
    d = mech.body("d", mass=0.7, inertia=0.07)
    mech.revolute(a, (-0.5, 0.0), None, (0.0, 0.0), name="pivot")
    mech.revolute(a, (0.5, 0.0), b, (-0.3, 0.1), name="ab")
    mech.prismatic(b, (0.2, 0.0), c, (0.0, 0.0), axis_angle=0.3, name="bc")
    mech.driver(d, "theta", "0.5*t", relative_to=c, name="cd")
    return mech.build()


def test_planar_constraint_columns_cover_every_nonzero_of_the_jacobian():
    system, params = _all_joints_mechanism()
    assert system.constraint_columns[0] == (0, 1, 2)  # pivot: body a only
    assert system.constraint_columns[2] == (0, 1, 2, 3, 4, 5)  # ab
    assert system.constraint_columns[6] == (6, 7, 8, 9, 10, 11)  # driver: c and d
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = jnp.asarray(rng.normal(size=system.n_dof))
        jac = np.asarray(jax.jacfwd(system.constraints)(q, 0.3, params))
        for i, cols in enumerate(system.constraint_columns):
            outside = np.delete(jac[i], list(cols))
            assert np.all(outside == 0.0), (i, cols, jac[i])
            assert np.any(jac[i, list(cols)] != 0.0)


def test_colours_never_share_a_row_and_sparse_jacobian_equals_jacfwd():
    system, params = get_model("four-bar").system, get_model("four-bar").params
    cols = system.constraint_columns
    groups = column_colors(cols, system.n_dof)
    assert sorted(c for g in groups for c in g) == list(range(9))
    assert len(groups) == 6  # bars 1 and 3 share no joint: their coordinates share JVPs
    for g in groups:
        for row in cols:
            assert len(set(g) & set(row)) <= 1
    q = jnp.asarray(np.random.default_rng(1).normal(size=9))
    f = lambda qq, tt: system.constraints(qq, tt, params)
    phi, phi_t, entries = sparse_jacobian(f, q, jnp.asarray(0.2), cols)
    dense = np.asarray(jax.jacfwd(f)(q, 0.2))
    np.testing.assert_array_equal(np.asarray(phi), np.asarray(f(q, 0.2)))
    np.testing.assert_allclose(np.asarray(phi_t), np.asarray(jax.jacfwd(f, argnums=1)(q, 0.2)), atol=0)
    for (i, c), v in entries.items():
        assert float(v) == pytest.approx(dense[i, c], abs=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 10), st.floats(0.0, 0.7), st.integers(0, 2**31 - 1))
def test_sparse_cholesky_equals_a_dense_solve(m, density, seed):
    """Random SPD matrices with random zero patterns (fill-in included) and two right-hand sides."""
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(m, m + 2)) * (rng.random((m, m + 2)) < density + 0.2)
    A = J @ J.T + 0.5 * np.eye(m)
    lower = {(i, j): jnp.asarray(A[i, j]) for i in range(m) for j in range(i + 1) if A[i, j] != 0.0}
    B = rng.normal(size=(2, m))
    x = cholesky_solve(lower, [[jnp.asarray(v) for v in b] for b in B])
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, B.T).T, rtol=1e-10, atol=1e-10)


def _dense(system):
    return dataclasses.replace(system, constraint_columns=None)


@pytest.mark.parametrize(
    "name, overrides, n_steps",
    [
        ("four-bar", dict(friction=0.2, restitution=0.7), 2000),
        ("slider-crank-clearance", dict(), 3000),
    ],
)
def test_structured_step_equals_the_dense_step(name, overrides, n_steps):
    """Same motion, impulses and solver flags as the dense Schur complement, through impacts and rest."""
    m = get_model(name, **overrides)
    assert m.system.constraint_columns is not None and m.system.diagonal_mass
    q0, u0 = m.initial_state(m.params)
    run = dict(dt=m.dt, n_steps=n_steps, scheme=MoreauJean(diagnostics=False))
    fast = simulate(m.system, m.params, q0, u0, **run)
    ref = simulate(_dense(m.system), m.params, q0, u0, **run)
    assert np.sum(np.asarray(ref.impulse_normal) > 0) > 10
    np.testing.assert_allclose(np.asarray(fast.q), np.asarray(ref.q), rtol=0, atol=1e-11)
    # Rounding, amplified by the impacts (the slider–crank's journal hits its bearing every other
    # step, crank at 200 rad/s): relative to the largest speed.
    scale = float(np.max(np.abs(np.asarray(ref.u))))
    np.testing.assert_allclose(np.asarray(fast.u), np.asarray(ref.u), rtol=0, atol=1e-10 * scale)
    np.testing.assert_array_equal(np.asarray(fast.diagnostics.converged), np.asarray(ref.diagnostics.converged))


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_structured_step_gradient_equals_the_dense_one_and_baumgarte_path():
    """d(final θ1)/d(restitution, wall distance) through impacts: structured = dense; Baumgarte rows too."""
    from jaxcontact.models import four_bar
    from jaxcontact.stepping import baumgarte_rates

    system, params = four_bar.mechanism(friction=False).build(four_bar.DEFAULTS)
    q0, u0 = four_bar.initial_state(params)

    def final_angle(system, scheme, x):
        p = dict(params, restitution=x[0], wall_distance=x[1])
        return simulate(system, p, q0, u0, dt=1e-3, n_steps=150, scheme=scheme).q[-1, 2]

    x = jnp.asarray([0.8, 0.06])
    for scheme in (MoreauJean(diagnostics=False), MoreauJean(diagnostics=False, baumgarte=baumgarte_rates(0.5))):
        g_fast = jax.jacfwd(lambda x: final_angle(system, scheme, x))(x)
        g_ref = jax.jacfwd(lambda x: final_angle(_dense(system), scheme, x))(x)
        assert np.all(np.isfinite(np.asarray(g_fast))) and np.asarray(g_fast)[0] != 0
        np.testing.assert_allclose(np.asarray(g_fast), np.asarray(g_ref), rtol=1e-8, atol=1e-12)


def test_bad_constraint_columns_are_refused():
    def phi(q, t, p):
        return q[:1]

    base = dict(n_dof=2, mass=lambda q, p: jnp.eye(2), forces=lambda q, u, t, p: jnp.zeros(2))
    with pytest.raises(ValueError, match="constraint_columns given without constraints"):
        LagrangianSystem(**base, constraint_columns=((0,),))
    with pytest.raises(ValueError, match=r"in \[0, 2\)"):
        LagrangianSystem(**base, constraints=phi, constraint_columns=((2,),))
    with pytest.raises(ValueError, match="non-empty tuples"):
        LagrangianSystem(**base, constraints=phi, constraint_columns=((),))

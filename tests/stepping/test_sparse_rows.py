"""The contact rows by a declared pattern (``LagrangianSystem.gap_columns``, ``slip_columns``,
:mod:`jaxcontact.stepping.sparse_rows`) against the same rows held dense: the products, both projections in
both contact modes, Moreau–Jean's step, derivatives, and the declarations' rules (a stepped run:
tests/stepping/test_mass_blocks.py)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import flexible_arm, flexible_slider_crank
from jaxcontact.stepping import MoreauJean
from jaxcontact.stepping.kernels import mass_solver
from jaxcontact.stepping.projection import project_position, project_velocity
from jaxcontact.stepping.sparse_rows import DenseRows, SparseRows, contact_rows, gap_rows
from jaxcontact.system import LagrangianSystem, kinematics


def _dense(system):
    return dataclasses.replace(system, gap_columns=None)


def _drifted(model, size=1e-6):
    """A configuration off the model's: every coordinate moved by about ``size``, then each joint's pin pushed
    ``size`` through its hole along its gap's gradient (the joints touch no coordinate in common)."""
    q0, u0 = model.initial_state(model.params)
    rng = np.random.default_rng(5)
    q = q0 + size * jnp.asarray(rng.normal(size=q0.shape))
    gaps = lambda x: model.system.gaps(x, 0.0, model.params)  # noqa: E731
    W = jax.jacfwd(gaps)(q)
    q = q - W.T @ ((gaps(q) + size) / jnp.sum(W * W, axis=1))
    return q, u0 + jnp.asarray(rng.normal(size=q0.shape))


CASES = {
    "arm of 4 links (hub pin: a bilateral row)": lambda: flexible_arm.model("rigid", 4),
    "arm of 2-element links": lambda: flexible_arm.model("rigid", 3, n_elements=2),
    "slider-crank (a joint on a rigid body)": lambda: flexible_slider_crank.model("rigid"),
}


@pytest.fixture(params=list(CASES), scope="module")
def case(request):
    return CASES[request.param]()


def test_sparse_products_equal_the_dense_ones(case):
    system, p = case.system, case.params
    assert system.gap_columns is not None
    q, _ = _drifted(case)
    t = jnp.asarray(0.0)
    g, sparse = gap_rows(system, q, t, p)
    g_dense, dense = gap_rows(_dense(system), q, t, p)
    assert isinstance(sparse, SparseRows) and isinstance(dense, DenseRows)
    np.testing.assert_array_equal(g, g_dense)
    rng = np.random.default_rng(0)
    x, lam, Y = (jnp.asarray(rng.normal(size=s)) for s in ((q.size,), (sparse.k,), (q.size, 3)))
    solve_M = mass_solver(system, q, p)
    for a, b in [
        (sparse.t(x), dense.t(x)),
        (sparse.apply(lam), dense.apply(lam)),
        (sparse.cross(Y), dense.cross(Y)),
        (sparse.gram(solve_M), dense.gram(solve_M)),
    ]:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(b))))


@pytest.mark.parametrize("mode", ["equality", "inequality"])
def test_projections_by_the_pattern_equal_the_dense_ones(case, mode):
    """Position (three Newton iterations, penetrating joints put back) and velocity (every joint closed):
    the same answer to rounding."""
    system, p = case.system, case.params
    q, u = _drifted(case)
    t = jnp.asarray(0.0)
    assert bool(jnp.all(system.gaps(q, t, p) < 0))
    pos = [project_position(s, q, t, p, iterations=3, contact_mode=mode) for s in (system, _dense(system))]
    np.testing.assert_allclose(pos[0], pos[1], rtol=0, atol=1e-12)
    closed = jnp.ones(system.gaps(q, t, p).shape, bool)
    vel = [project_velocity(s, pos[0], u, t, p, contact_mode=mode, closed=closed) for s in (system, _dense(system))]
    np.testing.assert_allclose(vel[0], vel[1], rtol=1e-10, atol=1e-10)
    # and the projection did its work: the joints that went through their holes back on their surface
    # (equality: the others are left as they are), or every joint out of its wall (inequality)
    g, g0 = system.gaps(pos[0], t, p), system.gaps(q, t, p)
    if mode == "equality":
        assert float(jnp.max(jnp.abs(jnp.where(g0 < 0, g, 0.0)))) < 1e-9
    else:
        assert float(jnp.min(g)) > -1e-9


def test_the_projection_by_the_pattern_differentiates_as_the_dense_one():
    m = flexible_arm.model("rigid", 3)
    q, _ = _drifted(m)
    t = jnp.asarray(0.0)
    direction = jnp.cos(jnp.arange(q.size))
    d = [
        jax.jvp(lambda x, s=s: project_position(s, x, t, m.params), (q,), (direction,))[1]
        for s in (m.system, _dense(m.system))
    ]
    np.testing.assert_allclose(d[0], d[1], rtol=1e-8, atol=1e-10)


def test_the_contact_rows_by_their_patterns_equal_the_dense_kinematics(case):
    system, p = case.system, case.params
    assert system.slip_columns is not None and len(system.slip_columns) == len(system.gap_columns)
    q, _ = _drifted(case)
    t = jnp.asarray(0.0)
    g, g_t, w_T, rows = contact_rows(system, q, t, p)
    kin = kinematics(system, q, t, p)
    dense = jnp.zeros((q.size, rows.k)).at[rows.cols, rows.rows].add(rows.values)
    np.testing.assert_array_equal(g, kin.gap)
    np.testing.assert_allclose(jnp.concatenate([g_t, w_T]), jnp.concatenate([kin.gap_t, kin.w_T]), atol=1e-15)
    W = jnp.concatenate([kin.W_N, kin.W_T], axis=1)
    np.testing.assert_allclose(dense, W, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(W))))


def _step(system, p, q, u, dt):
    # Ten sweeps: both paths run the same sweeps, so they agree to rounding whatever their count.
    scheme = MoreauJean(iterations=10)
    return scheme.step(system, p, scheme.init(system, p, q, u, 0.0), dt)


@pytest.mark.parametrize(
    "name", ["arm of 4 links (hub pin: a bilateral row)", "slider-crank (a joint on a rigid body)"]
)
def test_a_moreau_jean_step_by_the_declared_rows_equals_the_dense_step(name):
    """From a state whose joints all went through their holes, at random velocities: the step's impulses and
    velocities agree to rounding (the arm's joints close; the slider–crank's drive opens its joint). The rows of
    2-element links are checked above, the step's algebra does not depend on them."""
    case = CASES[name]()
    system, p = case.system, case.params
    q, u = _drifted(case)
    assert "with W by its declared rows" in MoreauJean().plan(system)["contacts"]
    assert "declared rows" not in MoreauJean().plan(_dense(system))["contacts"]
    step = jax.jit(_step, static_argnums=0)
    (a, info), (b, info_dense) = (step(s, p, q, u, case.dt) for s in (system, _dense(system)))
    for x, y in [(a.u, b.u), (a.q, b.q), (info.P_N, info_dense.P_N), (info.P_T, info_dense.P_T)]:
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12 * float(jnp.max(jnp.abs(y))))


def test_a_moreau_jean_step_by_the_declared_rows_differentiates_as_the_dense_one():
    m = flexible_arm.model("rigid", 3)
    q, u = _drifted(m)
    _, info = _step(m.system, m.params, q, u, m.dt)
    assert float(jnp.max(info.P_N)) > 0 and float(jnp.max(jnp.abs(info.P_T))) > 0  # joints hit and slide
    direction = jnp.sin(jnp.arange(u.size) + 1.0)
    d = [
        jax.jit(jax.jvp, static_argnums=0)(lambda v, s=s: _step(s, m.params, q, v, m.dt)[0].u, (u,), (direction,))[1]
        for s in (m.system, _dense(m.system))
    ]
    np.testing.assert_allclose(d[0], d[1], rtol=1e-8, atol=1e-10 * float(jnp.max(jnp.abs(d[1]))))


def _system(**kw):
    return LagrangianSystem(
        n_dof=3,
        mass=lambda q, p: jnp.eye(3),
        forces=lambda q, u, t, p: jnp.zeros(3),
        gaps=lambda q, t, p: q[:2],
        laws=lambda p: None,
        **kw,
    )


@pytest.mark.parametrize(
    "kw, words",
    [
        (dict(gap_columns=((0,), (3,))), "coordinate indices in \\[0, 3\\)"),
        (dict(gap_columns=((0,), ())), "non-empty tuples"),
        (dict(gap_columns=[(0,), (1,)]), "a tuple of"),
    ],
)
def test_a_wrong_pattern_is_refused_by_name(kw, words):
    with pytest.raises(ValueError, match="gap_columns") as err:
        _system(**kw)
    assert err.match(words)
    slips = {"slip_columns": kw["gap_columns"]}
    with pytest.raises(ValueError, match="slip_columns") as err:
        _system(slip_velocity=lambda q, u, t, p: u[:2], **slips)
    assert err.match(words)


def test_a_pattern_without_gaps_or_out_of_the_velocities_is_refused():
    with pytest.raises(ValueError, match="gap_columns given without gaps"):
        LagrangianSystem(
            n_dof=2, mass=lambda q, p: jnp.eye(2), forces=lambda q, u, t, p: jnp.zeros(2), gap_columns=((0,),)
        )
    # With a velocity map a pattern is of the velocities: here two, so index 2 (a coordinate) is out.
    _system(gap_columns=((0,), (1,)), n_velocities=2, velocity_map=lambda q, u: jnp.r_[u, 0.0])
    with pytest.raises(ValueError, match="velocity indices in \\[0, 2\\)"):
        _system(gap_columns=((0,), (2,)), n_velocities=2, velocity_map=lambda q, u: jnp.r_[u, 0.0])
    with pytest.raises(ValueError, match="slip_columns given without slip_velocity"):
        _system(slip_columns=((0,), (1,)))


def test_a_pattern_of_the_wrong_length_is_refused_when_the_gaps_are_evaluated():
    s = _system(gap_columns=((0,),))
    with pytest.raises(ValueError, match="gap_columns has 1 rows for 2 gaps"):
        gap_rows(s, jnp.zeros(3), 0.0, {})
    s = _system(gap_columns=((0,), (1,)), slip_velocity=lambda q, u, t, p: u[:2], slip_columns=((0,),))
    with pytest.raises(ValueError, match="slip_columns has 1 rows for 2 slips"):
        contact_rows(s, jnp.zeros(3), 0.0, {})

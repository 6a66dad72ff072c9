"""A spatial assembly's contact rows by their declared pattern (each row reads the velocities of the bodies its
contact touches: ``Assembly.system``'s ``gap_columns`` and ``slip_columns``) against the same rows held dense:
W = [W_N, W_T] and the free rates on several contact kinds, a Moreau–Jean run of a column of spheres, and
its derivative."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.stepping.sparse_rows import contact_rows
from jaxcontact.system import kinematics
from tests.spatial.test_box_box import PYRAMID, SIZES
from tests.spatial.test_cone_newton import P, _column
from tests.spatial.test_limits import _door

jax.config.update("jax_enable_x64", True)

PUSH = jnp.asarray([0.3, 0.0, 0.0, 0.0, 0.0, 2.0])  # the top sphere's velocity (m/s) and spin (rad/s)


def _dense(system):
    return dataclasses.replace(system, gap_columns=None, slip_columns=None)


def _rows_by_pattern(system, q, t, p):
    """contact_rows with W dense (n_u, rows)."""
    g, g_t, w_T, rows = contact_rows(system, q, t, p)
    return g, g_t, w_T, jnp.zeros((rows.n, rows.k), rows.values.dtype).at[rows.cols, rows.rows].add(rows.values)


def _random_pose(n_bodies, seed):
    """Positions and unit quaternions of n bodies, drawn."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_bodies, 3)) * 0.1
    quat = rng.normal(size=(n_bodies, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return jnp.asarray(np.concatenate([x, quat], axis=1).reshape(-1))


def _cases():
    cradle = get_model("newton-cradle")
    crank = get_model("spatial-slider-crank")
    door, _ = _door()
    return {
        "column of 4 spheres (sphere-plane, sphere-sphere)": (_column(4), P),
        "pyramid of boxes (box-plane, box-box)": (PYRAMID.system(), SIZES),
        "newton cradle": (cradle.system, cradle.params),
        "spatial slider-crank (joints, a ball in its socket)": (crank.system, crank.params),
        "door with a hinge limit": (door.system(), {}),
    }


# The box–box collider compiles for over a minute: the pyramid runs with the slow tests.
CASES = [pytest.param(n, marks=pytest.mark.slow) if "pyramid" in n else n for n in _cases()]


@pytest.mark.parametrize("name", CASES)
def test_the_rows_by_their_pattern_equal_the_dense_kinematics(name):
    """At drawn poses (so that no entry vanishes by symmetry): W by the pattern = ∂g/∂q T(q) and ∂γ_T/∂u held
    dense, entry by entry; the gaps, their time rates and the slips at u = 0 equal."""
    system, p = _cases()[name]
    p = {k: jnp.asarray(v, jnp.float64) for k, v in p.items()}
    assert system.gap_columns is not None and system.slip_columns is not None
    for seed in range(3):
        q = _random_pose(system.n_dof // 7, seed)
        t = jnp.asarray(0.0)
        g, g_t, w_T, by_pattern = jax.jit(_rows_by_pattern, static_argnums=0)(system, q, t, p)
        kin = jax.jit(kinematics, static_argnums=0)(_dense(system), q, t, p)
        W = jnp.concatenate([kin.W_N, kin.W_T], axis=1)
        np.testing.assert_allclose(g, kin.gap, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(jnp.concatenate([g_t, w_T]), jnp.concatenate([kin.gap_t, kin.w_T]), atol=1e-14)
        np.testing.assert_allclose(by_pattern, W, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(W))))


def _drop(system, steps, scheme):
    """The column with 5 mm gaps, dropped on the plane, the top sphere pushed sideways and spinning: the
    contacts slide and roll as well as close."""
    n = system.n_dof // 7
    z = P["radius"] * (2 * jnp.arange(n) + 1) + 5e-3 * (jnp.arange(n) + 1)
    q0 = jnp.stack([0 * z, 0 * z, z, 1 + 0 * z, 0 * z, 0 * z, 0 * z], axis=1).reshape(-1)
    u0 = jnp.zeros(6 * n).at[-6:].set(PUSH)
    p = {k: jnp.asarray(v, jnp.float64) for k, v in P.items()}
    return simulate(system, p, q0, u0, dt=1e-3, n_steps=steps, scheme=scheme)


def test_a_column_run_by_the_declared_rows_equals_the_dense_run():
    """300 steps of the column (it lands, slides and comes to rest): every step's impulses and the trajectory
    agree with the dense rows' to rounding (a fixed sweep count: both run the same sweeps)."""
    system = _column(4)
    scheme = MoreauJean(iterations=30)
    assert "with W by its declared rows" in scheme.plan(system)["contacts"]
    assert "declared rows" not in scheme.plan(_dense(system))["contacts"]
    run = jax.jit(_drop, static_argnums=(0, 1, 2))
    a, b = run(system, 300, scheme), run(_dense(system), 300, scheme)
    assert float(jnp.max(a.impulse_normal)) > 0 and float(jnp.max(jnp.abs(a.impulse_tangent))) > 0
    for x, y in [(a.q, b.q), (a.u, b.u), (a.impulse_normal, b.impulse_normal), (a.impulse_tangent, b.impulse_tangent)]:
        np.testing.assert_allclose(x, y, rtol=1e-8, atol=1e-10 * float(jnp.max(jnp.abs(y))))


def test_a_column_run_by_the_declared_rows_differentiates_as_the_dense_one():
    """The top sphere's x after 5 steps in μ: a column of 3 spheres touching at rest, the top one pushed (it
    slides and spins on the one below, friction slowing it)."""
    system = _column(3)
    scheme = MoreauJean(iterations=10)
    p = {k: jnp.asarray(v, jnp.float64) for k, v in P.items()}
    z = P["radius"] * (2 * jnp.arange(3) + 1)
    q0 = jnp.stack([0 * z, 0 * z, z, 1 + 0 * z, 0 * z, 0 * z, 0 * z], axis=1).reshape(-1)
    u0 = jnp.zeros(18).at[-6:].set(PUSH)

    def top_x(mu, s):
        run = simulate(s, {**p, "friction": mu}, q0, u0, dt=1e-3, n_steps=5, scheme=scheme)
        return run.q[-1, -7]

    def derivative(s):  # forward mode: it compiles in a quarter of reverse mode's time here
        return jax.jit(lambda mu: jax.jvp(lambda m: top_x(m, s), (mu,), (jnp.ones_like(mu),))[1])(jnp.asarray(0.5))

    grads = [derivative(s) for s in (system, _dense(system))]
    assert float(jnp.abs(grads[1])) > 0
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8)


def test_a_column_declares_the_band_of_its_delassus_matrix_and_newton_solves_within_it():
    """Each contact of a column touches the spheres of its neighbours only: D = Wᵀ M⁻¹ W, in the cone problem's
    per-contact order, vanishes beyond 5 diagonals (3 × 3 blocks), at any pose; Newton then solves in that band."""
    from jaxcontact.stepping.cone_contacts import per_contact_band, per_contact_order
    from jaxcontact.stepping.moreau_jean import cone_coupling

    system = _column(6)
    assert per_contact_band(cone_coupling(MoreauJean(), system)) == (5, 5)
    assert MoreauJean(solver="newton").plan(system)["contacts"].startswith("newton on Coulomb cones (banded LU)")
    p = {k: jnp.asarray(v, jnp.float64) for k, v in P.items()}
    q = _random_pose(6, 0)
    kin = kinematics(_dense(system), q, jnp.asarray(0.0), p)
    W = jnp.concatenate([kin.W_N, kin.W_T], axis=1)
    order = per_contact_order(6)
    D = np.asarray((W.T @ jnp.linalg.solve(system.mass(q, p), W))[order][:, order])
    i = np.arange(D.shape[0])
    assert np.all(D[np.abs(i[:, None] - i[None, :]) > 5] == 0) and np.any(D[np.abs(i[:, None] - i[None, :]) == 5])
    # Rows not declared, or D by its factors (the box): no band known, the dense LU.
    assert cone_coupling(MoreauJean(), _dense(system)) is None
    assert cone_coupling(MoreauJean(), get_model("box-toss").system) is None


def test_a_column_study_reads_d_by_block_rows_and_follows_the_dense_solve():
    """A study's solve (implicit mode, the stragglers rescued by Newton within the band) of a 6-sphere column
    landing: D by block rows (each contact meets its neighbours only) and the banded LU give the motion of the
    dense D and the dense LU (rows held dense) to the solve's tolerance."""
    from jaxcontact.stepping.cone_contacts import block_columns
    from jaxcontact.stepping.moreau_jean import cone_coupling

    system = _column(6)
    scheme = MoreauJean(tol=1e-10, iterations=400).for_forward_runs()
    assert "with W by its declared rows and D by block rows" in scheme.plan(system)["contacts"]
    assert "block rows" not in MoreauJean().plan(system)["contacts"]  # unrolled sweeps keep D dense
    cols = block_columns(cone_coupling(scheme, system))
    np.testing.assert_array_equal(cols[0], [0, 1, -1])  # the first contact (the plane) meets one neighbour
    np.testing.assert_array_equal(cols[3], [2, 3, 4])
    run = jax.jit(_drop, static_argnums=(0, 1, 2))
    a, b = run(system, 200, scheme), run(_dense(system), 200, scheme)
    assert np.all(np.asarray(a.diagnostics.converged)) and np.all(np.asarray(b.diagnostics.converged))
    assert int(np.max(a.diagnostics.iterations)) > 9  # some steps went to the rescue
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.impulse_normal, b.impulse_normal, rtol=0, atol=1e-7 * float(jnp.max(b.impulse_normal)))

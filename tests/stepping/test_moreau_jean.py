"""Moreau–Jean step: bilateral constraints (signs of the Schur complement), contact LCP, θ-method."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean, initial_state, step
from jaxcontact.system import ContactLaws, LagrangianSystem

G = 9.81

# A bar of length l pinned at its end to the ground at the origin (revolute joint), in absolute
# coordinates q = (x, y, θ): Φ = centre − R(θ)(l/2, 0) = 0.


def _bar_mass(q, p):
    m, l = p["m"], p["l"]
    return jnp.diag(jnp.stack([m, m, m * l**2 / 12]))


def _bar_forces(q, u, t, p):
    return jnp.stack([0.0 * p["m"], -p["m"] * G, 0.0 * p["m"]])


def _pin(q, t, p):
    half = p["l"] / 2
    return jnp.stack([q[0] - half * jnp.cos(q[2]), q[1] - half * jnp.sin(q[2])])


def _bar_potential(q, t, p):
    return p["m"] * G * q[1]


PENDULUM = LagrangianSystem(n_dof=3, mass=_bar_mass, forces=_bar_forces, constraints=_pin, potential=_bar_potential)
P_PEND = {"m": jnp.asarray(2.0), "l": jnp.asarray(0.8)}


def _pendulum_reference(t_eval, l):
    """θ'' = −(m g l/2 cos θ) / (m l²/3): the same bar as a 1-dof pendulum, by a tight RK45."""
    rhs = lambda t, y: [y[1], -1.5 * G * np.cos(y[0]) / l]
    return solve_ivp(rhs, (0, t_eval[-1]), [0.0, 0.0], t_eval=t_eval, rtol=1e-12, atol=1e-12).y[0]


@pytest.fixture(scope="module")
def pendulum_run():
    dt, n = 1e-3, 1500
    q0 = jnp.array([0.4, 0.0, 0.0])
    return dt, simulate(PENDULUM, P_PEND, q0, jnp.zeros(3), dt=dt, n_steps=n)


def test_revolute_velocity_constraint_holds_after_every_step(pendulum_run):
    """Φ_q(q_M) u_E + Φ_t = 0 to rounding: the Schur complement's signs are right."""
    dt, tr = pendulum_run
    q, u = np.asarray(tr.q), np.asarray(tr.u)
    q_M = q[:-1] + 0.5 * dt * u[:-1]
    jac = jax.vmap(jax.jacfwd(lambda qq: _pin(qq, 0.0, P_PEND)))(jnp.asarray(q_M))
    viol = np.einsum("bij,bj->bi", np.asarray(jac), u[1:])
    assert np.max(np.abs(viol)) < 1e-13
    # Velocity-level enforcement lets Φ itself drift slowly (the projection removes it).
    assert np.max(np.asarray(tr.diagnostics.phi)) < 1e-2


def test_pendulum_matches_reduced_coordinates(pendulum_run):
    """The constrained bar swings like the 1-dof pendulum (independent ODE reference)."""
    dt, tr = pendulum_run
    t = np.asarray(tr.t)
    ref = _pendulum_reference(t, 0.8)
    # first order in h with velocity-level constraints (the rate is checked below)
    assert np.max(np.abs(np.asarray(tr.q[:, 2]) - ref)) < 1.5e-2


def test_pendulum_converges_with_dt():
    errs = []
    for dt in (4e-3, 2e-3, 1e-3):  # same step count: one compiled program
        tr = simulate(PENDULUM, P_PEND, jnp.array([0.4, 0.0, 0.0]), jnp.zeros(3), dt=dt, n_steps=1500)
        t = np.asarray(tr.t)
        errs.append(np.max(np.abs(np.asarray(tr.q[:, 2]) - _pendulum_reference(t, 0.8))))
    # first order or better at the velocity level; each halving must reduce the error by ≥ 1.8×
    assert errs[0] / errs[1] > 1.8 and errs[1] / errs[2] > 1.8, errs


# A rheonomic (driving) constraint: a particle in the plane with x − v t = 0, gravity along y.


def _driven(q, t, p):
    return jnp.reshape(q[0] - p["v"] * t, (1,))


DRIVEN = LagrangianSystem(
    n_dof=2,
    mass=lambda q, p: jnp.eye(2) * p["m"],
    forces=lambda q, u, t, p: jnp.stack([0.0 * p["m"], -p["m"] * G]),
    constraints=_driven,
)


def test_rheonomic_constraint_sign():
    p = {"m": jnp.asarray(1.5), "v": jnp.asarray(0.7)}
    tr = simulate(DRIVEN, p, jnp.zeros(2), jnp.zeros(2), dt=1e-2, n_steps=50)
    # Φ_q u + Φ_t = u_x − v = 0 after the first step; x = v t (the Φ_t sign).
    np.testing.assert_allclose(np.asarray(tr.u[1:, 0]), 0.7, rtol=0, atol=1e-14)
    # u_A = 0 in the first step (inconsistent start), so x lags v t by v h/2 from then on
    np.testing.assert_allclose(np.asarray(tr.q[1:, 0]), 0.7 * (np.asarray(tr.t[1:]) - 0.5e-2), rtol=0, atol=1e-14)
    # free direction unaffected: y = −g t²/2 exactly (Störmer–Verlet with constant force)
    np.testing.assert_allclose(np.asarray(tr.q[:, 1]), -0.5 * G * np.asarray(tr.t) ** 2, atol=1e-12)
    assert float(jnp.max(tr.diagnostics.phi_dot[1:])) < 1e-13


# A constrained body touching the ground: the step's impulses must satisfy the full saddle-point
# system and Newton's complementarity, checked with independently computed quantities.


def _arm_gaps(q, t, p):
    # both ends of the bar: centre ± R(θ)(l/2, 0), heights above the line y = −p["floor"]
    half = p["l"] / 2
    return jnp.stack([q[1] + half * jnp.sin(q[2]), q[1] - half * jnp.sin(q[2])]) + p["floor"]


def _slider(q, t, p):
    # the bar's centre slides on the vertical line x = 0 (prismatic-like constraint)
    return jnp.reshape(q[0], (1,))


ARM = LagrangianSystem(
    n_dof=3,
    mass=_bar_mass,
    forces=_bar_forces,
    constraints=_slider,
    gaps=_arm_gaps,
    laws=lambda p: ContactLaws(jnp.stack([p["e"], p["e"]]), jnp.zeros(2), jnp.zeros(2)),
)


@pytest.mark.parametrize("solver", ["pgs", "lemke"])
def test_step_satisfies_saddle_point_and_newton_law(solver):
    p = {"m": jnp.asarray(1.3), "l": jnp.asarray(0.6), "e": jnp.asarray(0.5), "floor": jnp.asarray(0.0)}
    q_A = jnp.array([0.0, 0.05, 0.3])  # left end below y = 0 at the midpoint
    u_A = jnp.array([0.2, -1.0, 2.0])
    dt = 1e-2
    if solver == "lemke":
        pytest.importorskip("jaxcontact.lcp.lemke")
    scheme = MoreauJean(solver=solver, iterations=200)
    s1, info = jax.jit(step, static_argnums=(0, 1))(ARM, scheme, p, initial_state(ARM, q_A, u_A, 0.0, p), dt)
    q_M = q_A + 0.5 * dt * u_A
    M = np.asarray(_bar_mass(q_M, p))
    f = np.asarray(_bar_forces(q_M, u_A, 0.0, p))
    Phi_q = np.asarray(jax.jacfwd(_slider)(q_M, 0.0, p))
    W_N = np.asarray(jax.jacfwd(_arm_gaps)(q_M, 0.0, p)).T
    gap = np.asarray(_arm_gaps(q_M, 0.0, p))
    P = np.asarray(info.P_N)
    u_E = np.asarray(s1.u)
    assert np.array_equal(np.asarray(info.active), gap <= 0)
    assert bool(info.active.any()) and bool(info.converged)
    # M (u_E − u_A) − h f − W_N P must be a bilateral impulse Φ_qᵀ S: least-squares residual 0
    r = M @ (u_E - np.asarray(u_A)) - dt * f - W_N @ P
    S, *_ = np.linalg.lstsq(Phi_q.T, r, rcond=None)
    np.testing.assert_allclose(Phi_q.T @ S, r, atol=1e-12)
    np.testing.assert_allclose(Phi_q @ u_E, 0.0, atol=1e-13)
    # Newton's law on active contacts, zero impulse on the others
    xi = W_N.T @ u_E + 0.5 * (W_N.T @ np.asarray(u_A))
    act = gap <= 0
    assert np.all(P[~act] == 0)
    assert np.all(P >= -1e-14) and np.all(xi[act] >= -1e-10)
    np.testing.assert_allclose(P[act] * xi[act], 0.0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(s1.q), q_M + 0.5 * dt * u_E, atol=1e-15)


def test_theta_one_is_implicit_position_euler():
    p = {"m": jnp.asarray(1.3), "l": jnp.asarray(0.6), "e": jnp.asarray(0.5), "floor": jnp.asarray(1.0)}
    q_A, u_A = jnp.array([0.0, 0.5, 0.3]), jnp.array([0.0, -1.0, 2.0])
    s1, _ = jax.jit(step, static_argnums=(0, 1))(
        ARM, MoreauJean(theta=1.0), p, initial_state(ARM, q_A, u_A, 0.0, p), 0.01
    )
    np.testing.assert_allclose(np.asarray(s1.q), np.asarray(q_A + 0.01 * s1.u), atol=1e-15)


def test_scheme_options_are_checked():
    with pytest.raises(ValueError, match="theta"):
        MoreauJean(theta=0.3)
    with pytest.raises(ValueError, match="solver"):
        MoreauJean(solver="robust")
    with pytest.raises(ValueError, match="iterations"):
        MoreauJean(iterations=0)
    with pytest.raises(ValueError, match="separating"):
        MoreauJean(separating="x")
    with pytest.raises(ValueError, match=r"omega = 2.0 must lie in \(0, 2\)"):
        MoreauJean(omega=2.0)


def test_cone_sweeps_over_relax_after_their_first_chunk_where_omega_is_left_to_them_and_w_can_have_full_rank():
    """A step's cone problem gets NSGS' later over-relaxation where the scheme leaves ω to the solver (None)
    and its 3k cone unknowns do not outnumber the velocities (a column of 10 spheres: 30 on 60); a given ω,
    or a box on its 8 vertices (24 on 6), keeps ω for every sweep."""
    from jaxcontact.stepping.cone_contacts import LATER_OMEGA, later_relaxation

    assert MoreauJean().omega is None
    assert later_relaxation(None, 10, 60) == LATER_OMEGA and later_relaxation(None, 2, 6) == LATER_OMEGA
    assert later_relaxation(1.0, 10, 60) is None and later_relaxation(0.8, 10, 60) is None
    assert later_relaxation(None, 8, 6) is None


@pytest.mark.parametrize("differentiation, passed", [("implicit", 1.3), ("unroll", None)])
def test_cone_solve_hands_the_later_relaxation_to_the_staged_sweeps_only(monkeypatch, differentiation, passed):
    from jaxcontact.stepping import cone_contacts

    seen = []

    class Called(Exception):
        pass

    def spy(*args, **kwargs):
        seen.append(kwargs["later_omega"])
        raise Called  # the wiring is what is tested: no solve, no compile

    monkeypatch.setattr(cone_contacts, "nsgs", spy)
    k = 2
    with pytest.raises(Called):
        cone_contacts.solve_cone_contacts(
            jnp.eye(3 * k) + 0.1,
            jnp.concatenate([-jnp.ones(k), jnp.zeros(2 * k)]),
            jnp.full((k,), 0.5),
            jnp.ones(k, bool),
            jnp.zeros(k),
            jnp.zeros(2 * k),
            iterations=50,
            omega=None,
            tol=1e-10,
            differentiation=differentiation,
            later_omega=1.3,
        )
    assert seen == [passed]


def test_diagonal_mass_option_matches_cholesky(pendulum_run):
    dt, ref = pendulum_run
    tr = simulate(
        PENDULUM,
        P_PEND,
        jnp.array([0.4, 0.0, 0.0]),
        jnp.zeros(3),
        dt=dt,
        n_steps=1500,
        scheme=MoreauJean(diagonal_mass=True),
    )
    np.testing.assert_allclose(np.asarray(tr.q), np.asarray(ref.q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("friction", [0.0, 0.2])
def test_declared_diagonal_mass_matches_cholesky_on_the_four_bar(friction):
    """Planar mechanisms declare M diagonal; the step then divides. 2000 steps with impacts, as the study.

    Friction on this one-degree-of-freedom linkage makes the contact's Delassus matrix rank 1: the
    normal/tangential split of the impulse is then not unique and rounding picks it, so impulses
    are compared only without friction; the motion (q, u) must agree in both cases.
    """
    import dataclasses

    from jaxcontact.models import get_model

    m = get_model("four-bar", friction=friction, restitution=0.7)
    assert m.system.diagonal_mass
    q0, u0 = m.initial_state(m.params)
    run = dict(dt=1e-3, n_steps=2000, scheme=MoreauJean(diagnostics=False))
    fast = simulate(m.system, m.params, q0, u0, **run)
    ref = simulate(dataclasses.replace(m.system, diagonal_mass=False), m.params, q0, u0, **run)
    assert int(np.sum(np.asarray(ref.impulse_normal[:, 0]) > 0)) > 10  # impacts and resting contact
    np.testing.assert_allclose(np.asarray(fast.q), np.asarray(ref.q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fast.u), np.asarray(ref.u), rtol=0, atol=1e-11)
    if friction == 0.0:
        np.testing.assert_allclose(np.asarray(fast.impulse_normal), np.asarray(ref.impulse_normal), rtol=0, atol=1e-12)

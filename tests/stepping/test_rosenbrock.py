"""The penalty scheme's Rosenbrock-W step (``Penalty(implicit=…)``): its tableau's order and stability
conditions, its order measured on a damped oscillator whose damping it takes implicitly, stiff damping and
stiff regularized friction at steps where RK4 diverges, steady states kept exactly, batched = one by one, and
gradients against finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from jaxcontact.contact_laws import regularized_friction
from jaxcontact.planar import Mechanism
from jaxcontact.simulate import simulate
from jaxcontact.stepping import Penalty
from jaxcontact.stepping.kernels import RK4_NODES, ROSW_ALPHA, ROSW_GAMMA, ROSW_GAMMAS, ROSW_WEIGHTS
from jaxcontact.system import LagrangianSystem, RowForces

ALPHA, B = np.asarray(ROSW_ALPHA), np.asarray(ROSW_WEIGHTS)
G = ROSW_GAMMA * np.eye(4) + np.asarray(ROSW_GAMMAS)
ONE = np.ones(4)


def _R(z_explicit, z_implicit):
    """The step's amplification of y' = (λ_E + λ_W) y with W = λ_W: the explicit part λ_E, the part W takes."""
    z = z_explicit + z_implicit
    return 1 + z * B @ np.linalg.solve(np.eye(4) - ALPHA * z - G * z_implicit, ONE)


def test_tableau_is_rk4_with_order_3_for_any_w_and_l_stable():
    c = ALPHA @ ONE
    np.testing.assert_allclose(c, RK4_NODES, atol=0)
    np.testing.assert_allclose(B * 6, [1, 2, 2, 1], rtol=1e-15)
    # The W-method conditions to order 3 (linear problems, any W): bᵀG1 = bᵀαG1 = bᵀGc = bᵀG²1 = 0.
    for value in (B @ G @ ONE, B @ ALPHA @ G @ ONE, B @ G @ c, B @ G @ G @ ONE):
        assert abs(value) < 1e-15
    # L-stable with the exact Jacobian: R(∞) = 0; A-stable: |R| ≤ 1 on the imaginary axis.
    assert abs(_R(0.0, -1e12)) < 1e-10
    assert abs(1 - B @ np.linalg.solve(ALPHA + G, ONE)) < 1e-14
    assert max(abs(_R(0.0, 1j * y)) for y in np.logspace(-3, 6, 400)) <= 1 + 1e-12
    # W = 0: RK4's polynomial.
    z = 0.3 + 0.7j
    assert _R(z, 0.0) == pytest.approx(1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24, rel=1e-14)
    # Explicit eigenvalues up to 2.75 on the imaginary and negative real axes stay stable whatever W takes.
    for z_w in -np.concatenate([[0.0], np.logspace(-3, 7, 60)]):
        for z_e in (2.75j, 1.5j, -2.75, -1.0):
            assert abs(_R(z_e, z_w)) <= 1 + 1e-9, (z_e, z_w)


M, K = 1.0, 100.0


def _oscillator():
    """m ẍ = −k x − c(x) ẋ with c = c₀(1 + 5x²): the damping declared viscous (the step takes it implicitly,
    the spring explicitly)."""

    def law(q, w, p):
        return -p["c"] * (1 + 5 * q[0] ** 2) * w

    viscous = RowForces(lambda q, u, p: u, law)
    system = LagrangianSystem(
        n_dof=1,
        mass=lambda q, p: jnp.eye(1, dtype=q.dtype) * M,
        forces=lambda q, u, t, p: -K * q + law(q, u, p),
        viscous=viscous,
    )
    return system


def _final_error(c, dt, implicit):
    ref = solve_ivp(
        lambda t, y: [y[1], (-K * y[0] - c * (1 + 5 * y[0] ** 2) * y[1]) / M],
        (0, 1),
        [1.0, 0.0],
        method="Radau",
        rtol=1e-12,
        atol=1e-14,
    ).y[0, -1]
    n = int(round(1 / dt))
    tr = simulate(
        _oscillator(),
        {"c": jnp.asarray(c)},
        jnp.array([1.0]),
        jnp.array([0.0]),
        dt=dt,
        n_steps=n,
        scheme=Penalty(implicit=implicit, diagnostics=False),
        save_every=n,
    )
    return float(tr.q[-1, 0]) - ref


def test_order_three_with_the_damping_implicit_and_rk4_without():
    implicit = [abs(_final_error(1.0, dt, None)) for dt in (1e-2, 5e-3, 2.5e-3)]
    explicit = [abs(_final_error(1.0, dt, False)) for dt in (1e-2, 5e-3, 2.5e-3)]
    print("errors, implicit:", implicit, "RK4:", explicit)
    for e in (implicit, explicit):
        assert e[0] > e[1] > e[2] > 0
    assert all(6.0 < a / b < 10.0 for a, b in zip(implicit, implicit[1:]))  # order 3: 8 per halving
    assert all(12.0 < a / b < 20.0 for a, b in zip(explicit, explicit[1:]))  # order 4: 16


def test_stiff_damping_at_steps_rk4_cannot_take():
    # c = 1e4 N·s/m on 1 kg: hλ = 100 at dt = 1e-2, forty times RK4's limit.
    err = _final_error(1e4, 1e-2, None)
    print("stiff damping, dt 1e-2: error", err)
    assert abs(err) < 1e-9
    assert not np.isfinite(_final_error(1e4, 1e-2, False))


def _pushed_block():
    """A block resting on a compliant ground (its centre point), pushed sideways by 2 N, less than μN: it
    creeps at the regularized friction's speed (slip width 1e-6 m/s: a friction 'damping' μN/v_s ≈ 5e6 N·s/m)."""
    mech = Mechanism("pushed")
    block = mech.body("block", mass=1.0, inertia=0.1)
    ground = mech.line((0.0, 0.0), (0.0, 1.0))
    mech.point_contact(
        "floor",
        block,
        (0.0, 0.0),
        ground,
        friction=0.5,
        compliant=dict(stiffness=1e6, exponent=1.0, damping=0.0, slip_width=1e-6),
    )
    mech.gravity(9.81)
    mech.force(block, (2.0, 0.0))
    system, p = mech.build()
    q0 = jnp.array([0.0, -9.81e-6, 0.0])  # resting at the spring's equilibrium
    return system, p, q0


def test_stiff_regularized_friction_creeps_at_its_speed():
    system, p, q0 = _pushed_block()
    creep = brentq(lambda v: float(regularized_friction(v, 9.81, 0.5, "exponential", 1e-6, 0.0)) + 2.0, 0.0, 1e-5)
    tr = simulate(system, p, q0, jnp.zeros(3), dt=1e-4, n_steps=2000, scheme=Penalty(implicit=True), save_every=100)
    print("creep speed", creep, "block's speed", float(tr.u[-1, 0]))
    assert float(tr.u[-1, 0]) == pytest.approx(creep, rel=1e-5)
    assert Penalty(implicit=True).plan(system)["integrator"].startswith("rosenbrock-w")
    rk4 = simulate(system, p, q0, jnp.zeros(3), dt=1e-4, n_steps=2000, scheme=Penalty(), save_every=100)
    # RK4 at this step (hλ ≈ 300) rings: bounded by the friction's saturation, at tens to hundreds of times the speed.
    print("RK4's speeds:", np.asarray(rk4.u[-3:, 0]))
    assert (
        np.all(np.abs(np.asarray(rk4.u[-5:, 0])) > 10 * creep)
        and np.max(np.abs(np.asarray(rk4.u[-5:, 0]))) > 100 * creep
    )


def test_batched_steps_equal_single_ones_and_gradients_match_finite_differences():
    system, p, q0 = _pushed_block()
    scheme = Penalty(implicit=True)

    def final_speed(push_mu):
        return simulate(
            system, p | {"floor_friction": push_mu}, q0, jnp.zeros(3), dt=1e-4, n_steps=50, scheme=scheme, save_every=50
        ).u[-1, 0]

    mus = jnp.array([0.45, 0.5, 0.6])
    batched = jax.vmap(final_speed)(mus)
    for i, mu in enumerate(mus):
        assert float(batched[i]) == pytest.approx(float(final_speed(mu)), rel=1e-12, abs=1e-18)
    g = float(jax.grad(final_speed)(0.5))
    fd = float(final_speed(0.5 + 1e-6) - final_speed(0.5 - 1e-6)) / 2e-6
    print("d speed / d μ:", g, "finite differences:", fd)
    assert g == pytest.approx(fd, rel=1e-5)


def test_the_option_is_checked():
    with pytest.raises(ValueError, match="implicit = 'yes' must be None"):
        Penalty(implicit="yes")
    with pytest.raises(ValueError, match="not one of method 'tsit5'"):
        Penalty(implicit=True, method="tsit5")


def test_row_forms_of_the_contacts_and_films_give_their_generalized_forces():
    # Hᵀ F(q, H u) of the compliant contacts equals compliant_contact_forces' Q, and the films' that their loads
    # add to system.forces (the lubricated arm: six films, six frictional compliant joints; a state off centre).
    from jaxcontact.models import get_model
    from jaxcontact.system import compliant_contact_forces, compliant_contact_law

    m = get_model("flexible-arm-6-lubricated")
    dry = get_model("flexible-arm-6", contact="compliant")
    p = m.params
    q0, _ = m.initial_state(p)
    rng = np.random.default_rng(3)
    q = q0 + jnp.asarray(rng.normal(size=q0.shape) * 2e-5)
    u = jnp.asarray(rng.normal(size=q0.shape) * 0.05)

    def row_force(part):
        H = jax.jacfwd(lambda v: part.velocities(q, v, p))(jnp.zeros_like(u))
        return H.T @ part.law(q, part.velocities(q, u, p), p)

    Q = compliant_contact_forces(m.system, q, u, 0.0, p)[0]
    np.testing.assert_allclose(row_force(compliant_contact_law(m.system, 0.0)), Q, rtol=1e-10, atol=1e-10)
    films = m.system.forces(q, u, 0.0, p) - dry.system.forces(q, u, 0.0, {**dry.params, **p})
    assert float(jnp.max(jnp.abs(films))) > 1e-3  # the films do push
    np.testing.assert_allclose(row_force(m.system.viscous), films, rtol=1e-9, atol=1e-9)


def test_spatial_body_steps_through_its_velocity_map():
    # A ball striking its compliant, rough socket obliquely (quaternion coordinates: 7 coordinates, 6 velocities;
    # slip width 1e-4 m/s): the implicit step's velocities after the impact converge to RK4's at a tenth of the step
    # at third order. Measured: 1.7e-5 and 2.2e-6 at 1e-5 and 5e-6 s; RK4 at 1e-5 s: 2.6e-5.
    from jaxcontact.contact_laws import restitution_damping
    from tests.spatial.test_sphere_in_sphere import compliant_ball_in_socket

    v, e = 0.5, 0.9
    d, t = np.array([2.0, -1.0, 2.0]) / 3.0, np.array([1.0, 2.0, 0.0]) / np.sqrt(5.0)
    p = {"gravity": 0.0, "mass": 0.5, "ball": 0.04, "socket": 0.05, "friction": 0.2}
    p |= {"K": 1e8, "c": float(restitution_damping(1e8, e, v)), "w": 1e-4}
    _, system = compliant_ball_in_socket(stiffness="K", damping="c", slip_width="w")
    q0 = jnp.concatenate([jnp.asarray(0.009 * d), jnp.array([1.0, 0.0, 0.0, 0.0])])
    u0 = jnp.concatenate([jnp.asarray(v * d + 0.2 * t), jnp.zeros(3)])

    def final_u(implicit, dt):
        n = int(round(0.006 / dt))
        tr = simulate(system, p, q0, u0, dt=dt, n_steps=n, scheme=Penalty(implicit=implicit), save_every=n)
        return np.asarray(tr.u[-1])

    ref = final_u(False, 1e-6)
    errors = [np.abs(final_u(True, dt) - ref).max() for dt in (1e-5, 5e-6)]
    print("implicit step against RK4 at 1e-6 s:", errors)
    assert errors[0] < 5e-5 and errors[1] < errors[0] / 4

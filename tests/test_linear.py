"""The LTI shortcut (Siconos LagrangianLinearTIDS / LagrangianLinearTIR / NewtonImpact(Friction)NSL)."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.linear import linear_system
from jaxcontact.simulate import simulate
from jaxcontact.system import ContactLaws, LagrangianSystem

G, R, MASS, E = 9.81, 0.1, 1.0, 0.9
I_SPHERE = 0.4 * MASS * R**2

# Siconos' BouncingBallTS.py, line for line: q = (z, x, θ), LagrangianLinearTIDS(q0, v0, mass),
# setFExtPtr(weight), LagrangianLinearTIR(H=[[1, 0, 0]], b=[-R]), NewtonImpactNSL(e).
MASS_MATRIX = np.diag([MASS, MASS, I_SPHERE])
WEIGHT = np.array([-MASS * G, 0.0, 0.0])


def _general_ball():
    """The same ball written as a general system."""
    system = LagrangianSystem(
        n_dof=3,
        mass=lambda q, p: jnp.diag(jnp.stack([p["m"], p["m"], 0.4 * p["m"] * p["r"] ** 2])),
        forces=lambda q, u, t, p: jnp.stack([-p["m"] * p["g"], 0.0 * p["m"], 0.0 * p["m"]]),
        gaps=lambda q, t, p: q[:1] - p["r"],
        laws=lambda p: ContactLaws(jnp.reshape(p["e"], (1,)), jnp.zeros(1), jnp.zeros(1)),
        potential=lambda q, t, p: p["m"] * p["g"] * q[0],
    )
    params = {"m": jnp.asarray(MASS), "r": jnp.asarray(R), "g": jnp.asarray(G), "e": jnp.asarray(E)}
    return system, params


def test_linear_ball_equals_general_ball():
    lin, lp = linear_system(MASS_MATRIX, F=WEIGHT, H_N=[[1.0, 0.0, 0.0]], b_N=[-R], restitution=E)
    gen, gp = _general_ball()
    q0, u0 = jnp.array([1.0, 0.0, 0.0]), jnp.zeros(3)
    a = simulate(lin, lp, q0, u0, dt=5e-3, n_steps=1000)
    b = simulate(gen, gp, q0, u0, dt=5e-3, n_steps=1000)
    np.testing.assert_allclose(np.asarray(a.q), np.asarray(b.q), rtol=0, atol=1e-14)
    np.testing.assert_allclose(np.asarray(a.impulse_normal), np.asarray(b.impulse_normal), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(np.asarray(a.active), np.asarray(b.active))
    np.testing.assert_allclose(np.asarray(a.diagnostics.energy), np.asarray(b.diagnostics.energy), atol=1e-12)
    assert int(a.active.sum()) > 10


def test_linear_friction_sliding_sphere_starts_rolling_at_five_sevenths():
    """NewtonImpactFrictionNSL with H = [[1, 0, 0], [0, 1, −R]]: a sphere launched without spin
    slides, friction spins it up, and it rolls at 5/7 of its launch speed from t = 2 v₀ / (7 μ g)."""
    mu, v0 = 0.3, 2.0
    H = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, -R]])
    lin, lp = linear_system(MASS_MATRIX, F=WEIGHT, H_N=H[:1], b_N=[-R], H_T=H[1:], restitution=0.0, friction=mu)
    dt = 1e-3
    tr = simulate(lin, lp, jnp.array([R, 0.0, 0.0]), jnp.array([0.0, v0, 0.0]), dt=dt, n_steps=600)
    x_dot, spin = np.asarray(tr.u[:, 1]), np.asarray(tr.u[:, 2])
    t = np.asarray(tr.t)
    t_roll = 2 * v0 / (7 * mu * G)
    rolling = t > t_roll + dt
    np.testing.assert_allclose(x_dot[rolling], 5 / 7 * v0, rtol=1e-10)
    np.testing.assert_allclose(x_dot[rolling] - R * spin[rolling], 0.0, atol=1e-12)
    sliding = (t > dt) & (t < t_roll - dt)
    np.testing.assert_allclose(np.diff(x_dot)[sliding[1:]] / dt, -mu * G, rtol=1e-9)
    # stays on the ground
    np.testing.assert_allclose(np.asarray(tr.q[:, 0]), R, atol=1e-12)


def test_spring_is_stoermer_verlet_second_order():
    """M ü + K u = 0 (Siconos LagrangianLinearTIDS with K): error ∝ h² against cos(ω t)."""
    w = 3.0
    lin, lp = linear_system([[2.0]], K=[[2.0 * w**2]])
    errs = []
    for dt in (2e-2, 1e-2):
        tr = simulate(lin, lp, jnp.array([1.0]), jnp.array([0.0]), dt=dt, n_steps=500)
        t = np.asarray(tr.t)
        within = t <= 5.0  # the same interval for both steps
        errs.append(np.max(np.abs(np.asarray(tr.q[within, 0]) - np.cos(w * t[within]))))
    assert 3.6 < errs[0] / errs[1] < 4.4, errs
    # potential ½ K q² makes the energy diagnostic the oscillator's energy (bounded: symplectic)
    e = np.asarray(tr.diagnostics.energy)
    assert np.max(np.abs(e / e[0] - 1)) < 1e-3


def test_damped_oscillator_matches_exact_solution():
    """m ẍ + c ẋ + k x = 0 against x = e^{−ζωt}(cos ω_d t + ζω/ω_d sin ω_d t); the damping force
    uses u_A (explicit), so the error is first order in h."""
    lin, lp = linear_system([[1.0]], K=[[4.0]], C=[[0.5]])
    zw, wd = 0.25, np.sqrt(4.0 - 0.25**2)
    errs = []
    for dt in (2e-3, 1e-3):
        tr = simulate(lin, lp, jnp.array([1.0]), jnp.array([0.0]), dt=dt, n_steps=3000)
        t = np.asarray(tr.t)
        exact = np.exp(-zw * t) * (np.cos(wd * t) + zw / wd * np.sin(wd * t))
        within = t <= 3.0
        errs.append(np.max(np.abs(np.asarray(tr.q[within, 0]) - exact[within])))
    assert errs[1] < 1e-3 and 1.8 < errs[0] / errs[1] < 4.4, errs


def test_linear_system_input_errors():
    with pytest.raises(ValueError, match="M must be symmetric"):
        linear_system([[1.0, 2.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="positive definite"):
        linear_system([[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match=r"K must have shape \(2, 2\)"):
        linear_system(np.eye(2), K=np.eye(3))
    with pytest.raises(ValueError, match=r"H_N must have shape"):
        linear_system(np.eye(2), H_N=[[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match=r"restitution = \[1.2\] must lie in \[0, 1\]"):
        linear_system(np.eye(2), H_N=[[1.0, 0.0]], restitution=1.2)
    with pytest.raises(ValueError, match="without H_N"):
        linear_system(np.eye(2), friction=0.3)
    with pytest.raises(ValueError, match="F = .* must be finite"):
        linear_system(np.eye(2), F=[np.inf, 0.0])


@pytest.mark.parametrize("solver", ["nsgs", "lemke"])
def test_tangential_restitution_reverses_the_slip_velocity(solver):
    """NewtonImpactFrictionNSL(en, et, mu): an oblique impact that sticks leaves the contact point
    with slip −ε_T × its incoming slip and normal velocity −ε_N × incoming (Moreau–Jean's ξ)."""
    from jaxcontact.stepping import MoreauJean

    e_n, e_t, w, v = 0.5, 0.4, 0.3, 2.0
    H = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, -R]])
    lin, lp = linear_system(
        MASS_MATRIX, F=WEIGHT, H_N=H[:1], b_N=[-R], H_T=H[1:], restitution=e_n, tangential_restitution=e_t, friction=1.0
    )
    dt = 1e-3
    q0 = jnp.array([R + 0.4 * v * dt, 0.0, 0.0])  # reaches the ground within the first step's first half
    tr = simulate(lin, lp, q0, jnp.array([-v, w, 0.0]), dt=dt, n_steps=3, scheme=MoreauJean(solver=solver))
    assert bool(tr.active[1, 0]) and bool(tr.diagnostics.converged.all())
    u = np.asarray(tr.u[1])
    np.testing.assert_allclose(u[1] - R * u[2], -e_t * w, rtol=1e-10)
    np.testing.assert_allclose(u[0], e_n * v, rtol=1e-10)
    # the tangential impulse stays inside the friction cone (the contact sticks)
    assert abs(float(tr.impulse_tangent[1, 0])) < float(tr.impulse_normal[1, 0])

"""Event-driven acceleration-level scheme: stick–slip with μ0 ≠ μ, events, detachment, impacts, batches."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.stepping.event_driven import EventDriven
from jaxcontact.system import CompliantLaws, ContactLaws, LagrangianSystem

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
G = 9.81
SCHEME = EventDriven()


def _mass(q, p):
    return p["m"] * jnp.eye(2, dtype=q.dtype)


def _forces(q, u, t, p):
    """Gravity, a horizontal push growing at ``push_rate`` and a vertical pull growing at ``lift_rate``."""
    return jnp.stack([p["push_rate"] * t, p["lift_rate"] * t - p["m"] * G]).astype(q.dtype)


def _params(**kw):
    p = dict(m=1.0, push_rate=0.0, lift_rate=0.0, mu=0.2, mu0=0.3, K=1e6, c=1e3)
    p.update(kw)
    return {k: jnp.asarray(v, jnp.float64) for k, v in p.items()}


# A point block on the ground y = 0: q = (x, y), gap y, slip velocity ẋ.
RIGID = LagrangianSystem(
    n_dof=2,
    mass=_mass,
    forces=_forces,
    gaps=lambda q, t, p: q[1:2],
    slip_velocity=lambda q, u, t, p: u[0:1],
    laws=lambda p: ContactLaws(jnp.zeros(1), jnp.zeros(1), jnp.reshape(p["mu"], (1,)), jnp.reshape(p["mu0"], (1,))),
)

# The same block on a compliant ground (F_N = K δ + c δ δ̇, n = 1): only friction is in the LCP.
COMPLIANT = LagrangianSystem(
    n_dof=2,
    mass=_mass,
    forces=_forces,
    compliant_gaps=lambda q, t, p: q[1:2],
    compliant_slip_velocity=lambda q, u, t, p: u[0:1],
    compliant_laws=lambda p: CompliantLaws(
        *(jnp.reshape(p[k], (1,)) for k in ("K",)),
        jnp.ones(1),
        jnp.reshape(p["c"], (1,)),
        jnp.reshape(p["mu"], (1,)),
        jnp.reshape(p["mu0"], (1,)),
        jnp.full((1,), 1e-3),
        jnp.zeros(1),
    ),
)


def _run(system, p, u0=(0.0, 0.0), q0=(0.0, 0.0), dt=0.01, n_steps=300):
    """One run; the tests share dt and n_steps so they share one compiled program per system."""
    return simulate(system, p, jnp.asarray(q0), jnp.asarray(u0), dt=dt, n_steps=n_steps, scheme=SCHEME)


def test_pushed_block_sticks_below_static_friction_and_slips_within_one_step():
    """F = r t: stuck while F < μ0 m g, slipping in the step that crosses it, then decelerated by μ (not μ0)."""
    h, rate = 0.01, 1.0
    p = _params(push_rate=rate)
    tr = _run(RIGID, p, dt=h)
    t, v = np.asarray(tr.t), np.asarray(tr.u[:, 0])
    t_slip = 0.3 * G / rate  # μ0 m g / r
    assert np.all(np.abs(v[t <= t_slip]) < 1e-12)
    assert np.abs(np.asarray(tr.q[:, 1])).max() < 1e-12  # persistent rigid contact stays closed
    first = np.argmax(t > t_slip)
    assert v[first] > 1e-6 and t[first] - t_slip < h  # slips in the step that crosses the threshold
    # While stuck, friction balances the push exactly (λ_T = −F).
    stuck = (t > 0) & (t < t_slip - h)
    F_mid = rate * (t[stuck] - h / 2)
    np.testing.assert_allclose(np.asarray(tr.impulse_tangent[stuck, 0]) / h, -F_mid, rtol=1e-9, atol=1e-12)
    # Sliding with dynamic μ from the located onset on: v(t) = (t² − t_s²) r / 2m − μ g (t − t_s).
    late = t > t_slip
    v_exact = rate * (t[late] ** 2 - t_slip**2) / 2 - 0.2 * G * (t[late] - t_slip)
    np.testing.assert_allclose(v[late], v_exact, atol=1e-12)


def test_slip_onset_is_located_in_the_step_so_mu0_has_its_analytic_gradient():
    """x(T) of the pushed block depends on μ0 through the onset t_s = μ0 m g / r only:
    dx/dμ0 = (g/r) (μ g − r t_s)(T − t_s) (m = 1). Onsets decided at step starts would make
    x(μ0) a staircase with ∂x/∂μ0 ≈ 0; the located onset gives the exact derivative."""
    h, rate, n = 0.01, 1.0, 300
    T = n * h

    def x_end(mu0):
        return _run(RIGID, _params(push_rate=rate, mu0=mu0), dt=h, n_steps=n).q[-1, 0]

    grad = jax.jit(jax.grad(x_end))
    for mu0 in (0.2934, 0.2957, 0.3):  # onsets at 10 %, 33 % and 43 % of their steps
        t_s = mu0 * G / rate
        np.testing.assert_allclose(grad(jnp.asarray(mu0)), G / rate * (0.2 * G - rate * t_s) * (T - t_s), rtol=1e-9)


@pytest.mark.parametrize("system", [RIGID, COMPLIANT], ids=["rigid", "compliant"])
def test_sliding_block_stops_at_the_analytic_time_and_distance_and_stays_stuck(system):
    """v0 on a rough plane: decelerates at μ g, stops at v0/(μ g) after v0²/(2 μ g), then sticks."""
    h, v0, mu = 0.01, 1.0, 0.2
    p = _params()
    q0 = (0.0, -G / 1e6) if system is COMPLIANT else (0.0, 0.0)  # compliant: start at the static penetration
    tr = _run(system, p, u0=(v0, 0.0), q0=q0, dt=h)
    t, x, v = np.asarray(tr.t), np.asarray(tr.q[:, 0]), np.asarray(tr.u[:, 0])
    t_stop = v0 / (mu * G)
    rtol = 1e-12 if system is RIGID else 1e-5  # compliant: F_N oscillates slightly about m g
    np.testing.assert_allclose(x[-1], v0**2 / (2 * mu * G), rtol=rtol)
    np.testing.assert_allclose(v[t < t_stop - h], v0 - mu * G * t[t < t_stop - h], rtol=rtol)
    assert np.all(np.abs(v[t > t_stop]) < 1e-12)
    np.testing.assert_allclose(x[t > t_stop], x[-1], atol=1e-12)
    if system is RIGID:
        # Event location: the step holding the stop carries friction −μ m g only for τ h, so
        # t_event = t_A + τ h with τ = −P_T / (μ m g h); it matches v0/(μ g) far below one step.
        i = int(np.argmax(t > t_stop))
        tau = -float(tr.impulse_tangent[i, 0]) / (mu * G * h)
        assert 0.0 < tau < 1.0
        assert abs(t[i - 1] + tau * h - t_stop) < 1e-9 * h


@pytest.mark.slow  # ~10 s: reverse mode through 80 event-driven steps compiles slowly
def test_stopping_distance_gradient_through_the_event():
    """d(stopping distance)/dμ = −v0²/(2 μ² g): the located event time carries the derivative."""

    def distance(mu):
        return _run(RIGID, _params(mu=mu), u0=(1.0, 0.0), n_steps=80).q[-1, 0]

    g = jax.grad(distance)(jnp.asarray(0.2))
    np.testing.assert_allclose(g, -1.0 / (2 * 0.2**2 * G), rtol=1e-9)


def test_rigid_contact_detaches_when_the_lcp_says_so():
    """A vertical pull r t: λ_N = m g − r t until t_d = m g / r, then the block lifts, y = r (t − t_d)³ / 6m."""
    h, rate = 0.01, 5.0
    tr = _run(RIGID, _params(lift_rate=rate), dt=h)
    t, y = np.asarray(tr.t), np.asarray(tr.q[:, 1])
    t_d = G / rate
    before = t < t_d - h
    assert np.all(np.abs(y[before]) < 1e-12)
    np.testing.assert_allclose(
        np.asarray(tr.impulse_normal[before, 0])[1:] / h, G - rate * (t[before][1:] - h / 2), rtol=1e-9
    )
    after = t > t_d + h
    assert np.all(~np.asarray(tr.active[after, 0]))
    # The stage LCPs release the contact inside the step (λ_N = 0 once the pull exceeds m g);
    # RK4 across that kink leaves a velocity error O(r h²), so y drifts by at most r h² (t − t_d).
    y_exact = rate * (t[after] - t_d) ** 3 / 6
    assert np.all(np.abs(y[after] - y_exact) <= rate * h**2 * (t[after] - t_d))


def test_jit_vmap_over_mu_mu0_and_stiffness_matches_single_runs():
    """A batch of (μ, μ0, K) on the compliant block equals the single runs, under jit."""
    mus, mu0s, Ks = np.array([0.1, 0.2, 0.2]), np.array([0.15, 0.25, 0.28]), np.array([1e5, 1e6, 3e6])
    base = _params(push_rate=1.0)
    batch = {k: jnp.broadcast_to(v, (3,)) for k, v in base.items()}
    batch.update(mu=jnp.asarray(mus), mu0=jnp.asarray(mu0s), K=jnp.asarray(Ks))
    q0 = jnp.stack([jnp.zeros(3), -G / jnp.asarray(Ks)], axis=1)
    tr = simulate(COMPLIANT, batch, q0, jnp.zeros((3, 2)), dt=0.01, n_steps=300, scheme=SCHEME)
    assert tr.q.shape == (3, 301, 2) and bool(np.all(tr.diagnostics.converged))
    for i in range(3):
        one = _run(COMPLIANT, {k: v[i] for k, v in batch.items()}, q0=q0[i], dt=0.01, n_steps=300)
        np.testing.assert_allclose(tr.q[i], one.q, rtol=1e-10, atol=1e-14)
    # The static coefficient sets when each slips: the first step with motion starts within one step of μ0 g.
    v = np.asarray(tr.u[:, :, 0])
    t = np.asarray(tr.t[0])
    for i in range(3):
        t_first = t[np.argmax(np.abs(v[i]) > 1e-9)]
        assert mu0s[i] * G <= t_first <= mu0s[i] * G + 0.02


def test_bad_options_raise():
    with pytest.raises(ValueError, match="root_iterations"):
        EventDriven(root_iterations=0)
    with pytest.raises(ValueError, match="slip_tol"):
        EventDriven(slip_tol=0.0)


def _pendulum_angle(ts, l, eps, g=G):
    """A bar pinned at one end, released horizontal, its free end striking a floor 0.8 l below the pin
    (frictionless Newton impact ω⁺ = −ε ω⁻): the angle by scipy's ODE solver with event location."""
    from scipy.integrate import solve_ivp

    def rhs(t, y):
        return [y[1], -(1.5 * g / l) * np.cos(y[0])]

    def hit(t, y):
        return y[0] + np.arcsin(0.8)

    hit.terminal, hit.direction = True, -1
    before = solve_ivp(rhs, (0.0, 1.0), [0.0, 0.0], events=hit, rtol=1e-12, atol=1e-12, dense_output=True)
    t_hit, (a, w) = before.t_events[0][0], before.y_events[0][0]
    after = solve_ivp(rhs, (t_hit, 1.0), [a, -eps * w], rtol=1e-12, atol=1e-12, dense_output=True)
    return np.where(ts < t_hit, before.sol(np.minimum(ts, t_hit))[0], after.sol(np.maximum(ts, t_hit))[0])


def test_impact_is_located_inside_the_step_so_the_motion_follows_the_bar_length_continuously():
    # Lengths 5e-4 apart move the impact across a step boundary (dt = 1 ms): treated at the next
    # step start it would be late by up to a step (an angle error ~1e-2); located, the angle
    # matches the reference to the RK4/Baumgarte error.
    from jaxcontact.models import get_model

    model = get_model(os.path.join(EXAMPLES, "user_model.py") + ":pendulum", friction=0.0)
    lengths = jnp.asarray([0.4, 0.4005, 0.401])

    def angle(l):
        p = dict(model.params, l=l)
        q0, u0 = model.initial_state(p)
        return simulate(model.system, p, q0, u0, dt=1e-3, n_steps=400, scheme=SCHEME).q[:, 2]

    ts = np.arange(401) * 1e-3
    for l, a in zip(np.asarray(lengths), np.asarray(jax.jit(jax.vmap(angle))(lengths))):
        assert np.max(np.abs(a - _pendulum_angle(ts, l, float(model.params["restitution"])))) < 1e-6, l

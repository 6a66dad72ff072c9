"""Penalty / ODE scheme: compliant → rigid, regularized-friction creep, driven joints, batches, gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.contact_laws import restitution_damping
from jaxcontact.models import bouncing_ball
from jaxcontact.planar import Mechanism
from jaxcontact.simulate import simulate, simulate_model
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.penalty import Penalty

G = 9.81


def _ball():
    """A ball (radius r) dropped on compliant ground (Hertz n = 1.5, Hunt–Crossley damping)."""
    mech = Mechanism("compliant-ball")
    ball = mech.body("ball", mass="m", inertia="0.4*m*r**2")
    mech.gravity("g")
    ground = mech.line(point=(0.0, 0.0), normal=(0.0, 1.0))
    mech.circle_contact("floor", ball, (0.0, 0.0), "r", ground, compliant=dict(stiffness="K", damping="c"))
    return mech.build({"m": 1.0, "r": 0.1, "g": G, "K": 1e6, "c": 0.0})


def _rebound_height(q_y, t, t_after):
    """Highest centre height after time t_after (the first rebound's apex)."""
    return float(np.max(np.asarray(q_y)[np.asarray(t) > t_after]))


def test_compliant_ball_converges_to_rigid_rebound():
    """Rebound apex of a ball dropped from H = 1 m with ε = 0.8 matched by the exact damping relation.

    Rigid truth: ε² H = 0.64 m above the contact (Moreau–Jean on the rigid
    bouncing-ball model gives it too). The compliant error comes from gravity
    acting during the contact and shrinks as the contact stiffens.
    """
    system, p = _ball()
    H, eps, r = 1.0, 0.8, 0.1
    v_impact = np.sqrt(2 * G * H)
    Ks = jnp.array([1e5, 1e6, 1e7])
    B = Ks.shape[0]
    batch = {k: jnp.full(B, v) for k, v in p.items()}
    batch["K"], batch["c"] = Ks, restitution_damping(Ks, eps, v_impact)
    q0 = jnp.tile(jnp.array([0.0, H + r, 0.0]), (B, 1))
    tr = simulate(system, batch, q0, jnp.zeros_like(q0), dt=2e-5, n_steps=60000, scheme=Penalty(), save_every=20)
    t_impact = np.sqrt(2 * H / G)
    apex = np.array([_rebound_height(tr.q[i, :, 1], tr.t[i], t_impact + 0.05) - r for i in range(B)])
    err = np.abs(apex - eps**2 * H)
    assert np.all(np.diff(err) < 0), apex  # monotone convergence with K
    assert err[-1] < 2.5e-3, apex  # 0.4 % of ε²H at K = 1e7 (0.627, 0.635, 0.638 for K = 1e5, 1e6, 1e7)
    assert np.all(tr.diagnostics.converged)

    rigid = simulate_model(bouncing_ball.model(restitution=eps, height=H), dt=1e-4, t_final=1.3)
    apex_mj = _rebound_height(rigid.q[:, 0], rigid.t, t_impact + 0.05)
    np.testing.assert_allclose(apex_mj, eps**2 * H, atol=2e-3)
    assert abs(apex[-1] - apex_mj) < abs(apex[0] - apex_mj)


def test_elastic_contact_conserves_energy_through_impacts():
    """Undamped Hertz contact (c = 0): kinetic + potential + contact elastic energy is conserved through
    three bounces (RK4 error only), while kinetic + potential alone dips during each contact."""
    system, p = _ball()
    q0 = jnp.array([0.0, 0.3, 0.0])
    tr = simulate(
        system, {**p, "K": jnp.asarray(1e6)}, q0, jnp.zeros(3), dt=1e-5, n_steps=150000, scheme=Penalty(), save_every=10
    )
    e = np.asarray(tr.diagnostics.energy)
    assert np.ptp(e) < 1e-7 * e[0]
    assert int(np.sum(np.diff(np.asarray(tr.active[:, 0]).astype(int)) == 1)) >= 3  # three contacts at least
    delta = np.maximum(0.1 - np.asarray(tr.q[:, 1]), 0.0)
    spring = 1e6 * delta**2.5 / 2.5
    assert spring.max() > 1e-3 * e[0]  # the spring term really carries energy at the contacts


def _incline(alpha, model="exponential"):
    """A square block on a plane tilted by alpha (gravity tilted instead), two compliant corners."""
    mech = Mechanism("incline")
    blk = mech.body("block", mass="m", inertia="m*a**2/6")
    mech.gravity("g", direction=(float(np.sin(alpha)), -float(np.cos(alpha))))
    ground = mech.line(point=(0.0, 0.0), normal=(0.0, 1.0))
    law = dict(stiffness="K", damping="c", exponent=1.0, slip_width="w")
    for name, x in (("left", "-a/2"), ("right", "a/2")):
        mech.point_contact(name, blk, (x, "-a/2"), ground, friction="mu", compliant=law)
    return mech.build(
        {"m": 1.0, "a": 0.1, "g": G, "K": 1e6, "c": 2e3, "mu": 0.5, "w": 1e-3}, friction_regularization=model
    )


@pytest.mark.parametrize("model", ["exponential", "linear"])
def test_regularized_friction_creeps_on_incline(model):
    """μ = 0.5 > tan α = 0.203 would hold the block (rigid Coulomb); the regularized law creeps.

    Steady creep where |s(v)| = tan α / μ: v = −w ln(1 − tan α/μ) (exponential) or
    v = w tan α/μ (linear with v0 = 0) — proportional to the width w.
    """
    alpha = 0.2
    system, p = _incline(alpha, model)
    widths = jnp.array([1e-2, 3e-3, 1e-3])
    B = widths.shape[0]
    batch = {k: jnp.full(B, v) for k, v in p.items()}
    batch["w"] = widths
    settle = G * np.cos(alpha) / 2e6  # each corner carries half the normal load
    q0 = jnp.tile(jnp.array([0.0, 0.05 - settle, 0.0]), (B, 1))
    # The law's slope μ F_N / w is a stiff damper: RK4 is accurate for h μ F_N / (m w) ≲ 0.3 (h = 5e-5 at w = 1e-3).
    tr = simulate(system, batch, q0, jnp.zeros_like(q0), dt=5e-5, n_steps=20000, scheme=Penalty(), save_every=200)
    creep = np.asarray(tr.u[:, -1, 0])
    ratio = np.tan(alpha) / 0.5
    expect = -np.asarray(widths) * np.log(1 - ratio) if model == "exponential" else np.asarray(widths) * ratio
    np.testing.assert_allclose(creep, expect, rtol=1e-4)
    assert np.all(creep > 0) and np.all(np.diff(creep) < 0)
    # The distance crept over the last half second shrinks with the width too.
    dist = np.asarray(tr.q[:, -1, 0] - tr.q[:, 50, 0])
    np.testing.assert_allclose(dist, 0.5 * expect, rtol=2e-2)


def test_driven_bar_multiplier_is_the_driving_torque():
    """A bar hinged at one end, driven at θ = ω t under gravity: λ of the driver row = m g (l/2) cos θ.

    Constant ω means no angular acceleration, so the motor balances gravity's
    moment about the hinge; Baumgarte keeps ‖Φ‖ at rounding level.
    """
    mech = Mechanism("driven-bar")
    bar = mech.body("bar", mass="m", inertia="m*l**2/12")
    mech.revolute(bar, ("-l/2", 0.0))
    mech.driver(bar, "theta", "omega*t")
    mech.gravity("g")
    system, p = mech.build({"m": 2.0, "l": 0.6, "omega": 3.0, "g": G})
    omega, l, m = 3.0, 0.6, 2.0
    q0 = jnp.array([l / 2, 0.0, 0.0])
    u0 = jnp.array([0.0, omega * l / 2, omega])
    scheme = Penalty()
    tr = simulate(system, p, q0, u0, dt=1e-3, n_steps=2000, scheme=scheme, save_every=10)
    # RK4's truncation error feeds the drift; Baumgarte (α = β = 0.1/h) holds it at a small plateau.
    phi = np.asarray(tr.diagnostics.phi)
    assert phi.max() < 1e-6 and phi[-1] < 1.01 * phi[100]
    dyn = jax.vmap(lambda q, u, t: scheme.dynamics(system, p, q, u, t, 1e-3))(tr.q, tr.u, tr.t)
    torque = dyn.multipliers[:, -1]  # the driver is the last constraint row
    np.testing.assert_allclose(torque, m * G * l / 2 * np.cos(omega * np.asarray(tr.t)), rtol=0, atol=1e-4)
    np.testing.assert_allclose(dyn.acceleration[:, 2], 0.0, atol=1e-8)


def test_batched_run_equals_single_runs_over_mu_and_K():
    """jit + vmap over a batch of (μ, K): every sample equals its own single run."""
    system, p = _incline(0.3)
    mus, Ks = jnp.array([0.2, 0.4, 0.6]), jnp.array([5e5, 1e6, 2e6])
    batch = {k: jnp.full(3, v) for k, v in p.items()}
    batch["mu"], batch["K"] = mus, Ks
    q0 = jnp.tile(jnp.array([0.0, 0.05, 0.0]), (3, 1))
    kw = dict(dt=1e-4, n_steps=2000, scheme=Penalty(), save_every=100)
    tr = simulate(system, batch, q0, jnp.zeros_like(q0), **kw)
    for i in range(3):
        pi = jax.tree.map(lambda x: x[i], batch)
        one = simulate(system, pi, q0[i], jnp.zeros(3), **kw)
        np.testing.assert_allclose(tr.q[i], one.q, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(tr.impulse_normal[i], one.impulse_normal, rtol=1e-10, atol=1e-13)
    # μ = 0.2 < tan 0.3 = 0.31 slides (½ g (sin α − μ cos α) t² = 0.0205 m); μ = 0.6 only creeps
    # (mostly while the normal load settles from the drop onto the springs).
    np.testing.assert_allclose(tr.q[0, -1, 0], 0.5 * G * (np.sin(0.3) - 0.2 * np.cos(0.3)) * 0.2**2, rtol=0.05)
    assert float(tr.q[0, -1, 0]) > 5 * float(tr.q[2, -1, 0])
    # The reported impulses add up to the weight's normal component over the run (equilibrium).
    total = np.asarray(jnp.sum(tr.impulse_normal[2], axis=(0, 1)))
    np.testing.assert_allclose(total, G * np.cos(0.3) * 0.2, rtol=2e-2)


def test_gradient_of_sliding_distance_matches_fd():
    """d(distance slid in 0.2 s)/dμ through the whole RK4 run, against central differences."""
    system, p = _incline(0.3)
    q0 = jnp.array([0.0, 0.05 - G * np.cos(0.3) / 2e6, 0.0])

    def dist(mu):
        tr = simulate(
            system, {**p, "mu": mu}, q0, jnp.zeros(3), dt=1e-4, n_steps=2000, scheme=Penalty(), save_every=2000
        )
        return tr.q[-1, 0]

    mu = jnp.asarray(0.15)
    g = jax.grad(dist)(mu)
    h = 1e-6
    fd = (dist(mu + h) - dist(mu - h)) / (2 * h)
    assert np.isfinite(g)
    np.testing.assert_allclose(g, fd, rtol=1e-5)
    # Analytic for sliding: x = ½ g (sin α − μ cos α) t², so dx/dμ ≈ −½ g cos α t².
    np.testing.assert_allclose(g, -0.5 * G * np.cos(0.3) * 0.2**2, rtol=2e-2)


def test_penalty_rejects_rigid_contacts_and_bad_options():
    system, p = bouncing_ball.SYSTEM, bouncing_ball.model().params
    with pytest.raises(ValueError, match="compliant contacts only"):
        simulate(system, p, jnp.array([1.0]), jnp.array([0.0]), dt=1e-3, n_steps=2, scheme=Penalty())
    with pytest.raises(ValueError, match="friction = 'coulomb'"):
        Penalty(friction="coulomb")
    with pytest.raises(ValueError, match="method = 'euler'"):
        Penalty(method="euler")
    system, p = _incline(0.2)
    with pytest.raises(ValueError, match="compliant contact law stiffness"):
        simulate(
            system,
            {**p, "K": jnp.asarray(-1.0)},
            jnp.array([0.0, 0.05, 0.0]),
            jnp.zeros(3),
            dt=1e-3,
            n_steps=2,
            scheme=Penalty(),
        )
    with pytest.raises(TypeError, match="must be a jaxcontact.stepping.Scheme"):
        simulate(system, p, jnp.array([0.0, 0.05, 0.0]), jnp.zeros(3), dt=1e-3, n_steps=2, scheme=object())
    with pytest.raises(ValueError, match="moreau-jean scheme treats rigid contacts only.*compliant contacts"):
        simulate(system, p, jnp.array([0.0, 0.05, 0.0]), jnp.zeros(3), dt=1e-3, n_steps=2, scheme=MoreauJean())


@pytest.mark.parametrize("method", ["tsit5", pytest.param("kvaerno5", marks=pytest.mark.slow)])
def test_adaptive_methods_match_rk4(method):
    """Adaptive diffrax solves over output steps of 1 ms reproduce the fine-step RK4 rebound apex and the
    impulse, batched over two stiffnesses (inner steps only where the ball is in contact)."""
    system, p = _ball()
    Ks = jnp.array([1e6, 1e7])
    batch = {k: jnp.full(2, v) for k, v in p.items()}
    batch["K"], batch["c"] = Ks, restitution_damping(Ks, 0.8, np.sqrt(2 * G))
    q0 = jnp.tile(jnp.array([0.0, 1.1, 0.0]), (2, 1))
    ref = simulate(system, batch, q0, jnp.zeros_like(q0), dt=2e-5, n_steps=60000, scheme=Penalty(), save_every=50)
    ada = simulate(
        system,
        batch,
        q0,
        jnp.zeros_like(q0),
        dt=1e-3,
        n_steps=1200,
        scheme=Penalty(method=method, rtol=1e-8, atol=1e-10),
    )
    assert np.all(ada.diagnostics.converged)
    for i in range(2):
        apex = [_rebound_height(tr.q[i, :, 1], tr.t[i], 0.5) for tr in (ref, ada)]
        np.testing.assert_allclose(apex[1], apex[0], atol=1e-5)
    np.testing.assert_allclose(
        np.sum(ada.impulse_normal, axis=(1, 2)), np.sum(ref.impulse_normal, axis=(1, 2)), rtol=1e-6
    )
    steps = np.asarray(ada.diagnostics.iterations)
    assert steps.max() > 5 and np.median(steps) <= 2  # refined at the impact only

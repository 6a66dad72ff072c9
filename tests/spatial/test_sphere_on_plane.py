"""A sphere on a rough plane (spatial body, one Coulomb cone in Moreau–Jean) against the analytic solution.

Every forward run uses the same grid (dt = 1e-4, 6 000 steps), so one compiled program serves them all.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.models import sphere_on_plane as sop
from jaxcontact.simulate import simulate_model

DT, T_FINAL = 1e-4, 0.6


def _run(**overrides):
    m = get_model("sphere-on-plane", **overrides)
    return m, simulate_model(m, dt=DT, t_final=T_FINAL)


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # t* = 2 v0 / (7 μ g), v = 5/7 v0
        {"spin": -10.0},  # backspin: longer slip
        {"spin": 40.0},  # overspin: friction pushes forward
        {"slope_deg": 10.0, "friction": 0.3, "spin": 5.0},  # incline: then rolls accelerating at 5/7 g sin α
    ],
    ids=["flat", "backspin", "overspin", "incline"],
)
def test_slip_then_roll_matches_the_analytic_solution(overrides):
    m, traj = _run(**overrides)
    p = m.params
    t = np.asarray(traj.t)
    slip = np.asarray(sop.slip_speed(traj.u, p))
    speed = np.asarray(sop.down_slope_speed(traj.u, p))
    t_star, v_star = sop.slip_to_roll(p)
    assert 0.05 < t_star < T_FINAL - 0.1
    rolling = np.flatnonzero(np.abs(slip) < 1e-10)
    # Slipping stops within one step of t*, and never starts again (no creep).
    assert abs(t[rolling[0]] - t_star) <= DT
    assert np.all(np.abs(slip[rolling[0] :]) < 1e-10)
    # The speed follows the analytic law, the final one to 1e-6 relative.
    exact = sop.analytic_speed(p, t)
    assert abs(speed[-1] - exact[-1]) <= 1e-6 * abs(exact[-1])
    assert np.max(np.abs(speed - exact)) < 1e-6
    # On the plane throughout: no sinking, no lift-off.
    assert np.max(np.abs(np.asarray(m.system.gaps(traj.q[-1], traj.t[-1], p)))) < 1e-12
    if not overrides:
        assert abs(speed[-1] - 5.0 / 7.0 * float(p["speed"])) <= 1e-6 * float(p["speed"])
    assert np.all(np.asarray(traj.diagnostics.converged))


def test_bounces_reach_the_restitution_heights():
    """Dropped from 0.2 m with ε = 0.7, no speed: the centre rebounds to ε² · 0.2 above the plane, then ε⁴ · 0.2."""
    m, traj = _run(drop=0.2, restitution=0.7, speed=0.0)
    gap = np.asarray(traj.q[:, 2]) - float(m.params["radius"])
    hits = np.flatnonzero(np.asarray(traj.impulse_normal[:, 0]) > 1e-9)
    first, second = hits[0], hits[hits > hits[0] + 10][0]
    assert abs(gap[first:second].max() - 0.49 * 0.2) < 1e-4
    assert abs(gap[second:].max() - 0.49**2 * 0.2) < 1e-4
    assert abs(traj.t[first] - np.sqrt(2 * 0.2 / 9.81)) <= DT


def test_batch_equals_single_runs():
    values = {"friction": [0.1, 0.2, 0.4], "spin": [0.0, -10.0, 25.0], "slope_deg": [0.0, 5.0, 15.0]}
    m = get_model("sphere-on-plane")
    batch = {k: jnp.broadcast_to(v, (3,)) for k, v in m.params.items()}
    batch.update({k: jnp.asarray(v) for k, v in values.items()})
    traj = simulate_model(m, params=batch, dt=DT, t_final=T_FINAL, batched=True)
    for i in range(3):
        _, one = _run(**{k: v[i] for k, v in values.items()})
        # Equal up to the rounding of a vectorised evaluation (a few ulps of |u| ≈ 30).
        assert np.max(np.abs(traj.q[i] - one.q)) < 1e-13
        assert np.max(np.abs(traj.u[i] - one.u)) < 1e-12
        assert np.array_equal(traj.active[i], one.active)


@pytest.mark.slow
def test_gradients_match_finite_differences_and_the_analytic_slope():
    """While slipping on the flat, x(t) = v0 t − ½ μ g t²: ∂x/∂μ = −½ g t² at t = 0.2 s < t* (also by central
    differences); after the bounce from a drop, the peak height ε² · drop gives ∂/∂ε = 2 ε · drop."""
    m = get_model("sphere-on-plane")
    row = 2000  # t = 0.2 s

    def x_at(mu):
        p = {**m.params, "friction": mu}
        return simulate_model(m, params=p, dt=DT, t_final=T_FINAL).q[row, 0]

    mu = jnp.asarray(0.2)
    g = jax.grad(x_at)(mu)
    eps = 1e-5
    fd = (x_at(mu + eps) - x_at(mu - eps)) / (2 * eps)
    assert np.isfinite(g)
    assert abs(g - fd) < 1e-6 * abs(fd)
    assert abs(g - (-0.5 * 9.81 * 0.2**2)) < 1e-8

    # Restitution: the height 0.35 s after the drop (between the first and second impacts, t₁ = 0.202 s).
    row = 3500

    def height(e):
        p = {**m.params, "restitution": e, "drop": jnp.asarray(0.2), "speed": jnp.asarray(0.0)}
        return simulate_model(m, params=p, dt=DT, t_final=T_FINAL).q[row, 2]

    e = jnp.asarray(0.7)
    g = jax.grad(height)(e)
    fd = (height(e + eps) - height(e - eps)) / (2 * eps)
    assert np.isfinite(g) and abs(g - fd) < 1e-6 * abs(fd)
    t1 = np.sqrt(2 * 0.2 / 9.81)
    assert abs(g - 9.81 * t1 * (0.35 - t1)) < 2e-3 * abs(g)  # ∂/∂ε of ε v₁ (t − t₁), v₁ = g t₁

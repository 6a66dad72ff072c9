"""Gradients through spatial rigid impacts (Moreau–Jean on Coulomb cones) w.r.t. clearance, restitution and friction.

A ball in a fixed spherical socket (clearance c = socket − ball radius), no gravity: free flight, an impact, free
flight. The impacts are located inside the step (``impact_location="interpolated"``), so the position at a time
after an impact moves continuously with c (with impacts on the grid it is a staircase in c: zero derivative,
jumps). Truths: the closed-form flight (radial and oblique impacts) and central finite differences.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.stepping.moreau_jean import MoreauJean
from tests.spatial.test_sphere_in_sphere import SYSTEM, P, _q

LOCATED = MoreauJean(impact_location="interpolated", diagnostics=False)
DT, N = 1e-3, 30
T = N * DT
SPEED = 0.5
BALL = P["ball"]


def ball_at_end(x, q0, v0):
    """Centre at T of the ball launched at q0 with velocity v0, for x = (clearance, restitution, friction)."""
    c, e, mu = x
    p = {**P, "socket": BALL + c, "restitution": e, "friction": mu}
    traj = simulate(SYSTEM, p, _q(q0), jnp.concatenate([v0, jnp.zeros(3)]), dt=DT, n_steps=N, scheme=LOCATED)
    return traj.q[-1, :3]


END = jax.jit(ball_at_end)
JAC_REV = jax.jit(jax.jacrev(ball_at_end))
JAC_FWD = jax.jit(jax.jacfwd(ball_at_end))


def central_differences(x, q0, v0, h):
    """∂(centre at T)/∂x by the fourth-order central stencil, one column per parameter.

    Fourth order because the position is strongly curved in c (the impact normal turns with it): the
    second-order stencil's truncation error is 2e-8 at h = 1e-6 on the oblique impact, the fourth-order
    one's is below its rounding, ~ε |x| / h = 2e-12; larger h would cross the next grid node with t₁."""

    def column(ei):
        f = lambda k: np.asarray(END(x + k * h * ei, q0, v0))
        return (8.0 * (f(1) - f(-1)) - (f(2) - f(-2))) / (12.0 * h)

    return np.stack([column(ei) for ei in np.eye(3)], axis=1)


RADIAL = (jnp.zeros(3), SPEED * jnp.asarray([1.0, 2.0, -2.0]) / 3.0)  # from the centre: a head-on impact
OBLIQUE = (jnp.asarray([0.0, 0.006, 0.0]), SPEED * jnp.asarray([0.8, 0.0, 0.6]))  # 6 mm off the line of flight


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_an_impact_on_a_grid_node_is_located_like_its_neighbours():
    """c = 0.01 at v = 0.5: the ball reaches the socket at t₁ = 20 ms, exactly the end of step 20, where the gap is
    0 to rounding. That impact is located (at the next step's start) like those of c ± 1e-9 around it, not
    applied by the step's θ-point law (which moved the ball 0.425 h too far)."""
    c, e = 0.01, 0.7
    q0, v0 = RADIAL
    d = np.asarray(v0) / SPEED
    ends = [np.asarray(END(jnp.asarray([c + dc, e, 0.3]), q0, v0)) for dc in (-1e-9, 0.0, 1e-9)]
    assert abs(ends[1] @ d - (c * (1 + e) - e * SPEED * T)) < 1e-15
    q0, v0 = OBLIQUE
    ends = [np.asarray(END(jnp.asarray([c + dc, e, 0.05]), q0, v0)) for dc in (-1e-9, 0.0, 1e-9)]
    # |∂x/∂c| ≤ 2 here (the oblique Jacobian test): 1e-9 apart in c is at most 2e-9 apart in x; the jump was 1e-4.
    assert np.abs(ends[1] - ends[0]).max() < 2e-9 and np.abs(ends[2] - ends[1]).max() < 2e-9


@pytest.mark.slow  # the located step is four Moreau–Jean steps with a cone solve each: ~1 min of compile per mode
def test_radial_impact_gradients_in_clearance_and_restitution_are_the_closed_form():
    """From the centre along d at speed v the ball hits at t₁ = c / v and flies back at −ε v: at T,
    d·x = c − ε v (T − t₁) = c (1 + ε) − ε v T, so ∂/∂c = 1 + ε and ∂/∂ε = c − v T; friction does nothing
    (a head-on impact: the stick solution with no tangential part, where the cone solver's slide guess is undefined)."""
    c, e = 0.0102, 0.7  # t₁ = 20.4 ms (off the grid), back at the wall at 79 ms > T
    x = jnp.asarray([c, e, 0.3])
    q0, v0 = RADIAL
    d = np.asarray(v0) / SPEED
    assert abs(float(END(x, q0, v0) @ d) - (c * (1 + e) - e * SPEED * T)) < 1e-15
    exact = np.outer(d, [1 + e, c - SPEED * T, 0.0])  # the ball stays on the line d
    for jac in (JAC_REV, JAC_FWD):
        J = np.asarray(jac(x, q0, v0))
        assert np.all(np.isfinite(J))
        np.testing.assert_allclose(J, exact, rtol=0, atol=1e-12)
    # The position is linear in c and ε on this window: the differences are exact up to rounding (~1e-16 / h).
    np.testing.assert_allclose(central_differences(x, q0, v0, 1e-6), exact, rtol=0, atol=1e-9)


@pytest.mark.slow  # shares the compiled programs of the test above (reruns them alone: ~1 min of compile per mode)
@pytest.mark.parametrize("mu", [0.05, 0.3], ids=["sliding", "sticking"])
def test_oblique_impact_jacobian_matches_finite_differences_and_the_friction_slope(mu):
    """An oblique impact: the normal at the impact point turns with c, so every entry of ∂x(T)/∂(c, ε, μ) is
    checked against central differences. The friction column is also closed-form: the ball's normal impulse is
    m (1 + ε) v_N; a sliding impact (μ < |v_T| / (3.5 (1 + ε) v_N) for a solid ball, 3.5 = 1 + m r²/I)
    takes μ (1 + ε) v_N off the tangential velocity, so ∂x(T)/∂μ = −(1 + ε) v_N t̂ (T − t₁); a sticking one
    stops the slip whatever μ: 0."""
    c, e = 0.0102, 0.7
    x = jnp.asarray([c, e, mu])
    q0, v0 = OBLIQUE
    a = float(q0[1])
    t1 = np.sqrt(c * c - a * a) / SPEED  # |q0 + v0 t| = c
    n = (np.asarray(q0) + np.asarray(v0) * t1) / c
    v_n = float(np.asarray(v0) @ n)
    v_t = np.asarray(v0) - v_n * n
    sliding = mu < np.linalg.norm(v_t) / (3.5 * (1 + e) * v_n)
    assert sliding == (mu == 0.05)
    slope = -(1 + e) * v_n * v_t / np.linalg.norm(v_t) * (T - t1) if sliding else np.zeros(3)
    fd = central_differences(x, q0, v0, 1e-6)
    for jac in (JAC_REV, JAC_FWD):
        J = np.asarray(jac(x, q0, v0))
        assert np.all(np.isfinite(J))
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-9 * max(1.0, np.abs(fd).max()))
        # t₁ from the located crossing: a quadratic through the gap of a curved path, exact to O(h³) per impact.
        np.testing.assert_allclose(J[:, 2], slope, rtol=0, atol=1e-6)


@pytest.mark.slow  # shares the compiled programs of the tests above
def test_gradients_are_finite_across_impact_counts_and_friction_regimes():
    """Each parameter scanned across regime changes — the number of impacts before T (small clearances: a grazing
    ball hits again and again), a plastic impact (ε = 0: the ball then slides along the wall), stick against
    slide (μ across 0.12) — with the others at a generic value: every gradient is finite, in both modes."""
    q0, v0 = OBLIQUE
    base = np.array([0.0102, 0.7, 0.05])
    scans = {0: np.linspace(0.0061, 0.03, 25), 1: np.linspace(0.0, 1.0, 21), 2: np.linspace(0.0, 1.0, 21)}
    impacts = set()
    for i, values in scans.items():
        for v in values:
            x = base.copy()
            x[i] = v
            x = jnp.asarray(x)
            J_rev, J_fwd = np.asarray(JAC_REV(x, q0, v0)), np.asarray(JAC_FWD(x, q0, v0))
            assert np.all(np.isfinite(J_rev)) and np.all(np.isfinite(J_fwd)), (i, v, J_rev, J_fwd)
            np.testing.assert_allclose(J_rev, J_fwd, rtol=1e-9, atol=1e-12)
            if i == 0:
                p = {**P, "socket": BALL + v, "restitution": 0.7, "friction": 0.05}
                traj = simulate(
                    SYSTEM, p, _q(q0), jnp.concatenate([v0, jnp.zeros(3)]), dt=DT, n_steps=N, scheme=LOCATED
                )
                impacts.add(int(np.sum(np.asarray(traj.impulse_normal[:, 0]) > 0)))
    assert len(impacts) >= 3, impacts  # the clearance scan crosses changes of the impact count

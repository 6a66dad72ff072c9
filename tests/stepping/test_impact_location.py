"""Impacts located inside the Moreau–Jean step: exact on the bouncing ball, continuous in ε, refused by name."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.stepping.impact_location import crossing_fraction

BALL = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)
LOCATED = MoreauJean(impact_location="interpolated")
H = 0.004


def ball_exact(t, e=0.73, g=9.81, drop=1.2, r=0.1):
    """Analytic height of the ball's centre: fall from ``drop`` above contact, flights shrinking by ε."""
    t1 = np.sqrt(2 * drop / g)
    out = np.empty_like(t)
    for j, s in enumerate(t):
        if s < t1:
            out[j] = r + drop - 0.5 * g * s * s
            continue
        start, v = t1, e * g * t1
        while s >= start + 2 * v / g:
            start, v = start + 2 * v / g, e * v
        out[j] = r + v * (s - start) - 0.5 * g * (s - start) ** 2
    return out


def _run(scheme, e=0.73, dt=H, t_final=2.0):
    p = dict(BALL.params) | {"restitution": jnp.asarray(e)}
    q0, u0 = BALL.initial_state(p)
    return simulate(BALL.system, p, q0, u0, dt=dt, n_steps=int(round(t_final / dt)) + 1, scheme=scheme)


def test_crossing_fraction_is_the_root_of_the_quadratic_and_one_without_crossing():
    # g(s h) = 0.3 − 1.0 s − 0.5 s² (h = 1): root s = −1 + √1.6
    s, closing = crossing_fraction(
        jnp.array([0.3, 0.3, -0.1]), jnp.array([-1.0, -1.0, -1.0]), jnp.array([-1.2, 0.1, -0.5]), 1.0
    )
    np.testing.assert_allclose(np.asarray(s), [-1 + np.sqrt(1.6), 1.0, 1.0], rtol=1e-14)
    np.testing.assert_array_equal(np.asarray(closing), [True, False, False])
    # no curvature: the chord and the quadratic agree
    s, _ = crossing_fraction(jnp.array([0.25]), jnp.array([-1.0]), jnp.array([-0.75]), 1.0)
    np.testing.assert_allclose(np.asarray(s), [0.25], rtol=1e-14)


def test_located_ball_is_the_analytic_motion_and_the_step_grid_is_not():
    # Four bounces in 2 s at h = 4 ms: in free flight the midpoint step is exact, so locating the
    # impact at the gap crossing leaves only rounding; impacts on the step grid are off by centimetres.
    tr = _run(LOCATED)
    exact = ball_exact(np.asarray(tr.t))
    located = np.asarray(tr.q[:, 0])
    on_grid = np.asarray(_run(MoreauJean()).q[:, 0])
    assert np.max(np.abs(located - exact)) < 1e-11
    assert np.max(np.abs(on_grid - exact)) > 1e-2


def test_trajectory_is_continuous_in_restitution_and_its_gradient_matches_differences():
    # 2 s: three impacts, whose times move with ε (the third by one 4 ms step per ≈ 0.002 in ε).
    y = np.asarray(_run(LOCATED).q[:, 0]) + 0.01

    def loss(e, scheme):
        return jnp.mean((_run(scheme, e).q[:, 0] - y) ** 2)

    f = jax.jit(lambda e: loss(e, LOCATED))
    grid = jnp.asarray(0.73 + np.linspace(-4e-3, 4e-3, 41))
    x = np.linspace(-1, 1, 41)

    def misfit_to_a_quartic(values):  # how far the loss along ε is from a smooth curve, relative to its range
        return np.max(np.abs(values - np.polyval(np.polyfit(x, values, 4), x))) / np.ptp(values)

    assert misfit_to_a_quartic(np.asarray(jax.vmap(f)(grid))) < 1e-2  # measured 9e-4
    step_values = np.asarray(jax.vmap(lambda e: loss(e, MoreauJean()))(grid))
    assert misfit_to_a_quartic(step_values) > 0.1  # a staircase (measured 0.3)
    g = float(jax.grad(f)(0.7))
    h = 1e-6
    np.testing.assert_allclose(g, float(f(0.7 + h) - f(0.7 - h)) / (2 * h), rtol=1e-6)


def test_batched_located_runs_equal_single_runs():
    es = jnp.array([0.5, 0.73, 0.95])
    p = {k: jnp.broadcast_to(v, (3,)) for k, v in BALL.params.items()} | {"restitution": es}
    q0, u0 = jax.vmap(BALL.initial_state)(p)
    batch = simulate(BALL.system, p, q0, u0, dt=H, n_steps=int(round(1.2 / H)) + 1, scheme=LOCATED)
    for i, e in enumerate(np.asarray(es)):
        np.testing.assert_allclose(
            np.asarray(batch.q[i]), np.asarray(_run(LOCATED, e, t_final=1.2).q), rtol=0, atol=1e-13
        )


def test_unsupported_combinations_are_refused_by_name():
    with pytest.raises(ValueError, match="impact_location"):
        MoreauJean(impact_location="cubic")
    with pytest.raises(ValueError, match="force_rule = 'siconos'"):
        MoreauJean(impact_location="interpolated", force_rule="siconos")
    with pytest.raises(ValueError, match="soft_activation"):
        LOCATED.with_soft_activation("tau")
    with pytest.raises(ValueError, match="penalty scheme has no impact_location"):
        Penalty().with_impact_location("interpolated")
    assert MoreauJean().with_impact_location("interpolated") == LOCATED


def test_a_contact_closed_all_along_moves_as_with_the_step_law():
    # The sliding block (Coulomb friction on a slope) never opens its contact: nothing to locate.
    block = get_model("sliding-block")
    q0, u0 = block.initial_state(block.params)
    runs = [
        simulate(block.system, block.params, q0, u0, dt=1e-3, n_steps=300, scheme=s).q for s in (MoreauJean(), LOCATED)
    ]
    assert float(np.ptp(np.asarray(runs[0][:, 0]))) > 0.1  # it slides
    np.testing.assert_array_equal(np.asarray(runs[0]), np.asarray(runs[1]))

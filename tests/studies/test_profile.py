"""Intervals checked against the loss: Laplace kept when the loss is quadratic, read from the loss when not."""

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.studies.identify import coordinates, fit
from jaxcontact.studies.profile import CHI2_95, check_intervals

M = 100  # residual count of the synthetic losses


def test_quadratic_loss_keeps_the_laplace_interval():
    sd = 0.01
    # mean squared residual whose χ² rise is ((θ − 0.5)/sd)² with σ² = 1: exactly the Laplace model
    loss = lambda th: 1.0 + ((th[0] - 0.5) / sd) ** 2 / M  # noqa: E731
    (c,) = check_intervals(loss, [0.5], [sd], [0.0], [1.0], n_residuals=M, noise=1.0)
    assert c.method == "laplace" and c.interval == c.laplace
    np.testing.assert_allclose(c.profile, [0.5 - np.sqrt(CHI2_95) * sd, 0.5 + np.sqrt(CHI2_95) * sd], atol=2 * sd / 25)


def test_staircase_loss_falls_back_and_moves_off_the_stalled_step():
    # A flat step left of 0.49985 (where a gradient optimiser stalls at 0.4998, with a tiny local
    # curvature) and the lower minimum at 0.5 (sd 1e-3): the Laplace interval around the step misses it.
    def loss(th):
        x = th[0]
        return jnp.where(x < 0.49985, 1.0 + 1e-6 * (x - 0.4998) ** 2, 1.0 + ((x - 0.5) / 1e-3) ** 2 / M - 0.5)

    (c,) = check_intervals(loss, [0.4998], [1e-7], [0.0], [1.0], n_residuals=M, noise=1.0)
    assert c.method == "profile"
    assert abs(c.estimate - 0.5) < 5e-5  # a grid spacing of the final scan
    assert c.interval[0] < 0.5 < c.interval[1]
    assert not c.laplace[0] < 0.5 < c.laplace[1]


BALL = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)


def _ball(h, t_final):
    q0, u0 = BALL.initial_state(BALL.params)
    tr = simulate(BALL.system, BALL.params, q0, u0, dt=h, n_steps=int(round(t_final / h)) + 1)
    k = int(round(0.004 / h))
    return np.asarray(tr.t[::k]), np.asarray(tr.q[::k, 0])


def test_noise_free_ball_is_an_exact_fit_within_1e_6():
    t, y = _ball(0.004, 6.0)  # the case: six seconds, a dozen impacts
    r = fit(BALL, t, y, ("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)},
            observe=coordinates(0), dt=0.004, steps=30)
    assert abs(r.estimates["restitution"] - 0.73) < 1e-6
    assert r.interval_method == {"restitution": "exact fit"} and r.std["restitution"] == 0


def test_noisy_ball_interval_is_checked_and_contains_the_truth():
    t, y = _ball(0.004, 2.0)
    y = y + 0.003 * np.random.default_rng(3).standard_normal(y.shape)
    r = fit(BALL, t, y, ("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)},
            observe=coordinates(0), dt=0.004, steps=30, noise=0.003)
    lo, hi = r.interval95["restitution"]
    assert r.interval_method["restitution"] in ("laplace", "profile")
    assert lo < 0.73 < hi

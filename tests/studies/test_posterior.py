"""Posterior by vmapped random-walk Metropolis: agrees with the loss-read interval, diagnostics are right."""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.studies.identify import coordinates, fit
from jaxcontact.studies.posterior import effective_sample_size, sample, split_rhat

BALL = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)


def test_gaussian_target_mean_interval_rhat_ess():
    # L(θ) = θ²/M with σ = 1: log p = −θ²/2, a standard normal cut to (−10, 10)
    post = sample(
        lambda th: th[0] ** 2 / 50,
        [0.5],
        [1.0],
        [-10.0],
        [10.0],
        n_residuals=50,
        sigma=1.0,
        chains=8,
        draws=2000,
        burn=200,
    )
    assert abs(post.mean[0]) < 0.15 and abs(post.std[0] - 1) < 0.1
    np.testing.assert_allclose(post.interval95[0], [-1.96, 1.96], atol=0.25)
    assert post.rhat[0] < 1.02 and 500 < post.ess[0] < 16000
    with pytest.raises(ValueError, match="sigma"):
        sample(lambda th: th[0], [0.5], [1.0], [-1.0], [1.0], n_residuals=5, sigma=0.0)


def test_rhat_flags_chains_that_disagree():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 500, 1))
    assert split_rhat(x)[0] < 1.02 and effective_sample_size(x)[0] > 1000
    x[:2] += 3.0
    assert split_rhat(x)[0] > 1.5


def test_ball_posterior_agrees_with_the_profile_interval():
    q0, u0 = BALL.initial_state(BALL.params)
    tr = simulate(BALL.system, BALL.params, q0, u0, dt=0.004, n_steps=301)  # 1.2 s: two impacts
    t, y = np.asarray(tr.t), np.asarray(tr.q[:, 0]) + 0.003 * np.random.default_rng(5).standard_normal(302)
    r = fit(
        BALL,
        t,
        y,
        ("restitution",),
        {"restitution": 0.6},
        {"restitution": (0.05, 0.99)},
        observe=coordinates(0),
        dt=0.004,
        steps=30,
        noise=0.003,
        posterior={"chains": 8, "draws": 600, "burn": 200},
    )
    lo, hi = r.interval95["restitution"]
    plo, phi = r.posterior.interval95[0]
    width = hi - lo
    assert abs(plo - lo) < 0.25 * width and abs(phi - hi) < 0.25 * width
    assert plo < 0.73 < phi and r.posterior.rhat[0] < 1.05
    assert "posterior" in r.to_json()

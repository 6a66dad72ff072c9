"""Intervals checked against the loss: Laplace kept when the loss is quadratic, read from the loss when not."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.studies.identify import coordinates, fit
from jaxcontact.studies.profile import CHI2_95, check_intervals, profile_loss

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
    )
    assert abs(r.estimates["restitution"] - 0.73) < 1e-6
    assert r.interval_method == {"restitution": "exact fit"} and r.std["restitution"] == 0


def test_noisy_ball_interval_is_checked_and_contains_the_truth():
    t, y = _ball(0.004, 2.0)
    y = y + 0.003 * np.random.default_rng(3).standard_normal(y.shape)
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
    )
    lo, hi = r.interval95["restitution"]
    assert r.interval_method["restitution"] in ("laplace", "profile")
    assert lo < 0.73 < hi


def _linear_two_parameter_problem():
    # r(θ) = A (θ − θ0) + e with strongly correlated columns (ρ ≈ 0.97): the least-squares estimate, its
    # covariance (σ = 1) and hence the marginal (profile) 95 % interval θ̂_i ± √χ²·√Σ_ii are exact.
    rng = np.random.default_rng(0)
    x = np.linspace(0.0, 1.0, M)
    A = np.stack([x, x + 0.15 * rng.standard_normal(M)], axis=1)
    e = rng.standard_normal(M)
    theta0 = np.array([0.4, 0.6])
    residuals = lambda th: jnp.asarray(A) @ (th - jnp.asarray(theta0)) + jnp.asarray(e)  # noqa: E731
    est = theta0 - np.linalg.lstsq(A, e, rcond=None)[0]
    cov = np.linalg.inv(A.T @ A)
    return residuals, est, cov, A


def test_two_parameter_profile_reoptimises_the_other_and_gives_the_marginal_interval():
    residuals, est, cov, A = _linear_two_parameter_problem()
    loss = lambda th: jnp.mean(residuals(th) ** 2)  # noqa: E731
    sd = np.sqrt(np.diag(cov))
    marginal = np.sqrt(CHI2_95) * sd
    conditional = np.sqrt(CHI2_95 / np.diag(A.T @ A))  # the other held at its estimate
    assert np.all(conditional < 0.3 * marginal)  # correlated: holding the other is far too narrow
    profiled = check_intervals(loss, est, sd, [-5.0, -5.0], [5.0, 5.0], n_residuals=M, noise=1.0, residuals=residuals)
    held = check_intervals(loss, est, sd, [-5.0, -5.0], [5.0, 5.0], n_residuals=M, noise=1.0)
    for i in range(2):
        c = profiled[i]
        assert c.method == "laplace" and c.interval == c.laplace  # the quadratic model is the loss: kept
        np.testing.assert_allclose(np.array(c.profile) - est[i], [-marginal[i], marginal[i]], rtol=0.03)
        h = held[i]  # the conditional interval disagrees with the (marginal) Laplace one
        assert h.method == "profile"
        np.testing.assert_allclose(np.array(h.profile) - est[i], [-conditional[i], conditional[i]], rtol=0.05)


def test_profile_loss_reaches_the_minimum_over_the_other_parameter():
    residuals, est, cov, A = _linear_two_parameter_problem()
    run = jax.jit(jax.vmap(profile_loss(residuals, 0, [-5.0, -5.0], [5.0, 5.0]), in_axes=(None, 0)))
    xs = est[0] + np.array([-0.3, 0.0, 0.2])
    values, thetas = run(jnp.asarray(est), jnp.asarray(xs))
    b = -np.asarray(residuals(jnp.zeros(2)))  # r(θ) = A θ − b
    for x, v, th in zip(xs, np.asarray(values), np.asarray(thetas)):
        # the exact minimiser of ‖A θ − b‖² over θ_1 with θ_0 = x
        other = (A[:, 1] @ (b - A[:, 0] * x)) / (A[:, 1] @ A[:, 1])
        assert th[0] == x
        np.testing.assert_allclose(th[1], other, rtol=1e-9)
        np.testing.assert_allclose(v, np.mean((A @ np.array([x, other]) - b) ** 2), rtol=1e-9)


@pytest.mark.slow  # a two-parameter fit through located impacts and its profiles: ~40 s of CPU
def test_two_parameter_ball_fit_profile_intervals_contain_the_truth():
    # Restitution and gravity of the analytic ball (1 s, two impacts between the steps), 1 % noise: each
    # interval is checked against the profile (the other parameter re-optimised along it).
    from jaxcontact.stepping import MoreauJean
    from tests.stepping.test_impact_location import ball_exact

    t = np.arange(251) * 0.004
    y = ball_exact(t) + 0.003 * np.random.default_rng(5).standard_normal(t.shape)
    r = fit(
        BALL,
        t,
        y,
        ("restitution", "gravity"),
        {"restitution": 0.6, "gravity": 9.0},
        {"restitution": (0.05, 0.99), "gravity": (5.0, 15.0)},
        observe=coordinates(0),
        dt=0.004,
        steps=30,
        noise=0.003,
        scheme=MoreauJean(impact_location="interpolated"),
    )
    for name, truth in (("restitution", 0.73), ("gravity", 9.81)):
        lo, hi = r.interval95[name]
        assert lo < truth < hi, (name, lo, hi)
        assert r.interval_method[name] == "laplace"  # smooth loss: the profile agrees with the marginal sd

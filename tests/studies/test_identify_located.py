"""Identification with impacts located inside the step: unbiased on data no stepping scheme produced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.stepping.projection import Projection
from jaxcontact.studies.identify import coordinates, fit, make_residuals
from tests.stepping.test_impact_location import ball_exact

BALL = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)
LOCATED = MoreauJean(impact_location="interpolated")
H = 0.004
T = np.arange(376) * H  # 1.5 s: two impacts (0.495 s, 1.217 s)
Y = ball_exact(T)  # the analytic motion, sampled at the fit's steps: no scheme, no step grid
ARGS = (("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)})


@pytest.mark.slow  # two fits and their loss scans: ~35 s of CPU (gradients through four step evaluations)
def test_analytic_ball_data_give_the_restitution_to_1e_6_with_located_impacts_not_with_the_step_grid():
    r = fit(BALL, T, Y, *ARGS, observe=coordinates(0), dt=H, steps=30, scheme=LOCATED)
    assert abs(r.estimates["restitution"] - 0.73) < 1e-6, r.estimates
    on_grid = fit(BALL, T, Y, *ARGS, observe=coordinates(0), dt=H, steps=30, scheme=MoreauJean())
    lo, hi = on_grid.interval95["restitution"]
    assert abs(on_grid.estimates["restitution"] - 0.73) > 1e-4 and not lo < 0.73 < hi  # step-grid bias


@pytest.mark.slow  # a fit and 8 × 800 Metropolis forward runs of 375 steps: ~35 s of CPU
def test_noisy_analytic_data_laplace_interval_and_posterior_contain_the_truth_and_agree():
    noise = 0.003  # about 1 % of the signal's standard deviation
    y = Y + noise * np.random.default_rng(3).standard_normal(Y.shape)
    r = fit(
        BALL,
        T,
        y,
        *ARGS,
        observe=coordinates(0),
        dt=H,
        steps=30,
        scheme=LOCATED,
        noise=noise,
        posterior={"chains": 8, "draws": 600, "burn": 200},
    )
    lo, hi = r.interval95["restitution"]
    assert lo < 0.73 < hi
    assert r.interval_method["restitution"] == "laplace"  # the loss is quadratic along ε: no staircase
    plo, phi = r.posterior.interval95[0]
    width = hi - lo
    assert abs(plo - lo) < 0.2 * width and abs(phi - hi) < 0.2 * width, ((lo, hi), (plo, phi))
    assert r.posterior.rhat[0] < 1.05


# The 6 s ball on data that no fit model produced: located impacts at 0.4 ms, sampled every 4 ms. After
# the bounces accumulate (3.17 s) the ball rests; the h = 4 ms step leaves it resting g·h²-deep inside the ground
# (3.5e-5 m, against 6e-7 m at 0.4 ms), and that settling phase alone biased ε̂ by 2e-6. With resting contacts
# projected onto their surface (what identify does by default) the fit model rests on g = 0 at any step.
PROJECTED = MoreauJean(impact_location="interpolated", projection=Projection())
T6 = 6.0


def _fine_ball():
    q0, u0 = BALL.initial_state(BALL.params)
    tr = simulate(BALL.system, BALL.params, q0, u0, dt=H / 10, n_steps=int(round(T6 / H)) * 10 + 1, scheme=LOCATED)
    return np.asarray(tr.t[::10]), np.asarray(tr.q[::10, 0])


def test_six_second_ball_loss_is_least_at_the_truth_once_resting_contacts_are_projected():
    t, y = _fine_ball()
    assert -1e-6 < y[-1] - 0.1 < -1e-7  # the data rest slightly inside: not the fit model's motion
    eps = 0.73 + np.linspace(-3e-6, 3e-6, 31)  # spacing 2e-7; the truth in the middle
    best = {}
    for name, scheme in (("located", LOCATED), ("projected", PROJECTED)):
        res = make_residuals(BALL, t, coordinates(0), ("restitution",), scheme=scheme, dt=H)
        r = np.asarray(jax.jit(jax.vmap(lambda e: res(e[None], y, 1.0)))(jnp.asarray(eps)))
        best[name] = eps[int(np.argmin(np.mean(r**2, axis=1)))]
        rest = y[-1] + r[15, -1] - 0.1  # the fit model's gap at 6 s with the true ε
        if name == "located":
            assert rest < -1e-5  # g·h²-deep at h = 4 ms
        else:
            assert abs(rest) < 1e-12  # on the ground
    assert abs(best["located"] - 0.73) > 1e-6, best  # the settling phase's bias
    assert abs(best["projected"] - 0.73) < 1e-7, best  # the grid point at the truth


@pytest.mark.slow  # a 6 s fit (1500 located, projected steps; forward-mode gradients) and its interval check: minutes
def test_six_second_ball_fitted_on_finer_step_data_within_1e_6_and_its_interval_contains_the_truth():
    t, y = _fine_ball()
    r = fit(BALL, t, y, *ARGS, observe=coordinates(0), dt=H, steps=50, scheme=PROJECTED)
    lo, hi = r.interval95["restitution"]
    assert abs(r.estimates["restitution"] - 0.73) < 1e-6, r.estimates
    assert lo < 0.73 < hi, (lo, hi)


@pytest.mark.slow  # a 2 s fit with its interval check: about a minute
def test_data_of_another_codes_step_grid_are_flagged_as_systematic_misfit():
    """Data with impacts on another code's 4 ms step grid, fitted with located impacts: the plain interval misses
    the truth (the misfit is the grid's, not noise); the residual check says so, and its widened interval holds
    the truth."""
    q0, u0 = BALL.initial_state(BALL.params)
    tr = simulate(BALL.system, BALL.params, q0, u0, dt=H, n_steps=500)  # impacts on the step grid
    r = fit(
        BALL, np.asarray(tr.t), np.asarray(tr.q[:, 0]), *ARGS, observe=coordinates(0), dt=H, steps=40, scheme=PROJECTED
    )
    lo, hi = r.interval95["restitution"]
    assert not lo < 0.73 < hi, (lo, hi)
    assert not r.residuals["white"] and r.residuals["lag1_autocorrelation"] > 0.9
    wlo, whi = r.residuals["interval95_correlated"]["restitution"]
    assert wlo < 0.73 < whi and whi - wlo < 0.02, (wlo, whi)

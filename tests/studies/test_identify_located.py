"""Identification with impacts located inside the step: unbiased on data no stepping scheme produced."""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.stepping import MoreauJean
from jaxcontact.studies.identify import coordinates, fit
from tests.stepping.test_impact_location import ball_exact

BALL = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)
LOCATED = MoreauJean(impact_location="interpolated")
H = 0.004
T = np.arange(376) * H  # 1.5 s: two impacts (0.495 s, 1.217 s)
Y = ball_exact(T)  # the analytic motion, sampled at the fit's steps: no scheme, no step grid
ARGS = (("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)})


@pytest.mark.slow  # two fits and their loss scans: ~35 s of CPU (reverse mode through four step evaluations)
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
    r = fit(BALL, T, y, *ARGS, observe=coordinates(0), dt=H, steps=30, scheme=LOCATED, noise=noise,
            posterior={"chains": 8, "draws": 600, "burn": 200})
    lo, hi = r.interval95["restitution"]
    assert lo < 0.73 < hi
    assert r.interval_method["restitution"] == "laplace"  # the loss is quadratic along ε: no staircase
    plo, phi = r.posterior.interval95[0]
    width = hi - lo
    assert abs(plo - lo) < 0.2 * width and abs(phi - hi) < 0.2 * width, ((lo, hi), (plo, phi))
    assert r.posterior.rhat[0] < 1.05

"""Identification on the bouncing ball: optimisers, bounds, multi-start, windows, batch, gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.studies.identify import Smoothing, coordinates, fit, fit_batch, make_residuals

MODEL = get_model("bouncing-ball")
_q0, _u0 = MODEL.initial_state(MODEL.params)
_TR = simulate(MODEL.system, MODEL.params, _q0, _u0, dt=MODEL.dt, n_steps=1500)
DATA_T = np.asarray(_TR.t[:1500:10])  # 150 samples over two bounces
DATA_Y = np.asarray(_TR.q[:1500:10, 0])
E = float(MODEL.params["restitution"])
Y = coordinates(0)
GUESS = {"restitution": 0.7 * E}
BOUNDS = {"restitution": (0.05, 0.99)}


def test_adam_recovers_restitution_from_30_percent_off():
    r = fit(
        MODEL,
        DATA_T,
        DATA_Y,
        ("restitution",),
        GUESS,
        BOUNDS,
        observe=Y,
        optimizer="adam",
        steps=100,
        learning_rate=0.1,
    )
    assert abs(r.estimates["restitution"] - E) / E < 0.01
    assert r.loss_history[-1] < 1e-2 * r.loss_history[0]
    assert r.param_history.shape == (100, 1) and np.all(np.isnan(r.tau_history))


def test_lbfgs_recovers_restitution_with_smoothing_and_multistart():
    r = fit(
        MODEL,
        DATA_T,
        DATA_Y,
        ("restitution",),
        GUESS,
        BOUNDS,
        observe=Y,
        steps=30,
        starts=3,
        smoothing=Smoothing(1e-2, 1e-7, 0.6),
    )
    assert abs(r.estimates["restitution"] - E) / E < 1e-4
    assert r.start_losses.shape == (3,) and r.loss == pytest.approx(float(np.min(r.start_losses)), abs=1e-12)
    np.testing.assert_allclose(r.tau_history[[0, -1]], [1e-2, 1e-7])


def test_data_anchored_windows_recover_restitution():
    r = fit(
        MODEL,
        DATA_T,
        DATA_Y,
        ("restitution",),
        GUESS,
        BOUNDS,
        observe=Y,
        steps=10,
        windows=5,
        data_state=(_TR.q[:1500:10], _TR.u[:1500:10]),
    )
    assert abs(r.estimates["restitution"] - E) / E < 1e-4
    with pytest.raises(ValueError, match="divide the number of data points"):
        fit(MODEL, DATA_T, DATA_Y, ("restitution",), GUESS, BOUNDS, windows=7, data_state=(_TR.q, _TR.u))


def test_bounds_are_respected_and_bad_input_is_named():
    # Adam with a huge step would leave [0.85, 0.88] at once without the transform; truth 0.9 lies outside.
    r = fit(
        MODEL,
        DATA_T,
        DATA_Y,
        ("restitution",),
        {"restitution": 0.86},
        {"restitution": (0.85, 0.88)},
        observe=Y,
        optimizer="adam",
        steps=20,
        learning_rate=5.0,
    )
    assert np.all((r.param_history >= 0.85) & (r.param_history <= 0.88))
    assert r.estimates["restitution"] > 0.875  # pushed against the upper bound, towards the truth
    with pytest.raises(ValueError, match="strictly inside bounds"):
        fit(MODEL, DATA_T, DATA_Y, ("restitution",), {"restitution": 1.2}, BOUNDS)
    with pytest.raises(ValueError, match="not a parameter of model"):
        fit(MODEL, DATA_T, DATA_Y, ("stiffness",), {"stiffness": 1.0}, {"stiffness": (0, 2)})
    with pytest.raises(ValueError, match="optimizer"):
        fit(MODEL, DATA_T, DATA_Y, ("restitution",), GUESS, BOUNDS, optimizer="sgd")


def test_loss_gradient_matches_central_differences_hard_and_soft():
    for soft, tau in ((False, 1.0), (True, 1e-3)):
        res = make_residuals(MODEL, DATA_T, Y, ("restitution",), soft=soft)
        loss = jax.jit(lambda th: jnp.mean(res(th, DATA_Y, tau) ** 2))
        th = jnp.array([0.8])
        g = jax.grad(loss)(th)
        h = 1e-6
        fd = (loss(th + h) - loss(th - h)) / (2 * h)
        assert np.all(np.isfinite(np.asarray(g)))
        np.testing.assert_allclose(float(g[0]), float(fd), rtol=1e-4)


def test_batch_of_64_true_restitutions_in_one_call():
    # Short record (one bounce and a half, dt = 2 ms) so the 64 fits stay fast.
    m = MODEL._replace(dt=2e-3)
    truths = np.linspace(0.5, 0.95, 64)
    p = {k: jnp.broadcast_to(v, (64,)) for k, v in m.params.items()} | {"restitution": jnp.asarray(truths)}
    q0, u0 = jax.vmap(m.initial_state)(p)
    tr = simulate(m.system, p, q0, u0, dt=m.dt, n_steps=450)
    t, ys = np.asarray(tr.t[0, ::5]), np.asarray(tr.q[:, ::5, 0])
    r = fit_batch(m, t, ys, ("restitution",), {"restitution": 0.7}, {"restitution": (0.05, 0.99)}, observe=Y, steps=25)
    assert r.estimates.shape == (64, 1) and r.loss_history.shape == (64, 25)
    rel = np.abs(r.estimates[:, 0] - truths) / truths
    assert np.max(rel) < 0.01, rel.max()


def test_grid_start_moves_a_far_guess_next_to_the_truth_before_the_optimiser():
    # 94 grid values in (0.05, 0.99): spacing ≈ 0.0099; the ball's misfit is smallest at the truth 0.9.
    r = fit(MODEL, DATA_T, DATA_Y, ("restitution",), {"restitution": 0.1}, BOUNDS, observe=Y, steps=1, grid_start=94)
    assert abs(r.param_history[0, 0] - E) < 0.01, r.param_history[0]
    with pytest.raises(ValueError, match="grid_start"):
        fit(MODEL, DATA_T, DATA_Y, ("restitution",), GUESS, BOUNDS, grid_start=-1)


@pytest.mark.slow  # compiles a fit and its intervals
def test_progress_says_each_stage_of_a_fit(capsys):
    # Compiling the fit and its intervals took minutes without a word; every stage now has its line.
    fit(MODEL, DATA_T[:40], DATA_Y[:40], ("restitution",), GUESS, BOUNDS, observe=Y, steps=2, progress=1)
    lines = [ln.split()[0] for ln in capsys.readouterr().out.splitlines()]
    assert lines == ["compiling", "iter", "iter", "intervals:"]

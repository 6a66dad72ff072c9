"""Smoothed stiff contact spring (K = 1e8 N/m): larger stable RK4 step, rebound loss as linear theory predicts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.smoothing import decay_rate, frequency_ratio, rk4, vector_field
from jaxcontact.smoothing.stiff_ball import rebound_speed, stiff_ball

V0 = np.sqrt(2 * 9.81 * 1.0)  # dropped from 1 m: starts touching the ground at the impact speed


def _rebounds(dts, h):
    system, p = stiff_ball(h=h)
    f, y0 = vector_field(system), jnp.array([0.1, -V0])

    def run(dt):
        _, ys = rk4(f, y0, p, t0=0.0, dt=dt, n_steps=3000)
        return rebound_speed(ys, p)

    return np.asarray(jax.jit(jax.vmap(run))(jnp.asarray(dts))) / V0


def test_smoothing_enlarges_the_stable_rk4_step():
    # Unsmoothed: ω = √(K/m) = 1e4 rad/s, RK4 limit ≈ 2.8/ω; the elastic truth is rebound = impact speed.
    dts = [1e-6, 5e-5, 3e-4, 8e-4]
    plain = _rebounds(dts, 0.0)
    np.testing.assert_allclose(plain[:2], 1.0, atol=5e-3)
    assert not np.isfinite(plain[2:]).any()  # blown up at 3e-4 and 8e-4 s
    # Smoothed with h = 1e-3: stable at both, ≈ 4× the largest unsmoothed step (2.1e-4 s, bench).
    smooth = _rebounds(dts, 1e-3)
    assert np.isfinite(smooth).all() and (smooth < 1.0).all()


def test_smoothed_rebound_loss_is_the_smoothed_mode_damping():
    # During contact the smoothed spring is the linear smoothed mode: between the zeros of δ (π/ω̄ apart)
    # the speed decays by exp(−σ π/ω̄) (gravity is negligible against K δ). Fine step: the model, not RK4.
    omega = 1e4
    for h in (1e-5, 1e-4, 1e-3):
        wd = omega * float(frequency_ratio(h, omega))
        expected = np.exp(-float(decay_rate(h, omega)) * np.pi / wd)
        np.testing.assert_allclose(_rebounds([1e-6], h)[0], expected, rtol=5e-3)


def test_bad_values_raise():
    with pytest.raises(ValueError, match="K = -1"):
        stiff_ball(K=-1.0)


def test_batched_over_h_and_stiffness():
    # One vmapped run over (h, K) pairs: each rebound is its own smoothed mode's exp(−σπ/ω̄), ω = √(K/m).
    system, p = stiff_ball()
    f, y0 = vector_field(system), jnp.array([0.1, -V0])
    hs, Ks = jnp.array([0.0, 1e-4, 1e-3, 1e-3]), jnp.array([1e8, 1e8, 1e7, 1e8])

    def run(h, K):
        ph = {**p, "h": h, "K": K}
        return rebound_speed(rk4(f, y0, ph, t0=0.0, dt=1e-6, n_steps=3000)[1], ph)

    e = np.asarray(jax.jit(jax.vmap(run))(hs, Ks)) / V0
    omega = np.sqrt(np.asarray(Ks))
    wd = omega * np.asarray(frequency_ratio(hs, omega))
    np.testing.assert_allclose(e, np.exp(-np.asarray(decay_rate(hs, omega)) * np.pi / wd), rtol=5e-3)

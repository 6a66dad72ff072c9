"""Smoothed linear systems: the smoothing paper's chain against exact modal solutions, modal ratios, batching."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.smoothing import (
    amplitude_ratio,
    chain_stiffness,
    decay_rate,
    frequency_ratio,
    modal_solution,
    solve,
    spring_chain,
    vector_field,
)

M10 = [10.0, 10.0, 10.0]


def _run(system, params, ts, **kw):
    y0 = jnp.zeros(2 * system.n_dof)
    sol = jax.jit(lambda p: solve(vector_field(system), y0, p, ts, **kw))(params)
    assert bool(sol.ok)
    return np.asarray(sol.ys[:, : system.n_dof]), np.asarray(sol.ys[:, system.n_dof :])


def test_modal_solution_is_the_case2_closed_form():
    # Case 2 (k1 = 2e3): mass 1 swings against the nearly rigid pair 2–3 at ω² = 3 k1 / (2m) = 300.
    # (The paper prints cos(1e3 t); with m = 10 kg the frequency is √300 rad/s — the amplitudes 2/900
    # and 1/900 match the paper's, so this is the same solution with the frequency computed from m, k1.)
    _, p = spring_chain(M10, [2e3, 1e8], 20.0)
    t = np.linspace(0.0, 5.0, 2001)
    q, _ = modal_solution(p["M"], p["K"], p["F"], np.zeros(3), np.zeros(3), t)
    w = np.sqrt(300.0)
    np.testing.assert_allclose(q[:, 0], t**2 / 3 - 2 * (1 - np.cos(w * t)) / 900, atol=2e-7)
    np.testing.assert_allclose(q[:, 1], t**2 / 3 + (1 - np.cos(w * t)) / 900, atol=2e-7)


def test_modal_solution_satisfies_the_smoothed_equation():
    _, p = spring_chain(M10, [1e4, 3e4], 20.0)
    M, K, F, h = np.asarray(p["M"]), np.asarray(p["K"]), np.asarray(p["F"]), 0.02
    t = np.linspace(0.0, 0.5, 4001)
    q, u = modal_solution(M, K, F, np.array([0.01, 0.0, -0.02]), np.array([0.0, 0.3, 0.0]), t, h=h)
    a = np.gradient(u, t, axis=0)
    res = (M + h**2 * K / 6) @ a[5:-5].T + (h / 2) * K @ u[5:-5].T + K @ q[5:-5].T - F[:, None]
    assert np.abs(res).max() < 1e-3 * np.abs(K @ q.T).max()
    np.testing.assert_allclose(q[0], [0.01, 0.0, -0.02], atol=1e-14)
    np.testing.assert_allclose(u[0], [0.0, 0.3, 0.0], atol=1e-14)


def test_case1_smoothing_leaves_rigid_motion_untouched():
    # The chain's first case (k1 = 1e7) with h = 0.1: the centre of mass follows t²/3 to the integrator's tolerance,
    # every mass within 2e-5 of it (the paper's number), and within 1e-6 of the exact modal solution.
    system, p = spring_chain(M10, [1e7, 1e8], 20.0, h=0.1)
    ts = jnp.linspace(0.0, 5.0, 251)
    q, _ = _run(system, p, ts, rtol=1e-8, atol=1e-10)
    t = np.asarray(ts)
    assert np.abs(q.mean(axis=1) - t**2 / 3).max() < 1e-7
    assert np.abs(q - t[:, None] ** 2 / 3).max() < 2e-5
    exact, _ = modal_solution(p["M"], p["K"], p["F"], np.zeros(3), np.zeros(3), t)
    assert np.abs(q - exact).max() < 2e-5


def test_case2_smoothed_h_0p001_matches_analytic_within_1e_3():
    system, p = spring_chain(M10, [2e3, 1e8], 20.0, h=0.001)
    ts = jnp.linspace(0.0, 5.0, 2001)
    q, _ = _run(system, p, ts, rtol=1e-8, atol=1e-10)
    t, w = np.asarray(ts), np.sqrt(300.0)
    x1 = t**2 / 3 - 2 * (1 - np.cos(w * t)) / 900
    x23 = t**2 / 3 + (1 - np.cos(w * t)) / 900
    err = max(np.abs(q[:, 0] - x1).max(), np.abs(q[:, 1] - x23).max(), np.abs(q[:, 2] - x23).max())
    # The paper reports 6.8e-4: the soft mode decays like exp(−σt), σ = hω²/4 / (1 + a) ≈ 0.075/s.
    assert 5e-4 < err < 1e-3
    smoothed, _ = modal_solution(p["M"], p["K"], p["F"], np.zeros(3), np.zeros(3), t, h=0.001)
    assert np.abs(q - smoothed).max() < 1e-6


@pytest.mark.parametrize("omega", [20.0, 200.0])
@pytest.mark.parametrize("h", [0.002, 0.01, 0.05])
def test_measured_modal_frequency_amplitude_and_decay(omega, h):
    # Two unit masses, spring k: one rigid mode and one mode with ω² = 2k. A step force on mass 2
    # from rest; the relative coordinate r = x2 − x1 obeys (1 + a) r̈ + (h/2) ω² ṙ + ω² r = f.
    k = omega**2 / 2
    system, p = spring_chain([1.0, 1.0], [k], 1.0, h=h)
    wd = omega * float(frequency_ratio(h, omega))
    sigma = float(decay_rate(h, omega))
    n_per = 400
    ts = jnp.arange(6 * n_per + 1) * (2 * np.pi / wd) / n_per  # six damped periods
    q, u = _run(system, p, ts, rtol=1e-10, atol=1e-13)
    t = np.asarray(ts)
    r = q[:, 1] - q[:, 0] - 1.0 / omega**2  # about the static deflection f/ω²
    # frequency: spacing of the zero crossings (linear interpolation)
    i = np.nonzero(np.sign(r[1:]) != np.sign(r[:-1]))[0]
    tz = t[i] - r[i] * (t[i + 1] - t[i]) / (r[i + 1] - r[i])
    measured_w = np.pi / np.mean(np.diff(tz[:3]))  # early crossings: a strongly smoothed mode dies out fast
    np.testing.assert_allclose(measured_w / omega, float(frequency_ratio(h, omega)), rtol=1e-4)
    # decay: the envelope after a whole damped period shrinks by exp(−σ T)
    T = 2 * np.pi / wd
    env = np.abs(r[np.searchsorted(t, tz[:4] + T / 4)])  # quarter period after each zero ≈ a peak
    if sigma * T > 1e-3:
        np.testing.assert_allclose(env[2] / env[0], np.exp(-sigma * T), rtol=2e-2)
    # amplitude: the relative acceleration right after the step, (r̈(0+)), over the unsmoothed f = 1
    dt = float(t[1])
    acc0 = 2 * (q[1, 1] - q[1, 0]) / dt**2
    np.testing.assert_allclose(acc0, float(amplitude_ratio(h, omega)) * 1.0, rtol=5e-2)
    # the rigid mode is untouched: mean position = f t² / (2 · 2m)
    np.testing.assert_allclose(q.mean(axis=1), t**2 / 4, atol=1e-9)


def test_spec_frequency_form_differs_from_exact():
    # The paper writes (1 + b/6)^(-1/2) (1 + 5b/48)^(1/2), b = h²ω²; the exact damped frequency has exponent −1.
    b = 1.0
    spec = (1 + b / 6) ** -0.5 * (1 + 5 * b / 48) ** 0.5
    assert abs(float(frequency_ratio(1.0, 1.0)) - spec) > 0.05
    # and the exact one is the imaginary part of the characteristic root
    roots = np.roots([1 + b / 6, 0.5, 1.0])
    np.testing.assert_allclose(np.abs(roots.imag).max(), float(frequency_ratio(1.0, 1.0)), rtol=1e-12)


def test_batched_over_h_and_stiffness_matches_single_runs():
    system, p = spring_chain(M10, [2e3, 1e8], 20.0)
    ts = jnp.linspace(0.0, 1.0, 101)
    hs = jnp.array([0.001, 0.01, 0.001])
    k1s = jnp.array([2e3, 2e3, 5e3])
    batch = {
        **jax.tree.map(lambda x: jnp.broadcast_to(x, (3,) + x.shape), p),
        "h": hs,
        "K": jax.vmap(lambda k1: chain_stiffness(jnp.stack([k1, 1e8])))(k1s),
    }
    y0 = jnp.zeros(6)
    f = vector_field(system)
    run = jax.jit(jax.vmap(lambda p: solve(f, y0, p, ts, rtol=1e-8, atol=1e-10)))
    sol = run(batch)
    assert bool(sol.ok.all())
    for i in range(3):
        single = {**p, "h": hs[i], "K": batch["K"][i]}
        q, _ = _run(system, single, ts, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(np.asarray(sol.ys[i, :, :3]), q, atol=1e-12)
        exact, _ = modal_solution(
            single["M"], single["K"], single["F"], np.zeros(3), np.zeros(3), np.asarray(ts), h=float(hs[i])
        )
        assert np.abs(q - exact).max() < 1e-6


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="h = -0.1"):
        spring_chain(M10, [1.0, 1.0], 1.0, h=-0.1)
    with pytest.raises(ValueError, match="needs 2 stiffnesses"):
        spring_chain(M10, [1.0], 1.0)

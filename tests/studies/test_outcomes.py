"""Outcome reductions on hand-made arrays, and named outcomes on a real trajectory."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.studies.outcomes import (
    first_time,
    impact_count,
    keep_every,
    max_after_first_impact,
    max_penetration,
    outcome,
    peak_impulse,
    rest_time,
    simulate_outcomes,
)


def test_array_reductions():
    P = jnp.array([[0.0, 0.0], [2.0, 0.0], [0.5, 0.0], [0.0, 0.0], [1.0, 3.0], [1.0, 3.0], [0.0, 0.0]])
    assert float(peak_impulse(P)) == 3.0
    # onsets: contact 0 at rows 1 and 4, contact 1 at row 4 (rows 1-2 and 4-5 are single episodes)
    assert int(impact_count(P, 1e-9)) == 3
    assert int(impact_count(P, 0.75)) == 3  # row 2 (0.5) now ends episode 1 early: still 3 onsets
    assert int(impact_count(P, 1.5)) == 2
    t = jnp.arange(6.0)
    u = jnp.array([[1.0], [0.5], [1e-5], [0.2], [1e-5], [0.0]])
    assert float(rest_time(t, u, 1e-3)) == 4.0
    assert float(rest_time(t, jnp.ones((6, 1)), 1e-3)) == 5.0  # still moving: censored at t_final
    assert float(rest_time(t, jnp.zeros((6, 1)), 1e-3)) == 0.0
    g = jnp.array([[0.1, 0.2], [-0.003, 0.1], [0.0, -0.001]])
    assert float(max_penetration(g)) == pytest.approx(0.003)
    assert float(max_penetration(jnp.abs(g))) == 0.0
    x = jnp.array([1.0, 0.0, 0.4, 0.6, 0.3, 0.9])
    imp = jnp.array([[0.0], [0.0], [1.0], [0.0], [0.0], [0.0]])
    assert float(max_after_first_impact(x, imp, 1e-9)) == 0.9
    assert np.isnan(float(max_after_first_impact(x, jnp.zeros((6, 1)), 1e-9)))
    np.testing.assert_array_equal(keep_every(jnp.arange(11), 5), [0, 5, 10])
    assert float(first_time(t, x >= 0.5)) == 0.0 and float(first_time(t, (x >= 0.5) & (t > 0))) == 3.0
    assert float(first_time(t, x >= 2.0)) == 5.0  # never: censored at t_final
    assert float(first_time(t, (x <= 0.35) & (t > 0))) == 1.0


def test_named_outcomes_on_a_bouncing_ball():
    """Ball from 1 m, ε = 0.5: first rebound ≈ ε² m; every quantity cross-checked on the raw trajectory."""
    m = get_model("bouncing-ball", restitution=0.5)
    q0, u0 = m.initial_state(m.params)
    dt, n = 1e-3, 1500
    tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=n)
    names = [
        "peak_impulse",
        "impacts",
        "rest_time",
        "max_penetration",
        "final:y",
        "max:0",
        "rebound:y",
        "series:y",
        "series:gap",
        "series:energy",
        "series:speed",
        "first_below:y=0.5",
        "first_above:y=2",
    ]
    outs = {name: outcome(name, m.system, save_every=10) for name in names}
    all_outcomes = jax.jit(lambda tr, p: {k: o.fn(tr, m.system, p) for k, o in outs.items()})
    vals = {k: np.asarray(v) for k, v in all_outcomes(tr, m.params).items()}
    P = np.asarray(tr.impulse_normal[:, 0])
    v_impact = np.sqrt(2 * 9.81 * 1.0)
    assert vals["peak_impulse"] == pytest.approx(P.max())
    assert vals["peak_impulse"] == pytest.approx(1.5 * v_impact, rel=0.01)  # (1 + ε) m v
    assert vals["impacts"] == np.sum((P[1:] > 1e-9) & (P[:-1] <= 1e-9))
    assert vals["impacts"] >= 3
    assert 0.2 < vals["rebound:y"] < 0.25  # the O(dt) value is checked in the next test
    assert vals["max:0"] == pytest.approx(1.0)
    assert vals["final:y"] == float(tr.q[-1, 0])
    assert vals["series:y"].shape == (n // 10 + 1,)
    np.testing.assert_array_equal(vals["series:y"], np.asarray(tr.q[::10, 0]))
    np.testing.assert_array_equal(vals["series:gap"], vals["series:y"])  # radius 0: gap = y
    assert vals["max_penetration"] == pytest.approx(max(0.0, -float(tr.q[:, 0].min())))
    assert outs["rest_time"].kind == "scalar" and outs["series:y"].kind == "series"
    # Free fall from 1 m reaches y = 0.5 at √(2 · 0.5 / g), to the step; y = 2 is never reached (t_final).
    assert abs(vals["first_below:y=0.5"] - np.sqrt(1.0 / 9.81)) <= dt
    assert vals["first_above:y=2"] == pytest.approx(n * dt)


def test_rebound_height_converges_to_e_squared():
    """First rebound of a ball dropped from 1 m is ε² m exactly; Moreau–Jean's error is O(dt)."""
    m = get_model("bouncing-ball", restitution=0.5)
    q0, u0 = m.initial_state(m.params)
    rebound = outcome("rebound:y", m.system)
    err = []
    for dt in (1e-3, 1e-4):
        tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=int(round(1.2 / dt)))
        err.append(abs(float(rebound.fn(tr, m.system, m.params)) - 0.25))
    assert err[1] < 5e-4 and err[1] < err[0] / 5, err


def test_unknown_outcome_and_coordinate():
    m = get_model("bouncing-ball")
    for bad in ("first_above:y", "first_above:y=high", "first_below:=1", "first_above:y=nan"):
        with pytest.raises(ValueError, match=r"first_above:<coord>=<level>"):
            outcome(bad, m.system)
    with pytest.raises(ValueError, match=r"unknown outcome 'peak'; scalars: \['peak_impulse'"):
        outcome("peak", m.system)
    with pytest.raises(ValueError, match=r"unknown coordinate 'x'; coordinates: \['y'\]"):
        outcome("final:x", m.system)
    with pytest.raises(ValueError, match=r"needs a system with bilateral constraints"):
        outcome("max_phi", m.system)


@pytest.mark.parametrize(
    "model_name, names, n_steps",
    [
        (
            "four-bar",
            [
                "peak_impulse",
                "impacts",
                "rest_time",
                "max_penetration",
                "max_phi",
                "max_phi_dot",
                "final:bar1.theta",
                "min:bar1.x",
                "rebound:bar1.theta",
                "series:gap",
                "series:bar1.theta",
                "series:energy",
                "series:phi",
                "series:speed",
                "peak_force",
                "peak_accel:bar1.theta",
                "free_flight",
            ],
            405,
        ),
        (
            "bouncing-ball",
            [
                "peak_impulse",
                "impacts",
                "rest_time",
                "max_penetration",
                "max:y",
                "rebound:y",
                "series:y",
                "series:energy",
                "first_below:y=0.5",
                "first_above:y=2",
            ],
            1500,
        ),
    ],
)
def test_streamed_outcomes_equal_the_trajectory_outcomes(model_name, names, n_steps):
    """simulate_outcomes (reduced inside the scan, no trajectory) = the reductions of a stored trajectory.

    The four-bar runs with friction 0.2 (the NSGS path), impacts, and 405 steps so the last 5
    steps fall after the last kept row of save_every = 10.
    """
    overrides = {"friction": 0.2, "restitution": 0.7} if model_name == "four-bar" else {"restitution": 0.5}
    m = get_model(model_name, **overrides)
    q0, u0 = m.initial_state(m.params)
    dt = 1e-3
    outs = [outcome(name, m.system, save_every=10, dt=dt) for name in names]
    tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=n_steps)
    ref = jax.jit(lambda tr, p: {o.name: o.fn(tr, m.system, p) for o in outs})(tr, m.params)
    got = jax.jit(
        lambda p, q0, u0: simulate_outcomes(m.system, p, q0, u0, dt=dt, n_steps=n_steps, outcomes=outs, save_every=10)
    )(m.params, q0, u0)
    assert bool(got["converged"]) == bool(np.all(tr.diagnostics.converged)) and bool(got["state_finite"])
    assert float(ref["impacts"]) >= 2 and float(ref["peak_impulse"]) > 0  # the run has impacts to count
    for name in names:
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(ref[name]), rtol=1e-12, atol=1e-12, err_msg=name)

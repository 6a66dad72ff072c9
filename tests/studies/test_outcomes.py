"""Outcome reductions on hand-made arrays, and named outcomes on a real trajectory."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.studies import plots
from jaxcontact.studies.outcomes import (
    _reference_path,
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
                "free_flight:wall",
                "peak_force:0",
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


def test_per_contact_free_flight_and_peak_force_by_hand():
    """A ball dropped from h = 1 m with restitution 0 flies √(2h/g) = 0.4515 s, then rests on its contact (an impulse
    m g dt every step): over 1 s its contact is open 0.4515 of the time, to a step; its peak force is the impact's
    m √(2gh) / dt plus at most 2 m g (the ball meets the ground up to a step late, and the impulse also holds
    gravity over its step). On the rocking block each corner's outcome reads its own column of impulses."""
    m = get_model("bouncing-ball", restitution=0.0)
    q0, u0 = m.initial_state(m.params)
    dt, n = 1e-3, 1000
    tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=n)
    mass, g = float(m.params["mass"]), 9.81
    free = float(outcome("free_flight:0", m.system).fn(tr, m.system, m.params))
    assert abs(free - np.sqrt(2.0 / g) / (n * dt)) <= 1.0 / n, free
    peak = float(outcome("peak_force:0", m.system, dt=dt).fn(tr, m.system, m.params))
    assert 0.0 <= peak - mass * np.sqrt(2.0 * g) / dt <= 2.0 * mass * g, peak

    rb = get_model("rocking-block")
    q0, u0 = rb.initial_state(rb.params)
    tr = simulate(rb.system, rb.params, q0, u0, dt=dt, n_steps=600)
    P = np.asarray(tr.impulse_normal)
    for j, corner in enumerate(rb.system.contact_names):
        free = outcome(f"free_flight:{corner}", rb.system).fn(tr, rb.system, rb.params)
        assert float(free) == pytest.approx(np.sum(P[1:, j] <= 1e-9) / 600, rel=1e-14)
        peak = outcome(f"peak_force:{corner}", rb.system, dt=dt).fn(tr, rb.system, rb.params)
        assert float(peak) == pytest.approx(P[:, j].max() / dt, rel=1e-14)
    both = [float(outcome(f"free_flight:{c}", rb.system).fn(tr, rb.system, rb.params)) for c in ("left", "right")]
    assert abs(both[0] - both[1]) > 0.02, both  # the corners fly at different times
    # a fraction of the steps, with or without a contact named: dimensionless both ways (the plots' labels)
    assert outcome("free_flight:left", rb.system).unit == outcome("free_flight", rb.system).unit == "1"
    text, unit = plots.describe("free_flight:left", plots.study_labels([outcome("free_flight:left", rb.system)], []))
    assert unit == "1" and "[" not in plots.axis_label("free_flight:left", {"free_flight:left": (text, unit)})


def test_per_contact_outcomes_refuse_bad_contacts():
    m = get_model("four-bar")
    with pytest.raises(ValueError, match=r"'free_flight:seat': unknown contact 'seat'; contacts: \['wall'\]"):
        outcome("free_flight:seat", m.system)
    with pytest.raises(ValueError, match=r"'peak_force:1': contact index 1 outside \[0, 1\)"):
        outcome("peak_force:1", m.system, dt=1e-3)
    with pytest.raises(ValueError, match="outcome peak_force:wall needs the time step dt"):
        outcome("peak_force:wall", m.system)


def _ball_with_offset_observable():
    """The bouncing ball whose observable ``y`` is its height plus a parameter ``offset`` the ball itself lacks."""
    m = get_model("bouncing-ball", restitution=0.5)
    return m._replace(params={**m.params, "offset": jnp.zeros(())}, observables={"y": lambda q, p: q[0] + p["offset"]})


# The reference models of the path outcomes' tests, by name (a study is given Model builders, not names).
REFERENCES = {name: functools.partial(get_model, name) for name in ("bouncing-ball", "four-bar")}


def test_path_error_against_a_reference_model():
    """The ball against the registered ball (its restitution 0.5, shared, is given to the reference): error 0; an
    observable offset by a parameter the reference lacks: that offset, in RMS and max, for every sample of a study's
    evaluator (jit of vmap: the reference is simulated once, outside the samples); streamed = stored trajectory."""
    from jaxcontact.stepping import MoreauJean
    from jaxcontact.studies.montecarlo import make_evaluator

    dt, n = 1e-3, 700
    names = ("path_rms:y@bouncing-ball", "path_max:y@bouncing-ball")
    same = get_model("bouncing-ball", restitution=0.5)
    q0, u0 = same.initial_state(same.params)
    outs = [outcome(k, same.system, dt=dt, references=REFERENCES) for k in names]
    assert outs[0].unit == "m" and "bouncing-ball" in outs[0].description
    got = jax.jit(lambda: simulate_outcomes(same.system, same.params, q0, u0, dt=dt, n_steps=n, outcomes=outs))()
    tr = simulate(same.system, same.params, q0, u0, dt=dt, n_steps=n)
    assert float(jnp.max(tr.impulse_normal)) > 0  # the run bounces: a different restitution would show
    for o in outs:
        assert float(got[o.name]) == 0.0 and float(o.fn(tr, same.system, same.params)) == 0.0

    m = _ball_with_offset_observable()
    outs = [outcome(k, m.system, dt=dt, observables=m.observables, references=REFERENCES) for k in names]
    evaluate = make_evaluator(m, outs, dt=dt, n_steps=n, scheme=MoreauJean(), save_every=10)
    offsets = jnp.array([0.0, 0.1, 0.25])
    _reference_path.cache_clear()
    got = jax.jit(jax.vmap(evaluate))({"offset": offsets})
    assert _reference_path.cache_info().misses == 1  # one reference run for both outcomes and every sample
    for k in names:
        np.testing.assert_allclose(np.asarray(got[k]), offsets, rtol=1e-12, atol=1e-15, err_msg=k)
    p = {**m.params, "offset": jnp.asarray(0.25)}
    tr = simulate(m.system, p, q0, u0, dt=dt, n_steps=n)
    assert [float(o.fn(tr, m.system, p)) for o in outs] == pytest.approx([0.25, 0.25], rel=1e-12)


def test_path_error_refuses_bad_specs_by_name():
    from jaxcontact.stepping import MoreauJean
    from jaxcontact.studies.montecarlo import make_evaluator

    m = get_model("bouncing-ball")
    refs = {**REFERENCES, "no-such-model": functools.partial(get_model, "no-such-model")}
    for bad in ("path_rms:y", "path_rms:@bouncing-ball", "path_max:y,y@bouncing-ball", "path_rms:y,@bouncing-ball"):
        with pytest.raises(ValueError, match=r"must read path_(rms|max):<q1>\[,<q2>…\]@<model>"):
            outcome(bad, m.system, dt=1e-3, references=refs)
    with pytest.raises(ValueError, match=r"'path_rms:y@no-such-model': reference model: unknown model 'no-such"):
        outcome("path_rms:y@no-such-model", m.system, dt=1e-3, references=refs)
    with pytest.raises(ValueError, match=r"reference model 'slider-bar' unknown here: this model's references are"):
        outcome("path_rms:y@slider-bar", m.system, dt=1e-3, references=refs)
    with pytest.raises(ValueError, match=r"'bouncing-ball' unknown here: the model declares no reference models"):
        outcome("path_rms:y@bouncing-ball", m.system, dt=1e-3)
    with pytest.raises(ValueError, match="outcome path_rms:y@bouncing-ball needs the time step dt"):
        outcome("path_rms:y@bouncing-ball", m.system, references=refs)
    with pytest.raises(ValueError, match=r"the reference 'four-bar' has no 'y'"):
        outcome("path_rms:y@four-bar", m.system, dt=1e-3, references=refs)
    # A parameter the reference shares that varies between samples: the reference would be needed per sample.
    o = outcome("path_rms:y@bouncing-ball", m.system, dt=1e-3, references=refs)
    evaluate = make_evaluator(m, [o], dt=1e-3, n_steps=10, scheme=MoreauJean(), save_every=10)
    with pytest.raises(ValueError, match=r"uses the parameter 'restitution', which varies between samples"):
        jax.jit(jax.vmap(evaluate))({"restitution": jnp.array([0.3, 0.6])})


def test_the_command_line_resolves_a_path_outcomes_reference_by_name(tmp_path, capsys):
    """``mc --outcome path_rms:…@NAME`` with a model that declares no references: the command resolves NAME
    as it resolves a model, so the outcome reaches the reference (here to refuse a quantity it lacks)."""
    from jaxcontact import cli

    argv = ["mc", "bouncing-ball", "--n", "4", "--outcome", "path_max:y@four-bar", "--out", str(tmp_path / "o")]
    assert cli.main([*argv, "--no-compile-cache"]) == 2
    assert "the reference 'four-bar' has no 'y': unknown coordinate 'y'" in capsys.readouterr().err

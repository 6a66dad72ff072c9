"""The spatial slider–crank with a clearance in its crank–rod ball joint (rigid and compliant).

Independent truths: the ideal mechanism has no freedom, so its slider follows the closed form
x(θ) = √(l2² − (o_y − l1 cos θ)² − (o_z − l1 sin θ)²) at θ = ω t; with a clearance the slider's
path tends to it as the clearance → 0, and the peaks of the joint's impulse (force) grow with the
clearance — the trend of the clearance-joint literature (Flores et al.).
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.models import spatial_slider_crank as ssc
from jaxcontact.simulate import simulate, simulate_model
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.stepping.projection import Projection
from jaxcontact.studies.montecarlo import default_study, make_evaluator
from jaxcontact.studies.outcomes import outcome

CLEARANCES = np.array([4e-4, 1e-4, 2.5e-5])
NAMES = ("peak_impulse", "peak_force", "peak_accel:slider.vx", "impacts", "max:eccentricity", "series:slider.x")


def slider_x(p, t):
    """The ideal mechanism's slider position at times t (closed form)."""
    th = float(p["omega"]) * np.asarray(t)
    l1, l2, oy, oz = (float(p[k]) for k in ("l1", "l2", "offset_y", "offset_z"))
    return np.sqrt(l2**2 - (oy - l1 * np.cos(th)) ** 2 - (oz - l1 * np.sin(th)) ** 2)


@pytest.mark.parametrize(
    "scheme", [MoreauJean(projection=Projection()), Penalty(projection=Projection())], ids=["moreau-jean", "penalty"]
)
@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_ideal_mechanism_follows_the_closed_form_with_joints_kept_by_projection(scheme):
    """200 steps of 1e-4 s (a ~2/3 crank turn): ‖Φ‖ ≤ 1e-10 and the slider on x(ωt) to 1e-10 m — also under the
    penalty scheme, which steps spatial bodies through their velocity map (RK4 on q̇ = T(q) u, retracted)."""
    m = get_model("spatial-slider-crank", contact="ideal")
    traj = simulate_model(m, scheme=scheme, dt=1e-4, t_final=0.02)
    assert float(jnp.max(traj.diagnostics.phi)) <= 1e-10
    assert float(jnp.max(traj.diagnostics.phi_dot)) <= 1e-9
    np.testing.assert_allclose(np.asarray(traj.q[:, 14]), slider_x(m.params, traj.t), atol=1e-10)
    quats = np.asarray(traj.q).reshape(len(traj.t), 3, 7)[:, :, 3:]
    np.testing.assert_allclose(np.linalg.norm(quats, axis=-1), 1.0, atol=1e-14)


def test_initial_state_is_assembled_and_consistent():
    m = get_model("spatial-slider-crank", contact="ideal")
    q0, u0 = m.initial_state(m.params)
    sys = m.system
    assert float(jnp.max(jnp.abs(sys.constraints(q0, 0.0, m.params)))) < 1e-15
    # Slider at rest at θ = 0? No: the offset tilts the dead centre; its speed is the closed form's derivative.
    h = 1e-7
    v = (slider_x(m.params, h) - slider_x(m.params, -h)) / (2 * h)
    np.testing.assert_allclose(float(u0[12]), v, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(u0[3:6]), [0.0, 0.0, 200.0], atol=1e-12)  # crank spins about its e3 = x


def _study(contact, scheme, dt, t_final, clearances=CLEARANCES):
    m = get_model("spatial-slider-crank", contact=contact)
    save = int(round(t_final / dt)) // 10
    outs = [outcome(k, m.system, dt=dt, observables=m.observables, save_every=save) for k in NAMES]
    ev = make_evaluator(m, outs, dt=dt, n_steps=int(round(t_final / dt)), scheme=scheme, save_every=save)
    return {k: np.asarray(v) for k, v in jax.jit(jax.vmap(ev))({"clearance": jnp.asarray(clearances)}).items()}, m


def _trend(r, p, t_final, n_rows):
    assert np.all(r["converged"]) and np.all(r["state_finite"])
    ideal = slider_x(p, np.linspace(0.0, t_final, n_rows))
    return np.max(np.abs(r["series:slider.x"] - ideal[None]), axis=1)


T_SHORT = 0.01  # a third of a crank turn: the ball leaves its seat and hits the socket a few times


@pytest.fixture(scope="module")
def rigid():
    return _study("rigid", MoreauJean(), 1e-5, T_SHORT)


def test_rigid_path_tends_to_the_ideal_and_peaks_grow_with_clearance(rigid):
    r, m = rigid
    dev = _trend(r, m.params, T_SHORT, r["series:slider.x"].shape[1])
    assert np.all(np.diff(dev) < 0) and np.all(dev < 3.0 * CLEARANCES + 2e-5), dev  # → the ideal path
    assert np.all(np.diff(r["peak_impulse"]) < 0), r["peak_impulse"]  # clearances decrease
    assert np.all(np.diff(r["peak_accel:slider.vx"]) < 0), r["peak_accel:slider.vx"]
    assert np.all(r["impacts"] >= 1)
    # The ball stays in its socket up to Moreau–Jean's one-step penetration (impact speed × dt).
    assert np.all(r["max:eccentricity"] < CLEARANCES + 5e-5), r["max:eccentricity"]


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_batch_equals_single_runs(rigid):
    r, m = rigid
    dt = 1e-5
    p = m.derive(dict(m.params)) if m.derive else dict(m.params)
    p["clearance"] = jnp.asarray(CLEARANCES[1])
    q0, u0 = m.initial_state(p)
    traj = simulate(m.system, p, q0, u0, dt=dt, n_steps=int(round(T_SHORT / dt)), scheme=MoreauJean())
    np.testing.assert_allclose(float(jnp.max(traj.impulse_normal)), r["peak_impulse"][1], rtol=1e-12)
    save = int(round(T_SHORT / dt)) // 10
    np.testing.assert_allclose(np.asarray(traj.q[::save, 14]), r["series:slider.x"][1], rtol=0, atol=1e-13)


@pytest.mark.slow  # a compiled compliant study of 2 000 RK4 steps (~20 s of CPU)
def test_compliant_joint_agrees_with_the_rigid_in_trend(rigid):
    """Same clearances, compliant ball (Hertz, Hunt–Crossley damping matched to ε): the same trends — the path
    tends to the ideal, the peaks grow with the clearance — and the two slider paths stay within the clearance."""
    r_rigid, m = rigid
    r, _ = _study("compliant", Penalty(), 5e-6, T_SHORT)
    dev = _trend(r, m.params, T_SHORT, r["series:slider.x"].shape[1])
    assert np.all(np.diff(dev) < 0) and np.all(dev < 3.0 * CLEARANCES), dev
    assert np.all(np.diff(r["peak_force"]) < 0) and np.all(np.diff(r["peak_impulse"]) < 0), r["peak_force"]
    assert np.all(np.diff(r["peak_accel:slider.vx"]) < 0), r["peak_accel:slider.vx"]
    gap = np.max(np.abs(r["series:slider.x"] - r_rigid["series:slider.x"]), axis=1)
    assert np.all(gap < 2.0 * CLEARANCES + 2e-5), gap


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_compliant_joint_short_run_is_finite_and_tracks_the_ideal():
    """A fast default check of the compliant variant (Penalty on spatial bodies with a compliant ball joint)."""
    m = get_model("spatial-slider-crank", contact="compliant", clearance=1e-4)
    traj = simulate_model(m, scheme=Penalty(), dt=5e-6, t_final=2e-3, save_every=40)
    assert np.all(np.isfinite(np.asarray(traj.q)))
    assert float(jnp.max(traj.diagnostics.phi)) < 1e-8  # Baumgarte keeps the 15 joint rows
    np.testing.assert_allclose(np.asarray(traj.q[:, 14]), slider_x(m.params, traj.t), atol=3e-4)


def test_default_study_is_rigid_and_compliant_on_request():
    spec = default_study(get_model("spatial-slider-crank"))
    assert spec.scheme.name == "moreau-jean" and dict(spec.model_options) == {"contact": "rigid"}
    assert set(spec.space.names) == {"clearance", "restitution", "friction"}
    soft = default_study(get_model("spatial-slider-crank"), scheme=Penalty())
    assert dict(soft.model_options) == {"contact": "compliant"} and soft.space == spec.space  # same samples


def test_stiffness_follows_the_sampled_clearance():
    m = get_model("spatial-slider-crank", contact="compliant")
    p = m.derive({**m.params, "clearance": jnp.asarray(1e-4)})
    assert float(p["stiffness"]) == pytest.approx(
        float(get_model("spatial-slider-crank", contact="compliant", clearance=1e-4).params["stiffness"]), rel=1e-12
    )
    assert float(p["stiffness"]) > float(m.params["stiffness"])  # Hertz: a tighter fit is stiffer


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_mc_command_writes_summary_and_plots(tmp_path, capsys):
    from jaxcontact.cli import main

    out = tmp_path / "mc"
    rc = main(
        [
            "mc",
            "spatial-slider-crank",
            "--n",
            "3",
            "--no-sobol",
            "--dt",
            "1e-5",
            "--t-final",
            "0.002",
            "--save-every",
            "20",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert rc == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures"]["n_failed"] == 0
    assert {"peak_impulse", "peak_accel:slider.vx", "impacts", "max:eccentricity"} <= set(summary["outcomes"])
    assert summary["outcomes"]["peak_accel:slider.vx"]["unit"] == "m/s²"
    for f in ("bands.png", "histograms.png", "samples.npz"):
        assert os.path.getsize(out / f) > 0


def test_params_command_lists_the_model(capsys):
    from jaxcontact.cli import main

    assert main(["params", "spatial-slider-crank"]) == 0
    text = capsys.readouterr().out
    assert "clearance" in text and "ball_radius" in text and "m " in text


def test_snapshots_are_drawn(tmp_path):
    """The model's 3D picture, on the ideal mechanism's poses over a turn (no simulation needed)."""
    from types import SimpleNamespace

    m = get_model("spatial-slider-crank", contact="rigid")
    t = np.linspace(0.0, 2 * np.pi / 200.0, 12)
    q = np.stack([np.asarray(ssc.initial_pose(m.params, 200.0 * ti)) for ti in t])
    assert (
        max(
            float(
                jnp.max(
                    jnp.abs(
                        get_model("spatial-slider-crank", contact="ideal").system.constraints(
                            jnp.asarray(qi), ti, m.params
                        )
                    )
                )
            )
            for qi, ti in zip(q, t)
        )
        < 1e-14
    )  # the poses are assembled at θ = ω t
    path = m.picture(SimpleNamespace(q=q, t=t), m.params, str(tmp_path / "s.png"))
    assert os.path.getsize(path) > 10_000


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match=r"l2 = .* must exceed l1"):
        get_model("spatial-slider-crank", l2=0.1)
    with pytest.raises(ValueError, match="clearance = .* breaks the rule clearance > 0"):
        get_model("spatial-slider-crank", clearance=0.0)
    with pytest.raises(ValueError, match="contact = 'soft' must be one of"):
        get_model("spatial-slider-crank", contact="soft")
    m = get_model("spatial-slider-crank")
    with pytest.raises(ValueError, match="peak_accel:slider.x: .* name a velocity"):
        outcome("peak_accel:slider.x", m.system, dt=1e-5)
    # The schemes it suggests are those that treat both rigid contacts and spatial bodies.
    with pytest.raises(
        ValueError, match=r"penalty scheme treats compliant contacts only.*treats them \(moreau-jean\) "
    ):
        simulate_model(m, scheme=Penalty())


# The 18-velocity mechanism through located impacts (four steps each), in both modes: minutes of compile.
@pytest.mark.slow
def test_clearance_gradient_after_the_first_impact_matches_finite_differences():
    """The slider's position 1.2 ms in (after the ball's first impact in its socket at 0.71 ms, before the second
    at 1.58 ms) against the clearance, with the impact located in the step so the motion is continuous in c: forward
    and reverse mode against the fourth-order central stencil."""
    m = get_model("spatial-slider-crank", contact="rigid")
    scheme = MoreauJean(impact_location="interpolated", diagnostics=False)
    dt, t = 1e-5, 1.2e-3

    def run(c):
        return simulate_model(m, params={**m.params, "clearance": c}, dt=dt, t_final=t, scheme=scheme)

    c0 = jnp.asarray(m.params["clearance"])
    assert int(jnp.sum(run(c0).impulse_normal[:, 0] > 0)) == 1  # one impact in the window
    x = lambda c: run(c).q[-1, 14]  # the slider's x
    # h = 2e-4 c: the stencil's truncation is below its rounding, ε · 0.2 m / h ≈ 4e-10 per evaluation and more
    # through the located crossing (a gap of 5e-4 m as a difference of positions of 0.1 m): 1e-6 relative.
    h = 1e-7
    f = lambda k: float(x(c0 + k * h))
    fd = (8.0 * (f(1) - f(-1)) - (f(2) - f(-2))) / (12.0 * h)
    assert abs(fd) > 1e-2  # the slider feels the clearance
    for g in (jax.jacfwd(x)(c0), jax.grad(x)(c0)):
        assert np.isfinite(float(g))
        np.testing.assert_allclose(float(g), fd, rtol=1e-6)

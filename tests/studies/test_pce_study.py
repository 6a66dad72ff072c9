"""Polynomial chaos studies of built-in models: gradients through the study's evaluator, PCE against
Monte Carlo on the four-bar, the unreliable-fit flag on an impact count, the CLI's --method."""

import dataclasses
import json
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.projection import Projection
from jaxcontact.studies.montecarlo import default_study, prepare_study
from jaxcontact.studies.pce import PCEWarning
from jaxcontact.studies.pce_study import grad_key, run_pce_study, with_gradients

DATA = Path(__file__).resolve().parents[1] / "data" / "pce_four_bar.json"
FOUR_BAR = ("restitution=uniform(0.6,0.95)", "wall_distance=uniform(0.04,0.08)", "l1=uniform(0.19,0.21)")


def _four_bar(n, sampler="lhs"):
    # Same study as bench/references/pce_four_bar.py (which stored the Monte Carlo reference).
    return default_study(
        get_model("four-bar"),
        n=n,
        params=FOUR_BAR,
        only=True,
        outcomes=("final:bar1.theta", "impacts"),
        sampler=sampler,
        seed=0,
        dt=1e-3,
        t_final=2.0,
        scheme=MoreauJean(projection=Projection()),
    )


def _gradient_against_fd(spec, sample, outcome, h):
    ps = prepare_study(spec, differentiated=True)
    uncertain = list(spec.space.uncertain)
    fn = jax.jit(with_gradients(ps.evaluate, uncertain, [outcome]))
    f = jax.jit(lambda s: ps.evaluate(s)[outcome])
    s = {k: jnp.asarray(v) for k, v in sample.items()}
    out = fn(s)
    for p in uncertain:
        sp, sm = dict(s), dict(s)
        sp[p], sm[p] = s[p] + h, s[p] - h
        fd = (f(sp) - f(sm)) / (2 * h)
        assert float(out[grad_key(outcome, p)]) == pytest.approx(float(fd), rel=1e-5, abs=1e-9), p
    return out


def test_ball_gradients_match_finite_differences_through_an_impact():
    # 0.7 s: the ball (dropped from ~1 m) has hit the ground once and is on its way up.
    spec = default_study(
        get_model("bouncing-ball"),
        n=4,
        params=("restitution=uniform(0.6,0.9)", "height=uniform(0.9,1.1)"),
        only=True,
        outcomes=("final:y", "peak_impulse"),
        t_final=0.7,
        dt=1e-3,
    )
    out = _gradient_against_fd(spec, {"restitution": 0.8, "height": 1.0}, "final:y", 1e-6)
    assert float(out["peak_impulse"]) > 0  # the impact happened
    assert float(out[grad_key("final:y", "restitution")]) > 0.1  # a livelier ball is higher


@pytest.mark.slow
def test_four_bar_final_angle_gradient_matches_fd_and_geometry():
    # At rest on the wall (resting contacts projected onto it) θ = arccos(−w / l1): dθ/dw = 1/(l1 sin θ),
    # dθ/dl1 = −w/(l1² sin θ); restitution does not move the rest angle.
    w, l1 = 0.05, 0.2
    out = _gradient_against_fd(
        _four_bar(4), {"restitution": 0.8, "wall_distance": w, "l1": l1}, "final:bar1.theta", 1e-6
    )
    th = np.arccos(-w / l1)
    assert float(out["final:bar1.theta"]) == pytest.approx(th, abs=1e-12)
    assert float(out[grad_key("final:bar1.theta", "wall_distance")]) == pytest.approx(1 / (l1 * np.sin(th)), rel=1e-9)
    assert float(out[grad_key("final:bar1.theta", "l1")]) == pytest.approx(-w / (l1**2 * np.sin(th)), rel=1e-9)
    assert abs(float(out[grad_key("final:bar1.theta", "restitution")])) < 1e-12


def _inside_mc(summary, ref, outcome):
    # The rest angle does not depend on the restitution at all: its Monte Carlo interval is [4e-31, 6e-31]
    # and the expansion's index ~1e-14 — both rounding. Intervals are therefore widened by 1e-12.
    for k, m in ref["mc"][outcome]["indices"].items():
        p = summary["outcomes"][outcome]["sobol"]["indices"][k]
        for key in ("S1", "ST"):
            lo, hi = m[f"{key}_ci"]
            assert lo - 1e-12 <= p[key] <= hi + 1e-12, (k, key, p[key], m[f"{key}_ci"])


def test_four_bar_pce_of_stored_simulations_within_monte_carlo_intervals():
    # The 64 simulations of the plain PCE study and the Monte Carlo intervals (5 000 simulations), both
    # stored by bench/references/pce_four_bar.py; the slow test below reruns the study itself.
    from jaxcontact.studies.distributions import ParamSpace
    from jaxcontact.studies.pce import MAX_TAIL_SHARE, fit_pce, germs_of

    ref = json.loads(DATA.read_text())
    smp = ref["pce_samples"]
    assert ref["n_mc"] >= 10 * len(smp["x"])
    germs = germs_of(ParamSpace.parse(FOUR_BAR))
    x = np.asarray(smp["x"])
    xi = np.stack([g.to_standard(x[:, j]) for j, g in enumerate(germs)], axis=1)
    fit = fit_pce(germs, xi, np.asarray(smp["final:bar1.theta"]), name="final:bar1.theta")
    assert fit.reliable and fit.q2 > 0.999
    S1, ST = fit.sobol()
    summary = {
        "outcomes": {
            "final:bar1.theta": {
                "sobol": {"indices": {k: {"S1": S1[j], "ST": ST[j]} for j, k in enumerate(smp["names"])}}
            }
        }
    }
    _inside_mc(summary, ref, "final:bar1.theta")
    for j, k in enumerate(smp["names"]):
        assert S1[j] == pytest.approx(ref["quadrature"]["indices"][k]["S1"], abs=1e-3)
        assert ST[j] == pytest.approx(ref["quadrature"]["indices"][k]["ST"], abs=1e-3)
    with pytest.warns(PCEWarning, match="impacts: polynomial chaos cross-validated Q²"):
        bad = fit_pce(germs, xi, np.asarray(smp["impacts"], float), name="impacts")
    assert not bad.reliable and bad.tail_share > MAX_TAIL_SHARE  # its coefficients do not decay either


@pytest.mark.slow
def test_four_bar_pce_within_monte_carlo_intervals(tmp_path):
    ref = json.loads(DATA.read_text())
    with pytest.warns(PCEWarning, match="impacts: polynomial chaos cross-validated Q²"):
        s = run_pce_study(_four_bar(64), str(tmp_path), method="pce", progress=False, plot=False)
    theta = s["outcomes"]["final:bar1.theta"]
    assert theta["pce"]["reliable"] and theta["pce"]["q2"] > 0.999
    _inside_mc(s, ref, "final:bar1.theta")
    for k, v in ref["quadrature"]["indices"].items():
        assert theta["sobol"]["indices"][k]["S1"] == pytest.approx(v["S1"], abs=1e-3)
        assert theta["sobol"]["indices"][k]["ST"] == pytest.approx(v["ST"], abs=1e-3)
    assert theta["pce"]["mean"] == pytest.approx(ref["quadrature"]["mean"], abs=1e-4)
    impacts = s["outcomes"]["impacts"]
    assert not impacts["pce"]["reliable"] and not impacts["sobol"]["reliable"] and impacts["pce"]["warning"]
    # The same simulations as the stored ones.
    np.testing.assert_allclose(
        np.load(tmp_path / "samples.npz")["out:final:bar1.theta"], ref["pce_samples"]["final:bar1.theta"], rtol=1e-12
    )


@pytest.mark.slow
def test_four_bar_gradient_enhanced_pce_within_monte_carlo_intervals(tmp_path):
    ref = json.loads(DATA.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PCEWarning)
        s = run_pce_study(_four_bar(32), str(tmp_path), method="pce-grad", progress=False, plot=False)
    assert s["outcomes"]["final:bar1.theta"]["pce"]["reliable"]
    _inside_mc(s, ref, "final:bar1.theta")


@pytest.mark.slow
def test_monte_carlo_reference_is_reproduced(tmp_path):
    # The stored reference is what run_study gives for the bench's spec (recomputed: ~10 000 simulations).
    from jaxcontact.studies.montecarlo import run_study

    ref = json.loads(DATA.read_text())
    s = run_study(_four_bar(ref["n_mc"], "sobol"), str(tmp_path), progress=False, plot=False)
    for o in ("final:bar1.theta", "impacts"):
        for k, v in ref["mc"][o]["indices"].items():
            assert s["outcomes"][o]["sobol"]["indices"][k]["ST"] == pytest.approx(v["ST"], abs=1e-9)


def test_chaospy_agrees_on_the_four_bar_samples():
    # chaospy's least-squares PCE of the 64 simulated final angles (stored by bench/references/pce_four_bar.py) and ours
    # on the same total-degree Legendre basis and samples give the same indices.
    from jaxcontact.studies.distributions import ParamSpace
    from jaxcontact.studies.pce import PCE, design_matrix, germs_of, multi_indices

    ref = json.loads(DATA.read_text())
    cp = ref["chaospy"]
    space = ParamSpace.parse(FOUR_BAR)
    x = np.asarray(ref["pce_samples"]["x"])
    theta = np.asarray(ref["pce_samples"]["final:bar1.theta"])
    germs = germs_of(space)
    xi = np.stack([g.to_standard(x[:, j]) for j, g in enumerate(germs)], axis=1)
    alphas = multi_indices(3, cp["order"])
    coef = np.linalg.lstsq(design_matrix(germs, alphas, xi), theta, rcond=None)[0]
    S1, ST = PCE(germs, alphas, coef, 0.0, 0.0, cp["order"], 1.0, len(theta), False).sobol()
    np.testing.assert_allclose(S1, cp["S1"], atol=1e-8)
    np.testing.assert_allclose(ST, cp["ST"], atol=1e-8)


def test_cli_method_pce_grad_writes_summary_and_diagnostics(tmp_path, capsys):
    import argparse

    from jaxcontact.commands import mc

    p = argparse.ArgumentParser()
    mc.add_arguments(p)
    out = tmp_path / "study"
    rc = mc.run(
        p.parse_args(
            [
                "bouncing-ball",
                "--method",
                "pce-grad",
                "--n",
                "32",
                "--only",
                "--param",
                "restitution=uniform(0.5,0.9)",
                "--param",
                "mass=lognormal(0,0.3)",
                "--outcome",
                "peak_impulse",
                "--outcome",
                "impacts",
                "--t-final",
                "0.8",
                "--sampler",
                "lhs",
                "--out",
                str(out),
                "--quiet",
            ]
        )
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "bouncing-ball: 32 simulations (lhs, seed 0)" in text
    assert "peak_impulse       polynomial chaos: Q² = " in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["study"]["method"] == "pce-grad"
    assert summary["study"]["germs"] == {"restitution": "legendre (affine)", "mass": "hermite (exp)"}
    assert "pce_diagnostics.png" in summary["files"] and "sensitivity.png" in summary["files"]
    for f in summary["files"]:
        assert (out / f).stat().st_size > 0
    peak = summary["outcomes"]["peak_impulse"]
    # Peak impulse m ((1 + ε) v + g h) (v the speed at impact from 1 m, g h the weight's share of the step's
    # impulse): a smooth product, reliably expanded. Its exact mean and variance from E[m] = exp(σ²/2),
    # E[m²] = exp(2σ²), E[ε] = 0.7, Var ε = 0.4²/12.
    assert peak["pce"]["reliable"] and peak["pce"]["gradient_rows"]
    npz = np.load(out / "samples.npz")
    e, m, y = npz["param:restitution"], npz["param:mass"], npz["out:peak_impulse"]
    (v, gh), *_ = np.linalg.lstsq(np.stack([1 + e, np.ones_like(e)], axis=1), y / m, rcond=None)
    np.testing.assert_allclose(m * ((1 + e) * v + gh), y, rtol=1e-12)
    assert gh == pytest.approx(9.81e-3, rel=1e-9) and v == pytest.approx(np.sqrt(2 * 9.81), rel=5e-3)
    mean_g = 1.7 * v + gh
    # (exp(σξ) is not a polynomial in ξ: the 32-sample expansion is exact to ~1e-7, not to rounding.)
    assert peak["pce"]["mean"] == pytest.approx(np.exp(0.045) * mean_g, rel=1e-6)
    var = np.exp(0.18) * (mean_g**2 + v**2 * 0.4**2 / 12) - np.exp(0.09) * mean_g**2
    assert peak["pce"]["std"] ** 2 == pytest.approx(var, rel=1e-4)
    idx = peak["sobol"]["indices"]
    assert idx["mass"]["S1_ci"] == [None, None] and idx["mass"]["ST"] > idx["restitution"]["ST"] > 0.01
    np.testing.assert_allclose(npz["out:d(peak_impulse)/d(mass)"], y / m, rtol=1e-12)


def test_a_wrong_pathwise_gradient_shows_as_a_poor_q2(tmp_path):
    # Moreau–Jean's impact speed is g times the step count before the contact activates: its derivative
    # with respect to the drop height is 0 between activation switches (jacfwd and a small finite
    # difference agree on that), while the speed grows as √(2 g H) over the range. Fed as gradient rows,
    # these zeros contradict the values, and the cross-validated Q² says so.
    spec = default_study(
        get_model("bouncing-ball"),
        n=32,
        params=("restitution=uniform(0.5,0.9)", "height=uniform(0.5,1.5)"),
        only=True,
        outcomes=("peak_impulse",),
        t_final=0.8,
        sampler="lhs",
    )
    with pytest.warns(PCEWarning, match="peak_impulse: polynomial chaos cross-validated Q²"):
        s = run_pce_study(spec, str(tmp_path / "grad"), method="pce-grad", progress=False, plot=False)
    assert not s["outcomes"]["peak_impulse"]["pce"]["reliable"]
    npz = np.load(tmp_path / "grad" / "samples.npz")
    assert np.all(npz["out:d(peak_impulse)/d(height)"] == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PCEWarning)  # the values alone are fitted reliably
        plain = run_pce_study(spec, str(tmp_path / "plain"), method="pce", progress=False, plot=False)
    assert plain["outcomes"]["peak_impulse"]["pce"]["q2"] > 0.99


def test_method_refuses_what_it_cannot_expand(tmp_path):
    spec = default_study(
        get_model("bouncing-ball"),
        n=8,
        params=("restitution=uniform(0.5,0.9)",),
        only=True,
        outcomes=("series:y",),
        t_final=0.2,
    )
    with pytest.raises(ValueError, match="needs at least one scalar outcome"):
        run_pce_study(spec, str(tmp_path), progress=False, plot=False)
    with pytest.raises(ValueError, match="method = 'lars' must be one of"):
        run_pce_study(spec, str(tmp_path), method="lars", progress=False, plot=False)
    implicit = dataclasses.replace(spec, scheme=MoreauJean(differentiation="implicit"), outcomes=("impacts",))
    with pytest.raises(ValueError, match="'pce-grad' takes forward-mode gradients, and the moreau-jean scheme"):
        run_pce_study(implicit, str(tmp_path), method="pce-grad", progress=False, plot=False)


def test_cli_refuses_no_sobol_with_pce(tmp_path, capsys):
    import argparse

    from jaxcontact.commands import mc

    p = argparse.ArgumentParser()
    mc.add_arguments(p)
    rc = mc.run(p.parse_args(["bouncing-ball", "--method", "pce", "--no-sobol", "--out", str(tmp_path), "--quiet"]))
    assert rc == 2
    assert "--no-sobol does not apply to --method pce" in capsys.readouterr().err

"""Failure probabilities of a model's outcome from the CLI (``jaxcontact mc --method subset|form|sorm|importance
--limit``), against the exact probability of a ball's first impact being too hard.

The ball (1 kg, dropped from 1 m, 0.6 s: one impact) takes the normal impulse ``(1 + ε) v + g h`` at its first
impact (``v`` its speed then, ``g h`` the weight's share of the step): linear in the restitution ``ε``. With
``ε ~ truncnormal(0.7, 0.05, 0, 1)`` the event ``peak_impulse > c`` is ``ε > ε*``, whose probability is exact
from the truncated normal's CDF once ``ε*`` is known; ``ε*`` comes from two simulated points on the line.
"""

import argparse
import json

import numpy as np
import pytest
from scipy.stats import truncnorm

from jaxcontact.commands import mc

EPS = "restitution=truncnormal(0.7,0.05,0,1)"
LAW = truncnorm(-0.7 / 0.05, 0.3 / 0.05, loc=0.7, scale=0.05)
LIMIT = "peak_impulse>8.3"
BALL = ["bouncing-ball", "--only", "--param", EPS, "--t-final", "0.6", "--limit", LIMIT]


def _mc(args, capsys=None):
    p = argparse.ArgumentParser()
    mc.add_arguments(p)
    rc = mc.run(p.parse_args(args))
    text = capsys.readouterr() if capsys is not None else None
    return rc, text


def _summary(out):
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def exact():
    """The probability of the event, from the impulse's line through two simulated restitutions."""
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, prepare_study

    spec = default_study(get_model("bouncing-ball"), n=2, params=(EPS,), only=True, outcomes=("peak_impulse",),
                         t_final=0.6, sensitivity=False)  # fmt: skip
    evaluate = prepare_study(spec).evaluate
    (e0, y0), (e1, y1) = [(e, float(evaluate({"restitution": e})["peak_impulse"])) for e in (0.6, 0.9)]
    star = e0 + (8.3 - y0) * (e1 - e0) / (y1 - y0)
    return star, float(LAW.sf(star))


def test_form_finds_the_crossing_and_its_exact_probability(tmp_path, capsys, exact):
    star, p = exact
    out = tmp_path / "form"
    rc, text = _mc([*BALL, "--method", "form", "--out", str(out), "--quiet"], capsys)
    assert rc == 0, text.err
    r = _summary(out)["reliability"]
    assert r["method"] == "form" and r["converged"] and r["limit"] == LIMIT
    assert r["design_point"]["restitution"] == pytest.approx(star, rel=1e-7)
    assert r["probability"] == pytest.approx(p, rel=1e-4)  # one input: FORM is exact for a monotone outcome
    assert r["importance"] == {"restitution": pytest.approx(1.0)}
    assert r["n_simulations"] < 60
    assert f"P[peak_impulse ≥ 8.3] = {r['probability']:.4g} (β = " in text.out
    npz = np.load(out / "samples.npz")
    assert len(npz["out:peak_impulse"]) == r["n_simulations"]
    np.testing.assert_array_equal(npz["failed"], npz["out:peak_impulse"] >= 8.3)
    assert (out / "reliability.png").stat().st_size > 0


def test_subset_and_importance_sampling_agree_with_the_exact_probability_and_resume(tmp_path, capsys, exact):
    _, p = exact
    out = tmp_path / "subset"
    rc, text = _mc([*BALL, "--method", "subset", "--n", "500", "--out", str(out), "--quiet"], capsys)
    assert rc == 0, text.err
    r = _summary(out)["reliability"]
    assert r["method"] == "subset" and r["converged"] and r["levels"] >= 3
    assert r["n_simulations"] == 500 + (r["levels"] - 1) * 450
    assert abs(r["probability"] - p) < 3 * r["standard_error"]
    assert 0.1 < r["cov"] < 0.6
    # Run again: every round is read back from its chunks and the estimate is the same to the last bit.
    rc, text = _mc([*BALL, "--method", "subset", "--n", "500", "--out", str(out), "--quiet"], capsys)
    again = _summary(out)
    assert rc == 0 and again["reliability"]["probability"] == r["probability"]
    assert again["timing"]["n_computed"] == 0 and again["timing"]["n_loaded"] == r["n_simulations"]

    out = tmp_path / "importance"
    rc, text = _mc([*BALL, "--method", "importance", "--n", "400", "--out", str(out), "--quiet"], capsys)
    assert rc == 0, text.err
    r = _summary(out)["reliability"]
    assert abs(r["probability"] - p) < 3 * r["standard_error"] and r["cov"] < 0.15
    assert r["n_simulations"] == 400 + r["form_simulations"]


def test_monte_carlo_reports_the_failed_fraction(tmp_path, capsys):
    out = tmp_path / "mc"
    args = ["bouncing-ball", "--only", "--param", "restitution=uniform(0.6,0.9)", "--t-final", "0.6"]
    rc, text = _mc([*args, "--limit", "peak_impulse>8.0", "--n", "200", "--no-sobol", "--out", str(out),
                    "--quiet", "--no-plots"], capsys)  # fmt: skip
    assert rc == 0, text.err
    s = _summary(out)
    npz = np.load(out / "samples.npz")
    fraction = float(np.mean(npz["out:peak_impulse"] >= 8.0))
    r = s["reliability"]
    assert r["method"] == "montecarlo" and r["probability"] == pytest.approx(fraction) and 0.2 < fraction < 0.5
    assert r["standard_error"] == pytest.approx(np.sqrt(fraction * (1 - fraction) / 200))
    assert "peak_impulse" in s["outcomes"] and "impacts" in s["outcomes"]  # the model's outcomes, the limit's kept
    assert "P[peak_impulse ≥ 8] = " in text.out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--method", "subset"], "--method subset estimates a failure probability: give --limit"),
        (["--method", "form", "--limit", "impacts>1.5"], "'impacts' .* is piecewise constant"),
        (["--method", "pce", "--limit", LIMIT], "--limit applies to --method mc and subset"),
        (["--method", "form", "--limit", LIMIT, "--p0", "0.2"], "--p0 applies to --method subset only"),
        (["--method", "subset", "--limit", LIMIT, "--p0", "1.5"], r"--p0 1.5 must lie in \(0, 1\)"),
        (["--method", "subset", "--limit", LIMIT, "--sampler", "lhs"], "--sampler does not apply to --method subset"),
        (["--method", "form", "--limit", LIMIT, "--n", "100"], "--n does not apply to --method form"),
        (["--method", "subset", "--limit", LIMIT, "--no-step-check"], "--no-step-check applies to --method mc only"),
        (["--method", "subset", "--limit", "peak_impulse>>2"], "cannot parse limit"),
        (["--method", "subset", "--limit", "peak_impulse>8", "--outcome", "series:y"], "drop --outcome series:y"),
        (["--method", "subset", "--limit", "series:y>1"], "'series:y' is a time series"),
        (["--method", "subset", "--limit", "nosuch>1"], "nosuch"),
    ],
)
def test_what_a_reliability_study_cannot_do_is_refused_by_name(tmp_path, capsys, extra, message):
    args = ["bouncing-ball", "--only", "--param", EPS, *extra, "--out", str(tmp_path / "x"), "--quiet"]
    rc, text = _mc(args, capsys)
    assert rc == 2
    assert pytest.importorskip("re").search(message, text.err), text.err
    assert not (tmp_path / "x" / "summary.json").exists()


def test_two_inputs_sorm_corrects_form_by_the_curvature(tmp_path, capsys):
    """Restitution and drop height: with the impact located inside the step the impulse is (1 + ε)√(2gH), so
    the exact probability is a one-dimensional integral over H; the failure surface bends, FORM's plane
    misses it and SORM's curvature correction comes within 3 %."""
    from scipy.integrate import quad

    out = tmp_path / "sorm"
    args = ["bouncing-ball", "--only", "--param", EPS, "--param", "height=uniform(0.8,1.2)", "--t-final", "0.7"]
    rc, text = _mc([*args, "--impact-location", "interpolated", "--method", "sorm", "--limit", LIMIT, "--out",
                    str(out), "--quiet"], capsys)  # fmt: skip
    assert rc == 0, text.err
    npz = np.load(out / "samples.npz")
    e, H, y = npz["param:restitution"], npz["param:height"], npz["out:peak_impulse"]
    np.testing.assert_allclose(y, (1 + e) * np.sqrt(2 * 9.81 * H), rtol=1e-5)
    exact = quad(lambda h: LAW.sf(8.3 / np.sqrt(2 * 9.81 * h) - 1) / 0.4, 0.8, 1.2, epsabs=1e-14)[0]
    r = _summary(out)["reliability"]
    assert r["method"] == "sorm" and set(r["design_point"]) == {"restitution", "height"}
    assert r["design_point"]["height"] > 1.1 and r["design_point"]["restitution"] > 0.7
    assert r["probability"] == pytest.approx(exact, rel=0.03)
    assert abs(r["p_form"] / exact - 1) > 0.2 and r["curvatures"][0] > 0
    assert r["zero_gradient"] == [] and "design point: restitution = " in text.out
    assert (out / "reliability.png").stat().st_size > 0


def test_a_derivative_lost_to_the_step_grid_is_named(tmp_path, capsys):
    """Without locating the impact, the impulse depends on the drop height only through the step in which the
    ball lands: its derivative in the height is zero, and the study says so."""
    out = tmp_path / "form"
    args = ["bouncing-ball", "--only", "--param", EPS, "--param", "height=uniform(0.8,1.2)", "--t-final", "0.7"]
    rc, text = _mc([*args, "--method", "form", "--limit", LIMIT, "--out", str(out), "--quiet"], capsys)
    assert rc == 0, text.err
    assert _summary(out)["reliability"]["zero_gradient"] == ["height"]
    assert "derivative in height is exactly zero" in text.out and "--impact-location interpolated" in text.out

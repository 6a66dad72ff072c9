"""Outcome ranges over interval and fuzzy inputs from the CLI (``jaxcontact mc --method interval | fuzzy``),
against independent truth: analytic extremes of functions the gradient search is run on, the bouncing ball's
first impulse (``m ((1 + ε) v + g h)``: increasing in the restitution ε and the mass m, so its range over a box
is reached at the corners, which single simulations give), a dense Monte Carlo over the four-bar's box, and
for fuzzy inputs the crisp simulation at the modes and the interval study of the supports."""

import re

import numpy as np
import pytest

from jaxcontact.studies.interval_study import gradient_search, nest
from tests.studies.test_reliability_study import _mc, _summary

BALL = ["bouncing-ball", "--only", "--t-final", "0.6", "--outcome", "peak_impulse", "--quiet"]
EPS, MASS = (0.5, 0.9), (0.5, 2.0)


def _batched(f, grad, calls=None):
    def vg(X):
        if calls is not None:
            calls.append(len(X))
        return f(X), grad(X)

    return vg


def test_gradient_search_finds_interior_and_corner_extremes():
    # (x0 − 0.3)² + 2 (x1 + 0.2)² on [−1, 1]²: minimum 0 inside at (0.3, −0.2), maximum 4.57 at the corner (−1, 1).
    f = lambda X: (X[:, 0] - 0.3) ** 2 + 2 * (X[:, 1] + 0.2) ** 2
    g = lambda X: np.stack([2 * (X[:, 0] - 0.3), 4 * (X[:, 1] + 0.2)], axis=1)
    calls = []
    r = gradient_search(_batched(f, g, calls), [-1.0, -1.0], [1.0, 1.0], starts=3, seed=1)
    assert r.lower == pytest.approx(0.0, abs=1e-10) and r.upper == pytest.approx(4.57, rel=1e-14)
    np.testing.assert_allclose(r.argmin, [0.3, -0.2], atol=1e-5)
    np.testing.assert_array_equal(r.argmax, [-1.0, 1.0])
    assert set(calls) == {6} and r.n_simulations == sum(calls) and r.n_rounds == len(calls)
    assert r.converged.all() and np.all(r.starts[0] == 0.0)  # the first start is the box's centre
    assert not r.zero_gradient.any()


def test_gradient_search_holds_a_bound_and_moves_the_free_input():
    # (x0 − 2)² + (x1 − x0 / 2)²: the minimum over [−1, 1]² sits on the face x0 = 1, at x1 = 0.5 (value 1).
    f = lambda X: (X[:, 0] - 2) ** 2 + (X[:, 1] - X[:, 0] / 2) ** 2
    g = lambda X: np.stack([2 * (X[:, 0] - 2) - (X[:, 1] - X[:, 0] / 2), 2 * (X[:, 1] - X[:, 0] / 2)], axis=1)
    r = gradient_search(_batched(f, g), [-1.0, -1.0], [1.0, 1.0], starts=2, seed=0)
    assert r.lower == pytest.approx(1.0, abs=1e-10)
    np.testing.assert_allclose(r.argmin, [1.0, 0.5], atol=1e-6)
    assert r.upper == pytest.approx(f(np.array([[-1.0, 1.0]]))[0], rel=1e-14)  # 9 + 2.25 at (−1, 1)


def test_gradient_search_rejects_non_finite_steps():
    # NaN outside x < 0.8: the search stays in the finite part and ends at its edge for the maximum of x.
    f = lambda X: np.where(X[:, 0] < 0.8, X[:, 0], np.nan)
    g = lambda X: np.ones_like(X)
    r = gradient_search(_batched(f, g), [0.0], [1.0], starts=2, seed=0)
    assert r.lower == 0.0 and 0.8 - 1e-9 < r.upper < 0.8


def test_gradient_search_names_an_input_whose_derivative_is_zero_everywhere():
    # A step-grid outcome's derivative in an input that moves an impact instant is exactly zero: named.
    f = lambda X: X[:, 0] + np.floor(10 * X[:, 1])
    g = lambda X: np.stack([np.ones(len(X)), np.zeros(len(X))], axis=1)
    r = gradient_search(_batched(f, g), [0.0, 0.0], [1.0, 1.0], starts=2, seed=0)
    assert r.zero_gradient.tolist() == [False, True] and r.to_json(["a", "b"])["zero_gradient"] == ["b"]
    assert r.lower == 0.0 + np.floor(10 * r.argmin[1]) and r.argmin[0] == 0.0 and r.argmax[0] == 1.0


def test_nest_takes_the_union_with_the_narrower_cuts():
    # α = 0.5 located [1, 4]; α = 0 located [0.5, 3.5], which misses part of the narrower range: widened to 4.
    assert nest(2.0, [(1.0, 4.0), (0.5, 3.5)]) == [(1.0, 4.0, False), (0.5, 4.0, True)]
    assert nest(2.0, [(2.5, 3.0)]) == [(2.0, 3.0, True)]  # a located range must contain the crisp value
    assert nest(2.0, [(1.0, 3.0), (0.0, 5.0)]) == [(1.0, 3.0, False), (0.0, 5.0, False)]


@pytest.fixture(scope="module")
def ball_corners():
    """The ball's first impulse at the corners of ε × m boxes by single simulations (an evaluator of its own)."""
    from jaxcontact.models import get_model
    from jaxcontact.studies.bounds import study_function
    from jaxcontact.studies.montecarlo import default_study

    spec = default_study(get_model("bouncing-ball"), n=2, params=("restitution=interval(0.5,0.9)",
                         "mass=interval(0.5,2.0)"), only=True, outcomes=("peak_impulse",), t_final=0.6)  # fmt: skip
    f, names, _, _ = study_function(spec, "peak_impulse")
    assert names == ["restitution", "mass"]
    return f


def test_ball_interval_range_is_its_corners_and_holds_a_dense_monte_carlo(tmp_path, capsys, ball_corners):
    out = tmp_path / "iv"
    args = [*BALL, "--param", "restitution=interval(0.5,0.9)", "--param", "mass=interval(0.5,2.0)"]
    rc, text = _mc([*args, "--method", "interval", "--degree", "3", "--starts", "2", "--out", str(out)], capsys)
    assert rc == 0, text.err
    assert "interval range of peak_impulse: Chebyshev degree 3" in text.out and "agrees" in text.out
    s = _summary(out)
    r = s["interval"]
    lo, hi = ball_corners(np.array([[EPS[0], MASS[0]], [EPS[1], MASS[1]]]))
    assert r["lower"] == pytest.approx(lo, rel=1e-12) and r["upper"] == pytest.approx(hi, rel=1e-12)
    for search in ("chebyshev", "gradient"):
        assert r[search]["argmin"] == {"restitution": 0.5, "mass": 0.5}
        assert r[search]["argmax"] == {"restitution": 0.9, "mass": 2.0}
    assert r["chebyshev"]["check_error"] < 1e-10  # the impulse is bilinear in (ε, m): degree 3 is exact
    assert r["comparison"]["agree"] and abs(r["comparison"]["upper_difference"]) < 1e-12
    assert r["chebyshev"]["n_simulations"] == 16 + 16 and r["n_simulations"] == 32 + r["gradient"]["n_simulations"]
    # Everything needed to reproduce it.
    assert s["study"]["params"] == {"restitution": "interval(0.5, 0.9)", "mass": "interval(0.5, 2.0)"}
    assert s["study"]["options"]["degree"] == 3 and s["study"]["options"]["starts"] == 2
    assert r["box"] == {"restitution": [0.5, 0.9], "mass": [0.5, 2.0]}
    # A dense Monte Carlo over the box stays inside the range.
    X = np.array([EPS[0], MASS[0]]) + np.random.default_rng(3).random((512, 2)) * [EPS[1] - EPS[0], MASS[1] - MASS[0]]
    y = ball_corners(X)
    assert np.all((y >= r["lower"] - 1e-12) & (y <= r["upper"] + 1e-12)) and np.ptp(y) > 0.9 * (hi - lo)
    with np.load(out / "samples.npz") as npz:
        assert len(npz["forward:param:restitution"]) == 32
        assert len(npz["gradient:param:mass"]) == r["gradient"]["n_simulations"]
    assert (out / "interval.png").stat().st_size > 10_000
    # The same command again resumes every round from disk.
    rc, text = _mc([*args, "--method", "interval", "--degree", "3", "--starts", "2", "--out", str(out)], capsys)
    assert rc == 0 and _summary(out)["timing"]["n_computed"] == 0
    assert _summary(out)["interval"]["upper"] == r["upper"]


def test_ball_fuzzy_crisp_at_alpha_one_interval_at_alpha_zero(tmp_path, capsys, ball_corners):
    tri = ["--param", "restitution=triangular(0.5,0.8,0.9)", "--param", "mass=triangular(0.5,1,2.0)"]
    rc, text = _mc([*BALL, *tri, "--method", "fuzzy", "--degree", "2", "--starts", "1", "--alpha-levels", "3",
                    "--out", str(tmp_path / "fz")], capsys)  # fmt: skip
    assert rc == 0, text.err
    assert "fuzzy membership at α = 0, 0.5, 1 of peak_impulse" in text.out
    r = _summary(tmp_path / "fz")["fuzzy"]
    assert [c["alpha"] for c in r["cuts"]] == [0.0, 0.5, 1.0] and r["alpha_levels"] == [0.0, 0.5, 1.0]
    crisp = float(ball_corners(np.array([[0.8, 1.0]]))[0])
    assert r["crisp"] == crisp and r["cuts"][2]["lower"] == r["cuts"][2]["upper"] == crisp  # one simulation
    # Each cut's range is its box's corners: (0.65, 0.75)–(0.85, 1.5) at α = 0.5.
    lo, hi = ball_corners(np.array([[0.65, 0.75], [0.85, 1.5]]))
    assert r["cuts"][1]["lower"] == pytest.approx(lo, rel=1e-12) and r["cuts"][1]["upper"] == pytest.approx(
        hi, rel=1e-12
    )
    assert r["cuts"][1]["box"] == {"restitution": pytest.approx([0.65, 0.85], abs=1e-15), "mass": [0.75, 1.5]}
    lows, highs = [c["lower"] for c in r["cuts"]], [c["upper"] for c in r["cuts"]]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True) and r["widened"] == []
    # α = 0 is the interval study of the supports: the same numbers.
    iv = ["--param", "restitution=interval(0.5,0.9)", "--param", "mass=interval(0.5,2.0)"]
    rc, text = _mc([*BALL, *iv, "--method", "interval", "--degree", "2", "--starts", "1",
                    "--out", str(tmp_path / "iv")], capsys)  # fmt: skip
    assert rc == 0, text.err
    interval = _summary(tmp_path / "iv")["interval"]
    assert r["cuts"][0]["lower"] == interval["lower"] and r["cuts"][0]["upper"] == interval["upper"]
    assert r["support"] == [interval["lower"], interval["upper"]]
    assert (tmp_path / "fz" / "fuzzy.png").stat().st_size > 10_000


def test_ball_one_input_is_exact_at_the_ends_without_gradient_search(tmp_path, capsys, ball_corners):
    # One input: the impulse is linear in ε, so its range is exact at ε = 0.5 and 0.9; --starts 0: Chebyshev alone.
    out = tmp_path / "one"
    rc, text = _mc([*BALL, "--param", "restitution=interval(0.5,0.9)", "--set", "mass=1.5", "--method", "interval",
                    "--degree", "2", "--starts", "0", "--no-plots", "--out", str(out)], capsys)  # fmt: skip
    assert rc == 0, text.err
    r = _summary(out)["interval"]
    lo, hi = ball_corners(np.array([[0.5, 1.5], [0.9, 1.5]]))
    assert r["lower"] == pytest.approx(lo, rel=1e-12) and r["upper"] == pytest.approx(hi, rel=1e-12)
    assert "gradient" not in r and "comparison" not in r
    assert r["enclosure"][0] <= r["lower"] and r["enclosure"][1] >= r["upper"]
    assert r["enclosure"][1] - r["enclosure"][0] < (r["upper"] - r["lower"]) * (1 + 1e-9)


def test_a_jumping_outcome_is_reported_unresolved_and_gets_no_gradient_search(tmp_path, capsys):
    # The ball's impact count over 2 s jumps with the restitution: the surrogate's check error says so.
    out = tmp_path / "jumps"
    rc, text = _mc(["bouncing-ball", "--only", "--param", "restitution=interval(0.5,0.9)", "--t-final", "2",
                    "--outcome", "impacts", "--method", "interval", "--degree", "4", "--quiet", "--no-plots",
                    "--out", str(out)], capsys)  # fmt: skip
    assert rc == 0, text.err
    r = _summary(out)["interval"]
    assert r["resolved"] is False and r["tolerance"] > 0.01 * (r["upper"] - r["lower"])
    assert "gradient" not in r and "'impacts'" in r["gradient_skipped"]
    assert "warning: the surrogate's check error is more than 1% of the range" in text.out
    with np.load(out / "samples.npz") as npz:
        counts = npz["forward:out:impacts"]
    assert r["lower"] == counts.min() and r["upper"] == counts.max() and counts.min() < counts.max()


@pytest.mark.parametrize(
    "args, match",
    [
        (["--param", "restitution=uniform(0.5,0.9)", "--method", "interval"],
         r"restitution=uniform\(0.5, 0.9\) is a probability law; --method interval takes interval\(lo,hi\)"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "fuzzy"],
         r"is not a triangular input; --method fuzzy takes triangular\(lo,mode,hi\)"),
        (["--param", "restitution=interval(0.5,0.9)"],
         r"restitution=interval\(0.5, 0.9\) is an interval, not a probability law: --method mc samples"),
        (["--param", "restitution=triangular(0.5,0.7,0.9)", "--method", "pce"],
         r"is a fuzzy number, not a probability law: --method pce samples.*--method fuzzy"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "subset", "--limit", "peak_impulse>8"],
         r"is an interval, not a probability law: --method subset"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "interval", "--outcome", "impacts",
          "--starts", "2"], r"--starts 2: 'impacts' .* is piecewise constant .* use --starts 0"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "interval", "--outcome", "peak_impulse",
          "--outcome", "max_penetration"],
         r"--method interval bounds one outcome; give --outcome once"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "interval", "--n", "100"],
         r"--n does not apply to --method interval"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "interval", "--sampler", "lhs"],
         r"--sampler does not apply to --method interval"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "interval", "--alpha-levels", "3"],
         r"--alpha-levels applies to --method fuzzy only"),
        (["--param", "restitution=triangular(0.5,0.7,0.9)", "--method", "fuzzy", "--alpha-levels", "1"],
         r"--alpha-levels 1 must be ≥ 2"),
        (["--param", "restitution=uniform(0.5,0.9)", "--degree", "4"],
         r"--degree applies to --method interval and fuzzy only, not --method mc"),
        (["--param", "restitution=interval(0.5,0.9)", "--method", "interval", "--limit", "peak_impulse>8"],
         r"--limit applies to --method mc and"),
    ],
)  # fmt: skip
def test_refusals_name_the_value_and_the_rule(args, match, capsys):
    rc, text = _mc(["bouncing-ball", "--only", *args, "--check"], capsys)
    assert rc == 2
    lines = text.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jaxcontact mc: error: "), text.err
    assert re.search(match, lines[0]), lines[0]


def test_the_default_studys_laws_are_named_with_the_way_to_drop_them(capsys):
    rc, text = _mc(["four-bar", "--param", "restitution=interval(0.6,0.95)", "--method", "interval", "--check"], capsys)
    assert rc == 2 and len(text.err.strip().splitlines()) == 1
    assert "the model's default study varies wall_distance=uniform(0.04, 0.08)" in text.err
    assert "give --only" in text.err and "restitution=" not in text.err


def test_a_piecewise_constant_outcome_skips_the_gradient_search_by_name(capsys):
    rc, text = _mc(["bouncing-ball", "--only", "--param", "restitution=interval(0.5,0.9)", "--outcome", "impacts",
                    "--method", "interval", "--check"], capsys)  # fmt: skip
    assert rc == 0, text.err
    assert "gradient search" not in text.out.splitlines()[0]
    assert "warning: 'impacts'" in text.err and "no gradient search" in text.err


@pytest.mark.slow
def test_four_bar_interval_range_holds_a_dense_monte_carlo_and_the_searches_agree(tmp_path, capsys):
    # Restitution and wall distance only known within a box; the impact is located inside the step so that the
    # impulse is smooth in the wall distance (on the step grid it jumps).
    from jaxcontact.models import get_model
    from jaxcontact.stepping.moreau_jean import MoreauJean
    from jaxcontact.studies.bounds import study_function
    from jaxcontact.studies.montecarlo import default_study
    from jaxcontact.studies.sampling import unit_points

    params = ("restitution=interval(0.6,0.95)", "wall_distance=interval(0.04,0.08)")
    out = tmp_path / "fb"
    rc, text = _mc(["four-bar", "--only", "--param", params[0], "--param", params[1], "--impact-location",
                    "interpolated", "--t-final", "0.5", "--outcome", "peak_impulse", "--method", "interval",
                    "--quiet", "--out", str(out)], capsys)  # fmt: skip
    assert rc == 0, text.err
    r = _summary(out)["interval"]
    assert r["comparison"]["agree"], r["comparison"]
    assert r["chebyshev"]["check_error"] < 0.01 * (r["upper"] - r["lower"])
    # A dense Monte Carlo over the box (its own evaluator): every value inside the located range.
    spec = default_study(get_model("four-bar"), n=2, params=params, only=True, outcomes=("peak_impulse",),
                         t_final=0.5, scheme=MoreauJean(impact_location="interpolated"))  # fmt: skip
    f, _, lo, hi = study_function(spec, "peak_impulse")
    y = f(lo + (hi - lo) * unit_points(4096, 2, "sobol", 7))
    assert np.all(np.isfinite(y))
    assert r["lower"] <= y.min() and y.max() <= r["upper"], (y.min(), y.max(), r["lower"], r["upper"])
    assert r["enclosure"][0] <= r["lower"] and r["upper"] <= r["enclosure"][1]
    # The impulse grows with both inputs: the extremes are the box's corners, which both searches located.
    for search in ("chebyshev", "gradient"):
        assert r[search]["argmin"] == pytest.approx({"restitution": 0.6, "wall_distance": 0.04}, abs=1e-9)
        assert r[search]["argmax"] == pytest.approx({"restitution": 0.95, "wall_distance": 0.08}, abs=1e-9)

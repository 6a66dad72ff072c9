"""Interval bounds over a box: Chebyshev surrogate, dense search, extrema re-simulated."""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.stepping.projection import Projection
from jaxcontact.studies.bounds import chebyshev_nodes, fit_chebyshev, outcome_bounds, study_function
from jaxcontact.studies.sensitivity import ishigami


def test_chebyshev_interpolation_is_exact_for_polynomials_of_the_degree():
    f = lambda x: 1 + x[:, 0] ** 3 - 2 * x[:, 0] * x[:, 1] ** 2 + 0.5 * x[:, 1]
    sur, gx, gy = fit_chebyshev(f, [-1.0, 2.0], [3.0, 5.0], degree=3)
    assert gx.shape == (16, 2)
    np.testing.assert_allclose(sur(gx), gy, rtol=1e-12)
    x = np.random.default_rng(0).uniform([-1, 2], [3, 5], (50, 2))
    np.testing.assert_allclose(sur(x), f(x), rtol=1e-11, atol=1e-11)
    assert np.all(np.abs(chebyshev_nodes(5)) < 1)


def test_ishigami_range():
    # max = 1 + bπ⁴ + a at x = (π/2, ±π/2, ±π); min = −(1 + bπ⁴) at x = (−π/2, 0, ±π) (a = 7, b = 0.1).
    a, b = 7.0, 0.1
    calls = []

    def f(x):
        calls.append(len(x))
        return ishigami(x)

    res = outcome_bounds(f, [-np.pi] * 3, [np.pi] * 3, degree=20, n_dense=2**15)
    assert res.upper == pytest.approx(1 + b * np.pi**4 + a, rel=1e-4)
    assert res.lower == pytest.approx(-(1 + b * np.pi**4), rel=1e-4)
    assert abs(abs(res.argmax[0]) - np.pi / 2) < 0.05 and abs(abs(res.argmax[1]) - np.pi / 2) < 0.05
    assert res.check_error < 1e-3 and res.n_simulations == sum(calls) == 21**3 + 2 + 16
    # The simulated values at the located points lie inside the true range.
    assert -(1 + b * np.pi**4) - 1e-12 <= res.lower and res.upper <= 1 + b * np.pi**4 + a + 1e-12


def test_a_jump_shows_as_a_large_check_error():
    res = outcome_bounds(lambda x: (x[:, 0] > 0.3).astype(float) + x[:, 1], [0, 0], [1, 1], degree=8)
    assert res.check_error > 0.05


def test_bad_boxes_are_refused():
    with pytest.raises(ValueError, match="finite lo < hi"):
        outcome_bounds(lambda x: x[:, 0], [0.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="needs 1030301 simulations"):
        outcome_bounds(lambda x: x[:, 0], [0.0] * 3, [1.0] * 3, degree=100)
    with pytest.raises(ValueError, match="not finite at 1 of the 9"):
        outcome_bounds(lambda x: np.where(np.all(x == 0.5, axis=1), np.nan, 1.0), [0, 0], [1, 1], degree=2)


def test_a_non_uniform_law_is_refused_by_name():
    from jaxcontact.studies.montecarlo import default_study

    spec = default_study(
        get_model("bouncing-ball"),
        n=8,
        params=("restitution=truncnormal(0.8,0.05,0.6,0.95)",),
        only=True,
        outcomes=("peak_impulse",),
    )
    with pytest.raises(ValueError, match="restitution=truncnormal.*interval bounds need a box"):
        study_function(spec, "peak_impulse")


def test_ball_peak_impulse_range():
    # Peak impulse m ((1 + ε) v + g h) with v ≈ √(2 g H) (H = 1 m): increasing in ε and m, so the range is
    # reached at the corners (0.5, 0.5) and (0.9, 2).
    from jaxcontact.studies.montecarlo import default_study

    spec = default_study(
        get_model("bouncing-ball"),
        n=8,
        params=("restitution=uniform(0.5,0.9)", "mass=uniform(0.5,2.0)"),
        only=True,
        outcomes=("peak_impulse",),
        t_final=0.6,
    )
    f, names, lo, hi = study_function(spec, "peak_impulse")
    res = outcome_bounds(f, lo, hi, degree=3, n_dense=2**10, n_check=4)
    v = np.sqrt(2 * 9.81)
    np.testing.assert_allclose(res.argmin, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(res.argmax, [0.9, 2.0], atol=1e-12)
    assert res.lower == pytest.approx(0.5 * 1.5 * v, rel=5e-3) and res.upper == pytest.approx(2 * 1.9 * v, rel=5e-3)
    assert res.check_error < 1e-10  # the outcome is a polynomial of degree 2 in (ε, m)


@pytest.mark.slow
def test_four_bar_rest_angle_range_over_a_tolerance_box():
    # Wall distance and bar length only known within a box: at rest on the wall θ = arccos(−w / l1),
    # increasing in w / l1, so its range is reached at the corners (w, l1) = (0.04, 0.21) and (0.08, 0.19).
    from jaxcontact.stepping.moreau_jean import MoreauJean
    from jaxcontact.studies.montecarlo import default_study

    spec = default_study(
        get_model("four-bar"),
        n=8,
        params=("wall_distance=uniform(0.04,0.08)", "l1=uniform(0.19,0.21)"),
        only=True,
        outcomes=("final:bar1.theta",),
        dt=1e-3,
        t_final=2.0,
        scheme=MoreauJean(projection=Projection()),
    )
    f, names, lo, hi = study_function(spec, "final:bar1.theta")
    assert names == ["wall_distance", "l1"]
    res = outcome_bounds(f, lo, hi, degree=4, n_dense=2**12, n_check=4)
    assert res.lower == pytest.approx(np.arccos(-0.04 / 0.21), abs=1e-9)
    assert res.upper == pytest.approx(np.arccos(-0.08 / 0.19), abs=1e-9)
    np.testing.assert_allclose(res.argmin, [0.04, 0.21], atol=1e-9)
    np.testing.assert_allclose(res.argmax, [0.08, 0.19], atol=1e-9)
    assert res.check_error < 1e-4 and res.n_simulations == 25 + 2 + 4


def test_interval_inputs_are_a_box_like_uniform_supports():
    # An interval input needs no law: study_function runs without a sample design, on the same box.
    from jaxcontact.studies.montecarlo import default_study

    def box(law):
        spec = default_study(get_model("bouncing-ball"), n=8, params=(f"restitution={law}(0.5,0.9)",), only=True,
                             outcomes=("peak_impulse",), t_final=0.6)  # fmt: skip
        return study_function(spec, "peak_impulse")

    f_i, names, lo, hi = box("interval")
    f_u, _, lo_u, hi_u = box("uniform")
    assert names == ["restitution"] and lo.tolist() == lo_u.tolist() == [0.5] and hi.tolist() == hi_u.tolist() == [0.9]
    x = np.array([[0.5], [0.7], [0.9]])
    np.testing.assert_array_equal(f_i(x), f_u(x))


def test_a_simulated_value_beyond_the_located_extremes_is_the_bound():
    # A spike at one grid node only: the surrogate peaks near it, but its polished maximum re-simulated misses
    # the spike; the grid's own simulated value 10 is a value of the box and is returned as the upper bound.
    node = 0.5 + 0.5 * chebyshev_nodes(6)[2]
    seen = []

    def f(x):
        y = np.where(np.abs(x[:, 0] - node) < 1e-12, 10.0, x[:, 0])
        seen.append(y)
        return y

    res = outcome_bounds(f, [0.0], [1.0], degree=6, n_dense=2**10, n_check=8)
    everything = np.concatenate(seen)
    assert res.upper == 10.0 == everything.max() and res.argmax[0] == pytest.approx(node, abs=1e-15)
    assert res.lower == everything.min() and res.check_error > 1.0

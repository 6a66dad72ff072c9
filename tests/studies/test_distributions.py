"""Distributions: moments and bounds of the inverse-CDF maps, CLI parsing, clear errors."""

import math

import numpy as np
import pytest
from scipy import stats

from jaxcontact.studies.distributions import (
    Fixed,
    LogNormal,
    Normal,
    ParamSpace,
    TruncNormal,
    Uniform,
    parse_distribution,
)

# A fine midpoint grid of the unit interval: ppf of it is a quadrature of the distribution.
U = (np.arange(200_000) + 0.5) / 200_000


@pytest.mark.parametrize(
    "dist, mean, var",
    [
        (Uniform(0.6, 0.95), 0.775, 0.35**2 / 12),
        (Normal(2.0, 0.3), 2.0, 0.09),
        (LogNormal(-1.0, 0.5), math.exp(-1 + 0.125), (math.exp(0.25) - 1) * math.exp(-2 + 0.25)),
        (
            TruncNormal(0.8, 0.1, 0.6, 0.9),
            stats.truncnorm(-2, 1, 0.8, 0.1).mean(),
            stats.truncnorm(-2, 1, 0.8, 0.1).var(),
        ),
        (Fixed(0.3), 0.3, 0.0),
    ],
)
def test_ppf_moments(dist, mean, var):
    x = dist.ppf(U)
    assert x.mean() == pytest.approx(mean, rel=1e-4, abs=1e-6)
    assert x.var() == pytest.approx(var, rel=5e-3, abs=1e-9)
    assert dist.mean == pytest.approx(mean, rel=1e-9)
    assert dist.var == pytest.approx(var, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    "dist", [Uniform(0.6, 0.95), Normal(2.0, 0.3), LogNormal(-1.0, 0.5), TruncNormal(0.8, 0.1, 0.6, 0.9)]
)
def test_ppf_inverts_cdf_and_stays_in_support(dist):
    u = np.array([1e-300, 1e-12, 0.01, 0.3, 0.5, 0.77, 0.99, 1 - 1e-12, 1 - 2**-53])
    x = dist.ppf(u)
    lo, hi = dist.support
    assert np.all(np.isfinite(x)) and np.all(x >= lo) and np.all(x <= hi)
    assert np.all(np.diff(x) >= 0)
    mid = slice(2, 7)
    np.testing.assert_allclose(dist.cdf(x[mid]), u[mid], rtol=1e-9)


def test_truncnormal_far_tail_stays_inside():
    d = TruncNormal(0.0, 1.0, 5.0, 6.0)  # the whole interval is 5σ out: naive ppf would give inf
    x = d.ppf(np.array([1e-15, 0.5, 1 - 1e-15]))
    assert np.all((x >= 5.0) & (x <= 6.0)) and x[0] < x[1] < x[2]


def test_parse_roundtrip_and_forms():
    assert parse_distribution("restitution=uniform(0.6,0.95)") == ("restitution", Uniform(0.6, 0.95))
    assert parse_distribution(" friction = truncnormal(0.2, 0.05, 0, 0.4) ") == (
        "friction",
        TruncNormal(0.2, 0.05, 0.0, 0.4),
    )
    assert parse_distribution("k=lognormal(1,0.1)") == ("k", LogNormal(1.0, 0.1))
    assert parse_distribution("m=fixed(2)") == ("m", Fixed(2.0))
    for d in (Uniform(0.1, 0.2), Normal(1e-3, 2.5), TruncNormal(0, 1, -1, 2), LogNormal(0, 1), Fixed(3)):
        assert parse_distribution(f"x={d}") == ("x", d)


@pytest.mark.parametrize(
    "text, match",
    [
        ("restitution=uniform(0.9,0.6)", r"b > a.*a = 0\.9, b = 0\.6"),
        ("restitution=uniform(0.6,0.6)", r"b > a"),
        ("mu=normal(0.2,0)", r"sigma > 0.*sigma = 0"),
        ("mu=normal(0.2,-1)", r"sigma > 0"),
        ("mu=lognormal(0.2,-1)", r"sigma > 0"),
        ("mu=truncnormal(0.2,0.1,0.5,0.1)", r"hi > lo"),
        ("mu=uniform(0.1)", r"takes 2 argument"),
        ("mu=beta(1,2)", r"unknown distribution 'beta'"),
        ("mu=uniform(a,1)", r"'a' of uniform is not a number"),
        ("mu=uniform(0,inf)", r"finite"),
        ("restitution uniform(0,1)", r"expected name=dist\(args\)"),
    ],
)
def test_parse_errors_name_value_and_rule(text, match):
    with pytest.raises(ValueError, match=match):
        parse_distribution(text)


def test_space_validate_unknown_name_lists_valid():
    space = ParamSpace.parse(["restitutoin=uniform(0.6,0.9)"])
    with pytest.raises(
        ValueError,
        match=r"unknown parameter\(s\) \['restitutoin'\]; valid names: \['friction', "
        r"'restitution'\]",
    ):
        space.validate(["restitution", "friction"])


@pytest.mark.parametrize(
    "text",
    [
        "restitution=uniform(0.5,1.2)",
        "restitution=normal(0.8,0.05)",
        "friction=uniform(-0.1,0.2)",
        "friction=normal(0.3,0.01)",
    ],
)
def test_space_validate_physical_ranges(text):
    space = ParamSpace.parse([text])
    with pytest.raises(ValueError, match=r"outside the allowed range"):
        space.validate(["restitution", "friction"])


def test_space_accepts_supports_inside_and_maps_columns():
    space = ParamSpace.parse(
        [
            "restitution=truncnormal(0.8,0.1,0,1)",
            "friction=lognormal(-2,0.3)",
            "mass=fixed(2)",
            "wall=normal(0.06,0.001)",
        ]
    )
    space.validate(["restitution", "friction", "mass", "wall"])
    assert space.uncertain == ("restitution", "friction", "wall")
    vals = space.ppf(np.array([[0.5, 0.5, 0.5], [0.1, 0.9, 0.5]]))
    np.testing.assert_allclose(vals["mass"], [2.0, 2.0])
    np.testing.assert_allclose(vals["wall"], [0.06, 0.06])
    assert vals["restitution"][0] == pytest.approx(stats.truncnorm(-8, 2, 0.8, 0.1).median(), rel=1e-12)
    assert vals["friction"][1] > vals["friction"][0]
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        space.ppf(np.zeros((4, 2)))


def test_space_duplicates_and_update():
    with pytest.raises(ValueError, match=r"more than once"):
        ParamSpace.parse(["a=fixed(1)", "a=fixed(2)"])
    s = ParamSpace.parse(["a=fixed(1)", "b=uniform(0,1)"]).updated(ParamSpace.parse(["b=fixed(3)", "c=fixed(4)"]))
    assert s.names == ("a", "b", "c") and s["b"] == Fixed(3.0)


def test_interval_and_triangular_parse_cut_and_membership():
    from jaxcontact.studies.distributions import Interval, Triangular

    assert parse_distribution("wall_distance=interval(0.04, 0.08)") == ("wall_distance", Interval(0.04, 0.08))
    name, tri = parse_distribution("restitution=triangular(0.6,0.8,0.9)")
    assert name == "restitution" and tri == Triangular(0.6, 0.8, 0.9) and str(tri) == "triangular(0.6, 0.8, 0.9)"
    assert tri.support == (0.6, 0.9) and tri.cut(0.0) == (0.6, 0.9) and tri.cut(1.0) == (0.8, 0.8)
    assert tri.cut(0.5) == pytest.approx((0.7, 0.85), abs=1e-15)
    np.testing.assert_allclose(tri.membership([0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 1.0]), [0, 0, 0.5, 1, 0.5, 0, 0])
    # A cut is the set where the membership reaches α.
    x = np.linspace(0.55, 0.95, 4001)
    for alpha in (0.1, 0.3, 0.77):
        inside = x[tri.membership(x) >= alpha]
        a, b = tri.cut(alpha)
        assert inside.min() == pytest.approx(a, abs=1e-4) and inside.max() == pytest.approx(b, abs=1e-4)
    right = Triangular(0.0, 0.0, 1.0)  # mode at the lower end
    assert right.cut(0.5) == (0.0, 0.5) and right.membership(0.0) == 1.0


@pytest.mark.parametrize(
    "text, match",
    [
        ("e=interval(0.9,0.6)", "needs hi > lo"),
        ("e=triangular(0.6,0.95,0.9)", "needs lo ≤ mode ≤ hi"),
        ("e=triangular(0.6,0.6,0.6)", "needs hi > lo"),
        ("e=triangular(0.6,0.9)", "triangular takes 3 argument"),
    ],
)
def test_interval_and_triangular_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_distribution(text)


def test_interval_inputs_are_refused_by_sampling_and_probability_laws_by_bounding():
    from jaxcontact.studies.distributions import Interval, Triangular

    space = ParamSpace.parse(["restitution=interval(0.6,0.95)", "mass=fixed(1)"])
    with pytest.raises(ValueError, match=r"restitution=interval\(0.6, 0.95\) is an interval, not a probability law"):
        space.ppf(np.full((3, 1), 0.5))
    with pytest.raises(ValueError, match="--method pce samples from .*bound it with --method interval"):
        space.check_probabilistic("--method pce")
    space.check_possibilistic("--method interval", Interval)
    with pytest.raises(ValueError, match=r"is not a triangular input; --method fuzzy takes triangular\(lo,mode,hi\)"):
        space.check_possibilistic("--method fuzzy", Triangular)
    laws = ParamSpace.parse(["restitution=uniform(0.6,0.95)"])
    with pytest.raises(
        ValueError, match=r"uniform\(0.6, 0.95\) is a probability law; --method interval takes interval\(lo,hi\)"
    ):
        laws.check_possibilistic("--method interval", Interval)
    # Supports are checked against the physical ranges like a law's.
    with pytest.raises(ValueError, match=r"support \[0.5, 1.2\], outside the allowed range \[0.0, 1.0\]"):
        ParamSpace.parse(["restitution=interval(0.5,1.2)"]).validate(["restitution"])
    with pytest.raises(ValueError, match="outside the allowed range"):
        ParamSpace.parse(["restitution=triangular(-0.1,0.5,0.9)"]).validate(["restitution"])

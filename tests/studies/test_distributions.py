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

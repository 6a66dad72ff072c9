"""Samplers: reproducible with a seed, inside (0, 1), LHS stratified, Sobol balanced."""

import numpy as np
import pytest

from jaxcontact.studies.sampling import unit_points


@pytest.mark.parametrize("sampler", ["random", "lhs", "sobol"])
def test_reproducible_and_seed_dependent(sampler):
    a = unit_points(256, 3, sampler, seed=7)
    b = unit_points(256, 3, sampler, seed=7)
    c = unit_points(256, 3, sampler, seed=8)
    assert a.shape == (256, 3) and a.dtype == np.float64
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.all((a > 0) & (a < 1))


def test_random_is_uniform_and_independent():
    x = unit_points(20_000, 2, "random", seed=0)
    # mean 1/2 ± 4 standard errors (σ = 1/√12), correlation ≈ 0
    assert np.all(np.abs(x.mean(axis=0) - 0.5) < 4 / np.sqrt(12 * 20_000))
    assert abs(np.corrcoef(x.T)[0, 1]) < 4 / np.sqrt(20_000)
    # uses all 53 bits: no ties
    assert np.unique(x[:, 0]).size == x.shape[0]


def test_lhs_one_point_per_stratum():
    n, d = 97, 4
    x = unit_points(n, d, "lhs", seed=3)
    for j in range(d):
        strata = np.floor(x[:, j] * n).astype(int)
        np.testing.assert_array_equal(np.sort(strata), np.arange(n))


def test_sobol_balance():
    n, d = 1024, 3
    x = unit_points(n, d, "sobol", seed=1)
    # A (scrambled) Sobol' net of 2^10 points: every dyadic interval of length 2^-5 on each axis
    # holds exactly n / 32 points, and every 2-D cell of 2^-3 × 2^-3 exactly n / 64.
    for j in range(d):
        counts = np.bincount(np.floor(x[:, j] * 32).astype(int), minlength=32)
        np.testing.assert_array_equal(counts, np.full(32, n // 32))
    cells = np.floor(x[:, 0] * 8).astype(int) * 8 + np.floor(x[:, 1] * 8).astype(int)
    np.testing.assert_array_equal(np.bincount(cells, minlength=64), np.full(64, n // 64))
    # and a quadrature error far below plain Monte Carlo's ~1/√n
    f = np.prod(1 + 0.5 * (x - 0.5), axis=1)
    assert abs(f.mean() - 1.0) < 1e-3


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"n = 0 must be an int ≥ 1"):
        unit_points(0, 2)
    with pytest.raises(ValueError, match=r"sampler = 'halton' must be one of"):
        unit_points(4, 2, "halton")
    assert unit_points(5, 0).shape == (5, 0)

"""Statistics: failed samples excluded and counted; moments, quantiles, bands, histograms."""

import numpy as np
import pytest

from jaxcontact.studies.statistics import failures, histogram, scalar_summary, time_bands


def _outputs():
    rng = np.random.default_rng(0)
    n = 1000
    x = rng.normal(2.0, 0.5, n)
    series = x[:, None] * np.linspace(0, 1, 11)[None, :]
    converged = np.ones(n, bool)
    state_finite = np.ones(n, bool)
    converged[[3, 10]] = False
    state_finite[[10, 20]] = False
    x_bad = x.copy()
    x_bad[[3, 10, 20]] = 1e9  # garbage on failed samples
    x_bad[30] = np.nan
    series[40, 5] = np.inf
    return {"x": x_bad, "series": series, "converged": converged, "state_finite": state_finite}, x


def test_failures_counted_by_cause():
    out, _ = _outputs()
    valid, rep = failures(out)
    assert rep["n_samples"] == 1000 and rep["n_failed"] == 5 and rep["n_valid"] == 995
    assert rep["not_converged"] == 2 and rep["non_finite_state"] == 2 and rep["non_finite_output"] == 2
    assert rep["first_failed"] == [3, 10, 20, 30, 40]
    assert valid.sum() == 995 and not valid[[3, 10, 20, 30, 40]].any()


def test_summary_excludes_failed_samples():
    out, x = _outputs()
    valid, _ = failures(out)
    s = scalar_summary(out["x"], valid)
    ref = x[valid]
    assert s["n"] == 995
    assert s["mean"] == pytest.approx(ref.mean(), rel=1e-14)
    assert s["std"] == pytest.approx(ref.std(ddof=1), rel=1e-14)
    assert s["sem"] == pytest.approx(ref.std(ddof=1) / np.sqrt(995), rel=1e-14)
    assert s["quantiles"]["0.5"] == pytest.approx(np.median(ref), rel=1e-14)
    assert s["max"] < 100  # no garbage leaked


def test_time_bands_and_histogram():
    out, x = _outputs()
    valid, _ = failures(out)
    b = time_bands(out["series"], valid, quantiles=(0.1, 0.5, 0.9))
    ref = x[valid]
    assert b["n"] == 995
    np.testing.assert_allclose(b["mean"][-1], ref.mean(), rtol=1e-13)
    np.testing.assert_allclose(b["quantiles"][:, -1], np.quantile(ref, [0.1, 0.5, 0.9]), rtol=1e-13)
    np.testing.assert_allclose(b["std"][0], 0.0)
    counts, edges = histogram(out["x"], valid, bins=20)
    assert counts.sum() == 995 and edges[-1] == pytest.approx(ref.max())


def test_empty_valid_set_is_nan_not_error():
    s = scalar_summary(np.ones(4), np.zeros(4, bool))
    assert s["n"] == 0 and np.isnan(s["mean"])
    b = time_bands(np.ones((4, 3)), np.zeros(4, bool))
    assert b["n"] == 0 and np.all(np.isnan(b["mean"]))


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match=r"output 'b' has 3 samples, expected 4"):
        failures({"a": np.ones(4), "b": np.ones(3)})

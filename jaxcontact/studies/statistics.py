"""Statistics of Monte Carlo outputs, with failed samples counted apart.

A sample *fails* when its solver did not converge (a ``converged`` output that
is False), its state became non-finite (``state_finite`` False) or any of its
outputs is non-finite. Failed samples are excluded
from every statistic and reported with their counts and first indices — never
mixed in silently, and never silently dropped either.
"""

from __future__ import annotations

import numpy as np

DEFAULT_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


FLAGS = {"converged": "not_converged", "state_finite": "non_finite_state"}


def failures(outputs: dict, flags: dict = FLAGS) -> tuple[np.ndarray, dict]:
    """(valid (N,), report) for a dict of per-sample outputs with a leading axis N.

    A sample is valid when every boolean flag output named in ``flags`` is True
    (e.g. ``converged``: the contact solver converged at every step;
    ``state_finite``: q and u stayed finite) and every float output is finite.
    report: n_samples, n_valid, n_failed, one count per flag (labelled by
    ``flags[name]``), non_finite_output, first_failed (up to 10 indices). A
    sample can count under several causes; n_failed counts it once.
    """
    if not outputs:
        raise ValueError("no outputs")
    n = len(next(iter(outputs.values())))
    finite = np.ones(n, bool)
    for k, v in outputs.items():
        v = np.asarray(v)
        if len(v) != n:
            raise ValueError(f"output {k!r} has {len(v)} samples, expected {n}")
        if np.issubdtype(v.dtype, np.inexact):
            finite &= np.isfinite(v.reshape(n, -1)).all(axis=1)
    valid = finite.copy()
    counts = {}
    for key, label in flags.items():
        if key in outputs:
            ok = np.asarray(outputs[key], bool).reshape(n, -1).all(axis=1)
            counts[label] = int((~ok).sum())
            valid &= ok
    bad = np.flatnonzero(~valid)
    report = {
        "n_samples": int(n),
        "n_valid": int(valid.sum()),
        "n_failed": int(bad.size),
        **counts,
        "non_finite_output": int((~finite).sum()),
        "first_failed": [int(i) for i in bad[:10]],
    }
    return valid, report


def scalar_summary(x, valid=None, quantiles=DEFAULT_QUANTILES) -> dict:
    """Mean, std (ddof=1), standard error of the mean, min, max and quantiles over the valid samples."""
    x = np.asarray(x, float).reshape(-1)
    keep = np.isfinite(x) if valid is None else (np.asarray(valid, bool) & np.isfinite(x))
    v = x[keep]
    m = v.size
    nan = float("nan")
    out = {"n": int(m), "mean": float(v.mean()) if m else nan, "std": float(v.std(ddof=1)) if m > 1 else nan}
    out["sem"] = out["std"] / np.sqrt(m) if m > 1 else nan
    out["min"] = float(v.min()) if m else nan
    out["max"] = float(v.max()) if m else nan
    out["quantiles"] = {f"{q:g}": (float(np.quantile(v, q)) if m else nan) for q in quantiles}
    return out


def time_bands(series, valid=None, quantiles=DEFAULT_QUANTILES) -> dict:
    """Per time row over the valid samples: mean (T,), std (T,), quantiles (len(q), T), n."""
    s = np.asarray(series, float)
    if s.ndim != 2:
        raise ValueError(f"a time series output must have shape (N, T); got {s.shape}")
    keep = np.isfinite(s).all(axis=1)
    if valid is not None:
        keep &= np.asarray(valid, bool)
    v = s[keep]
    if v.shape[0] == 0:
        nanT = np.full(s.shape[1], np.nan)
        return {
            "n": 0,
            "mean": nanT,
            "std": nanT,
            "quantiles": np.full((len(quantiles), s.shape[1]), np.nan),
            "levels": np.asarray(quantiles),
        }
    std = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.full(s.shape[1], np.nan)
    return {
        "n": int(v.shape[0]),
        "mean": v.mean(axis=0),
        "std": std,
        "quantiles": np.quantile(v, quantiles, axis=0),
        "levels": np.asarray(quantiles),
    }


def histogram(x, valid=None, bins: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Counts and bin edges of the valid, finite samples."""
    x = np.asarray(x, float).reshape(-1)
    keep = np.isfinite(x) if valid is None else (np.asarray(valid, bool) & np.isfinite(x))
    return np.histogram(x[keep], bins=bins)

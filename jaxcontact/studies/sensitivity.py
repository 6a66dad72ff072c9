"""Global sensitivity: first-order and total Sobol indices from a Saltelli design.

For d uncertain inputs and n base points, the design evaluates the model on
n (d + 2) points stacked as ``[A; B; AB_1; …; AB_d]`` where A and B are two
independent n × d designs and AB_i is A with column i taken from B. With
f_A, f_B, f_ABi the outcome on those blocks and V the variance of f over A ∪ B:

    S_i  = mean((f_B − f̄) (f_ABi − f_A)) / V    (Saltelli et al. 2010, eq. (b))
    ST_i = mean((f_A − f_ABi)²) / (2 V)          (Jansen 1999)

Centring f_B on the sample mean f̄ leaves the estimator's expectation
unchanged (E[f_ABi − f_A] = 0) and cuts its variance when |mean f| is large
against std f (bench/RESULTS.md, "Figures moved out of the code", has the gain on Ishigami).
Confidence intervals come from a bootstrap over the n base rows (rows are
resampled together across the blocks, which keeps each estimator's pairing).
Base rows where any of the d + 2 evaluations failed are dropped and counted —
an index is never computed from a mix of valid and failed samples. Below
:data:`MIN_BASE_ROWS` valid base rows a study reports no indices at all
(:func:`study_indices`): their intervals would claim more than they hold.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# Fewest valid base rows for which a study reports Sobol indices. The percentile bootstrap resamples
# the m rows themselves, so with few rows its distribution is narrower than the estimator's: the
# nominal 95 % intervals miss the known indices of the linear and Ishigami test functions far more
# often than 1 in 20 at 8–16 rows, and come close to their level from about 32 rows on
# (tests/studies/test_sensitivity.py checks both ends). Below it the point estimates are no better:
# the Jansen ST of an input can exceed 1.
MIN_BASE_ROWS = 32


def saltelli_design(base: np.ndarray) -> np.ndarray:
    """Unit points (n, 2d) -> the Saltelli design (n (d + 2), d): ``[A; B; AB_1; …; AB_d]``."""
    base = np.asarray(base, float)
    if base.ndim != 2 or base.shape[1] % 2:
        raise ValueError(f"base points must have shape (n, 2d); got {base.shape}")
    d = base.shape[1] // 2
    A, B = base[:, :d], base[:, d:]
    blocks = [A, B]
    for i in range(d):
        ABi = A.copy()
        ABi[:, i] = B[:, i]
        blocks.append(ABi)
    return np.concatenate(blocks, axis=0)


def base_rows(n: int, d: int) -> int:
    """Base rows of the smallest Saltelli design with at least ``n`` evaluations (at least 2, for a variance)."""
    return max(2, -(-int(n) // (d + 2)))


def design_size(n_base: int, d: int) -> int:
    """Number of evaluations of a Saltelli design with n_base base points in d dimensions."""
    return n_base * (d + 2)


class SobolIndices(NamedTuple):
    """First-order ``S1`` and total ``ST`` indices (d,), their bootstrap intervals (d, 2)
    at level ``confidence``, bootstrap standard errors, and the base rows used/dropped."""

    S1: np.ndarray
    ST: np.ndarray
    S1_ci: np.ndarray
    ST_ci: np.ndarray
    S1_se: np.ndarray
    ST_se: np.ndarray
    confidence: float
    n_base_used: int
    n_base_dropped: int
    variance: float

    def to_json(self, names) -> dict:
        """The indices and intervals per parameter name, as a JSON-serialisable dict."""
        out = {}
        for j, name in enumerate(names):
            out[name] = {
                "S1": float(self.S1[j]),
                "S1_ci": [float(v) for v in self.S1_ci[j]],
                "ST": float(self.ST[j]),
                "ST_ci": [float(v) for v in self.ST_ci[j]],
            }
        return {
            "indices": out,
            "confidence": self.confidence,
            "n_base_used": self.n_base_used,
            "n_base_dropped": self.n_base_dropped,
            "variance": self.variance,
        }


def _estimate(fA, fB, fAB):
    """Indices for row sets: fA, fB (..., n), fAB (..., d, n) -> S1, ST (..., d), V (...)."""
    allf = np.concatenate([fA, fB], axis=-1)
    V = allf.var(axis=-1, ddof=1)
    Vd = V[..., None]
    fBc = fB - allf.mean(axis=-1, keepdims=True)
    S1 = np.mean(fBc[..., None, :] * (fAB - fA[..., None, :]), axis=-1) / Vd
    ST = 0.5 * np.mean((fA[..., None, :] - fAB) ** 2, axis=-1) / Vd
    return S1, ST, V


def _valid_rows(f, d: int, valid) -> tuple[np.ndarray, np.ndarray]:
    """The outcome as floats and the base rows (n,) whose d + 2 evaluations are all valid and finite."""
    f = np.asarray(f, float)
    if d < 1 or f.ndim != 1 or f.size % (d + 2):
        raise ValueError(f"outcome of size {f.size} is not a Saltelli design in d = {d} dimensions")
    ok = np.isfinite(f) if valid is None else (np.asarray(valid, bool) & np.isfinite(f))
    return f, ok.reshape(d + 2, f.size // (d + 2)).all(axis=0)


def sobol_indices(
    f: np.ndarray,
    d: int,
    valid: np.ndarray | None = None,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> SobolIndices:
    """Sobol indices of one scalar outcome evaluated on :func:`saltelli_design` points.

    f: (n (d + 2),) outcome values in design order; valid: (n (d + 2),) bool
    (False: failed sample, excluded with its whole base row). The bootstrap is
    seeded, so the same inputs give the same intervals.
    """
    f, rows = _valid_rows(f, d, valid)
    n = rows.size
    blocks = f.reshape(d + 2, n)[:, rows]
    m = int(rows.sum())
    nan = np.full(d, np.nan)
    if m < 2:
        ci = np.full((d, 2), np.nan)
        return SobolIndices(nan, nan, ci, ci, nan, nan, confidence, m, n - m, float("nan"))
    fA, fB, fAB = blocks[0], blocks[1], blocks[2:]
    with np.errstate(divide="ignore", invalid="ignore"):  # V = 0 is handled just below
        S1, ST, V = _estimate(fA, fB, fAB)
    if not V > 0:
        # A constant outcome has no variance to apportion: indices are undefined, said so by NaN.
        ci = np.full((d, 2), np.nan)
        return SobolIndices(nan, nan, ci, ci, nan, nan, confidence, m, n - m, float(V))
    rng = np.random.default_rng(seed)
    S1b = np.empty((n_bootstrap, d))
    STb = np.empty((n_bootstrap, d))
    # Bootstrap in batches so memory stays O(batch · (d + 2) · m).
    batch = max(1, min(n_bootstrap, 2**22 // max(1, (d + 2) * m)))
    for s in range(0, n_bootstrap, batch):
        idx = rng.integers(0, m, size=(min(batch, n_bootstrap - s), m))
        with np.errstate(divide="ignore", invalid="ignore"):
            s1, st, vb = _estimate(fA[idx], fB[idx], np.moveaxis(fAB[:, idx], 0, 1))
        # A resample without variance (possible for a few-valued outcome on few rows) has no
        # indices: it is left out of the interval rather than counted as 0 or ±inf.
        bad = ~(vb > 0)
        s1[bad], st[bad] = np.nan, np.nan
        S1b[s : s + len(idx)], STb[s : s + len(idx)] = s1, st
    alpha = 0.5 * (1.0 - confidence)
    q = [alpha, 1.0 - alpha]
    S1_ci = np.nanquantile(S1b, q, axis=0).T
    ST_ci = np.nanquantile(STb, q, axis=0).T
    return SobolIndices(
        S1,
        ST,
        S1_ci,
        ST_ci,
        np.nanstd(S1b, axis=0, ddof=1),
        np.nanstd(STb, axis=0, ddof=1),
        confidence,
        m,
        n - m,
        float(V),
    )


def too_few_rows(m: int) -> str | None:
    """Why indices from ``m`` valid base rows are not reported (None: enough rows)."""
    return f"too few rows for Sobol indices: {m} < {MIN_BASE_ROWS}" if m < MIN_BASE_ROWS else None


def study_indices(
    f: np.ndarray, names, valid: np.ndarray | None = None, *, n_bootstrap: int = 1000, seed: int = 0
) -> tuple[SobolIndices | None, dict]:
    """A study's indices of one outcome and their summary.json entry; (None, refusal entry) below
    :data:`MIN_BASE_ROWS` valid base rows — the entry then says why, and gives no index."""
    d = len(names)
    _, rows = _valid_rows(f, d, valid)
    m = int(rows.sum())
    refused = too_few_rows(m)
    if refused:
        return None, {
            "refused": refused,
            "min_base_rows": MIN_BASE_ROWS,
            "n_base_used": m,
            "n_base_dropped": rows.size - m,
        }
    idx = sobol_indices(f, d, valid, n_bootstrap=n_bootstrap, seed=seed)
    return idx, idx.to_json(names)


def ishigami(x: np.ndarray, a: float = 7.0, b: float = 0.1) -> np.ndarray:
    """The Ishigami test function on x ∈ [−π, π]³ (x of shape (..., 3))."""
    x = np.asarray(x, float)
    return np.sin(x[..., 0]) + a * np.sin(x[..., 1]) ** 2 + b * x[..., 2] ** 4 * np.sin(x[..., 0])


def ishigami_gradient(x: np.ndarray, a: float = 7.0, b: float = 0.1) -> np.ndarray:
    """∂f/∂x of :func:`ishigami` (x of shape (..., 3) -> (..., 3))."""
    x = np.asarray(x, float)
    x1, x2, x3 = x[..., 0], x[..., 1], x[..., 2]
    return np.stack(
        [np.cos(x1) * (1 + b * x3**4), 2 * a * np.sin(x2) * np.cos(x2), 4 * b * x3**3 * np.sin(x1)], axis=-1
    )


def ishigami_indices(a: float = 7.0, b: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Analytic (S1, ST) of the Ishigami function (Sobol' & Levitan 1999)."""
    pi = np.pi
    V1 = 0.5 * (1 + b * pi**4 / 5) ** 2
    V2 = a**2 / 8
    V13 = b**2 * pi**8 * (1 / 18 - 1 / 50)  # = 8 b² π⁸ / 225
    V = V1 + V2 + V13
    return np.array([V1, V2, 0.0]) / V, np.array([V1 + V13, V2, V13]) / V

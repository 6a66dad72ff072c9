"""Designs on the unit cube: plain random (jax.random), Latin hypercube and Sobol (scipy.stats.qmc).

Every sampler returns float64 points strictly inside (0, 1) so that inverse
CDFs with infinite tails (normal, log-normal) stay finite; the same seed gives
the same points on every machine and device count (points are made on the
host, before sharding).

* ``random``: i.i.d. uniforms from ``jax.random.uniform`` with ``key(seed)``.
* ``lhs``: Latin hypercube — each axis cut into n equal strata, one point per stratum.
* ``sobol``: scrambled Sobol' low-discrepancy points (best with n a power of 2;
  other n are allowed and take the first n points of the sequence).
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

SAMPLERS = ("random", "lhs", "sobol")

# Keep points off 0 and 1 exactly: ppf(0) = -inf for the normal family.
_LO = np.finfo(np.float64).tiny
_HI = 1.0 - np.finfo(np.float64).epsneg


def unit_points(n: int, d: int, sampler: str = "random", seed: int = 0) -> np.ndarray:
    """``n`` points of the unit cube [0, 1]^d as a float64 (n, d) numpy array."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"number of samples n = {n!r} must be an int ≥ 1")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
        raise ValueError(f"dimension d = {d!r} must be an int ≥ 0")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler = {sampler!r} must be one of {SAMPLERS}")
    seed = int(seed)
    if d == 0:
        return np.zeros((n, 0))
    if sampler == "random":
        # float64 bits whether or not jax_enable_x64 is on: draw 2×32 random bits and build the mantissa.
        bits = np.asarray(jax.random.bits(jax.random.key(seed), (n, d, 2), dtype=jnp.uint32), np.uint64)
        u = ((bits[..., 0] << np.uint64(21)) ^ (bits[..., 1] >> np.uint64(11))) & np.uint64((1 << 53) - 1)
        pts = (u.astype(np.float64) + 0.5) / float(1 << 53)
    elif sampler == "lhs":
        from scipy.stats import qmc  # imported here: scipy.stats costs a second of start-up to every command

        pts = qmc.LatinHypercube(d, rng=np.random.default_rng(seed)).random(n)
    else:
        from scipy.stats import qmc

        with warnings.catch_warnings():
            # scipy warns when n is not a power of 2 (balance is then only approximate); documented above.
            warnings.simplefilter("ignore", UserWarning)
            pts = qmc.Sobol(d, scramble=True, rng=np.random.default_rng(seed)).random(n)
    return np.clip(np.asarray(pts, np.float64), _LO, _HI)

"""Batched uncertainty studies: Monte Carlo statistics and global sensitivity over model parameters.

Modules (each usable alone; ``montecarlo`` wires them to the built-in models):

* ``distributions`` — uniform / normal / truncnormal / lognormal / fixed over named
  parameters, ``name=dist(args)`` parsing, physical-range checks (:class:`ParamSpace`).
* ``sampling`` — unit-cube designs: seeded ``random`` (jax.random), ``lhs``, ``sobol``.
* ``runner`` — evaluate a per-sample function over N samples: vmap + jit once, chunks
  (memory bounded), sharded over devices, progress bar, atomic chunk files, resume.
* ``outcomes`` — reductions of a trajectory to scalars and kept time series.
* ``statistics`` — failures counted apart; mean, std, quantiles, bands, histograms.
* ``sensitivity`` — Saltelli design, first-order and total Sobol indices with bootstrap CIs.
* ``pce`` — polynomial chaos: orthonormal bases matched to the input laws, hyperbolic truncation,
  sparse regression (OMP, terms by leave-one-out), gradient-enhanced rows, cross-validated Q²,
  moments and Sobol indices from the coefficients; ``pce_study`` runs one on a built-in model
  (``jaxcontact mc --method pce|pce-grad``).
* ``bounds`` — outcome bounds over a box of parameters (Chebyshev surrogate, dense search,
  extrema re-simulated); ``interval_study`` runs them on a built-in model beside a batched gradient
  search, and fuzzy inputs by α-cuts (``jaxcontact mc --method interval|fuzzy``).
* ``reliability`` — failure probability of a limit state ``g(x) <= 0``: FORM (improved HL-RF design point,
  β, importance factors), SORM (curvatures at the design point), subset simulation (modified Metropolis,
  batched chains), importance sampling at the design point, plain Monte Carlo; ``reliability_study`` runs
  them on a built-in model, each batch of simulations a resumable round (``jaxcontact mc --method
  subset|form|sorm|importance --limit``).
* ``plots`` — PNG figures (quantile bands, histograms, Sobol bars, scatters, PCE diagnostics).
* ``montecarlo`` — :class:`StudySpec` and :func:`run_study` (summary.json, samples.npz,
  PNGs), the engine of ``jaxcontact mc``.
* ``step_check`` — the extreme samples of a penalty study run again at half the step; those the step
  decides are flagged.
"""

from jaxcontact.studies.distributions import (
    Fixed,
    LogNormal,
    Normal,
    ParamSpace,
    TruncNormal,
    Uniform,
    parse_distribution,
)
from jaxcontact.studies.runner import RunResult, StudyMismatchError, run_samples
from jaxcontact.studies.sampling import unit_points
from jaxcontact.studies.sensitivity import SobolIndices, saltelli_design, sobol_indices
from jaxcontact.studies.statistics import failures, histogram, scalar_summary, time_bands

__all__ = [
    "Fixed",
    "LogNormal",
    "Normal",
    "ParamSpace",
    "TruncNormal",
    "Uniform",
    "parse_distribution",
    "RunResult",
    "StudyMismatchError",
    "run_samples",
    "unit_points",
    "SobolIndices",
    "saltelli_design",
    "sobol_indices",
    "failures",
    "histogram",
    "scalar_summary",
    "time_bands",
]

"""Outcome bounds over a box of parameters: a Chebyshev surrogate searched densely, its extrema re-simulated.

Interval methods for mechanisms with uncertain-but-bounded parameters (clearances,
tolerances: each parameter only known to lie in [a_i, b_i]) ask for the range
[min y, max y] of an outcome over the box, not for a distribution. Following the
Chebyshev-interval approach of the clearance-mechanism papers (Wu et al. 2013):

1. the outcome is interpolated on the tensor grid of Chebyshev points of the
   first kind, (degree + 1)^d simulations (one batched call), by the tensor
   Chebyshev series whose coefficients the discrete orthogonality of the nodes
   gives exactly (:class:`ChebyshevSurrogate`);
2. the surrogate — a polynomial, cheap — is evaluated on a dense batched design
   (scrambled Sobol points, the box's corners and the grid nodes), and its
   smallest and largest values there are refined by a bounded quasi-Newton
   search on the surrogate;
3. the outcome is *simulated* at those two points: the returned ``lower`` and
   ``upper`` are simulated values at points of the box (so the true range
   contains [lower, upper]); the surrogate's own extrema and its largest error on
   ``n_check`` random simulated points are reported beside them, so a surrogate
   that does not resolve the outcome (it jumps) shows a large check error
   instead of passing silently. Where a grid or check point's simulated value lies
   beyond the located extremes (the surrogate missed a jump), it is the one returned.

The function to bound is any batched ``f(x) -> y`` with x (N, d) in physical units
(:func:`study_function` builds one from a study spec: the study's jitted evaluator).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from jaxcontact.studies.sampling import unit_points

MAX_GRID = 200_000  # simulations of the tensor grid we accept to run in one call


class ChebyshevSurrogate(NamedTuple):
    """Tensor Chebyshev series on a box: lo, hi (d,), coefficients (degree + 1,)^d."""

    lo: np.ndarray
    hi: np.ndarray
    coef: np.ndarray

    def __call__(self, x) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, float))
        t = np.clip((2.0 * x - (self.lo + self.hi)) / (self.hi - self.lo), -1.0, 1.0)
        p = self.coef.shape[0] - 1
        k = np.arange(p + 1)
        c = self.coef
        out = None
        # Contract one axis at a time: T_k(t_j) = cos(k arccos t_j).
        for j in range(x.shape[1]):
            T = np.cos(np.arccos(t[:, j])[:, None] * k)  # (N, p + 1)
            if j == 0:
                out = np.einsum("nk,k...->n...", T, c)
            else:
                out = np.einsum("nk,nk...->n...", T, out)
        return out


def chebyshev_nodes(degree: int) -> np.ndarray:
    """The degree + 1 Chebyshev points of the first kind on [−1, 1], cos((2i + 1)π / (2(degree + 1)))."""
    m = degree + 1
    return np.cos((2 * np.arange(m) + 1) * np.pi / (2 * m))


def fit_chebyshev(f: Callable, lo, hi, degree: int) -> tuple[ChebyshevSurrogate, np.ndarray, np.ndarray]:
    """Interpolate f on the tensor Chebyshev grid of the box [lo, hi]; return (surrogate, grid x, f(grid))."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    d = lo.size
    if degree < 1:
        raise ValueError(f"degree = {degree} must be ≥ 1")
    if (degree + 1) ** d > MAX_GRID:
        raise ValueError(
            f"a degree-{degree} Chebyshev grid in {d} dimensions needs {(degree + 1) ** d} simulations "
            f"(more than {MAX_GRID}); lower the degree"
        )
    t = chebyshev_nodes(degree)
    grid = np.stack(np.meshgrid(*([t] * d), indexing="ij"), axis=-1).reshape(-1, d)
    x = 0.5 * (lo + hi) + 0.5 * (hi - lo) * grid
    y = np.asarray(f(x), float).reshape(-1)
    if not np.all(np.isfinite(y)):
        raise ValueError(
            f"the outcome is not finite at {int(np.sum(~np.isfinite(y)))} of the {y.size} Chebyshev "
            f"nodes (failed simulations): no surrogate"
        )
    m = degree + 1
    # Discrete orthogonality at the nodes: c_k = (2 − δ_k0)/m Σ_i y_i T_k(t_i), axis by axis.
    k = np.arange(m)
    T = np.cos(np.outer(k, np.arccos(t))) * np.where(k == 0, 1.0, 2.0)[:, None] / m  # (k, i)
    c = y.reshape((m,) * d)
    for j in range(d):
        c = np.moveaxis(np.tensordot(T, c, axes=([1], [j])), 0, j)
    return ChebyshevSurrogate(lo, hi, c), x, y


class Bounds(NamedTuple):
    """The outcome range over a box.

    lower, upper: the smallest and largest simulated values, at argmin, argmax: the extremes located on the
    surrogate, re-simulated, or a grid or check point beyond them where the surrogate missed a jump;
    surrogate_lower, surrogate_upper: the surrogate's extrema over the dense design;
    check_error: the largest |surrogate − simulation| over the check points and the two extrema;
    n_simulations: grid + check points + 2.
    """

    lower: float
    upper: float
    argmin: np.ndarray
    argmax: np.ndarray
    surrogate_lower: float
    surrogate_upper: float
    check_error: float
    n_simulations: int
    surrogate: ChebyshevSurrogate


def outcome_bounds(
    f: Callable, lo, hi, *, degree: int = 8, n_dense: int = 2**16, n_check: int = 16, seed: int = 0
) -> Bounds:
    """Bounds of a batched outcome f(x (N, d)) -> (N,) over the box [lo, hi] (see the module doc)."""
    lo, hi = np.atleast_1d(np.asarray(lo, float)), np.atleast_1d(np.asarray(hi, float))
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError(f"box bounds must be two vectors of one length; got {lo.shape} and {hi.shape}")
    if not np.all(np.isfinite(lo) & np.isfinite(hi)) or not np.all(hi > lo):
        raise ValueError(f"the box needs finite lo < hi in every dimension; got lo = {lo}, hi = {hi}")
    d = lo.size
    sur, gx, gy = fit_chebyshev(f, lo, hi, degree)
    corners = np.array(np.meshgrid(*zip(lo, hi), indexing="ij")).reshape(d, -1).T if d <= 12 else np.empty((0, d))
    dense = np.concatenate([lo + (hi - lo) * unit_points(n_dense, d, "sobol", seed), corners, gx])
    s = sur(dense)
    x_min = _polish(sur, dense[int(np.argmin(s))], lo, hi, 1.0)
    x_max = _polish(sur, dense[int(np.argmax(s))], lo, hi, -1.0)
    check = lo + (hi - lo) * unit_points(n_check, d, "random", seed + 1) if n_check else np.empty((0, d))
    pts = np.concatenate([x_min[None], x_max[None], check])
    y = np.asarray(f(pts), float).reshape(-1)
    ok = np.isfinite(y)
    err = float(np.max(np.abs(sur(pts[ok]) - y[ok]))) if ok.any() else float("nan")
    s_min, s_max = sur(pts[:2])
    # Every simulated point lies in the box: a grid or check point beyond the located extremes (the surrogate
    # missed a jump) is the better inner bound. The located points come first, so they win a tie.
    X_all, y_all = np.concatenate([pts, gx]), np.concatenate([y, gy])
    if not np.isfinite(y_all).any():
        raise ValueError("every simulation of the bounds failed (not finite): no range")
    i_lo, i_hi = int(np.nanargmin(y_all)), int(np.nanargmax(y_all))
    return Bounds(
        float(y_all[i_lo]), float(y_all[i_hi]), X_all[i_lo], X_all[i_hi], float(s_min), float(s_max), err,
        int(gx.shape[0] + pts.shape[0]), sur,
    )  # fmt: skip


def _polish(sur: ChebyshevSurrogate, x0, lo, hi, sign: float) -> np.ndarray:
    """Refine a dense-design extremum of the surrogate with bounded L-BFGS-B (extrema often sit on a face of
    the box, which random points never hit exactly); keeps x0 if that does not improve it."""
    from scipy.optimize import minimize

    res = minimize(lambda x: sign * float(sur(x[None])[0]), x0, method="L-BFGS-B", bounds=list(zip(lo, hi)))
    x = np.clip(res.x, lo, hi)
    return x if sign * sur(x[None])[0] <= sign * sur(np.asarray(x0)[None])[0] else np.asarray(x0, float)


def study_function(spec, outcome: str):
    """(f, names, lo, hi) for bounding ``outcome`` of a study spec whose uncertain inputs are boxes
    (``interval(lo, hi)``, or the support of ``uniform(a, b)``).

    f(x (N, d)) -> (N,) runs the study's own per-sample evaluator (jit + vmap; the other parameters at
    their fixed or model values); a failed sample (solver not converged, non-finite state) gives NaN.
    Any other input is refused by name: interval bounds need a box.
    """
    import jax
    import jax.numpy as jnp

    from jaxcontact.studies.distributions import Fixed, Interval, Uniform
    from jaxcontact.studies.montecarlo import make_evaluator, study_model

    names = list(spec.space.uncertain)
    for n in names:
        if not isinstance(spec.space[n], (Interval, Uniform)):
            raise ValueError(
                f"{n}={spec.space[n]}: interval bounds need a box, give interval(lo, hi) or uniform(a, b) for {n}"
            )
    if outcome not in spec.outcomes:
        raise ValueError(f"outcome {outcome!r} is not among the study's outcomes {list(spec.outcomes)}")
    # The model and evaluator without the study's sample design: an interval input has no law to sample.
    model, dt, _, n_steps, outcomes = study_model(spec)
    scheme = spec.scheme.for_forward_runs()
    evaluate = make_evaluator(model, outcomes, dt=dt, n_steps=n_steps, scheme=scheme, save_every=spec.save_every)
    fixed = {k: float(d.v) for k, d in zip(spec.space.names, spec.space.dists) if isinstance(d, Fixed)}
    run = jax.jit(jax.vmap(evaluate))

    def f(x):
        x = np.asarray(x, float)
        sample = {k: jnp.asarray(x[:, j]) for j, k in enumerate(names)}
        sample.update({k: jnp.full(x.shape[0], v) for k, v in fixed.items()})
        out = run(sample)
        ok = np.asarray(out["converged"]) & np.asarray(out["state_finite"])
        return np.where(ok, np.asarray(out[outcome], float), np.nan)

    lo = np.array([spec.space[n].support[0] for n in names], float)
    hi = np.array([spec.space[n].support[1] for n in names], float)
    return f, names, lo, hi

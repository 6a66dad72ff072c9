"""Intervals checked against the loss itself: the quadratic (Laplace) model or the loss profile.

A hard-contact misfit is piecewise smooth in a restitution or friction coefficient: an impact
moves to the next step when the parameter crosses a threshold, and the loss jumps. The Laplace
interval θ̂ ± 1.96 sd uses the local curvature at θ̂, which then says nothing about the loss one
step further. Here the loss is evaluated along each parameter on a grid around θ̂ (the others held
at their estimates; one vmapped call of forward runs, no gradients) and the likelihood-ratio
interval is read from it (after a coarse-to-fine search of the lowest loss from the whole bounds
down, since the optimiser can stop on a step):

    {θ_i : M·(L(θ_i) − L_min) / σ² ≤ 3.84},   L = mean squared residual over M entries,

σ² the given noise variance or the residual's estimate ‖r‖²/(M − p). For one fitted parameter that
is the profile-likelihood interval. For several, given the ``residuals`` (θ → r), every grid point
re-optimises the other parameters (:func:`profile_loss`: a fixed number of Levenberg–Marquardt
steps from the estimate, all grid points at once under ``vmap``), so L is the profile
min_{θ_-i} L(θ_i, θ_-i) and the interval the profile-likelihood one — the marginal interval that
the Laplace sd (a diagonal entry of the full covariance) approximates. Without ``residuals`` the
others are held at their estimates: an interval conditional on them, narrower than the marginal
one when the parameters are correlated. If the grid finds a lower loss than the optimiser (it stalled on a step of the
staircase), the estimate moves there. The Laplace interval is kept when both its ends lie within
``agree`` (relative) of the loss-read ends; otherwise the loss-read interval replaces it, and the
result says which was used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

CHI2_95 = 3.841458820694124  # 95 % quantile of χ² with one degree of freedom
GRID = 201  # points per parameter and per widening round
ROUNDS = 24  # widening/narrowing rounds of the grid before giving up (bounded work)
LM_STEPS = 12  # Levenberg–Marquardt steps re-optimising the other parameters at each profile point


class ParameterInterval(NamedTuple):
    """One parameter's checked interval: ``method`` is "laplace" or "profile"."""

    estimate: float
    interval: tuple
    method: str
    laplace: tuple
    profile: tuple
    grid: np.ndarray
    loss: np.ndarray


def loss_read_interval(grid, values, threshold):
    """Outermost grid points whose loss lies below ``threshold``, widened by one grid spacing (a staircase
    need not be monotone, so the set is not cut at its first gap). Returns (lo, hi, touches_edge)."""
    ok = np.flatnonzero(values <= threshold)
    if ok.size == 0:
        return np.nan, np.nan, False
    a, b = ok[0], ok[-1]
    edge = a == 0 or b == len(grid) - 1
    return grid[max(a - 1, 0)], grid[min(b + 1, len(grid) - 1)], edge


def profile_loss(
    residuals: Callable, i: int, bounds_lo, bounds_hi, *, jacobian=jax.jacfwd, steps: int = LM_STEPS
) -> Callable:
    """(θ_start (p,), x, *args) → (min over θ_-i of mean r(θ, *args)², the minimiser θ) with θ_i = x held: ``steps``
    Levenberg–Marquardt steps on the other parameters from θ_start, kept inside the bounds; a step that
    does not lower the loss is refused and the damping raised (fixed count: jit/vmap-able).
    ``jacobian``: ``jax.jacfwd`` (p − 1 tangents) or ``jax.jacrev`` for a reverse-only model."""
    lo, hi = jnp.asarray(bounds_lo, float), jnp.asarray(bounds_hi, float)

    def run(theta_start, x, *args):
        th0 = jnp.asarray(theta_start, float).at[i].set(x)
        others = jnp.arange(th0.size) != i
        span = hi - lo
        res = lambda th: residuals(th, *args)  # noqa: E731

        def mse(th):
            return jnp.mean(res(th) ** 2)

        def body(carry, _):
            th, f, lam = carry
            r = res(th)
            J = jacobian(res)(th) * others  # columns of the others only
            A = J.T @ J
            d = jnp.diagonal(A)
            damp = lam * jnp.where(others, jnp.where(d > 0, d, 1.0), 1.0)
            step = jnp.linalg.solve(A + jnp.diag(damp) + jnp.diag(jnp.where(others, 0.0, 1.0)), -J.T @ r) * others
            trial = jnp.clip(th + step, lo + 1e-12 * span, hi - 1e-12 * span)
            f_trial = mse(trial)
            better = jnp.isfinite(f_trial) & (f_trial < f)
            return (
                jnp.where(better, trial, th),
                jnp.where(better, f_trial, f),
                jnp.where(better, lam / 3, lam * 4),
            ), None

        (th, f, _), _ = jax.lax.scan(body, (th0, mse(th0), jnp.asarray(1e-3)), None, length=steps)
        return f, th

    return run


def check_intervals(
    loss: Callable,
    theta,
    sd,
    bounds_lo,
    bounds_hi,
    *,
    n_residuals,
    noise=None,
    agree=0.3,
    residuals: Callable | None = None,
    jacobian=jax.jacfwd,
    args=(),
) -> list:
    """Check the Laplace interval θ̂ ± 1.96 sd of each parameter against ``loss`` (θ (p,), *args → mean squared
    residual, jit/vmap-able) along that parameter; see the module docstring. With ``residuals`` (θ, *args → r,
    the loss's residual vector) and several parameters, the others are re-optimised at every grid point
    (the profile likelihood; ``jacobian`` as in :func:`profile_loss`). ``args`` (arrays, e.g. the data) are
    passed to both as arguments, not compiled in as constants. Returns one :class:`ParameterInterval` per
    parameter (the estimate possibly moved to a lower loss)."""
    theta = np.asarray(theta, float).copy()
    theta0 = theta.copy()  # the optimiser's estimate, where the Laplace model was built
    sd = np.asarray(sd, float)
    p = theta.size
    no_batch = (None,) * len(args)
    batched_args = jax.jit(jax.vmap(loss, in_axes=(0,) + no_batch))
    batched = lambda cand: batched_args(cand, *args)  # noqa: E731
    profiled = residuals is not None and p > 1
    out = []
    for i in range(p):
        if profiled:
            prof = jax.jit(
                jax.vmap(
                    profile_loss(residuals, i, bounds_lo, bounds_hi, jacobian=jacobian), in_axes=(None, 0) + no_batch
                )
            )

        def along(grid, reoptimise=True):
            """The loss at each grid value of θ_i (the others held, or re-optimised) and the θ it was taken at."""
            if profiled and reoptimise:
                values, thetas = prof(jnp.asarray(theta), jnp.asarray(grid), *args)
                return np.asarray(values), np.asarray(thetas)
            cand = np.tile(theta, (len(grid), 1))
            cand[:, i] = grid
            return np.asarray(batched(jnp.asarray(cand))), cand

        best = float(batched(jnp.asarray(theta[None]))[0])
        s2 = noise**2 if noise is not None else n_residuals * best / max(n_residuals - p, 1)
        span = float(bounds_hi[i] - bounds_lo[i])
        w = 4 * sd[i] if sd[i] > 0 else 1e-6 * span
        w = max(w, 1e-12 * span)
        # Coarse to fine from the whole bounds down to the local width: a hard-contact misfit has
        # local minima on its steps, and forward runs are cheap next to the fit. The others are held
        # here (a lower loss found so is lower still once they are re-optimised).
        c, wc = theta[i], span / 2
        while wc > w:
            grid = np.clip(c + np.linspace(-wc, wc, GRID), bounds_lo[i], bounds_hi[i])
            values, thetas = along(grid, reoptimise=False)
            k = int(np.argmin(np.where(np.isfinite(values), values, np.inf)))
            c, wc = grid[k], wc / 4
            if values[k] < best:
                theta, best = thetas[k].copy(), float(values[k])
        s2 = noise**2 if noise is not None else n_residuals * best / max(n_residuals - p, 1)
        grid = values = None
        for _ in range(ROUNDS):
            grid = np.clip(theta[i] + np.linspace(-w, w, GRID), bounds_lo[i], bounds_hi[i])
            values, thetas = along(grid)
            values = np.where(np.isfinite(values), values, np.inf)
            k = int(np.argmin(values))
            if values[k] < best:  # the optimiser stopped on a step: move to the lowest loss seen
                theta, best = thetas[k].copy(), float(values[k])
                s2 = noise**2 if noise is not None else n_residuals * best / max(n_residuals - p, 1)
            thr = best + CHI2_95 * s2 / n_residuals
            lo, hi, edge = loss_read_interval(grid, values, thr)
            at_bounds = grid[0] <= bounds_lo[i] and grid[-1] >= bounds_hi[i]
            if edge and not at_bounds:
                w *= 4
            elif not edge and (hi - lo) < 0.1 * w and s2 > 0:
                w /= 4
            else:
                break
        lap = (theta0[i] - 1.96 * sd[i], theta0[i] + 1.96 * sd[i])
        half = max(hi - theta[i], theta[i] - lo, 1e-300)
        agrees = (abs(lap[0] - lo) <= agree * half) and (abs(lap[1] - hi) <= agree * half)
        out.append(
            ParameterInterval(
                float(theta[i]),
                lap if agrees else (float(lo), float(hi)),
                "laplace" if agrees else "profile",
                lap,
                (float(lo), float(hi)),
                grid,
                values,
            )
        )
    return out

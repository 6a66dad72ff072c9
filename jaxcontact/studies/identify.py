"""Gradient-based parameter identification through contact.

    res = fit(model, data_t, data_y, ("restitution",), guesses={"restitution": 0.63},
              bounds={"restitution": (0.1, 0.99)}, observe=coordinates(0))

What makes fitting through impacts work, and what each costs:

* **Bounds by transform.** Each fitted θ lives in an unconstrained z with
  θ = lo + (hi − lo)·sigmoid(z): every iterate respects its bounds.
* **Gradients** (``gradient="auto"|"forward"|"reverse"``, one rule: :func:`gradient_mode`).
  A fit has few parameters and many steps: reverse mode through the ``lax.scan`` of steps
  stores every step for the transpose (memory and compile time grow with the record) while
  forward mode carries p tangents along the one forward pass. "auto" takes forward mode when
  the scheme declares it (``differentiation_modes``) and p ≤ :data:`FORWARD_MAX`: the loss is
  then wrapped in a ``jax.custom_vjp`` whose forward pass computes the value and the p
  directional derivatives (:func:`forward_gradient`), so optax (L-BFGS and its zoom line
  search call ``value_and_grad``) never transposes the scan. Reverse mode remains for many
  parameters and for reverse-only schemes (implicit LCP gradients,
  ``MoreauJean(differentiation="implicit")``). The contact solve is differentiated through
  its sweeps, or implicitly at the LCP solution.
* **Located impacts** (``scheme=MoreauJean(impact_location="interpolated")``, the
  ``identify`` command's default): each impact is placed at the gap crossing inside its step
  (:mod:`jaxcontact.stepping.impact_location`), so the trajectory and the misfit are continuous
  in a restitution or friction coefficient — no staircase, gradients equal to finite
  differences, Laplace intervals built on a real curvature — and data measured (or simulated
  finer) with impacts between the steps are fitted without the step grid's bias.
* **Resting contacts** (``scheme=MoreauJean(impact_location="interpolated", projection=Projection())``,
  the ``identify`` command's default): a body that comes to rest is left by the step about g·h²
  inside its support (the free sub-step after its last located impact), a measured one on it; a
  record that ends at rest is then fitted by biasing the parameters. The projection
  (:class:`jaxcontact.stepping.projection.Projection`) puts resting contacts back on g = 0 with
  γ_N = 0 (and joints on Φ = 0) after every step, at any step size.
* **Smoothing knob** (``smoothing=Smoothing(...)``, static): the hard law switches a
  contact on when its gap closes, so an impact's time is quantised to the step and
  the misfit is piecewise constant in a wall distance or clearance. During the fit
  the scheme gets ``soft_activation`` (:func:`jaxcontact.stepping.contact_solve.soften_normal_rows`:
  weight sigmoid(−g_N/τ)), with τ an array leaf annealed geometrically from
  ``tau_start`` to ``tau_end`` over the first ``anneal`` fraction of the steps, then
  held (no recompilation). Bias: contacts act a few τ early and impacts spread over
  steps, so estimates are only as good as the last τ; pick ``tau_end`` well below the
  accuracy wanted (and below |v|·dt, the distance a contact point moves in a step).
* **Windows** (``windows=K`` with the measured full state): data-anchored multiple
  shooting — the record is cut into K windows, each simulated from the measured
  (q, u) at its start, so one early misfit (a bounce missed by one step) cannot
  spoil everything after it. Needs velocities (``trajectory.npz`` of
  ``jaxcontact simulate`` has them); noise in the anchors biases the fit a little.
* **Multi-start** (``starts=S``): S initial guesses (the given one and S − 1 drawn
  uniformly in z-space around it) optimised at once by ``vmap``; the best final
  loss wins. :func:`fit_batch` vmaps the whole fit over a batch of data sets.
* **Grid start** (``grid_start=K``): a hard-law misfit can be a staircase in a parameter
  (the four-bar's in ε: steps every ≈ 0.003, its minimum ≈ 0.005 wide), where gradients lead
  to the nearest step. Before the optimiser, each parameter in turn (two sweeps) moves to the
  best of K values uniform inside its bounds, the others held: 2·p·K forward runs, vmapped,
  no gradients; the optimiser (and the multi-start jitter) start from there.
* **Uncertainty**: Gauss–Newton/Laplace at the estimate, cov = σ² (JᵀJ)⁻¹ with
  J = ∂r/∂θ (``jax.jacfwd``, or ``jax.jacrev`` through implicit LCP gradients) of the model
  the fit ended with (τ = ``tau_end``),
  σ² the given noise variance or ‖r‖²/(m − p); 95 % intervals ±1.96 sd, kept only when the
  loss along each parameter agrees with that quadratic model, else read from the loss itself
  (:mod:`jaxcontact.studies.profile`; ``interval_method`` says which, "exact fit" when the
  data are reproduced exactly). With several parameters the loss along one is its profile:
  the others re-optimised at every point (Levenberg–Marquardt, vmapped over the points).

The optimiser loop (optax Adam, or L-BFGS with a zoom line search) runs inside
jit as a ``lax.scan`` over fixed chunks of steps; a single fit prints loss and
parameters after every chunk (``progress``).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxcontact.simulate import check_scheme, simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.studies.posterior import sample
from jaxcontact.studies.profile import ParameterInterval, check_intervals

TAU_KEY = "contact_softness"  # the params leaf that carries τ during a smoothed fit
OPTIMIZERS = ("adam", "lbfgs")
GRADIENTS = ("auto", "forward", "reverse")
FORWARD_MAX = 4  # "auto": forward-mode loss gradients up to this many fitted parameters (p tangents per pass)
EXACT_FIT = 1e-10  # rms residual / rms data below which a fit counts as exact (round-off)


@dataclasses.dataclass(frozen=True)
class Smoothing:
    """Soft contact activation during the fit: τ from ``tau_start`` to ``tau_end`` (m) over ``anneal`` of the steps."""

    tau_start: float = 1e-2
    tau_end: float = 1e-6
    anneal: float = 0.7

    def __post_init__(self):
        if not 0 < self.tau_end <= self.tau_start:
            raise ValueError(f"Smoothing needs 0 < tau_end = {self.tau_end} <= tau_start = {self.tau_start}")
        if not 0 < self.anneal <= 1:
            raise ValueError(f"Smoothing anneal = {self.anneal} must lie in (0, 1]")

    def schedule(self, steps: int) -> np.ndarray:
        """τ for each of ``steps`` optimiser steps: geometric from tau_start to tau_end, then held."""
        n = max(1, int(round(self.anneal * steps)))
        k = np.minimum(np.arange(steps), n - 1) / max(n - 1, 1)
        return self.tau_start * (self.tau_end / self.tau_start) ** k


class FitResult(NamedTuple):
    """Estimates, Laplace sd and 95 % intervals keyed by name; histories per optimiser step (best start).

    loss_history (steps,); param_history (steps, p); tau_history (steps,) (NaN without smoothing);
    start_losses: final loss of every start; wall_time in seconds (including compilation).
    """

    estimates: dict
    std: dict
    interval95: dict
    loss_history: np.ndarray
    param_history: np.ndarray
    tau_history: np.ndarray
    iterations: int
    loss: float
    start_losses: np.ndarray
    wall_time: float
    interval_method: dict = {}
    posterior: object = None  # a jaxcontact.studies.posterior.Posterior when asked for, else None
    residuals: dict = {}  # residual_check() of the residuals at the estimate

    def to_json(self) -> dict:
        """The result as a JSON-serialisable dict (fit.json)."""
        return (
            {
                "estimates": self.estimates,
                "std": self.std,
                "interval95": {k: list(v) for k, v in self.interval95.items()},
                "interval_method": self.interval_method,
                "loss": self.loss,
                "iterations": self.iterations,
                "wall_time_s": self.wall_time,
                "loss_history": self.loss_history.tolist(),
                "start_losses": self.start_losses.tolist(),
            }
            | ({"posterior": self.posterior.to_json(tuple(self.estimates))} if self.posterior is not None else {})
            | ({"residuals": self.residuals} if self.residuals else {})
        )


def residual_check(r, estimates: dict, intervals: dict, noise=None) -> dict:
    """Is the misfit noise? Residuals r (m,) or (m, d) at the estimate, in time order.

    The Laplace interval assumes independent residuals. A model that is not the data's (another code's step
    grid, a missing effect) leaves residuals correlated from sample to sample: their lag-1 autocorrelation
    ρ (the largest over the observed columns) then exceeds 2/√m, what white noise reaches 1 time in 40. For
    residuals that follow an AR(1) process the variance of a mean grows by (1 + ρ)/(1 − ρ): the intervals
    are widened by its square root (``interval95_correlated``), an approximation, and the plain ones are said
    to cover noise only. With ``noise`` given, ``rms_over_noise`` compares the misfit with it.
    """
    r = np.asarray(r, float).reshape(np.shape(r)[0], -1)
    m = r.shape[0]
    centred = r - r.mean(axis=0)
    power = np.sum(centred**2, axis=0)
    rho = np.where(power > 0, np.sum(centred[1:] * centred[:-1], axis=0) / np.where(power > 0, power, 1.0), 0.0)
    worst = float(np.max(rho)) if rho.size else 0.0
    white = worst <= 2.0 / np.sqrt(max(m, 1))
    widening = 1.0 if white else float(np.sqrt((1.0 + worst) / max(1.0 - worst, 1e-6)))
    out = {
        "lag1_autocorrelation": worst,
        "white": bool(white),
        "widening": widening,
        "note": "residuals look like independent noise: the intervals cover it"
        if white
        else "residuals are correlated (the misfit is systematic, not noise): the plain intervals cover noise "
        "only; interval95_correlated widens them for an AR(1) misfit",
        "interval95_correlated": {
            k: [
                float(estimates[k] - widening * (estimates[k] - lo)),
                float(estimates[k] + widening * (hi - estimates[k])),
            ]
            for k, (lo, hi) in intervals.items()
        },
    }
    if noise is not None:
        out["rms_over_noise"] = float(np.sqrt(np.mean(r**2)) / noise)
    return out


def coordinates(*idx) -> Callable:
    """An ``observe`` function returning the coordinates ``idx`` of q (all of them if none given)."""
    sel = list(idx)
    return (lambda q, p: q[:, sel]) if sel else (lambda q, p: q)


def _to_theta(z, lo, hi):
    return lo + (hi - lo) * jax.nn.sigmoid(z)


def _to_z(theta, lo, hi):
    s = (theta - lo) / (hi - lo)
    return jnp.log(s) - jnp.log1p(-s)


def make_residuals(
    model,
    data_t,
    observe,
    fit_names,
    *,
    scheme=MoreauJean(),
    soft=False,
    windows=1,
    data_state=None,
    dt=None,
    fixed=None,
):
    """r(θ, y, τ) = observe(q, p) at ``data_t`` − y, flattened; θ in ``fit_names`` order.

    ``observe(q, p)`` maps a trajectory's q (N, n) to (N,) or (N, d). ``soft``: simulate with
    the soft activation of width τ. ``windows`` > 1 needs ``data_state = (q, u)`` measured at
    ``data_t`` (len(data_t) divisible by ``windows``). ``fixed``: parameter overrides by name.
    """
    data_t = np.asarray(data_t, float)
    dt = float(model.dt if dt is None else dt)
    check_scheme(scheme, model.system, model.name)
    scheme = scheme.without_diagnostics()  # the misfit reads q only: no ‖Φ‖, ‖Φ̇‖, energy per step to compile
    if soft:
        scheme = scheme.with_soft_activation(TAU_KEY)  # refused by name when the scheme has none
    base = dict(model.params)
    for k, v in (fixed or {}).items():
        base[k] = jnp.asarray(v, float)
    m = data_t.shape[0]
    if windows < 1 or m % windows:
        raise ValueError(f"windows = {windows} must be >= 1 and divide the number of data points {m}")
    if windows > 1 and data_state is None:
        raise ValueError("windows > 1 needs the measured state (q, u) at the data times (data_state)")
    L = m // windows
    starts = data_t[::L] if windows > 1 else np.zeros(1)  # one window: the model's own start, t = 0
    span = float(np.max(data_t.reshape(windows, L)[:, -1] - starts))
    n_steps = int(np.ceil(span / dt - 1e-9)) + 1
    if windows > 1:
        q_w, u_w = (jnp.asarray(np.asarray(a, float)[::L]) for a in data_state)

    def params_for(theta, tau):
        p = dict(base)
        for i, name in enumerate(fit_names):
            p[name] = theta[i]
        if soft:
            p[TAU_KEY] = tau
        return p

    def observe_window(p, q0, u0, t0, t_obs):
        traj = simulate(model.system, p, q0, u0, dt=dt, n_steps=n_steps, t0=t0, scheme=scheme)
        y = jnp.asarray(observe(traj.q, p))
        y = y[:, None] if y.ndim == 1 else y
        return jax.vmap(lambda col: jnp.interp(t_obs, traj.t, col), in_axes=1, out_axes=1)(y)

    def residuals(theta, y, tau):
        p = params_for(theta, tau)
        if windows == 1:
            q0, u0 = model.initial_state(p)
            pred = observe_window(p, q0, u0, starts[0], jnp.asarray(data_t))
        else:
            pred = jax.vmap(observe_window, in_axes=(None, 0, 0, 0, 0))(
                p, q_w, u_w, jnp.asarray(starts), jnp.asarray(data_t.reshape(windows, L))
            )
            pred = pred.reshape(m, -1)
        return (pred - jnp.reshape(y, (m, -1))).ravel()

    return residuals


def gradient_mode(gradient: str, scheme, n_params: int) -> str:
    """ "forward" or "reverse": how the loss gradient of a fit of ``n_params`` parameters is taken.

    "auto": forward when the scheme can be differentiated forward and ``n_params`` ≤
    :data:`FORWARD_MAX` (its cost is p forward passes, carried together; reverse mode's is one
    pass and its transpose, with every step stored); "forward"/"reverse" force it, and forward on a
    reverse-only scheme is refused by name.
    """
    if gradient not in GRADIENTS:
        raise ValueError(f"gradient = {gradient!r} must be one of {GRADIENTS}")
    forward_ok = "forward" in scheme.differentiation_modes
    if gradient == "forward" and not forward_ok:
        raise ValueError(
            f"gradient = 'forward': the {scheme.name} scheme with these options is differentiated in "
            f"reverse mode only (differentiation modes {sorted(scheme.differentiation_modes)}); "
            "use gradient 'auto' or 'reverse'"
        )
    if gradient == "auto":
        return "forward" if forward_ok and n_params <= FORWARD_MAX else "reverse"
    return gradient


def forward_gradient(f: Callable) -> Callable:
    """``f`` (a scalar function of one vector z) whose gradient is taken in forward mode.

    The wrapper is a ``jax.custom_vjp``: called plainly it is ``f``; under ``jax.grad`` (or
    ``value_and_grad``, as optax's line search calls it) its forward pass returns the value and the
    gradient from p Jacobian–vector products along the basis vectors (vmapped, one pass), and the
    backward pass only scales that gradient: nothing is transposed, nothing stored per step.
    Arguments closed over by ``f`` (data, τ) are not differentiated.
    """

    def value_and_gradient(z):
        basis = jnp.eye(z.shape[-1], dtype=z.dtype)
        v, dv = jax.vmap(lambda e: jax.jvp(f, (z,), (e,)), out_axes=(None, 0))(basis)
        return v, dv

    @jax.custom_vjp
    def wrapped(z):
        return f(z)

    def fwd(z):
        return value_and_gradient(z)

    def bwd(g, ct):
        return (ct * g,)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def _optimizer(name, learning_rate):
    if name == "adam":
        return optax.adam(learning_rate)
    if name == "lbfgs":
        return optax.lbfgs()
    raise ValueError(f"optimizer = {name!r} must be one of {OPTIMIZERS}")


def _make_chunk(loss, opt, mode):
    """(z, state, y, taus) → scan of len(taus) optimiser steps; returns (z, state, (loss, z) per step).
    ``mode``: the loss gradient's mode (:func:`gradient_mode`)."""

    def chunk(z, s, y, taus):
        def body(carry, tau):
            z, s = carry
            f = lambda zz: loss(zz, y, tau)  # noqa: E731
            if mode == "forward":
                f = forward_gradient(f)
            v, g = jax.value_and_grad(f)(z)
            g = jnp.where(jnp.isfinite(g), g, 0.0)  # a non-finite gradient must not poison the iterate
            u, s = opt.update(g, s, z, value=v, grad=g, value_fn=f)
            return (optax.apply_updates(z, u), s), (v, z)

        (z, s), hist = jax.lax.scan(body, (z, s), taus)
        return z, s, hist

    return chunk


def _check(model, fit_names, guesses, bounds):
    for n in fit_names:
        if n not in model.params:
            raise ValueError(
                f"fit parameter {n!r} is not a parameter of model {model.name}; valid names: {sorted(model.params)}"
            )
        if n not in bounds or n not in guesses:
            raise ValueError(f"fit parameter {n!r} needs a guess and bounds (lo, hi)")
        lo_, hi_ = bounds[n]
        if not lo_ < float(guesses[n]) < hi_:
            raise ValueError(f"guess {n} = {guesses[n]} must lie strictly inside bounds ({lo_}, {hi_})")


def _grid_sweep(loss, z, y, *, i, k, lo, hi, tau):
    """Move parameter ``i`` of z to the best of ``k`` values uniform inside its bounds (or keep it):
    forward runs only, at the first smoothing width ``tau``."""
    grid = _to_z(jnp.linspace(lo[i], hi[i], k + 2)[1:-1], lo[i], hi[i])
    cand = jnp.concatenate([z[None], jnp.tile(z, (k, 1)).at[:, i].set(grid)])
    values = jax.vmap(loss, in_axes=(0, None, None))(cand, y, tau)
    return cand[jnp.argmin(jnp.where(jnp.isfinite(values), values, jnp.inf))]


def _progress_line(text: str) -> None:
    """One progress line of a fit (``progress``): compiling and the later stages take minutes on long data."""
    print(f"  {text}", flush=True)


def _solve(
    model,
    data_t,
    data_y,
    fit_names,
    guesses,
    bounds,
    *,
    observe,
    optimizer,
    steps,
    learning_rate,
    scheme,
    smoothing,
    windows,
    data_state,
    dt,
    fixed,
    starts,
    seed,
    noise,
    progress,
    batched,
    grid_start,
    posterior=None,
    gradient="auto",
):
    """Shared engine of :func:`fit` and :func:`fit_batch` (data_y with a leading batch axis when batched)."""
    fit_names = tuple(fit_names)
    _check(model, fit_names, guesses, bounds)
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps = {steps!r} must be a positive int")
    if not isinstance(starts, int) or starts < 1:
        raise ValueError(f"starts = {starts!r} must be a positive int")
    if not isinstance(grid_start, int) or grid_start < 0:
        raise ValueError(f"grid_start = {grid_start!r} must be an int >= 0 (0: off)")
    if noise is not None and not float(noise) > 0:
        raise ValueError(f"noise = {noise} must be > 0 (the measurement standard deviation) or None")
    mode = gradient_mode(gradient, scheme, len(fit_names))
    t_start = time.perf_counter()
    lo = jnp.array([bounds[n][0] for n in fit_names], dtype=float)
    hi = jnp.array([bounds[n][1] for n in fit_names], dtype=float)
    soft = smoothing is not None
    res_fn = make_residuals(
        model,
        data_t,
        observe,
        fit_names,
        scheme=scheme,
        soft=soft,
        windows=windows,
        data_state=data_state,
        dt=dt,
        fixed=fixed,
    )
    y_all = jnp.asarray(np.asarray(data_y, float))
    if not np.all(np.isfinite(np.asarray(y_all))):
        raise ValueError("data_y must be finite")

    def loss(z, y, tau):
        return jnp.mean(res_fn(_to_theta(z, lo, hi), y, tau) ** 2)

    opt = _optimizer(optimizer, learning_rate)
    z_guess = _to_z(jnp.array([float(guesses[n]) for n in fit_names]), lo, hi)
    taus = jnp.asarray(smoothing.schedule(steps) if soft else np.ones(steps))
    if grid_start:  # two coordinate sweeps over the bounds, from the guess (per data set when batched)
        z_guess = jnp.broadcast_to(z_guess, y_all.shape[:1] + z_guess.shape) if batched else z_guess
        sweeps = []
        for i in range(len(fit_names)):
            sweep = functools.partial(_grid_sweep, loss, i=i, k=grid_start, lo=lo, hi=hi, tau=taus[0])
            sweeps.append(jax.jit(jax.vmap(sweep) if batched else sweep))
        for sweep in sweeps * 2:
            z_guess = sweep(z_guess, y_all)
    jitter = jax.random.uniform(jax.random.PRNGKey(seed), (starts - 1, len(fit_names)), minval=-1.5, maxval=1.5)
    z0 = jnp.concatenate([z_guess[..., None, :], z_guess[..., None, :] + jitter], axis=-2)  # ([B,] S, p)

    if starts == 1 and not batched:
        # One start: no vmap. Under vmap the line search's lax.cond becomes a select that runs both of
        # its branches, each a simulation with its gradient, at every line-search step.
        single = _make_chunk(loss, opt, mode)
        lead = lambda tree: jax.tree.map(lambda x: x[None], tree)  # noqa: E731
        one = lambda z, s, y, taus: lead(single(z[0], jax.tree.map(lambda x: x[0], s), y, taus))  # noqa: E731
    else:
        one = jax.vmap(_make_chunk(loss, opt, mode), in_axes=(0, 0, None, None))  # over starts
    init = jax.vmap(opt.init)
    if batched:
        one = jax.vmap(one, in_axes=(0, 0, 0, None))
        init = jax.vmap(init)
        z0 = jnp.broadcast_to(z0, y_all.shape[:1] + z0.shape[-2:])
    chunk = jax.jit(one)
    every = steps if (progress is None or batched) else max(1, int(progress))
    say = _progress_line if progress and not batched else (lambda text: None)
    say(f"compiling the fit ({len(fit_names)} parameter(s), {starts} start(s)); a line every {every} iterations")
    z, s = z0, init(z0)
    losses, zs = [], []
    for a in range(0, steps, every):
        z, s, (v, zh) = chunk(z, s, y_all, taus[a : a + every])
        losses.append(np.asarray(v))
        zs.append(np.asarray(zh))
        if not batched and progress:
            b = int(np.nanargmin(np.asarray(v)[:, -1]))
            th = np.asarray(_to_theta(z[b], lo, hi))
            tau = f" tau={float(taus[min(a + every, steps) - 1]):.3g}" if soft else ""
            say(
                f"iter {min(a + every, steps):5d}  loss={float(v[b, -1]):.6g}{tau}  "
                + "  ".join(f"{n}={x:.6g}" for n, x in zip(fit_names, th))
            )
    axis = 2 if batched else 1
    losses, zs = np.concatenate(losses, axis=axis), np.concatenate(zs, axis=axis)

    tau_end = taus[-1]
    final = jax.jit(jax.vmap(lambda zz, y: loss(zz, y, tau_end), in_axes=(0, None)))
    if batched:
        final = jax.vmap(final, in_axes=(0, 0))
    start_losses = np.asarray(final(z, y_all))
    start_losses = np.where(np.isfinite(start_losses), start_losses, np.inf)
    best = np.argmin(start_losses, axis=-1)

    # The Jacobian of m residuals in p parameters (p < m): p forward passes beat m reverse ones
    # whenever the scheme can be differentiated forward (a custom VJP, e.g. implicit LCP gradients,
    # makes it reverse-only).
    jacobian = jax.jacfwd if "forward" in scheme.differentiation_modes else jax.jacrev

    def laplace(theta, y):
        r = res_fn(theta, y, tau_end)
        J = jacobian(res_fn)(theta, y, tau_end)
        m, pn = J.shape
        s2 = noise**2 if noise is not None else jnp.sum(r**2) / max(m - pn, 1)
        cov = s2 * jnp.linalg.pinv(J.T @ J)
        return jnp.sqrt(jnp.maximum(jnp.diag(cov), 0.0)), jnp.mean(r**2)

    if batched:
        zb = z[np.arange(z.shape[0]), best]
        theta = _to_theta(zb, lo, hi)
        sd, lossv = jax.jit(jax.vmap(laplace))(theta, y_all)
        return BatchFitResult(
            fit_names,
            np.asarray(theta),
            np.asarray(sd),
            np.asarray(lossv),
            losses[np.arange(z.shape[0]), best],
            steps,
            time.perf_counter() - t_start,
        )
    b = int(best)
    say("intervals: Laplace sd from the Jacobian, then a check of the loss along each parameter")
    theta = _to_theta(z[b], lo, hi)
    sd, lossv = jax.jit(laplace)(theta, y_all)
    theta, sd = np.asarray(theta), np.asarray(sd)
    # Data reproduced to round-off (rms residual below 1e-10 of the data's rms): the Laplace sd is
    # round-off too and no interval can be read from a zero loss.
    exact = noise is None and float(lossv) <= EXACT_FIT**2 * float(jnp.mean(y_all**2))
    if exact:
        sd = np.zeros_like(sd)
        checked = [
            ParameterInterval(
                float(theta[i]),
                (float(theta[i]),) * 2,
                "exact fit",
                (float(theta[i]),) * 2,
                (float(theta[i]),) * 2,
                np.empty(0),
                np.empty(0),
            )
            for i in range(len(fit_names))
        ]
    else:
        checked = check_intervals(
            lambda th, y: jnp.mean(res_fn(th, y, tau_end) ** 2),
            theta,
            sd,
            np.asarray(lo),
            np.asarray(hi),
            n_residuals=int(res_fn(theta, y_all, tau_end).size),
            noise=noise,
            residuals=lambda th, y: res_fn(th, y, tau_end),
            jacobian=jacobian,
            args=(y_all,),
        )
    est = {n: c.estimate for n, c in zip(fit_names, checked)}
    r_est = res_fn(jnp.asarray([c.estimate for c in checked]), y_all, tau_end)
    lossv = float(jnp.mean(r_est**2))
    whiteness = (
        {}
        if exact
        else residual_check(
            np.asarray(r_est).reshape(y_all.shape[0], -1),
            est,
            {n: c.interval for n, c in zip(fit_names, checked)},
            noise,
        )
    )
    post = None
    if posterior is not None:
        if exact:
            raise ValueError(
                "posterior: the data are reproduced exactly (no noise to build a likelihood on); "
                "give the measurement noise sd (noise=...) to sample anyway"
            )
        m_res = int(res_fn(theta, y_all, tau_end).size)
        sigma = noise if noise is not None else float(np.sqrt(m_res * lossv / max(m_res - len(fit_names), 1)))
        scale = [
            max((c.interval[1] - c.interval[0]) / 3.92, 1e-12 * float(hi[i] - lo[i])) for i, c in enumerate(checked)
        ]
        say("posterior: random-walk Metropolis (" + ", ".join(f"{k} {v}" for k, v in posterior.items()) + ")")
        post = sample(
            lambda th: jnp.mean(res_fn(th, y_all, tau_end) ** 2),
            [c.estimate for c in checked],
            scale,
            np.asarray(lo),
            np.asarray(hi),
            n_residuals=m_res,
            sigma=sigma,
            seed=seed,
            **posterior,
        )
    return FitResult(
        est,
        {n: float(sd[i]) for i, n in enumerate(fit_names)},
        {n: c.interval for n, c in zip(fit_names, checked)},
        losses[b],
        np.asarray(_to_theta(jnp.asarray(zs[b]), lo, hi)),
        np.asarray(taus) if soft else np.full(steps, np.nan),
        steps,
        float(lossv),
        start_losses,
        time.perf_counter() - t_start,
        {n: c.method for n, c in zip(fit_names, checked)},
        post,
        whiteness,
    )


class BatchFitResult(NamedTuple):
    """A batch of fits: estimates and sd (B, p) in ``names`` order, final loss (B,), loss history (B, steps)."""

    names: tuple
    estimates: np.ndarray
    std: np.ndarray
    loss: np.ndarray
    loss_history: np.ndarray
    iterations: int
    wall_time: float


def fit(
    model,
    data_t,
    data_y,
    fit_names,
    guesses,
    bounds,
    *,
    observe=coordinates(),
    optimizer="lbfgs",
    steps=100,
    learning_rate=0.05,
    scheme=MoreauJean(),
    smoothing=None,
    windows=1,
    data_state=None,
    dt=None,
    fixed=None,
    starts=1,
    seed=0,
    noise=None,
    progress=None,
    grid_start=0,
    posterior=None,
    gradient="auto",
) -> FitResult:
    """Fit ``fit_names`` (bounded) to ``data_y`` observed at ``data_t``; see the module docstring.

    data_y: (m,) or (m, d) matching ``observe(q, p)``. optimizer: "lbfgs" or "adam"
    (``learning_rate``). scheme: the stepping scheme and its options (the data's): MoreauJean,
    or EventDriven / Penalty (those without ``smoothing``; the event-driven scheme locates impacts
    inside the step, so its misfit is smooth in a length or gap without it).
    smoothing: a :class:`Smoothing` or None. windows/data_state: data-anchored
    windows. dt: step (default the model's). fixed: known parameter values by name.
    starts: multi-start count (vmapped). noise: measurement sd for the Laplace
    covariance (None: estimated from the residual). progress: print every k steps.
    grid_start: K > 0 replaces the guess by two coordinate sweeps of a K-point grid over each
    parameter's bounds (forward runs only; see the module docstring).
    posterior: None, or a dict of :func:`jaxcontact.studies.posterior.sample` options (``{}`` for its
    defaults: chains, draws, burn) to sample the posterior after the fit (``FitResult.posterior``).
    gradient: "auto", "forward" or "reverse": the loss gradient's mode (:func:`gradient_mode`).
    """
    return _solve(
        model,
        data_t,
        data_y,
        fit_names,
        guesses,
        bounds,
        observe=observe,
        optimizer=optimizer,
        steps=steps,
        learning_rate=learning_rate,
        scheme=scheme,
        smoothing=smoothing,
        windows=windows,
        data_state=data_state,
        dt=dt,
        fixed=fixed,
        starts=starts,
        seed=seed,
        noise=noise,
        progress=progress,
        batched=False,
        grid_start=grid_start,
        posterior=posterior,
        gradient=gradient,
    )


def fit_batch(
    model,
    data_t,
    data_ys,
    fit_names,
    guesses,
    bounds,
    *,
    observe=coordinates(),
    optimizer="lbfgs",
    steps=100,
    learning_rate=0.05,
    scheme=MoreauJean(),
    smoothing=None,
    dt=None,
    fixed=None,
    starts=1,
    seed=0,
    noise=None,
    grid_start=0,
    gradient="auto",
) -> BatchFitResult:
    """:func:`fit` for a batch of data sets ``data_ys`` (B, m[, d]) at shared ``data_t``: one vmapped call."""
    return _solve(
        model,
        data_t,
        data_ys,
        fit_names,
        guesses,
        bounds,
        observe=observe,
        optimizer=optimizer,
        steps=steps,
        learning_rate=learning_rate,
        scheme=scheme,
        smoothing=smoothing,
        windows=1,
        data_state=None,
        dt=dt,
        fixed=fixed,
        starts=starts,
        seed=seed,
        noise=noise,
        progress=None,
        batched=True,
        grid_start=grid_start,
        gradient=gradient,
    )

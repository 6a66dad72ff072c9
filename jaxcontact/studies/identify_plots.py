"""PNG figures of a parameter fit: convergence (loss and parameters per iteration) and fit vs data."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from matplotlib.ticker import MaxNLocator

from jaxcontact.simulate import n_steps_for, simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.studies.plots import _save, _tidy, pyplot
from jaxcontact.units import coordinate_unit


def convergence_plot(res, path, truth: dict | None = None) -> None:
    """Loss (log scale, with τ of the smoothing when used) and each parameter against the iteration.

    A loss of exactly 0 (noise-free data fitted exactly) has no place on a log axis: the
    iterations where it is 0 are marked and the axis spans only the positive losses.
    """
    plt = pyplot()
    names = list(res.estimates)
    fig, axes = plt.subplots(
        1, 1 + len(names), figsize=(4.3 * (1 + len(names)), 3.4), squeeze=False, layout="constrained"
    )
    it = np.arange(1, len(res.loss_history) + 1)
    loss = np.asarray(res.loss_history, float)
    ax = axes[0, 0]
    positive = loss > 0
    if positive.any():
        ax.semilogy(it, np.where(positive, loss, np.nan), lw=1.2, marker=".", label="loss")
    zero = np.flatnonzero(loss == 0)
    if zero.size:
        ax.axvline(it[zero[0]], color="C2", ls=":", lw=1.2, label=f"loss = 0 (exact) from iteration {it[zero[0]]}")
    if np.all(np.isfinite(res.tau_history)):
        ax.semilogy(it, res.tau_history, lw=1, ls="--", label="τ (smoothing) [m]")
    ax.set_xlim(it[0] - 0.5, it[-1] + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    ax.set_xlabel("iteration")
    ax.set_ylabel("loss (mean squared residual)")
    ax.set_title("misfit", fontsize=10)
    ax.legend(fontsize=7)
    for i, n in enumerate(names):
        ax = axes[0, 1 + i]
        ax.plot(it, res.param_history[:, i], lw=1.2)
        if truth and n in truth:
            ax.axhline(truth[n], color="k", ls=":", lw=1, label="truth")
            ax.legend(fontsize=8)
        ax.set_xlabel("iteration")
        ax.set_ylabel(n)
        _tidy(ax)
        ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
        sd = res.std[n]
        ax.set_title(f"{n} = {res.estimates[n]:.5g}" + (" (exact fit)" if sd == 0 else f" ± {sd:.2g}"), fontsize=10)
    _save(fig, path)


def fit_vs_data_plot(
    model, res, data_t, data_y, observe, path, *, dt=None, scheme=MoreauJean(), fixed=None, labels=()
) -> None:
    """The data and the model simulated (hard contact law) at the estimates, one panel per observed signal."""
    p = dict(model.params) | {k: jnp.asarray(v, float) for k, v in (fixed or {}).items()}
    p |= {k: jnp.asarray(v, float) for k, v in res.estimates.items()}
    dt = model.dt if dt is None else dt
    q0, u0 = model.initial_state(p)
    traj = simulate(model.system, p, q0, u0, dt=dt, n_steps=n_steps_for(dt, float(np.max(data_t))), scheme=scheme)
    pred = np.asarray(observe(traj.q, p)).reshape(len(traj.t), -1)
    data_y = np.asarray(data_y).reshape(len(data_t), -1)
    d = data_y.shape[1]
    fig, axes = pyplot().subplots(d, 1, figsize=(8, 2.6 * d + 0.4), squeeze=False, sharex=True, layout="constrained")
    for j in range(d):
        ax = axes[j, 0]
        ax.plot(data_t, data_y[:, j], ".", ms=3, color="k", label="data")
        ax.plot(np.asarray(traj.t), pred[:, j], lw=1.2, color="C3", label="model at estimates")
        name = labels[j] if j < len(labels) else f"y{j}"
        ax.set_ylabel(f"{name} [{coordinate_unit(name)}]" if j < len(labels) else name)
    axes[0, 0].legend(fontsize=8)
    axes[0, 0].set_title(", ".join(f"{k} = {v:.5g}" for k, v in res.estimates.items()))
    axes[-1, 0].set_xlabel("t [s]")
    _save(fig, path)


def corner_plot(res, path) -> None:
    """Posterior draws of every fitted parameter: histograms on the diagonal (95 % credible interval
    dashed, the checked fit interval dotted), pairwise scatter below it."""
    plt = pyplot()
    names = list(res.estimates)
    x = res.posterior.samples.reshape(-1, len(names))
    p = len(names)
    fig, axes = plt.subplots(p, p, figsize=(2.8 * p + 1, 2.8 * p + 0.6), squeeze=False, layout="constrained")
    for i in range(p):
        for j in range(p):
            ax = axes[i, j]
            if j > i:
                ax.set_axis_off()
                continue
            if i == j:
                ax.hist(x[:, i], bins=40, color="C0", alpha=0.8)
                for v in res.posterior.interval95[i]:
                    ax.axvline(v, color="k", ls="--", lw=1)
                for v in res.interval95[names[i]]:
                    ax.axvline(v, color="C3", ls=":", lw=1.2)
                ax.set_yticks([])
            else:
                ax.plot(x[:, j], x[:, i], ".", ms=1.5, alpha=0.3)
                ax.set_ylabel(names[i])
            ax.set_xlabel(names[j])
            _tidy(ax, 3, 3)
    fig.suptitle(
        f"posterior, {res.posterior.samples.shape[0]}×{res.posterior.samples.shape[1]} draws\n"
        "dashed: 95 % credible; dotted: fit interval",
        fontsize=8,
    )
    _save(fig, path)


def experiments_fit_plot(res, experiments, model, path: str) -> str:
    """A fit over experiments: parameters per step, the per-experiment estimates, the pose error by time since
    each experiment's first contact, measured against fitted height for three experiments, and the profiles of
    the parameters whose interval is their profile's bootstrap (if any)."""
    import os

    from jaxcontact.toss_states import CONTACT_CLEARANCE, lowest_vertex

    plt = pyplot()
    names = list(res.estimates)
    profiles = res.profiles or {}
    fig, axes = plt.subplots(2, 3 + bool(profiles), figsize=(13 + 4 * bool(profiles), 7), layout="constrained")
    if profiles:
        ax = axes[0, 3]
        for n, prof in profiles.items():
            colour = f"C{names.index(n)}"
            ax.plot(prof["grid"], prof["mean_loss"], "o-", ms=3, color=colour, label=f"{n}: mean loss on its profile")
            # an interval open at an end (the bootstrap reached the grid's end there) is drawn to that end
            ends = [e if np.isfinite(e) else g for e, g in zip(prof["interval95"], (prof["grid"][0], prof["grid"][-1]))]
            ax.axvspan(*ends, color=colour, alpha=0.2, label="bootstrap 95 % interval")
            ax.axvline(prof["estimate"], color=colour, lw=1.2)
        ax.set_xlabel("profiled parameter (the others at their estimates)", fontsize=9)
        ax.set_ylabel("mean loss over the experiments", fontsize=9)
        ax.legend(fontsize=7)
        _tidy(ax)
        axes[1, 3].set_visible(False)
    ax = axes[0, 0]
    steps = np.arange(1, len(res.loss_history) + 1)
    for i, n in enumerate(names):
        # relative to the estimate; an estimate of 0 (a restitution on its bound) leaves the value itself
        scale = abs(res.estimates[n]) if abs(res.estimates[n]) > 1e-9 else 1.0
        label = f"{n} / {res.estimates[n]:.4g}" if scale != 1.0 else f"{n} (estimate {res.estimates[n]:.4g})"
        ax.plot(steps, res.param_history[:, i] / scale, lw=1.2, label=label)
    ax.set_xlabel("Adam step", fontsize=9)
    ax.set_ylabel("parameter / final estimate", fontsize=9)
    twin = ax.twinx()
    twin.semilogy(steps, res.loss_history, color="0.6", lw=0.8, label="minibatch loss")
    twin.set_ylabel("minibatch loss", fontsize=9, color="0.4")
    ax.legend(fontsize=8)
    _tidy(ax)
    ax = axes[0, 1]
    for i, n in enumerate(names[:2]):
        own = res.experiment_estimates[:, i]
        own = own[np.isfinite(own)]
        if own.size:
            ax.hist(own, bins=max(5, min(30, own.size // 3)), alpha=0.6, color=f"C{i}", label=f"{n} per experiment")
        lo, hi = res.interval95[n]
        ax.axvspan(lo, hi, color=f"C{i}", alpha=0.25)
        ax.axvline(res.estimates[n], color=f"C{i}", lw=1.5, label=f"{n} shared, 95 % interval")
    ax.set_xlabel("one-step estimate of each experiment", fontsize=9)
    ax.set_ylabel("experiments", fontsize=9)
    ax.legend(fontsize=7)
    _tidy(ax)
    ax = axes[0, 2]
    n_exp, width = res.error.shape
    meas = np.concatenate(
        [experiments.measured["position"][:, :width], experiments.measured["quaternion_wxyz"][:, :width]], axis=-1
    )
    mask = experiments.mask[:, :width]
    heights = lowest_vertex(model, np.where(mask[..., None], meas, meas[:, :1]).reshape(-1, 7)).reshape(mask.shape)
    first = np.argmax((heights < CONTACT_CLEARANCE) & mask, axis=1)
    dt = float(np.median(np.diff(experiments.t[0, :2])))
    since = (np.arange(width)[None, :] - first[:, None]) * dt
    ax.scatter(since[mask], 1e3 * res.error[mask], s=3, alpha=0.25, color="C0")
    lags = np.unique(since[mask])
    med = [np.median(res.error[mask & (since == s)]) for s in lags]
    ax.plot(lags, 1e3 * np.asarray(med), color="C3", lw=1.5, label="median")
    ax.axvline(0.0, color="0.5", ls=":", lw=1)
    ax.set_xlabel("time since the first contact (measured) [s]", fontsize=9)
    ax.set_ylabel("pose error e at the estimate [mm]", fontsize=9)
    ax.legend(fontsize=8)
    _tidy(ax)
    order = np.argsort(res.experiment_loss)
    picks = {"best": order[0], "median": order[n_exp // 2], "worst": order[-1]}
    for ax, (what, k) in zip(axes[1], picks.items()):
        valid = mask[k]
        t = experiments.t[k, :width][valid]
        ax.plot(t, 1e3 * experiments.measured["position"][k, :width, 2][valid], "k.", ms=3, label="measured")
        ax.plot(t, 1e3 * res.q[k, :, 2][valid], "C1", lw=1.2, label="fitted model")
        ax.set_title(f"{what}: experiment {k}, loss {res.experiment_loss[k]:.3g}", fontsize=9)
        ax.set_xlabel("time since the first sample [s]", fontsize=9)
        ax.set_ylabel("centre height [mm]", fontsize=9)
        ax.legend(fontsize=8)
        _tidy(ax)
    fig.suptitle(f"{model.name}: {', '.join(names)} fitted to {n_exp} experiments (first {width} samples each)")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    _save(fig, path)
    return path

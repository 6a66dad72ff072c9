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

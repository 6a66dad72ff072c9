"""PNG figures of a parameter fit: convergence (loss and parameters per iteration) and fit vs data."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxcontact.simulate import n_steps_for, simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.studies.plots import _save, plt


def convergence_plot(res, path, truth: dict | None = None) -> None:
    """Loss (log scale, with τ of the smoothing when used) and each parameter against the iteration."""
    names = list(res.estimates)
    fig, axes = plt.subplots(1, 1 + len(names), figsize=(4.2 * (1 + len(names)), 3.2), squeeze=False)
    it = np.arange(1, len(res.loss_history) + 1)
    ax = axes[0, 0]
    ax.semilogy(it, np.maximum(res.loss_history, 1e-300), lw=1.2, label="loss")
    if np.all(np.isfinite(res.tau_history)):
        ax.semilogy(it, res.tau_history, lw=1, ls="--", label="τ (smoothing)")
    ax.set_xlabel("iteration")
    ax.set_title("misfit")
    ax.legend(fontsize=8)
    for i, n in enumerate(names):
        ax = axes[0, 1 + i]
        ax.plot(it, res.param_history[:, i], lw=1.2)
        if truth and n in truth:
            ax.axhline(truth[n], color="k", ls=":", lw=1, label="truth")
            ax.legend(fontsize=8)
        ax.set_xlabel("iteration")
        ax.set_title(f"{n} = {res.estimates[n]:.5g} ± {res.std[n]:.2g}")
    _save(fig, path)


def fit_vs_data_plot(model, res, data_t, data_y, observe, path, *, dt=None, scheme=MoreauJean(), fixed=None,
                     labels=()) -> None:
    """The data and the model simulated (hard contact law) at the estimates, one panel per observed signal."""
    p = dict(model.params) | {k: jnp.asarray(v, float) for k, v in (fixed or {}).items()}
    p |= {k: jnp.asarray(v, float) for k, v in res.estimates.items()}
    dt = model.dt if dt is None else dt
    q0, u0 = model.initial_state(p)
    traj = simulate(model.system, p, q0, u0, dt=dt, n_steps=n_steps_for(dt, float(np.max(data_t))), scheme=scheme)
    pred = np.asarray(observe(traj.q, p)).reshape(len(traj.t), -1)
    data_y = np.asarray(data_y).reshape(len(data_t), -1)
    d = data_y.shape[1]
    fig, axes = plt.subplots(d, 1, figsize=(8, 2.6 * d + 0.4), squeeze=False, sharex=True)
    for j in range(d):
        ax = axes[j, 0]
        ax.plot(data_t, data_y[:, j], ".", ms=3, color="k", label="data")
        ax.plot(np.asarray(traj.t), pred[:, j], lw=1.2, color="C3", label="model at estimates")
        ax.set_ylabel(labels[j] if j < len(labels) else f"y{j}")
    axes[0, 0].legend(fontsize=8)
    axes[0, 0].set_title(", ".join(f"{k} = {v:.5g}" for k, v in res.estimates.items()))
    axes[-1, 0].set_xlabel("t (s)")
    _save(fig, path)

"""The picture of a prediction of measured experiments: error distributions, and measured vs predicted
height of a few experiments (the best, the median and the worst by position error)."""

from __future__ import annotations

import os

import numpy as np

from jaxcontact.plotting import _pyplot, _save
from jaxcontact.studies.plots import _tidy


def plot_prediction(experiments, prediction, model, out_dir: str, bands=None) -> str:
    """Write ``prediction.png`` in ``out_dir``; returns its path. ``bands``: a
    :class:`jaxcontact.prediction.Bands` drawn around the predicted heights."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), layout="constrained")
    pos, ang = 100 * prediction.position_error, prediction.orientation_error_deg
    for ax, v, label in (
        (axes[0, 0], pos, "position error [% of the width]"),
        (axes[0, 1], ang, "orientation error [°]"),
    ):
        ax.hist(v, bins=max(5, min(40, v.size // 3)), color="C0", alpha=0.8)
        ax.axvline(np.mean(v), color="C3", lw=1.5, label=f"mean {np.mean(v):.1f}")
        ax.axvline(np.median(v), color="C2", lw=1.5, ls="--", label=f"median {np.median(v):.1f}")
        ax.set_xlabel(label, fontsize=9)
        ax.set_ylabel("experiments", fontsize=9)
        ax.legend(fontsize=8)
        _tidy(ax)
    axes[0, 2].scatter(pos, ang, s=8, alpha=0.7)
    axes[0, 2].set_xlabel("position error [% of the width]", fontsize=9)
    axes[0, 2].set_ylabel("orientation error [°]", fontsize=9)
    _tidy(axes[0, 2])
    order = np.argsort(prediction.position_error)
    picks = {"best": order[0], "median": order[len(order) // 2], "worst": order[-1]}
    for ax, (what, k) in zip(axes[1], picks.items()):
        n = int(experiments.length[k])
        t = experiments.t[k, :n]
        ax.plot(t, 1e3 * experiments.measured["position"][k, :n, 2], "k.", ms=3, label="measured")
        ax.plot(t, 1e3 * prediction.q[k, :n, 2], "C1", lw=1.2, label="predicted")
        title = f"{what}: experiment {k}\nposition error {pos[k]:.0f} %, orientation {ang[k]:.0f}°"
        if bands is not None:
            ax.fill_between(
                t,
                1e3 * bands.lo[k, :n, 2],
                1e3 * bands.hi[k, :n, 2],
                color="C1",
                alpha=0.25,
                label=f"{100 * bands.level:.0f} % band ({len(bands.draws)} draws)",
            )
            title += f", {100 * bands.coverage[k]:.0f} % in band"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time since the first sample [s]", fontsize=9)
        ax.set_ylabel("centre height [mm]", fontsize=9)
        ax.legend(fontsize=8)
        _tidy(ax)
    fig.suptitle(f"{model.name}: prediction of {experiments.n} measured experiments from their first samples")
    os.makedirs(out_dir, exist_ok=True)
    return _save(fig, out_dir, "prediction.png", plt)

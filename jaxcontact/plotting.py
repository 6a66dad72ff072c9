"""PNG plots of one simulated trajectory: coordinates, contact impulses, diagnostics.

matplotlib runs headless (Agg); every function writes files and returns their paths.
"""

from __future__ import annotations

import os

import numpy as np

from jaxcontact.studies.plots import _tidy
from jaxcontact.units import coordinate_unit, velocity_unit

# Coordinates and velocities drawn one panel each up to this many; beyond, as maps over time.
ROWS_MAX = 24
# Contacts named in the impulses' legend up to this many.
LEGEND_MAX = 12


def _coordinate_maps(plt, t, q, u, out_dir, title) -> str:
    """``coordinates.png`` of a large model: q − q(0) and u as colour maps over (time, index)."""
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True, layout="constrained")
    for ax, values, label in ((axes[0], q - q[:1], "q − q(0)"), (axes[1], u, "u")):
        lim = float(np.max(np.abs(values))) or 1.0
        image = ax.imshow(
            values.T,
            aspect="auto",
            origin="lower",
            extent=(float(t[0]), float(t[-1]), -0.5, values.shape[1] - 0.5),
            cmap="RdBu_r",
            vmin=-lim,
            vmax=lim,
            interpolation="nearest",
        )
        ax.set_ylabel("index")
        fig.colorbar(image, ax=ax, label=f"{label} (each in its unit)")
    axes[1].set_xlabel("t [s]")
    fig.suptitle(f"{title} — {q.shape[1]} coordinates and {u.shape[1]} velocities".strip(" —"))
    return _save(fig, out_dir, "coordinates.png", plt)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_trajectory(traj, out_dir: str, *, names=(), title: str = "", velocity_names=()) -> list[str]:
    """Write ``coordinates.png``, ``contacts.png`` (when there are contacts) and ``diagnostics.png``.

    ``traj`` is one (unbatched) :class:`jaxcontact.simulate.Trajectory`; ``names`` label the coordinates
    and ``velocity_names`` the velocities when they are not the coordinates' rates (spatial bodies).
    """
    q = np.asarray(traj.q)
    if q.ndim != 2:
        raise ValueError(f"plot_trajectory takes one trajectory; got q of shape {q.shape} (a batch? index it)")
    plt = _pyplot()
    os.makedirs(out_dir, exist_ok=True)
    t, u = np.asarray(traj.t), np.asarray(traj.u)
    n, n_u = q.shape[1], u.shape[1]
    names = tuple(names) if names else tuple(f"q{i}" for i in range(n))
    velocity_names = tuple(velocity_names) if velocity_names else tuple(f"u{i}" for i in range(n_u))
    paths = []

    rows = max(n, n_u)
    if rows > ROWS_MAX:
        # One panel per coordinate would be unreadable (and slow to lay out): maps of all of them instead.
        paths.append(_coordinate_maps(plt, t, q, u, out_dir, title))
    else:
        fig, axes = plt.subplots(
            rows, 2, figsize=(10, 1.9 * rows + 0.8), sharex=True, squeeze=False, layout="constrained"
        )
        for i in range(rows):
            if i < n:
                unit = coordinate_unit(names[i])
                axes[i, 0].plot(t, q[:, i], lw=1)
                axes[i, 0].set_ylabel(f"{names[i]} [{unit}]", fontsize=9)
                _tidy(axes[i, 0], 5, 4)
            else:
                axes[i, 0].set_visible(False)
            if i < n_u and n_u == n:
                axes[i, 1].plot(t, u[:, i], lw=1, color="C1")
                axes[i, 1].set_ylabel(f"d{names[i]}/dt [{unit}/s]", fontsize=9)
                _tidy(axes[i, 1], 5, 4)
            elif i < n_u:  # velocities that are not the coordinates' rates (spatial: v and body-frame ω)
                axes[i, 1].plot(t, u[:, i], lw=1, color="C1")
                axes[i, 1].set_ylabel(f"{velocity_names[i]} [{velocity_unit(velocity_names[i])}]", fontsize=9)
                _tidy(axes[i, 1], 5, 4)
            else:
                axes[i, 1].set_visible(False)
        axes[-1, 0].set_xlabel("t [s]")
        axes[-1, 1].set_xlabel("t [s]")
        fig.suptitle(f"{title} — coordinates and velocities".strip(" —"))
        paths.append(_save(fig, out_dir, "coordinates.png", plt))

    PN, PT = np.asarray(traj.impulse_normal), np.asarray(traj.impulse_tangent)
    if PN.shape[1]:
        fig, axes = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True, layout="constrained")
        spatial = PT.shape[1] == 2 * PN.shape[1]
        if spatial:  # two tangent directions per contact: plot the magnitude
            PT = np.linalg.norm(PT.reshape(PT.shape[0], -1, 2), axis=2)
        for c in range(PN.shape[1]):
            axes[0].plot(t, PN[:, c], lw=1, label=f"contact {c}")
            axes[1].plot(t, PT[:, c], lw=1, label=f"contact {c}")
        axes[0].set_ylabel("normal impulse per step [N s]")
        axes[1].set_ylabel(("|tangential impulse|" if spatial else "tangential impulse") + " per step [N s]")
        axes[1].set_xlabel("t [s]")
        if 1 < PN.shape[1] <= LEGEND_MAX:
            axes[0].legend(fontsize=8)
        fig.suptitle(f"{title} — contact impulses".strip(" —"))
        paths.append(_save(fig, out_dir, "contacts.png", plt))

    d = traj.diagnostics
    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True, layout="constrained")
    axes[0, 0].plot(t, np.asarray(d.energy), lw=1)
    axes[0, 0].set_ylabel("energy [J]")
    _semilogy(axes[0, 1], t, np.asarray(d.residual), "contact solver residual")
    _semilogy(axes[1, 0], t, np.asarray(d.phi), "joint error ‖Φ‖ [m, rad]")
    _semilogy(axes[1, 1], t, np.asarray(d.phi_dot), "joint velocity error ‖Φ_q u + Φ_t‖ [m/s, rad/s]")
    for ax in axes[1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(f"{title} — diagnostics".strip(" —"))
    paths.append(_save(fig, out_dir, "diagnostics.png", plt))
    return paths


def _semilogy(ax, t, y, label):
    """Log scale when there is something positive to show; a flat zero line otherwise."""
    if np.any(y > 0):
        ax.semilogy(t, np.where(y > 0, y, np.nan), lw=1)
    else:
        ax.plot(t, y, lw=1)
    ax.set_ylabel(label, fontsize=9)


def _save(fig, out_dir, name, plt) -> str:
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

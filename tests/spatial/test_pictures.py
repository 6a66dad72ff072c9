"""Plots of spatial trajectories (7 coordinates, 6 velocities per body): the generic plots and the 3D snapshots."""

import numpy as np

from jaxcontact.models import box_toss, newton_cradle, sphere_on_plane, tippe_top
from jaxcontact.plotting import plot_trajectory
from jaxcontact.simulate import Diagnostics, Trajectory


def _trajectory(n_bodies, k, rows=5):
    t = np.linspace(0.0, 1.0, rows)
    q = np.zeros((rows, 7 * n_bodies))
    for b in range(n_bodies):
        q[:, 7 * b] = 0.1 * b + t
        q[:, 7 * b + 2] = 0.1
        q[:, 7 * b + 3] = np.cos(t)  # turning about e_y
        q[:, 7 * b + 5] = np.sin(t)
    u = np.ones((rows, 6 * n_bodies))
    z = np.zeros(rows)
    return Trajectory(t, q, u, np.ones((rows, k)), np.ones((rows, 2 * k)), np.zeros((rows, k), bool),
                      Diagnostics(z, np.ones(rows, bool), z.astype(int), z, z, z))


def test_plots_of_a_spatial_trajectory(tmp_path):
    traj = _trajectory(1, 8)
    system = box_toss.SYSTEM
    paths = plot_trajectory(traj, str(tmp_path), names=system.names, velocity_names=system.velocity_names,
                            title="box")
    assert [p.split("/")[-1] for p in paths] == ["coordinates.png", "contacts.png", "diagnostics.png"]
    assert system.velocity_names[3:] == ("box.wx", "box.wy", "box.wz")


def test_snapshots_draw_every_model(tmp_path):
    for module, n_bodies, k in ((sphere_on_plane, 1, 1), (box_toss, 1, 8), (newton_cradle, 3, 2), (tippe_top, 1, 1)):
        m = module.model()
        path = m.picture(_trajectory(n_bodies, k), m.params, str(tmp_path / f"{m.name}.png"))
        assert (tmp_path / f"{m.name}.png").stat().st_size > 10_000 and path.endswith(".png")


def test_spatial_velocity_axes_carry_units(tmp_path, monkeypatch):
    import jaxcontact.plotting as plotting

    labels = {}
    save = plotting._save

    def record(fig, out_dir, name, plt):
        labels[name] = [ax.get_ylabel() for ax in fig.axes]
        return save(fig, out_dir, name, plt)

    monkeypatch.setattr(plotting, "_save", record)
    system = box_toss.SYSTEM
    plot_trajectory(_trajectory(1, 8), str(tmp_path), names=system.names, velocity_names=system.velocity_names)
    got = labels["coordinates.png"]
    assert "box.vx [m/s]" in got and "box.vz [m/s]" in got and "box.wx [rad/s]" in got and "box.wz [rad/s]" in got

"""Plots of spatial trajectories (7 coordinates, 6 velocities per body): the generic plots and the 3D snapshots."""

from types import SimpleNamespace

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
    return Trajectory(
        t,
        q,
        u,
        np.ones((rows, k)),
        np.ones((rows, 2 * k)),
        np.zeros((rows, k), bool),
        Diagnostics(z, np.ones(rows, bool), z.astype(int), z, z, z),
    )


def test_plots_of_a_spatial_trajectory(tmp_path):
    traj = _trajectory(1, 8)
    system = box_toss.SYSTEM
    paths = plot_trajectory(traj, str(tmp_path), names=system.names, velocity_names=system.velocity_names, title="box")
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


def _artists(ax, gid):
    return [a for a in ax.lines + ax.collections if a.get_gid() == gid]


def test_cradle_snapshots_draw_each_string_from_its_pivot_and_no_plane():
    """The balls hang from ground pivots (2 i r, 0, 0): each snapshot draws pivot → ball centre; the cradle
    touches no plane."""
    import matplotlib.pyplot as plt

    from jaxcontact.spatial.pictures import snapshot_figure

    m = newton_cradle.model()
    q0 = np.asarray(m.initial_state(m.params)[0])
    traj = SimpleNamespace(t=np.linspace(0.0, 0.1, 4), q=np.tile(q0, (4, 1)))
    fig, ax = snapshot_figure(traj, m.params, assembly=newton_cradle.ASSEMBLY, count=4)
    r = m.params["radius"]
    pivots = [np.array([2 * i * r, 0.0, 0.0]) for i in range(3)]
    strings = [np.array(line.get_data_3d()).T for line in _artists(ax, "string")]
    assert len(strings) == 4 * 3
    for k, s in enumerate(strings):  # per snapshot, ball by ball
        i = k % 3
        assert np.allclose(s, [pivots[i], q0[7 * i : 7 * i + 3]])
    (marks,) = _artists(ax, "pivot")
    assert np.allclose(np.array(marks._offsets3d).T, pivots)
    assert not _artists(ax, "plane")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["pivot", "ball1", "ball2", "ball3"]
    lo, hi = ax.get_zlim()
    assert lo < -m.params["length"] and hi > 0.0  # pivots and balls both in view
    plt.close(fig)


def test_planes_are_those_of_the_contacts():
    """Every distinct plane of a plane contact, resolved from its parameters, and the square drawn lies on it."""
    from jaxcontact.spatial import Assembly, BoxPlane, Plane, SpherePlane
    from jaxcontact.spatial.pictures import _plane_square, _planes

    asm = Assembly()
    ball, box = asm.add_body("ball", 1.0, (1.0,) * 3), asm.add_body("box", 1.0, (1.0,) * 3)
    floor = Plane(offset="floor")
    wall = Plane(normal=("tilt", 0.0, 1.0), offset=0.5)
    asm.add_contact(SpherePlane("a", 0.0, 0.0, body=ball, radius=0.1, plane=floor))
    asm.add_contact(BoxPlane("b", 0.0, 0.0, body=box, half_extents=(0.1,) * 3, plane=floor))
    asm.add_contact(BoxPlane("c", 0.0, 0.0, body=box, half_extents=(0.1,) * 3, plane=wall))
    planes = _planes(asm, {"floor": -0.2, "tilt": 1.0, "gravity": 9.81})
    assert len(planes) == 2
    (n1, d1), (n2, d2) = planes
    assert np.allclose(n1, [0, 0, 1]) and d1 == -0.2
    assert np.allclose(n2, np.array([1.0, 0.0, 1.0]) / np.sqrt(2)) and d2 == 0.5
    corners = _plane_square(n2, d2, np.array([1.0, 2.0, 3.0]), 0.4).reshape(3, -1).T
    assert np.allclose(corners @ n2, d2)
    assert np.allclose(np.linalg.norm(corners - corners.mean(axis=0), axis=1), 0.4 * np.sqrt(2))


def test_snapshots_draw_the_inclined_plane_of_the_model():
    """sphere-on-plane's plane tilted by slope_deg is the one drawn, and only it."""
    import matplotlib.pyplot as plt

    from jaxcontact.spatial.pictures import _planes, snapshot_figure

    m = sphere_on_plane.model(slope_deg=30.0)
    ((n, d),) = _planes(sphere_on_plane.ASSEMBLY, m.params)
    assert np.allclose(n, [0.5, 0.0, np.sqrt(3) / 2]) and d == 0.0
    fig, ax = snapshot_figure(_trajectory(1, 1), m.params, assembly=sphere_on_plane.ASSEMBLY)
    assert len(_artists(ax, "plane")) == 1 and not _artists(ax, "string") and ax.get_legend() is None
    plt.close(fig)


def test_tippe_top_layout_axis_is_labelled_by_time_not_as_x():
    """The snapshots are set side by side along x: the axis reads each snapshot's time, not a position."""
    import matplotlib.pyplot as plt

    m = tippe_top.model()
    traj = _trajectory(1, 1, rows=7)
    fig, ax = tippe_top.picture_figure(traj, m.params, count=7)
    assert "x [m]" not in ax.get_xlabel() and "t [s]" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"{t:.2g}" for t in traj.t]
    assert np.allclose(ax.get_xticks(), 2.5 * m.params["radius"] * np.arange(7))
    assert ax.get_zlabel() == "height z [m]"
    plt.close(fig)


def test_shapes_come_from_the_contact_table_and_each_kind_has_a_drawer():
    """A contact draws the shapes its type's entry in SHAPES gives (one per body and kind), placed and turned
    as the contact places them on its body; a type not listed (a pin in a hole) draws none; every kind drawn
    has its drawer."""
    from jaxcontact.spatial import Assembly, BoxPlane, CapsulePlane, PinInHole, SpherePlane, SphereSphere
    from jaxcontact.spatial.pictures import DRAWERS, SHAPES, _shapes

    asm = Assembly()
    a, b, c, d = (asm.add_body(n, 1.0, (1.0,) * 3) for n in ("a", "b", "c", "d"))
    asm.add_contact(SpherePlane("a-floor", 0.0, 0.0, body=a, radius=0.1))
    asm.add_contact(SphereSphere("a-b", 0.0, 0.0, a=a, b=b, radius_a=0.1, radius_b=0.2, centre_b=(0.0, 0.0, 0.5)))
    turn = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))  # a quarter turn about z
    box = BoxPlane("c-floor", 0.0, 0.0, body=c, half_extents=(0.1, 0.2, 0.3), centre=(0.1, 0, 0), orientation=turn)
    asm.add_contact(box)
    asm.add_contact(CapsulePlane("d-floor", 0.0, 0.0, body=d, radius=0.05, half_length=0.2, axis=(1.0, 0, 0)))
    asm.add_contact(PinInHole("c-d", 0.0, 0.0, a=c, b=d, hole_radius=0.1, pin_radius=0.09, pin_length=0.1))
    shapes = _shapes(asm, {"gravity": 9.81})
    assert [(i, kind) for i, kind, _, _ in shapes] == [
        (a.index, "sphere"),
        (b.index, "sphere"),
        (c.index, "box"),
        (d.index, "segment"),
    ]
    assert shapes[1][2] == 0.2 and np.allclose(shapes[1][3], [0, 0, 0.5])
    half, rotation = shapes[2][2]
    assert np.allclose(half, [0.1, 0.2, 0.3]) and np.allclose(rotation, [[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    assert np.allclose(shapes[2][3], [0.1, 0, 0]) and np.allclose(shapes[3][2], [[-0.2, 0, 0], [0.2, 0, 0]])
    assert PinInHole not in SHAPES and {k for _, k, _, _ in shapes} <= set(DRAWERS)


def test_a_mesh_is_drawn_by_its_hull_and_two_meshes_of_a_body_are_two_shapes():
    """The hull's edges are those between faces (a cube: 12, no face diagonal), its normals point out; a flat
    set is its polygon, a collinear one its segment. A mesh on two planes is one shape; another mesh of the
    same body is a second one."""
    from jaxcontact.spatial import Assembly, Plane
    from jaxcontact.spatial.contacts import MeshPlane
    from jaxcontact.spatial.pictures import _hull_faces, _shapes

    cube = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * [0.1, 0.2, 0.3]
    triangles, normals, edges = _hull_faces(np.vstack([cube, [[0.0, 0.0, 0.05]]]))  # and a point inside
    assert len(triangles) == 12 and np.all(np.einsum("tj,tj->t", cube[triangles[:, 0]], normals) > 0)
    assert len(edges) == 12 and np.all(np.sum(cube[edges[:, 0]] != cube[edges[:, 1]], axis=1) == 1)
    square = [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], [0.5, 0.5, 1]]
    triangles, normals, edges = _hull_faces(square)
    assert len(triangles) == 2 and np.allclose(np.abs(normals), [0, 0, 1]) and len(edges) == 4 and 4 not in edges
    assert _hull_faces([[0, 0, 0], [2, 2, 2], [1, 1, 1]])[2].tolist() == [[0, 1]]
    assert [len(part) for part in _hull_faces([[1, 2, 3]])] == [0, 0, 0]

    asm = Assembly()
    body = asm.add_body("gem", 1.0, (1.0,) * 3)
    for name, plane in (("floor", Plane()), ("wall", Plane(normal=(1.0, 0.0, 0.0), offset=-1.0))):
        asm.add_contact(MeshPlane(f"cube-{name}", 0.0, 0.0, body=body, vertices=cube, plane=plane))
    asm.add_contact(MeshPlane("spike", 0.0, 0.0, body=body, vertices=square, scale=2.0))
    shapes = _shapes(asm, {"gravity": 9.81})
    assert [kind for _, kind, _, _ in shapes] == ["mesh", "mesh"]
    assert np.allclose(shapes[0][2], cube) and np.allclose(shapes[1][2], 2 * np.array(square[:4], float))


def test_a_large_models_coordinates_are_maps_not_a_panel_each(tmp_path, monkeypatch):
    """Ten bodies (70 coordinates, 60 velocities, 80 contacts): coordinates.png holds two colour maps over
    (time, index) instead of 70 rows of panels, and the impulses' legend is left out."""
    import jaxcontact.plotting as plotting

    drawn = {}
    save = plotting._save

    def record(fig, out_dir, name, plt):
        drawn[name] = (len(fig.axes), [ax.get_legend() is not None for ax in fig.axes], fig.get_size_inches()[1])
        return save(fig, out_dir, name, plt)

    monkeypatch.setattr(plotting, "_save", record)
    traj = _trajectory(10, 80)
    assert traj.q.shape[1] > plotting.ROWS_MAX
    paths = plot_trajectory(traj, str(tmp_path), title="ten boxes")
    assert [p.split("/")[-1] for p in paths] == ["coordinates.png", "contacts.png", "diagnostics.png"]
    axes, _, height = drawn["coordinates.png"]
    assert axes == 4 and height < 10  # two maps and their colour bars
    assert not any(drawn["contacts.png"][1])

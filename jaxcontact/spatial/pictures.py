"""3D snapshots of a spatial trajectory (matplotlib's 3D axes, headless): the picture of a spatial model.

The bodies are drawn by their contact shapes — a sphere as a wire globe with one marked meridian
(its rotation shows), a box or a convex mesh by its edges — at a few instants, older ones paler,
with the path of every centre, the ground planes the contacts use, and the pivots that hold bodies
to the ground with the line from each pivot to its body's centre (a pendulum's string). Shapes of
the ground itself (a box of the ground) are not drawn.
"""

from __future__ import annotations

import numpy as np

from jaxcontact.spatial.contacts import (
    BoxBox,
    BoxPlane,
    CapsuleBox,
    CapsulePlane,
    CylinderPlane,
    MeshPlane,
    SphereBox,
    SphereInSphere,
    SpherePlane,
    SphereSphere,
)
from jaxcontact.spatial.joints import Fixed, Revolute, Spherical, Universal
from jaxcontact.values import Value

# The joints whose two points coincide: with the ground on one side, the ground's point is a pivot.
# (A cylindrical or prismatic joint's ground point is only a point of its axis line, no pivot.)
_PIVOTING = frozenset({Spherical, Universal, Revolute, Fixed})


def _matrix(quat):
    w, x, y, z = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _vector(spec, p, where):
    return np.array([float(Value(v, where)(p)) for v in spec])


def _sphere_on_plane(c, p):
    return [(c.body.index, "sphere", float(Value(c.radius, "radius")(p)), _vector(c.centre, p, "centre"))]


def _two_spheres(c, p):
    return [
        (body.index, "sphere", float(Value(r, "radius")(p)), _vector(centre, p, "centre"))
        for body, r, centre in ((c.a, c.radius_a, c.centre_a), (c.b, c.radius_b, c.centre_b))
        if body is not None
    ]


def _sphere_and_box(c, p):
    out = [(c.b.index, "sphere", float(Value(c.radius, "radius")(p)), _vector(c.centre_b, p, "centre"))]
    if c.a is not None:
        box = (_vector(c.half_extents, p, "half extent"), _matrix(np.asarray(c.box_orientation, float)))
        out.append((c.a.index, "box", box, _vector(c.box_centre, p, "box centre")))
    return out


def _two_boxes(c, p):
    return [
        (
            body.index,
            "box",
            (
                _vector(getattr(c, f"half_extents_{s}"), p, "half extent"),
                _matrix(np.asarray(getattr(c, f"orientation_{s}"), float)),
            ),
            _vector(getattr(c, f"centre_{s}"), p, "centre"),
        )
        for s, body in (("a", c.a), ("b", c.b))
        if body is not None
    ]


def _ball_in_socket(c, p):  # the ball (the socket is inside the crank's drawing)
    return [(c.b.index, "sphere", float(Value(c.ball_radius, "radius")(p)), _vector(c.ball_point, p, "ball point"))]


def _box_on_plane(c, p):
    half = _vector(c.half_extents, p, "half extent")
    return [(c.body.index, "box", (half, _matrix(np.asarray(c.orientation, float))), _vector(c.centre, p, "centre"))]


def _capsule_axis(c, p):  # a capsule's or a cylinder's axis segment
    axis = _vector(c.axis, p, "axis")
    half = float(Value(c.half_length, "half length")(p)) * axis / np.linalg.norm(axis)
    centre = _vector(c.centre, p, "centre")
    return [(c.body.index, "segment", np.stack([centre - half, centre + half]), np.zeros(3))]


def _capsule_and_box(c, p):  # the capsule's axis segment; the box when a body holds it
    axis = _vector(c.axis_b, p, "axis")
    half = float(Value(c.half_length, "half length")(p)) * axis / np.linalg.norm(axis)
    centre = _vector(c.centre_b, p, "centre")
    out = [(c.b.index, "segment", np.stack([centre - half, centre + half]), np.zeros(3))]
    if c.a is not None:
        box = (_vector(c.half_extents, p, "half extent"), _matrix(np.asarray(c.box_orientation, float)))
        out.append((c.a.index, "box", box, _vector(c.box_centre, p, "box centre")))
    return out


def _mesh_on_plane(c, p):  # the contact vertices (the hull's, unless built without it), scaled
    scale = float(Value(c.scale, "scale")(p))
    return [(c.body.index, "mesh", scale * np.asarray(c.points, float), np.zeros(3))]


# Contact type -> the shapes it draws, [(body index, kind, size, body-frame centre)]; a kind is a key of
# DRAWERS. A contact type not listed draws nothing (pins: their bodies are drawn by their paths).
SHAPES = {
    SpherePlane: _sphere_on_plane,
    CapsulePlane: _capsule_axis,
    CylinderPlane: _capsule_axis,
    SphereSphere: _two_spheres,
    SphereBox: _sphere_and_box,
    SphereInSphere: _ball_in_socket,
    BoxPlane: _box_on_plane,
    BoxBox: _two_boxes,
    CapsuleBox: _capsule_and_box,
    MeshPlane: _mesh_on_plane,
}


# Contact type -> the solid about its "segment" shape: a capsule (round ends) or a cylinder (flat ends), both
# of the contact's ``radius``, and the field holding the body the segment is on.
SOLIDS = {CapsulePlane: ("capsule", "body"), CylinderPlane: ("cylinder", "body"), CapsuleBox: ("capsule", "b")}


def _solids(assembly, p):
    """body index -> (solid, radius) of the capsule or cylinder about that body's "segment" shape (as
    :func:`_shapes` keeps one shape per body and kind, the last contact of a body gives it)."""
    out = {}
    for c in assembly.contacts:
        if type(c) in SOLIDS:
            solid, field = SOLIDS[type(c)]
            out[getattr(c, field).index] = (solid, float(Value(c.radius, "radius")(p)))
    return out


def _shape_key(shape):
    """What makes two shapes one: the body and the kind (a box touching two planes is one box); a mesh also
    by its vertices, as two meshes on one body (a compound body) are two shapes, one mesh on two planes one."""
    body, kind, size, centre = shape
    if kind == "mesh":
        return body, kind, np.round(np.asarray(size, float) + centre, 12).tobytes()
    return body, kind


def _shapes(assembly, p):
    """(body index, kind, size, body-frame centre) of every drawable shape: ("sphere", r), ("box", (half
    extents, rotation in the body)), ("segment", its two end points) or ("mesh", its vertices (k, 3)).

    Shapes on the ground (a box of the ground under a sphere or a capsule) are not drawn: the ground
    is drawn by its planes."""
    out = [s for c in assembly.contacts for s in SHAPES.get(type(c), lambda c, p: [])(c, p)]
    return [s for s in dict((_shape_key(s), s) for s in out if s[0] is not None).values()]


def _hull_faces(points):
    """The convex hull of ``points`` (k, 3) as (triangles (T, 3) indices into points, their unit normals (T, 3),
    edges (E, 2) indices): the edges are those between faces, not the diagonals that split a face into
    triangles. A flat set is its polygon (a fan of triangles, the normal of its plane); a collinear set, the
    segment between its ends (no triangle); one point, nothing."""
    points = np.asarray(points, float)
    centred = points - points.mean(axis=0)
    _, sv, vt = np.linalg.svd(centred, full_matrices=False)
    rank = int(np.sum(sv > 1e-9 * max(1.0, float(np.abs(points).max()))))
    no_triangles = np.zeros((0, 3), int), np.zeros((0, 3))
    if rank == 0:
        return (*no_triangles, np.zeros((0, 2), int))
    coords = centred @ vt[:rank].T
    if rank == 1:
        return (*no_triangles, np.array([[np.argmin(coords[:, 0]), np.argmax(coords[:, 0])]]))
    from scipy.spatial import ConvexHull  # here: only a mesh needs Qhull, and scipy.spatial is slow to import

    hull = ConvexHull(coords)
    if rank == 2:  # the polygon's corners, in order round it
        ring = hull.vertices
        triangles = np.stack([np.full(len(ring) - 2, ring[0]), ring[1:-1], ring[2:]], axis=1)
        return triangles, np.tile(vt[2], (len(triangles), 1)), np.stack([ring, np.roll(ring, -1)], axis=1)
    normals = hull.equations[:, :3] @ vt  # Qhull's outward normals, back from the singular axes
    # Qhull triangulates a face of more than three corners: a side between two triangles of one plane (the
    # triangle across it, Qhull's neighbour opposite that corner, has the same plane) is no edge.
    same = np.all(np.isclose(hull.equations[:, None], hull.equations[hull.neighbors], atol=1e-9), axis=2)
    sides = hull.simplices[:, [[1, 2], [2, 0], [0, 1]]]  # side m of a triangle: opposite its corner m
    edges = np.unique(np.sort(sides[~same], axis=1), axis=0).reshape(-1, 2)
    return hull.simplices, normals, edges


def _extra_shapes(segments=(), boxes=()):
    """The shapes of bodies without a contact shape: ``segments`` (body index, end A, end B), ``boxes`` (body
    index, half extents about the centre), as :func:`_shapes` gives them."""
    return [(b, "segment", np.array([a, e], float), np.zeros(3)) for b, a, e in segments] + [
        (b, "box", (np.asarray(h, float), np.eye(3)), np.zeros(3)) for b, h in boxes
    ]


def _draw_segment(ax, size, x, R, color, alpha):  # size: the two body-frame end points
    ends = x[:, None] + R @ np.asarray(size, float).T
    ax.plot(*ends, color=color, lw=3.0, alpha=alpha, solid_capstyle="round")


def _draw_sphere(ax, size, x, R, color, alpha):
    a = np.linspace(0, 2 * np.pi, 25)
    for lat in np.linspace(-np.pi / 3, np.pi / 3, 3):  # parallels
        ring = np.stack([np.cos(a) * np.cos(lat), np.sin(a) * np.cos(lat), np.full_like(a, np.sin(lat))])
        pts = x[:, None] + R @ (size * ring)
        ax.plot(*pts, color=color, lw=0.6, alpha=alpha)
    for k, lon in enumerate(np.linspace(0, np.pi, 4, endpoint=False)):  # meridians, the first marked
        ring = np.stack([np.cos(a) * np.cos(lon), np.cos(a) * np.sin(lon), np.sin(a)])
        pts = x[:, None] + R @ (size * ring)
        ax.plot(*pts, color="C3" if k == 0 else color, lw=1.4 if k == 0 else 0.6, alpha=alpha)


def _draw_box(ax, size, x, R, color, alpha):  # size: (half extents, the box's rotation in the body)
    half, turn = size
    s = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    v = x + (s * half) @ (R @ turn).T
    for i in range(8):
        for j in range(i + 1, 8):
            if np.sum(s[i] != s[j]) == 1:  # an edge joins vertices differing in one sign
                ax.plot(*v[[i, j]].T, color=color, lw=1.0, alpha=alpha)


def _draw_mesh(ax, size, x, R, color, alpha):  # size: the vertices (k, 3) in the body frame; its hull's edges
    v = x + np.asarray(size, float) @ R.T
    edges = _hull_faces(size)[2]
    if len(edges) == 0:  # one point
        ax.plot(*v[:1].T, color=color, marker="o", ms=3, alpha=alpha)
        return
    # one line for all the edges, broken between them (NaN rows): a hull has many
    lines = np.concatenate([v[edges], np.full((len(edges), 1, 3), np.nan)], axis=1).reshape(-1, 3)
    ax.plot(*lines.T, color=color, lw=1.0, alpha=alpha)


# shape kind -> how it is drawn at world position x with rotation R
DRAWERS = {"segment": _draw_segment, "sphere": _draw_sphere, "box": _draw_box, "mesh": _draw_mesh}


def _planes(assembly, p):
    """[(unit normal (3,), offset)] of the distinct ground planes n·x = offset the contacts touch (none: [])."""
    out = []
    for c in assembly.contacts:
        if getattr(c, "plane", None) is not None:  # a contact with a ground plane holds it as ``plane``
            n, d = c.plane.resolve(p, f"contact {c.name!r}")
            n, d = np.asarray(n, float), float(d)
            if not any(np.allclose(n, m) and np.isclose(d, e) for m, e in out):  # one square per plane
                out.append((n, d))
    return out


def _pivots(assembly, p):
    """[(body index, world point (3,))]: each body pinned to the ground at a point (:data:`_PIVOTING` joints)."""
    out = []
    for j in assembly.joints:
        if type(j) not in _PIVOTING:
            continue
        for ground, point, body in ((j.a, j.point_a, j.b), (j.b, j.point_b, j.a)):
            if (ground is None or ground.is_ground) and body is not None and not body.is_ground:
                out.append((body.index, _vector(point, p, f"joint {j.name!r} ground point")))
    return out


def _plane_square(normal, offset, centre, half):
    """Corners (3, 2, 2) of the square of side 2·half in the plane n·x = offset, centred on centre's foot."""
    n = np.asarray(normal, float)
    e = np.array([0.0, 1.0, 0.0]) if abs(n[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
    t1 = np.cross(e, n)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    c = centre - (centre @ n - offset) * n
    A, B = np.meshgrid([-half, half], [-half, half])
    return c[:, None, None] + t1[:, None, None] * A + t2[:, None, None] * B


def _feet(planes, point):
    """The feet of ``point`` on every plane (k, 3): kept in view, so each plane is drawn under the bodies."""
    return np.array([point - (point @ n - d) * n for n, d in planes]).reshape(-1, 3)


def _extent(centres, pivot_points, planes, min_span):
    """(middle (3,), span) of the cube drawn: every centre (rows, bodies, 3), the pivots (the strings hang in
    view) and the feet of their middle on the planes; the span at least ``min_span``."""
    points = np.concatenate([np.reshape(centres, (-1, 3)), pivot_points])
    points = np.concatenate([points, _feet(planes, 0.5 * (points.min(axis=0) + points.max(axis=0)))])
    lo, hi = points.min(axis=0), points.max(axis=0)
    return 0.5 * (lo + hi), max(float(np.max(hi - lo)), min_span)


def _draw_pose(ax, shapes, pivots, q_row, alpha):
    """Draw the shapes and the pivots' strings at one saved row ``q_row`` (7 coordinates per body)."""
    q_row = np.asarray(q_row)
    for body, pivot in pivots:
        centre = q_row[7 * body : 7 * body + 3]
        ax.plot(*np.stack([pivot, centre]).T, color="0.3", lw=0.8, alpha=alpha, gid="string")
    for body, kind, size, offset in shapes:
        qb = q_row[7 * body : 7 * body + 7]
        R = _matrix(qb[3:] / np.linalg.norm(qb[3:]))
        DRAWERS[kind](ax, size, qb[:3] + R @ offset, R, f"C{body % 10}", alpha)


def snapshot_figure(traj, params, *, assembly, count: int = 6, segments=(), boxes=(), min_span: float = 0.3, view=None):
    """The figure of ``count`` snapshots of one trajectory of ``assembly``'s bodies: (figure, its 3D axes).

    ``min_span``: the least width of the cube drawn [m] (small bodies that barely move need less);
    ``view``: None, or the camera's (elevation, azimuth) in degrees.

    The ground planes are those of the assembly's plane contacts (grey squares, gid "plane"); each
    body pinned to the ground by a joint has its pivot marked (gid "pivot") and a line from the
    pivot to its centre at each snapshot (gid "string"). Bodies without a contact shape (the bars
    of a mechanism): ``segments`` — (body index, end A, end B) with the ends in the body frame,
    drawn as thick lines; ``boxes`` — (body index, half extents) about the body's centre.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q = np.asarray(traj.q)
    t = np.asarray(traj.t)
    if q.ndim != 2:
        raise ValueError(f"snapshots takes one trajectory; got q of shape {q.shape} (a batch? index it)")
    p = {k: np.asarray(v) for k, v in params.items()}
    shapes = _shapes(assembly, p) + _extra_shapes(segments, boxes)
    planes, pivots = _planes(assembly, p), _pivots(assembly, p)
    fig = plt.figure(figsize=(7, 6), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    rows = np.unique(np.linspace(0, len(t) - 1, count).round().astype(int))
    centres = q.reshape(len(t), -1, 7)[:, :, :3]
    for b in range(centres.shape[1]):
        ax.plot(*centres[:, b].T, color="0.4", lw=0.8, ls="--")
    for k, r in enumerate(rows):
        _draw_pose(ax, shapes, pivots, q[r], alpha=0.25 + 0.75 * (k + 1) / len(rows))
    pivot_points = np.reshape([pv for _, pv in pivots], (-1, 3))
    mid, span = _extent(centres, pivot_points, planes, min_span)
    for n, d in planes:
        ax.plot_surface(*_plane_square(n, d, mid, 0.6 * span), color="0.8", alpha=0.4, linewidth=0, gid="plane")
    if pivots:
        ax.scatter(*pivot_points.T, color="k", marker="^", s=30, depthshade=False, gid="pivot", label="pivot")
    drawn = sorted({s[0] for s in shapes} | {b for b, _ in pivots})
    if len(drawn) > 1 or pivots:  # a key to the colours (one body alone needs none)
        for b in drawn:
            ax.plot([], [], color=f"C{b % 10}", label=assembly.bodies[b].name)
        ax.legend(loc="upper left", fontsize=8)
    for i, axis in enumerate("xyz"):
        getattr(ax, f"set_{axis}lim")(mid[i] - 0.6 * span, mid[i] + 0.6 * span)
        getattr(ax, f"set_{axis}label")(f"{axis} [m]")
    ax.set_box_aspect((1, 1, 1))
    if view is not None:
        ax.view_init(*view)
    ax.set_title(f"snapshots at t = {', '.join(f'{t[r]:.2g}' for r in rows)} s (paler: earlier)", fontsize=9)
    return fig, ax


def save(fig, path: str) -> str:
    """Write ``fig`` to ``path`` (PNG), close it and return the path."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def snapshots(traj, params, path: str, *, assembly, **options) -> str:
    """Draw the snapshots of :func:`snapshot_figure` (its ``options``) into ``path`` (PNG); return the path."""
    return save(snapshot_figure(traj, params, assembly=assembly, **options)[0], path)

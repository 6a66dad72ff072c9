"""Watch the motion of a spatial trajectory with nothing installed: a self-contained HTML page, or an animated GIF.

:func:`write_html` writes one ``.html`` file holding a WebGL viewer (``viewer.js``, part of jaxcontact, inlined)
and the scene as JSON: the bodies by their contact shapes (as :mod:`jaxcontact.spatial.pictures` draws them),
their poses at up to ``max_frames`` saved instants, the ground planes, the pivots, and the normal contact
impulses as arrows. The page loads nothing from the network. It plays in real time by the saved times, with
a play/pause button, a time slider, a playback speed, and a camera turned by dragging and zoomed by the wheel.

:func:`write_gif` draws the same motion with matplotlib's 3D axes into an animated GIF, for reports.

The page can be checked from outside: ``#frame=K`` in its address shows frame K at load (``#frame=K&size=WxH``:
on a canvas of W × H CSS pixels, whatever the window's height; ``#play``: playing from the start), the global
``showFrame(k)`` shows frame k, and after each drawing ``<pre id="state">`` holds JSON of what it drew: the
frame, the trajectory's row and time, every body's pose (centre, then the unit quaternion w first), the number
of arrows, whether it plays, how many drawings it made and of how many distinct frames, the camera's
view–projection matrix (column-major, :func:`camera_matrix`) and the canvas's place on the page in CSS pixels.
"""

from __future__ import annotations

import html
import json
from importlib import resources

import numpy as np

from jaxcontact.spatial.pictures import (
    _draw_pose,
    _extent,
    _extra_shapes,
    _hull_faces,
    _pivots,
    _plane_square,
    _planes,
    _shapes,
    _solids,
)

# matplotlib's default colour cycle (C0…C9): a body has the colour here that it has in the snapshots.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")

# The initial camera: turned and raised as matplotlib's 3D axes are by default, so page and pictures agree.
CAMERA = {"azimuth": -60.0, "elevation": 25.0, "fov": 35.0}

# The longest arrow, as a share of the scene's span.
ARROW_SHARE = 0.25


def _rows(n: int, count: int) -> np.ndarray:
    """Up to ``count`` saved rows of ``n``, evenly spread, the first and last included."""
    return np.unique(np.linspace(0, n - 1, min(n, count)).round().astype(int))


def _one_trajectory(traj, what: str):
    q, t = np.asarray(traj.q, float), np.asarray(traj.t, float)
    if q.ndim != 2:
        raise ValueError(f"{what} takes one trajectory; got q of shape {q.shape} (a batch? index it)")
    bad = ~np.isfinite(q).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{what}: the trajectory is not finite from row {k} (t = {t[k]:g} s) on")
    return q, t


def _impulse_contacts(assembly):
    """The contacts whose points a trajectory's impulse columns are, in order: the rigid ones (in the order of the
    system's gaps, ``assembly.contact_names()``); with none, the compliant ones (the penalty scheme reports the
    impulses of their forces over each step)."""
    rigid = [c for c in assembly.contacts if c not in assembly.compliant_laws]
    return rigid or [c for c in assembly.contacts if c in assembly.compliant_laws]


def _contact_frames(contacts, p, q):
    """(points (F, k, 3), normals (F, k, 3)) of the points of ``contacts`` at the rows ``q`` (F, 7 n)."""
    import jax
    import jax.numpy as jnp

    if not contacts:
        return np.zeros((len(q), 0, 3)), np.zeros((len(q), 0, 3))
    pj = {k: jnp.asarray(v) for k, v in p.items()}

    def at(row):
        found = [c.frames(row, pj)[1:3] for c in contacts]
        return jnp.concatenate([f[0] for f in found]), jnp.concatenate([f[1] for f in found])

    points, normals = jax.jit(jax.vmap(at))(jnp.asarray(q))  # compiled: op by op it takes longer
    return np.asarray(points, float), np.asarray(normals, float)


def impulse_arrows(traj, params, rows, *, assembly):
    """The normal contact impulses at the saved ``rows``: a list (one per row) of arrays (m, 7), each line a
    contact point (3), its unit normal (3) and its impulse [N·s] (> 0). The trajectory's columns are the
    points of the rigid contacts (with none, of the compliant ones: a penalty run's impulses).

    The impulse of a row is the sum of the trajectory's rows after the previous one listed (the first row: its
    own): a saved row already sums the steps since the row before it, so an impact between two rows shown is
    drawn at the second. Points whose impulse is not above a billionth of the largest (solver round-off) are
    left out, and so are the columns of contacts whose impulses are not forces at points (``point_impulses``
    false: a hinge limit's torque), which neither draw an arrow nor set the scale.
    """
    q = np.asarray(traj.q, float)
    impulses = np.asarray(traj.impulse_normal, float)
    rows = np.asarray(rows, int)
    contacts = _impulse_contacts(assembly)
    k = sum(c.size for c in contacts)
    if impulses.shape[-1] != k:
        raise ValueError(
            f"the trajectory has {impulses.shape[-1]} normal impulse columns; the assembly has {k} contact points "
            "(a trajectory of another model?)"
        )
    # Only the columns of contacts whose impulses are forces at their points are drawn; the others still hold
    # their places in the impulse array's layout.
    forces = [bool(c.point_impulses) for c in contacts]
    impulses = impulses[..., np.repeat(forces, [c.size for c in contacts]).astype(bool)]
    contacts = [c for c, force in zip(contacts, forces) if force]
    k = impulses.shape[-1]
    summed = np.add.reduceat(impulses, np.r_[0, rows[:-1] + 1], axis=0) if k else impulses[rows]
    points, normals = _contact_frames(contacts, {k: np.asarray(v) for k, v in params.items()}, q[rows])
    cut = 1e-9 * max(float(np.max(summed, initial=0.0)), 0.0)
    out = []
    for i in range(len(rows)):
        on = summed[i] > cut
        out.append(np.concatenate([points[i, on], normals[i, on], summed[i, on, None]], axis=1))
    return out


def _translate_scale(centre, rotation, scale):
    """The 4 × 4 matrix x ↦ centre + rotation · diag(scale) · x."""
    m = np.eye(4)
    m[:3, :3] = np.asarray(rotation, float) * np.asarray(scale, float)
    m[:3, 3] = centre
    return m


def _along(direction):
    """A rotation whose third column is the unit ``direction`` (the first two: any orthonormal pair)."""
    w = np.asarray(direction, float) / np.linalg.norm(direction)
    a = np.array([1.0, 0.0, 0.0]) if abs(w[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(a, w)
    u /= np.linalg.norm(u)
    return np.stack([u, np.cross(w, u), w], axis=1)


def _meshes(shapes, solids):
    """[{"body", "mesh", "matrix"}]: each shape as a unit mesh ("sphere" of radius 1, "box" [-1, 1]³,
    "cylinder" of radius 1 along z from −1 to 1) placed in its body's frame by a 4 × 4 matrix (column-major).

    A "segment" is the cylinder of its body's capsule (with a ball at each end) or cylinder; without one, a
    bar of a fortieth of its length in radius. A "mesh" is its convex hull's triangles, given in the entry
    (mesh "hull"; "triangles": 9 body-frame coordinates per triangle, "normals": its outward unit normal, 3
    per triangle; the matrix places them); a mesh of collinear points is the bar between its ends, of one
    point nothing."""
    out = []

    def add(body, mesh, m, **more):
        out.append({"body": int(body), "mesh": mesh, "matrix": np.round(m.T.ravel(), 7).tolist(), **more})

    def bar(body, a, b, solid_radius=None):
        length = float(np.linalg.norm(b - a))
        solid, radius = solid_radius or ("bar", 0.025 * length)
        add(body, "cylinder", _translate_scale(0.5 * (a + b), _along(b - a), [radius, radius, 0.5 * length]))
        if solid == "capsule":
            for end in (a, b):
                add(body, "sphere", _translate_scale(end, np.eye(3), [radius] * 3))

    for body, kind, size, centre in shapes:
        if kind == "sphere":
            add(body, "sphere", _translate_scale(centre, np.eye(3), [size] * 3))
        elif kind == "box":
            half, turn = size
            add(body, "box", _translate_scale(centre, turn, half))
        elif kind == "mesh":
            vertices = np.asarray(size, float)
            triangles, normals, edges = _hull_faces(vertices)
            if len(triangles):
                add(
                    body,
                    "hull",
                    _translate_scale(centre, np.eye(3), [1.0] * 3),
                    triangles=np.round(vertices[triangles].ravel(), 7).tolist(),
                    normals=np.round(normals.ravel(), 7).tolist(),
                )
            elif len(edges):
                a, b = vertices[edges[0]] + centre
                bar(body, a, b)
        else:
            a, b = np.asarray(size, float) + centre
            bar(body, a, b, solids.get(body))
    return out


def _reach(shapes, solids):
    """The farthest any shape reaches from its body's centre [m] (0 with none)."""
    far = [0.0]
    for body, kind, size, centre in shapes:
        if kind == "sphere":
            far.append(np.linalg.norm(centre) + size)
        elif kind == "box":
            far.append(np.linalg.norm(centre) + np.linalg.norm(size[0]))
        elif kind == "mesh":
            far.append(np.linalg.norm(np.asarray(size, float) + centre, axis=1).max())
        else:
            radius = solids.get(body, ("bar", 0.0))[1]
            far.append(max(np.linalg.norm(e + centre) for e in np.asarray(size, float)) + radius)
    return float(max(far))


def scene(traj, params, *, assembly, max_frames: int = 600, segments=(), boxes=(), min_span: float = 0.3, title=""):
    """The scene :func:`write_html` puts in its page, as a dict of JSON values (see that function).

    Keys: title; bodies [{name, colour}]; meshes (:func:`_meshes`); planes [{origin, u, v, normal}] (squares
    origin + a u + b v, 0 ≤ a, b ≤ 1); pivots [{body, point}]; rows (the trajectory's rows shown), t;
    poses (frames, bodies, 7); arrows (frames, [x, y, z, dx, dy, dz], the arrow from the contact point,
    dx… already scaled); arrow_scale [m per N·s] (None: no impulse); largest_impulse [N·s]; span [m];
    camera {target, distance, azimuth, elevation, fov}; bar (pivot sphere radius, string radius, arrow width) [m].
    """
    q, t = _one_trajectory(traj, "write_html")
    p = {k: np.asarray(v) for k, v in params.items()}
    n_bodies = assembly.n_bodies
    if q.shape[1] != 7 * n_bodies:
        raise ValueError(f"q has {q.shape[1]} columns; the assembly's {n_bodies} bodies need {7 * n_bodies}")
    shapes = _shapes(assembly, p) + _extra_shapes(segments, boxes)
    solids = _solids(assembly, p)
    planes, pivots = _planes(assembly, p), _pivots(assembly, p)
    rows = _rows(len(t), max_frames)
    poses = q[rows].reshape(len(rows), n_bodies, 7)
    poses[:, :, 3:] /= np.linalg.norm(poses[:, :, 3:], axis=2, keepdims=True)
    pivot_points = np.reshape([pv for _, pv in pivots], (-1, 3))
    mid, span = _extent(q.reshape(len(t), n_bodies, 7)[:, :, :3], pivot_points, planes, min_span)
    span += 2 * _reach(shapes, solids)
    arrows = impulse_arrows(traj, p, rows, assembly=assembly)
    largest = max((float(a[:, 6].max()) for a in arrows if len(a)), default=0.0)
    scale = ARROW_SHARE * span / largest if largest > 0 else None
    squares = [_plane_square(n, d, mid, 0.6 * span) for n, d in planes]
    distance = 0.5 * span / np.sin(np.radians(CAMERA["fov"] / 2))
    return {
        "title": title,
        "bodies": [{"name": b.name, "colour": COLOURS[b.index % 10]} for b in assembly.bodies],
        "meshes": _meshes(shapes, solids),
        "planes": [
            {
                "origin": s[:, 0, 0].tolist(),
                "u": (s[:, 0, 1] - s[:, 0, 0]).tolist(),
                "v": (s[:, 1, 0] - s[:, 0, 0]).tolist(),
                "normal": np.asarray(n, float).tolist(),
            }
            for s, (n, _) in zip(squares, planes)
        ],
        "pivots": [{"body": int(b), "point": np.asarray(pv, float).tolist()} for b, pv in pivots],
        "rows": rows.tolist(),
        "t": t[rows].tolist(),
        "poses": np.round(poses, 7).tolist(),
        "arrows": [
            np.round(np.concatenate([a[:, :3], scale * a[:, 6:7] * a[:, 3:6]], axis=1), 6).tolist() if scale else []
            for a in arrows
        ],
        "arrow_scale": scale,
        "largest_impulse": largest,
        "span": span,
        "camera": {"target": mid.tolist(), "distance": float(distance), **CAMERA},
        "bar": [0.015 * span, 0.002 * span, 0.006 * span],
    }


def camera_matrix(camera, aspect: float) -> np.ndarray:
    """The view–projection matrix (4 × 4, acting on columns (x, y, z, 1)) of the page's camera: it looks at
    ``target`` from ``distance`` along (cos e cos a, cos e sin a, sin e) (a: azimuth, e: elevation, degrees),
    z up, with a vertical field of view ``fov`` (degrees) on a canvas of width/height ``aspect``."""
    a, e = np.radians(camera["azimuth"]), np.radians(camera["elevation"])
    target, distance = np.asarray(camera["target"], float), float(camera["distance"])
    eye = target + distance * np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
    f = (target - eye) / distance
    s = np.cross(f, [0.0, 0.0, 1.0])
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    view = np.eye(4)
    view[:3, :3] = np.stack([s, u, -f])
    view[:3, 3] = -view[:3, :3] @ eye
    near, far = distance / 100, distance * 100
    fy = 1 / np.tan(np.radians(camera["fov"]) / 2)
    projection = np.array(
        [
            [fy / aspect, 0, 0, 0],
            [0, fy, 0, 0],
            [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
            [0, 0, -1, 0],
        ]
    )
    return projection @ view


def viewer_script() -> str:
    """The viewer's JavaScript (``jaxcontact/spatial/viewer.js``)."""
    return resources.files("jaxcontact.spatial").joinpath("viewer.js").read_text(encoding="utf-8")


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
html, body {{ margin: 0; font: 14px/1.4 system-ui, sans-serif; color: #222; background: #fff; }}
#scene {{ display: block; width: 100%; height: calc(100vh - 86px); min-height: 200px; cursor: grab;
  touch-action: none; }}
#controls {{ display: flex; gap: 0.6em; align-items: center; padding: 4px 8px; }}
#time {{ flex: 1; }}
#clock {{ font-variant-numeric: tabular-nums; min-width: 12em; }}
#legend {{ padding: 0 8px 4px; font-size: 12px; color: #555; }}
.swatch {{ display: inline-block; width: 0.8em; height: 0.8em; margin: 0 0.25em 0 0.6em; vertical-align: -0.05em; }}
</style>
</head>
<body>
<canvas id="scene"></canvas>
<div id="controls">
<button id="play" type="button">play</button>
<input id="time" type="range" min="0" max="{last}" step="1" value="0" aria-label="frame">
<span id="clock"></span>
<select id="speed" aria-label="playback speed">
<option value="0.1">0.1×</option><option value="0.25">0.25×</option><option value="0.5">0.5×</option>
<option value="1" selected>1×</option><option value="2">2×</option>
</select>
</div>
<div id="legend">{legend}</div>
<pre id="state" hidden></pre>
<script type="application/json" id="scene-data">{data}</script>
<script>
{script}
</script>
</body>
</html>
"""


def _legend(data) -> str:
    parts = [f"<b>{html.escape(data['title'])}</b>"] if data["title"] else []
    parts += [
        f'<span class="swatch" style="background:{b["colour"]}"></span>{html.escape(b["name"])}'
        for i, b in enumerate(data["bodies"])
        if any(m["body"] == i for m in data["meshes"])
    ]
    if data["arrow_scale"]:
        parts.append(
            f" — black arrows: normal contact impulse since the previous frame, 1 N·s ↦ {data['arrow_scale']:.3g} m "
            f"(largest {data['largest_impulse']:.3g} N·s)"
        )
    parts.append(" — drag: turn, wheel: zoom, double-click: reset, space: play/pause, ←/→: step")
    return "".join(parts)


def write_html(
    traj, params, path: str, *, assembly, max_frames: int = 600, segments=(), boxes=(), min_span=0.3, title=""
) -> str:
    """Write the page that plays one spatial trajectory of ``assembly``'s bodies to ``path``; return the path.

    One file, nothing fetched when it is viewed: the viewer's JavaScript and the scene (:func:`scene`) are in
    it. Up to ``max_frames`` saved rows are shown (evenly spread), played in real time by their times. The
    bodies are drawn by their contact shapes, each body in its colour of the snapshots; ``segments`` and
    ``boxes`` give shapes to bodies without one, as for :func:`jaxcontact.spatial.pictures.snapshot_figure`.
    Arrows: the normal impulse of each contact point since the previous frame, from the point along its
    normal, the largest a quarter of the scene (the page says the scale); drawn over the bodies.
    A batch of trajectories or a non-finite one raises ValueError.
    """
    data = scene(
        traj,
        params,
        assembly=assembly,
        max_frames=max_frames,
        segments=segments,
        boxes=boxes,
        min_span=min_span,
        title=title,
    )
    script = viewer_script()
    if "</script" in script.lower():
        raise ValueError("viewer.js must not contain '</script' (it is inlined in a <script> element)")
    text = _PAGE.format(
        title=html.escape(title or "jaxcontact trajectory"),
        last=len(data["t"]) - 1,
        legend=_legend(data),
        data=json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/"),
        script=script,
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def write_gif(
    traj,
    params,
    path: str,
    *,
    assembly,
    frames: int = 48,
    pixels: int = 320,
    fps: float | None = None,
    segments=(),
    boxes=(),
    min_span: float = 0.3,
) -> str:
    """Write an animated GIF of one spatial trajectory to ``path`` (matplotlib's 3D axes); return the path.

    ``frames`` saved rows, evenly spread, drawn as the snapshots draw them (:mod:`jaxcontact.spatial.pictures`),
    with the normal contact impulses as black lines from the contact points (the largest a quarter of the
    scene), on a square of ``pixels``; ``fps``: frames per second (None: real time, at most 50, as GIF
    players slow faster ones down). ``segments``, ``boxes``: as for :func:`write_html`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    q, t = _one_trajectory(traj, "write_gif")
    p = {k: np.asarray(v) for k, v in params.items()}
    shapes = _shapes(assembly, p) + _extra_shapes(segments, boxes)
    planes, pivots = _planes(assembly, p), _pivots(assembly, p)
    rows = _rows(len(t), frames)
    centres = q.reshape(len(t), -1, 7)[:, :, :3]
    pivot_points = np.reshape([pv for _, pv in pivots], (-1, 3))
    mid, span = _extent(centres, pivot_points, planes, min_span)
    arrows = impulse_arrows(traj, p, rows, assembly=assembly)
    largest = max((float(a[:, 6].max()) for a in arrows if len(a)), default=0.0)

    fig = plt.figure(figsize=(pixels / 100, pixels / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 0.94), projection="3d")
    for n, d in planes:
        ax.plot_surface(*_plane_square(n, d, mid, 0.6 * span), color="0.8", alpha=0.4, linewidth=0)
    for b in range(centres.shape[1]):
        ax.plot(*centres[:, b].T, color="0.6", lw=0.6, ls="--")
    if pivots:
        ax.scatter(*pivot_points.T, color="k", marker="^", s=12, depthshade=False)
    for i in range(3):
        getattr(ax, f"set_{'xyz'[i]}lim")(mid[i] - 0.6 * span, mid[i] + 0.6 * span)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(CAMERA["elevation"], CAMERA["azimuth"])
    ax.tick_params(labelsize=6, pad=0)
    title = fig.suptitle("", fontsize=9, y=0.985)
    drawn = []

    def draw(i):
        for artist in drawn:
            artist.remove()
        before = set(ax.lines)
        _draw_pose(ax, shapes, pivots, q[rows[i]], alpha=1.0)
        for x, y, z, nx, ny, nz, impulse in arrows[i]:
            tip = np.array([x, y, z]) + ARROW_SHARE * span * impulse / largest * np.array([nx, ny, nz])
            ax.plot([x, tip[0]], [y, tip[1]], [z, tip[2]], color="k", lw=1.2)
        drawn[:] = [a for a in ax.lines if a not in before]
        title.set_text(f"t = {t[rows[i]]:.2f} s")
        return drawn

    if fps is None:
        fps = min(50.0, max(1.0, (len(rows) - 1) / max(t[-1] - t[0], 1e-9)))
    try:
        FuncAnimation(fig, draw, frames=len(rows), blit=False).save(path, writer=PillowWriter(fps=fps))
    finally:
        plt.close(fig)
    return path

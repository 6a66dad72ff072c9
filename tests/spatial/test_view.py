"""The page and the GIF that play a spatial trajectory (jaxcontact.spatial.view): the scene they hold, and the
page in a real headless browser, loaded from a file with no network, showing the bodies at a frame's poses.

The browser tests skip only where no Chromium is installed and JAXCONTACT_REQUIRE_BROWSER is unset (CI sets
it and installs Debian's chromium, so they cannot skip there).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from jaxcontact.models import box_toss, get_model
from jaxcontact.spatial.view import camera_matrix, impulse_arrows, scene, viewer_script, write_gif, write_html

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
REQUIRED = bool(os.environ.get("JAXCONTACT_REQUIRE_BROWSER"))
browser = pytest.mark.skipif(
    CHROMIUM is None and not REQUIRED, reason="no chromium here (CI installs it and sets JAXCONTACT_REQUIRE_BROWSER)"
)
WINDOW = (800, 600)
# The canvas's size in CSS pixels, fixed by the page's address: a headless Chromium lays the page out in a
# shorter window to dump its DOM than to take its screenshot.
CANVAS = (760, 480)
BLUE = np.array([31, 119, 180], float)  # body 0's colour (matplotlib's C0)

# The run: the box tossed for 0.4 s, every 10th step kept (41 rows); it lands at about 0.24 s.
RUN = ["box-toss", "--t-final", "0.4", "--save-every", "10"]


def _simulate(args):
    from jaxcontact.commands import simulate as cmd

    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    return cmd.run(parser.parse_args(args))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(output folder, the trajectory read back from its trajectory.npz, the model) of ``simulate box-toss``."""
    out = tmp_path_factory.mktemp("box-toss")
    assert _simulate([*RUN, "--out", str(out)]) == 0
    data = np.load(out / "trajectory.npz")
    traj = SimpleNamespace(t=data["t"], q=data["q"], impulse_normal=data["impulse_normal"])
    return out, traj, get_model("box-toss")


def _scene_of(path):
    text = open(path, encoding="utf-8").read()
    return json.loads(re.search(r'<script type="application/json" id="scene-data">(.*?)</script>', text, re.S)[1])


def _box_vertices(pose, half):
    from jaxcontact.spatial.pictures import _matrix

    signs = np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)], float)
    return pose[:3] + (signs * half) @ _matrix(pose[3:] / np.linalg.norm(pose[3:])).T


def test_simulate_writes_the_page_beside_the_plots_and_the_gif_when_asked(run, tmp_path, capsys):
    out, traj, _ = run
    assert (out / "view.html").is_file() and (out / "snapshots.png").is_file()
    assert not (out / "motion.gif").exists()  # opt-in: --gif
    assert _simulate([*RUN, "--no-plots", "--gif", "--out", str(tmp_path)]) == 0  # asked for, the GIF is written
    assert sorted(os.listdir(tmp_path)) == ["motion.gif", "trajectory.npz"]
    assert f"wrote {tmp_path / 'motion.gif'}" in capsys.readouterr().out
    assert _simulate(["bouncing-ball", "--gif", "--out", str(tmp_path / "ball")]) == 2
    assert "no animation" in capsys.readouterr().err


def test_the_page_is_one_file_that_fetches_nothing(run):
    text = (run[0] / "view.html").read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    assert not re.search(r"<(script|img|link|iframe)[^>]*\b(src|href)\s*=", text, re.I)
    assert "Part of jaxcontact" in text and "function showFrame" in text  # the viewer is inlined
    assert '<input id="time" type="range"' in text and '<button id="play"' in text


def test_the_scene_holds_every_row_its_poses_and_an_arrow_per_positive_impulse(run):
    out, traj, m = run
    data = _scene_of(out / "view.html")
    assert data["rows"] == list(range(41)) and np.allclose(data["t"], traj.t)
    assert [b["name"] for b in data["bodies"]] == ["box"] and [s["mesh"] for s in data["meshes"]] == ["box"]
    poses = np.array(data["poses"])
    assert poses.shape == (41, 1, 7)
    assert np.allclose(poses[:, 0], traj.q, atol=1e-6)
    positive = traj.impulse_normal > 1e-9 * traj.impulse_normal.max()
    assert positive.any() and not positive[:20].any()  # in the air first, then it lands
    assert [len(a) for a in data["arrows"]] == positive.sum(axis=1).tolist()
    half = np.array([m.params[k] for k in ("half_x", "half_y", "half_z")], float)
    scale = data["arrow_scale"]
    for k, arrows in enumerate(data["arrows"]):
        vertices = _box_vertices(traj.q[k], half)
        for x, y, z, dx, dy, dz in arrows:  # from a vertex of the box, up the plane's normal, by its impulse
            j = np.argmin(np.linalg.norm(vertices - [x, y, z], axis=1))
            assert np.allclose(vertices[j], [x, y, z], atol=1e-5)
            assert np.allclose([dx, dy, dz], [0, 0, scale * traj.impulse_normal[k, j]], atol=1e-6)
    longest = max(np.linalg.norm(np.array(a)[:, 3:], axis=1).max() for a in data["arrows"] if a)
    assert longest == pytest.approx(0.25 * data["span"], rel=1e-4)


def test_fewer_frames_keep_every_impulse_and_a_batch_or_another_model_is_refused(run):
    _, traj, m = run
    few = scene(traj, m.params, assembly=box_toss.ASSEMBLY, max_frames=7)
    assert len(few["t"]) == 7 and few["rows"][0] == 0 and few["rows"][-1] == 40
    shown = sum(np.linalg.norm(np.array(a)[:, 3:], axis=1).sum() for a in few["arrows"] if a) / few["arrow_scale"]
    assert shown == pytest.approx(traj.impulse_normal.sum(), rel=1e-4)  # an impact between frames is not lost
    batch = SimpleNamespace(t=traj.t, q=np.stack([traj.q, traj.q]), impulse_normal=traj.impulse_normal)
    with pytest.raises(ValueError, match=r"shape \(2, 41, 7\)"):
        write_html(batch, m.params, "never.html", assembly=box_toss.ASSEMBLY)
    with pytest.raises(ValueError, match="3 normal impulse columns; the assembly has 8 contact points"):
        other = SimpleNamespace(t=traj.t, q=traj.q, impulse_normal=traj.impulse_normal[:, :3])
        impulse_arrows(other, m.params, [0, 1], assembly=box_toss.ASSEMBLY)


def _ndc(camera, aspect, point):
    clip = camera_matrix(camera, aspect) @ np.r_[point, 1.0]
    return clip[:3] / clip[3]


def test_capsules_and_cylinders_are_drawn_as_solids_of_their_radius():
    """A capsule is a cylinder of its radius about its segment with a ball at each end; a cylinder, the cylinder."""
    from jaxcontact.spatial import Assembly, CapsulePlane, CylinderPlane

    asm = Assembly()
    a, b = (asm.add_body(n, 1.0, (1.0,) * 3) for n in ("capsule", "cylinder"))
    asm.add_contact(CapsulePlane("a-floor", 0.0, 0.0, body=a, radius=0.05, half_length=0.2, axis=(1.0, 0.0, 0.0)))
    asm.add_contact(CylinderPlane("b-floor", 0.0, 0.0, body=b, radius=0.1, half_length=0.3))
    q = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    traj = SimpleNamespace(t=np.array([0.0, 0.1]), q=np.stack([q, q]), impulse_normal=np.zeros((2, 2 + 14)))
    data = scene(traj, {"gravity": 9.81}, assembly=asm)
    assert [(m["body"], m["mesh"]) for m in data["meshes"]] == [
        (0, "cylinder"),
        (0, "sphere"),
        (0, "sphere"),
        (1, "cylinder"),
    ]
    capsule, end_a, end_b, cylinder = (np.array(m["matrix"]).reshape(4, 4).T for m in data["meshes"])
    # the unit cylinder spans z from -1 to 1 with radius 1; the unit sphere has radius 1
    assert np.allclose(np.abs(capsule[:3, 2]), [0.2, 0, 0]) and np.allclose(
        np.linalg.norm(capsule[:3, :2], axis=0), 0.05
    )
    assert sorted([end_a[0, 3], end_b[0, 3]]) == pytest.approx([-0.2, 0.2]) and np.allclose(
        end_a[:3, :3], 0.05 * np.eye(3)
    )
    assert np.allclose(np.abs(cylinder[:3, 2]), [0, 0, 0.3]) and np.allclose(
        np.linalg.norm(cylinder[:3, :2], axis=0), 0.1
    )
    assert data["arrows"] == [[], []] and data["arrow_scale"] is None  # no impulse, no arrow


# A convex mesh (an octahedron's corners, with its centre among the vertices given) and a capsule across a
# block: the shapes of the two contacts without a unit mesh of their own.
OCTAHEDRON = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [0, 0, 0]]


def _mesh_and_capsule_box():
    """(assembly, params, a trajectory of two rows, at rest): an octahedron of scale "size" (body 0), a capsule (body 1)
    on a block (body 2) and on a box of the ground."""
    from jaxcontact.spatial import Assembly
    from jaxcontact.spatial.contacts import CapsuleBox, MeshPlane

    asm = Assembly()
    gem, capsule, block = (asm.add_body(n, 1.0, (1.0,) * 3) for n in ("gem", "capsule", "block"))
    asm.add_contact(MeshPlane("gem-floor", 0.0, 0.0, body=gem, vertices=OCTAHEDRON, scale="size"))
    turn = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))  # a quarter turn about z
    asm.add_contact(
        CapsuleBox(
            "capsule-block", 0.0, 0.0, a=block, half_extents=(0.3, 0.2, 0.1), box_centre=(0.0, 0.0, -0.1),
            box_orientation=turn, b=capsule, radius=0.05, half_length=0.2, axis_b=(0.0, 1.0, 0.0),
        )
    )  # fmt: skip
    asm.add_contact(
        CapsuleBox(
            "capsule-ground", 0.0, 0.0, half_extents=(1.0, 1.0, 0.1), b=capsule, radius=0.05, half_length=0.2,
            axis_b=(0.0, 1.0, 0.0),
        )
    )  # fmt: skip
    q = np.zeros(21)
    q[[2, 3, 7, 9, 10, 14, 16, 17]] = [0.2, 1.0, 0.5, 0.3, 1.0, -0.5, 0.1, 1.0]
    k = sum(c.size for c in asm.contacts)
    traj = SimpleNamespace(t=np.array([0.0, 0.1]), q=np.stack([q, q]), impulse_normal=np.zeros((2, k)))
    return asm, {"gravity": 9.81, "size": 0.15}, traj


def test_meshes_and_capsules_on_boxes_are_in_the_scene_and_the_pictures(tmp_path):
    """A mesh is its hull's triangles, outward normals, at its scale (the centre vertex is inside, no corner); a
    capsule on a box, the capsule of its radius and the box; a box of the ground is not drawn (nor is any shape
    of the ground). The snapshots and the GIF draw them too: the mesh by its hull's 12 edges."""
    from jaxcontact.spatial.pictures import snapshot_figure

    asm, p, traj = _mesh_and_capsule_box()
    data = scene(traj, p, assembly=asm)
    assert [(m["body"], m["mesh"]) for m in data["meshes"]] == [
        (0, "hull"),
        (1, "cylinder"),
        (1, "sphere"),
        (1, "sphere"),
        (2, "box"),
    ]
    hull, capsule, end_a, end_b, box = data["meshes"]
    corners = np.array(hull["triangles"]).reshape(-1, 3, 3)
    normals = np.array(hull["normals"]).reshape(-1, 3)
    assert len(corners) == len(normals) == 8  # the octahedron's faces
    assert np.allclose(np.unique(corners.reshape(-1, 3), axis=0), np.unique(0.15 * np.array(OCTAHEDRON[:6]), axis=0))
    assert np.allclose(np.abs(normals), 1 / np.sqrt(3)) and np.all(np.sign(normals) == np.sign(corners.sum(axis=1)))
    assert np.allclose(np.einsum("tkj,tj->tk", corners, normals), 0.15 / np.sqrt(3))  # each corner on its face
    assert np.allclose(np.array(hull["matrix"]).reshape(4, 4), np.eye(4))
    capsule, end_a, end_b, box = (np.array(m["matrix"]).reshape(4, 4).T for m in (capsule, end_a, end_b, box))
    assert np.allclose(np.abs(capsule[:3, 2]), [0, 0.2, 0]) and np.allclose(
        np.linalg.norm(capsule[:3, :2], axis=0), 0.05
    )
    assert sorted([end_a[1, 3], end_b[1, 3]]) == pytest.approx([-0.2, 0.2]) and np.allclose(
        end_a[:3, :3], 0.05 * np.eye(3)
    )
    assert np.allclose(box[:3, :3], [[0, -0.2, 0], [0.3, 0, 0], [0, 0, 0.1]]) and np.allclose(box[:3, 3], [0, 0, -0.1])
    assert data["span"] > 2 * 0.15  # the mesh's reach is in view

    fig, ax = snapshot_figure(traj, p, assembly=asm, count=1)
    gem = [line for line in ax.lines if line.get_color() == "C0" and len(line.get_xdata())]  # not the legend's
    assert len(gem) == 1  # one line for the hull, broken between its edges
    xyz = np.array(gem[0].get_data_3d()).T.reshape(-1, 3, 3)  # (edge, [end, end, NaN], xyz)
    assert len(xyz) == 12 and np.isnan(xyz[:, 2]).all()
    assert np.allclose(np.linalg.norm(xyz[:, 0] - xyz[:, 1], axis=1), 0.15 * np.sqrt(2))  # no face's diagonal
    fig.savefig(tmp_path / "snapshots.png")
    assert (tmp_path / "snapshots.png").stat().st_size > 10_000
    write_gif(traj, p, str(tmp_path / "motion.gif"), assembly=asm, frames=2, pixels=80)
    assert (tmp_path / "motion.gif").stat().st_size > 0


def test_contacts_whose_impulses_are_no_point_forces_draw_no_arrow():
    """A contact with ``point_impulses`` false (a hinge limit: a torque) keeps its column in the impulse array's
    layout, but draws no arrow and sets no scale; the contact after it draws its own."""
    from jaxcontact.spatial import Assembly, SpherePlane

    class Torque(SpherePlane):  # a stand-in: the sphere's point, but an impulse that is no force there
        point_impulses = False

    asm = Assembly()
    ball = asm.add_body("ball", 1.0, (1.0,) * 3)
    asm.add_contact(Torque("twist", 0.0, 0.0, body=ball, radius=0.1))
    asm.add_contact(SpherePlane("floor", 0.0, 0.0, body=ball, radius=0.1))
    q = np.array([0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0])
    traj = SimpleNamespace(
        t=np.array([0.0, 0.1]), q=np.stack([q, q]), impulse_normal=np.array([[5.0, 0.0], [7.0, 2.0]])
    )
    first, second = impulse_arrows(traj, {"gravity": 9.81}, [0, 1], assembly=asm)
    assert first.shape == (0, 7)  # the torque's 5 N·m·s is not drawn, and it is no point's impulse
    assert np.allclose(second, [[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]])
    data = scene(traj, {"gravity": 9.81}, assembly=asm)
    assert data["largest_impulse"] == 2.0 and data["arrows"][0] == []


def test_the_docs_page_holds_the_viewer_of_this_checkout():
    """The page the docs embed (docs/viewer/, written by the spatial-mechanism tutorial) has today's viewer:
    regenerate it with ``python tests/test_docs.py spatial-mechanism`` after changing viewer.js."""
    page = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "viewer", "spatial-pendulum.html")
    assert viewer_script() in open(page, encoding="utf-8").read()


def test_the_camera_looks_at_its_target_with_z_up_and_its_field_of_view():
    camera = {"target": [1.0, 2.0, 0.5], "distance": 3.0, "azimuth": -60.0, "elevation": 25.0, "fov": 35.0}
    assert np.allclose(_ndc(camera, 1.5, camera["target"])[:2], 0, atol=1e-12)
    assert _ndc(camera, 1.5, [1.0, 2.0, 0.6])[1] > 0  # up is up on the screen
    level = {**camera, "elevation": 0.0}
    half = 3.0 * np.tan(np.radians(17.5))  # half the field of view, up at the target's distance
    assert np.allclose(_ndc(level, 1.5, np.add(camera["target"], [0, 0, half]))[:2], [0, 1])
    side = np.array([-np.sin(np.radians(-60)), np.cos(np.radians(-60)), 0.0])  # to the camera's right
    assert np.allclose(_ndc(level, 1.5, camera["target"] + 1.5 * half * side)[:2], [1, 0])


def test_gif_plays_the_frames_in_real_time(run, tmp_path):
    from PIL import Image

    _, traj, m = run
    path = write_gif(traj, m.params, str(tmp_path / "motion.gif"), assembly=box_toss.ASSEMBLY, frames=6, pixels=120)
    with Image.open(path) as im:
        assert (im.n_frames, im.size) == (6, (120, 120))
        assert im.info["duration"] == pytest.approx(1000 * 0.4 / 5, abs=1)  # 6 frames over 0.4 s


# ---- in the browser ------------------------------------------------------------------------------------------


def _chromium(url, tmp, *what):
    if CHROMIUM is None:
        pytest.fail("JAXCONTACT_REQUIRE_BROWSER is set and no chromium is installed")
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        # software WebGL (SwiftShader): the same pixels with or without a GPU
        "--disable-gpu",
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
        # no network: any host name fails to resolve
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",  # a container's small /dev/shm
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp}",
        "--virtual-time-budget=5000",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        *what,
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _address(path, frame, play=False):
    return f"{path.as_uri()}#frame={frame}&size={CANVAS[0]}x{CANVAS[1]}" + ("&play" if play else "")


def _state(path, frame, tmp, play=False):
    dom = _chromium(_address(path, frame, play), tmp / "profile", "--dump-dom")
    found = re.search(r'<pre id="state"[^>]*>(.*?)</pre>', dom, re.S)
    assert found, dom[:2000]
    return json.loads(found[1].replace("&quot;", '"').replace("&amp;", "&"))


def _screenshot(path, frame, tmp):
    from PIL import Image

    png = tmp / f"frame{frame}.png"
    _chromium(_address(path, frame), tmp / "profile", f"--screenshot={png}")
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB"), float)


def _on_screen(state, point):
    """The page pixel (x, y) of a world point by the matrix the page drew with."""
    clip = np.array(state["viewProjection"]).reshape(4, 4).T @ np.r_[point, 1.0]
    x, y = clip[:2] / clip[3]
    c = state["canvas"]
    return np.array([c["left"] + (x + 1) / 2 * c["width"], c["top"] + (1 - y) / 2 * c["height"]])


def _blue_pixels(image, canvas):
    """(x, y) of the canvas's pixels of body 0's colour, however lit (a shade of it: the same direction in RGB).
    (Below the canvas, the legend's swatch has that colour too.)"""
    norm = np.linalg.norm(image, axis=2)
    cos = image @ BLUE / np.maximum(norm * np.linalg.norm(BLUE), 1e-9)
    y, x = np.nonzero((cos > 0.997) & (norm > 0.3 * np.linalg.norm(BLUE)))
    inside = (x >= canvas["left"]) & (x < canvas["left"] + canvas["width"])
    inside &= (y >= canvas["top"]) & (y < canvas["top"] + canvas["height"])
    return np.stack([x[inside], y[inside]], axis=1).astype(float)


def _outline(points):
    """The convex outline (a closed matplotlib Path) of screen points."""
    from matplotlib.path import Path

    points = np.asarray(points)
    return Path(points[ConvexHull(points).vertices], closed=False)


@browser
def test_the_page_shows_the_body_at_the_frames_pose(run, tmp_path):
    """Loaded from its file with no network at frame K, the page says it drew frame K at the trajectory's pose,
    with the camera :func:`camera_matrix` computes; and the box's pixels in a screenshot sit where that pose
    projects, not where another frame's does, turned as it turns it."""
    out, traj, m = run
    page = out / "view.html"
    data = _scene_of(page)
    half = np.array([m.params[k] for k in ("half_x", "half_y", "half_z")], float)
    centres = {}
    for frame in (5, 20):
        state = _state(page, frame, tmp_path)
        assert (state["frame"], state["row"], state["time"]) == (frame, frame, pytest.approx(traj.t[frame]))
        assert np.allclose(state["poses"], traj.q[frame][None], atol=1e-6) and state["arrows"] == 0
        c = state["canvas"]
        assert (c["left"], c["top"], c["width"], c["height"]) == (0, 0, *CANVAS)
        assert np.allclose(
            np.array(state["viewProjection"]).reshape(4, 4).T, camera_matrix(data["camera"], c["width"] / c["height"])
        )
        blue = _blue_pixels(_screenshot(page, frame, tmp_path), c)
        assert len(blue) > 500, len(blue)
        centres[frame] = (blue.mean(axis=0), _on_screen(state, traj.q[frame, :3]), np.sqrt(len(blue)))
        # Turned as the pose turns it: the box's pixels fill the outline of its projected vertices.
        outline = _outline([_on_screen(state, v) for v in _box_vertices(traj.q[frame], half)])
        inside = outline.contains_points(blue + 0.5)  # a pixel's centre
        area = ConvexHull(outline.vertices).volume
        assert inside.mean() > 0.98 and inside.sum() > 0.9 * area, (inside.mean(), inside.sum(), area)
    (seen5, at5, size5), (seen20, at20, size20) = centres[5], centres[20]
    assert np.linalg.norm(at5 - at20) > 40  # the two frames are far apart on the screen
    assert np.linalg.norm(seen5 - at5) < 0.06 * size5 and np.linalg.norm(seen20 - at20) < 0.06 * size20
    assert np.linalg.norm(seen5 - at20) > 3 * np.linalg.norm(seen5 - at5)


@browser
def test_the_page_draws_the_impulse_arrows_of_a_frame(run, tmp_path):
    """At the frame of the largest impulse, every arrow the page counts is drawn: dark pixels around its middle."""
    out, _, _ = run
    page = out / "view.html"
    data = _scene_of(page)
    frame = max(
        range(len(data["arrows"])), key=lambda k: max((np.linalg.norm(a[3:]) for a in data["arrows"][k]), default=0)
    )
    state = _state(page, frame, tmp_path)
    assert state["arrows"] == len(data["arrows"][frame]) > 0
    image = _screenshot(page, frame, tmp_path)
    dark = image.max(axis=2) < 60
    for x, y, z, dx, dy, dz in data["arrows"][frame]:
        if np.linalg.norm([dx, dy, dz]) < 0.05 * data["span"]:
            continue  # a resting impulse: an arrow too short and thin to be seen
        u, v = _on_screen(state, [x + dx / 2, y + dy / 2, z + dz / 2]).round().astype(int)
        assert dark[v - 3 : v + 4, u - 3 : u + 4].any(), (u, v)


@browser
def test_the_page_plays(run, tmp_path):
    """Started playing (#play), the page draws frame after frame by the clock, each at its own row's pose.
    (How many drawings the browser's virtual clock allows depends on the machine's load, and a browser on a busy
    machine may write the page out before its first animation frame: the check is that the clock moved the page
    on to other frames in one of three loads.)"""
    out, traj, _ = run
    for attempt in range(3):
        state = _state(out / "view.html", 0, tmp_path / f"load{attempt}", play=True)
        if state["playing"] and state["framesSeen"] >= 2:
            break
    summary = {k: state[k] for k in ("playing", "framesSeen", "drawings", "frame")}
    assert state["playing"] and state["framesSeen"] >= 2 and state["drawings"] >= state["framesSeen"], summary
    assert state["time"] == pytest.approx(traj.t[state["row"]])
    assert np.allclose(state["poses"], traj.q[state["row"]][None], atol=1e-6)
    paused = _state(out / "view.html", 3, tmp_path)
    assert not paused["playing"] and paused["drawings"] <= 2 and paused["frame"] == 3  # a resize may redraw it


@browser
def test_the_page_shows_a_mesh_body_as_its_hull(tmp_path):
    """A mesh body's pixels fill the outline of its hull's projected corners (drawn from the triangles the scene
    gives, at its pose): body 0, the octahedron, turned and raised."""
    from jaxcontact.spatial.pictures import _matrix

    asm, p, traj = _mesh_and_capsule_box()
    # turned about x; above the ground and nearer the camera than the other bodies (none hides a part of it)
    pose = np.array([0.0, -0.9, 0.6, np.cos(0.3), np.sin(0.3), 0.0, 0.0])
    traj.q[:, :7] = pose
    p["size"] = 0.4  # large on the screen
    page = tmp_path / "gem.html"
    write_html(traj, p, str(page), assembly=asm)
    state = {"viewProjection": camera_matrix(_scene_of(page)["camera"], CANVAS[0] / CANVAS[1]).T.ravel()}
    state["canvas"] = {"left": 0, "top": 0, "width": CANVAS[0], "height": CANVAS[1]}  # as the box test checks
    blue = _blue_pixels(_screenshot(page, 0, tmp_path), state["canvas"])
    assert len(blue) > 500, len(blue)
    corners = pose[:3] + 0.4 * np.array(OCTAHEDRON[:6], float) @ _matrix(pose[3:]).T
    outline = _outline([_on_screen(state, v) for v in corners])
    inside = outline.contains_points(blue + 0.5)
    area = ConvexHull(outline.vertices).volume
    assert inside.mean() > 0.98 and inside.sum() > 0.9 * area, (inside.mean(), inside.sum(), area)

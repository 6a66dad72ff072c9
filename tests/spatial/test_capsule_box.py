"""Capsule–box contact (``CapsuleBox``): the capsule's end spheres and the segment against the box's 12 edges.

Hand cases (lying on a face, bridging a box longer than it, leaning across an edge, standing on an end, an end
inside the box, a turned box of a turned body), the smallest gap against the segment's distance to the box on
random segments, the gaps' Jacobian in q against finite differences away from
the switches and finite at the degenerate poses, and two runs against closed forms: a capsule dropped flat on a
box rests at the box's height plus its radius with every step converged, and one launched along its axis on a
box slides v²/(2μg) before it stops.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, BoxPlane, CapsuleBox, rotations
from jaxcontact.spatial.geometry import capsule_box_gaps
from jaxcontact.stepping.moreau_jean import MoreauJean

HALF = jnp.asarray([0.5, 0.3, 0.2])
EYE = jnp.eye(3)
R = 0.05  # the capsule's radius
EX, EZ = np.eye(3)[0], np.eye(3)[2]


def _gaps(centre, half, box_centre=jnp.zeros(3), rotation=EYE):
    g, p, n = capsule_box_gaps(box_centre, rotation, HALF, jnp.asarray(centre), jnp.asarray(half), R)
    return np.asarray(g), np.asarray(p), np.asarray(n)


def test_lying_on_the_top_face_touches_at_its_two_ends():
    """Segment (−0.1..0.3, 0, 0.26) over the top face z = 0.2: the end spheres 0.01 above it at x = −0.1, 0.3,
    normal +z; every edge farther."""
    g, p, n = _gaps([0.1, 0.0, 0.2 + R + 0.01], [0.2, 0.0, 0.0])
    np.testing.assert_allclose(g[:2], 0.01, atol=1e-15)
    np.testing.assert_allclose(p[:2], [[-0.1, 0.0, 0.2], [0.3, 0.0, 0.2]], atol=1e-15)
    np.testing.assert_allclose(n[:2], [EZ, EZ], atol=1e-15)
    assert g[2:].min() > 0.1


def test_a_capsule_longer_than_the_box_rests_on_the_top_edges():
    """Segment x ∈ [−0.8, 0.8] at height 0.01 + r over the top: the ends overhang (open), the two top edges
    along y (x = ±0.5, z = 0.2) carry it at gap 0.01 with normal +z, at the points below the segment."""
    g, p, n = _gaps([0.0, 0.05, 0.2 + R + 0.01], [0.8, 0.0, 0.0])
    assert g[:2].min() > 0.2
    # after the 2 ends, the edges along y: contacts 6..9, at the signs (x, z) = (−,−), (+,−), (−,+), (+,+)
    np.testing.assert_allclose(g[[8, 9]], 0.01, atol=1e-15)
    np.testing.assert_allclose(p[[8, 9]], [[-0.5, 0.05, 0.2], [0.5, 0.05, 0.2]], atol=1e-15)
    np.testing.assert_allclose(n[[8, 9]], [EZ, EZ], atol=1e-13)
    assert np.delete(g, [8, 9]).min() > 0.05


def test_leaning_across_an_edge_touches_the_edge():
    """The segment along (1, 0, −1)/√2 passes 0.08 from the top edge along y at (x, z) = (0.5, 0.2) at y = 0.1,
    over its middle: one contact, gap 0.08 − r, at (0.5, 0.1, 0.2), normal (1, 0, 1)/√2 (not a face's)."""
    diagonal = np.asarray([1.0, 0.0, 1.0]) / np.sqrt(2.0)
    centre = np.asarray([0.5, 0.1, 0.2]) + 0.08 * diagonal
    g, p, n = _gaps(centre, 0.3 * np.asarray([1.0, 0.0, -1.0]) / np.sqrt(2.0))
    i = int(np.argmin(g))
    assert i == 9  # the edge along y at the signs (x, z) = (+, +)
    assert g[i] == pytest.approx(0.08 - R, abs=1e-15)
    np.testing.assert_allclose(p[i], [0.5, 0.1, 0.2], atol=1e-15)
    np.testing.assert_allclose(n[i], diagonal, atol=1e-15)
    assert np.delete(g, i).min() > 0.1


def test_an_end_on_a_side_face_and_an_end_inside():
    """Standing out of the +x face along x, its end 0.02 from it: gap 0.02 at (0.5, 0.1, −0.05), normal +x.
    Pushed 0.03 into the box, the end's centre is inside: its gap is −0.03 − r, by the same face."""
    for depth, gap in ((0.02 + R, 0.02), (-0.03, -0.03 - R)):
        g, p, n = _gaps([0.5 + depth + 0.2, 0.1, -0.05], [0.2, 0.0, 0.0])
        assert g[0] == pytest.approx(gap, abs=1e-15) and g[1] > 0.3
        np.testing.assert_allclose(p[0], [0.5, 0.1, -0.05], atol=1e-15)
        np.testing.assert_allclose(n[0], EX, atol=1e-15)


def _distance_to_box(x):
    """Distance of the point x from the box (HALF, at the origin, unturned)."""
    return np.linalg.norm(x - np.clip(x, -np.asarray(HALF), np.asarray(HALF)))


def test_the_smallest_gap_is_the_segment_distance_to_the_box():
    """Random segments outside the box, any direction and length: min g + r equals the segment's distance to
    the box, minimised along the segment (a convex function of the parameter: a bounded scalar minimiser)."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(0)
    f = jax.jit(lambda c, h: capsule_box_gaps(jnp.zeros(3), EYE, HALF, c, h, R)[0])
    checked = 0
    while checked < 200:
        centre, half = rng.uniform(-1.0, 1.0, 3), rng.uniform(-0.6, 0.6, 3)
        along = lambda t: _distance_to_box(centre + t * half)  # noqa: E731
        best = minimize_scalar(along, bounds=(-1.0, 1.0), method="bounded", options={"xatol": 1e-12})
        exact = min(best.fun, along(-1.0), along(1.0))
        if exact < 1e-3:
            continue  # the segment enters the box (or nearly): the case the contacts do not cover
        assert float(f(jnp.asarray(centre), jnp.asarray(half)).min()) + R == pytest.approx(exact, abs=1e-12)
        checked += 1


def _box_and_capsule(box_on_body=True):
    """A body 'base' carrying a box and a body 'stick' carrying a capsule along its y axis, both through the
    element (its placement of the box and of the segment)."""
    asm = Assembly(gravity=9.81)
    base = asm.add_body("base", mass=2.0, inertia=(0.1, 0.1, 0.1)) if box_on_body else None
    stick = asm.add_body("stick", mass=0.5, inertia=(0.01, 0.001, 0.01))
    asm.add_contact(
        CapsuleBox(
            "touch",
            restitution=0.0,
            friction=0.3,
            a=base,
            half_extents=("hx", 0.3, 0.2),
            box_centre=(0.1, 0.0, -0.05),
            box_orientation=tuple(np.asarray(rotations.from_axis_angle(jnp.asarray(EZ), 0.3))),
            b=stick,
            radius="r",
            half_length=0.25,
            axis_b=(0.0, 2.0, 0.0),
            centre_b=(0.0, 0.05, 0.0),
        )
    )
    return asm, {"hx": jnp.asarray(0.5), "r": jnp.asarray(R)}


def _pose(x, axis, angle):
    return jnp.concatenate([jnp.asarray(x), rotations.from_axis_angle(jnp.asarray(axis, float), angle)])


def test_the_element_places_the_box_and_the_capsule_on_their_bodies():
    """The base turned 0.4 about x and moved, the stick turned so that its y axis is world x: the gaps are
    those of the world-frame function on the placed box and segment."""
    asm, p = _box_and_capsule()
    system = asm.system()
    base, stick = _pose([0.2, -0.1, 0.3], EX, 0.4), _pose([0.3, 0.2, 0.9], EZ, -np.pi / 2)
    gaps = np.asarray(system.gaps(jnp.concatenate([base, stick]), 0.0, p))
    Ra = rotations.matrix(base[3:])
    box_rotation = Ra @ rotations.matrix(rotations.from_axis_angle(jnp.asarray(EZ), 0.3))
    box_centre = base[:3] + Ra @ jnp.asarray([0.1, 0.0, -0.05])
    Rb = rotations.matrix(stick[3:])
    g, _, _ = capsule_box_gaps(
        box_centre, box_rotation, HALF, stick[:3] + Rb @ jnp.asarray([0.0, 0.05, 0.0]), 0.25 * Rb[:, 1], R
    )
    np.testing.assert_allclose(gaps, g, atol=1e-15)
    assert gaps.shape == (14,)


# Generic poses of (base, stick), each away from the switches of the 14 contacts' closest features (a switch
# between two steps of the finite differences would show as a mismatch).
POSES = [
    ([0.0, 0.0, 0.0], EX, 0.1, [0.05, 0.02, 0.34], [1.0, 0.2, 0.3], 1.4),
    ([0.1, 0.2, -0.1], [0.3, 1.0, 0.0], 0.5, [0.7, 0.3, 0.3], [0.2, 0.0, 1.0], 0.9),
    ([0.0, 0.0, 0.0], EZ, 0.2, [0.5, 0.5, 0.5], [1.0, -1.0, 0.5], 0.7),
]


@pytest.mark.parametrize("pose", POSES)
def test_gap_jacobian_in_q_matches_finite_differences(pose):
    """∂g/∂q (reverse mode, 14 × 14) against central differences on all 14 coordinates."""
    asm, p = _box_and_capsule()
    system = asm.system()
    xa, axa, anga, xb, axb, angb = pose
    q = jnp.concatenate([_pose(xa, axa, anga), _pose(xb, axb, angb)])
    f = jax.jit(lambda q: system.gaps(q, 0.0, p))
    jac = np.asarray(jax.jacrev(f)(q))
    eye = np.eye(q.size)
    fd = np.stack([(f(q + 1e-6 * e) - f(q - 1e-6 * e)) / 2e-6 for e in eye], axis=1)
    np.testing.assert_allclose(jac, fd, atol=2e-8)
    assert np.abs(jac).max() > 0.1


@pytest.mark.parametrize(
    "centre, half",
    [
        ([0.0, 0.3, 0.2 + R], [0.3, 0.0, 0.0]),  # along the top edge at y = 0.3, touching it along a line
        ([0.5, 0.0, 0.2], [0.0, 0.2, 0.0]),  # the segment on an edge: the edge's distance is 0
        ([0.1, 0.0, 0.2 + 0.1], [0.0, 0.0, 0.1]),  # standing: an end centre on the face (its distance 0)
        ([0.0, 0.0, 0.0], [0.1, 0.0, 0.0]),  # inside the box, at its centre
    ],
)
def test_gap_gradients_are_finite_at_degenerate_poses(centre, half):
    f = lambda c, h: capsule_box_gaps(jnp.zeros(3), EYE, HALF, c, h, R)  # noqa: E731
    args = jnp.asarray(centre), jnp.asarray(half)
    jacobians = jax.jit(jax.jacrev(f, argnums=(0, 1)))(*args)  # of the gaps, the points and the normals
    assert all(np.all(np.isfinite(np.asarray(j))) for j in jax.tree.leaves(jacobians))
    assert len(jax.tree.leaves(jacobians)) == 6


SCHEME = MoreauJean(tol=1e-10, iterations=500)
MU, V, G = 0.4, 1.0, 9.81  # the sliding run


def _on_a_table():
    """A capsule (m = 0.5, r = 0.03, half length "l") along x on a box of the ground (half extents 0.2, 0.3,
    0.1, turned a quarter about z: 0.3 along world x, 0.2 along y; centred at (0, 0, 0.1): its top at z = 0.2),
    friction "mu"."""
    asm = Assembly(gravity=G)
    across = "0.5 * (3 * 0.03**2 + 4 * l**2) / 12"
    stick = asm.add_body("stick", mass=0.5, inertia=(0.5 * 0.03**2 / 2, across, across))
    quarter = tuple(np.asarray(rotations.from_axis_angle(jnp.asarray(EZ), np.pi / 2)))
    asm.add_contact(
        CapsuleBox(
            "table",
            restitution=0.0,
            friction="mu",
            half_extents=(0.2, 0.3, 0.1),
            box_centre=(0.0, 0.0, 0.1),
            box_orientation=quarter,
            b=stick,
            radius=0.03,
            half_length="l",
            axis_b=(1.0, 0.0, 0.0),
        )
    )
    return asm


@pytest.fixture(scope="module")
def table_runs():
    """One batch of three runs on the table, 0.4 s at 1 ms: dropped 1 mm, level and a little off-centre, with
    l = 0.1 (on its end spheres) and l = 0.5 (overhanging the box: on its top edges), μ = 0.5; and l = 0.05
    resting on the top at x = −0.15, launched along its axis at V, μ = MU."""
    q0 = jnp.asarray(
        [
            [0.02, -0.05, 0.231, 1.0, 0.0, 0.0, 0.0],
            [0.02, -0.05, 0.231, 1.0, 0.0, 0.0, 0.0],
            [-0.15, 0.0, 0.23, 1.0, 0.0, 0.0, 0.0],
        ]
    )
    u0 = jnp.zeros((3, 6)).at[2, 0].set(V)
    p = {"l": jnp.asarray([0.1, 0.5, 0.05]), "mu": jnp.asarray([0.5, 0.5, MU])}
    return simulate(_on_a_table().system(), p, q0, u0, dt=1e-3, n_steps=400, scheme=SCHEME)


@pytest.mark.parametrize("run", [0, 1])
def test_a_capsule_dropped_flat_on_a_box_rests_on_it(table_runs, run):
    """At rest at z = 0.2 + r, level, at its x and y, every solve converged, two contacts closed: its ends (l =
    0.1), or the two top edges it overhangs (l = 0.5)."""
    q, u = np.asarray(table_runs.q[run, -1]), np.asarray(table_runs.u[run, -1])
    landing = np.sqrt(2 * G * 1e-3) * 1e-3  # the landing's penetration is below a step's travel v dt
    assert 0.23 - landing < q[2] <= 0.23
    np.testing.assert_allclose(q[:2], [0.02, -0.05], atol=1e-9)
    np.testing.assert_allclose(q[3:], [1.0, 0.0, 0.0, 0.0], atol=1e-9)
    assert np.max(np.abs(u)) < 1e-6 and bool(np.all(np.asarray(table_runs.diagnostics.converged[run])))
    closed = np.flatnonzero(np.asarray(table_runs.active[run, -1]))
    assert list(closed) == ([0, 1] if run == 0 else [3, 5])  # the box's top edges along its x, world y


def test_a_capsule_sliding_along_its_axis_on_a_box_stops_after_v2_over_2_mu_g(table_runs):
    """Launched at V = 1 m/s along its axis: Coulomb's μ = 0.4 stops it after V²/(2μg) = 0.1274 m, at t =
    V/(μg) = 0.255 s; it does not roll or leave the top (the friction is along the axis)."""
    q, u, t = np.asarray(table_runs.q[2]), np.asarray(table_runs.u[2]), np.asarray(table_runs.t[2])
    # the stopping distance to the midpoint rule's error, of the order of the step's μ g dt²
    assert q[-1, 0] - q[0, 0] == pytest.approx(V**2 / (2 * MU * G), abs=MU * G * 1e-6)
    stop = t[np.argmax(np.abs(u[:, 0]) < 1e-8)]
    assert stop == pytest.approx(V / (MU * G), abs=1e-3)  # read at the steps
    assert np.max(np.abs(u[-1])) < 1e-6 and bool(np.all(np.asarray(table_runs.diagnostics.converged[2])))
    np.testing.assert_allclose(q[-1, 1:], [0.0, 0.23, 1.0, 0.0, 0.0, 0.0], atol=1e-6)


@pytest.mark.slow  # about 45 s on 2 cores (two bodies, 22 contacts to compile)
def test_a_capsule_rests_on_a_box_resting_on_the_floor():
    """The box a body (1 kg, half extents 0.2, 0.15, 0.05) on the floor, the capsule (r = 0.02, half length 0.1)
    dropped 1 mm on its top along y: both at rest, the box at 0.05, the capsule at 0.12."""
    asm = Assembly(gravity=9.81)
    box = asm.add_body("box", mass=1.0, inertia=(0.0083, 0.0142, 0.0208))
    stick = asm.add_body("stick", mass=0.2, inertia=(7e-4, 4e-5, 7e-4))
    half = (0.2, 0.15, 0.05)
    asm.add_contact(BoxPlane("floor", restitution=0.0, friction=0.5, body=box, half_extents=half))
    asm.add_contact(
        CapsuleBox(
            "top",
            restitution=0.0,
            friction=0.5,
            a=box,
            half_extents=half,
            b=stick,
            radius=0.02,
            half_length=0.1,
            axis_b=(0.0, 1.0, 0.0),
        )
    )
    q0 = jnp.asarray([0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0, 0.05, 0.01, 0.121, 1.0, 0.0, 0.0, 0.0])
    tr = simulate(asm.system(), {}, q0, jnp.zeros(12), dt=1e-3, n_steps=300, scheme=SCHEME)
    q, u = np.asarray(tr.q[-1]).reshape(2, 7), np.asarray(tr.u[-1])
    assert q[0, 2] == pytest.approx(0.05, abs=2e-5) and q[1, 2] == pytest.approx(0.12, abs=5e-5)
    np.testing.assert_allclose(q[1, :2], [0.05, 0.01], atol=1e-9)
    assert np.max(np.abs(u)) < 1e-6 and bool(np.all(np.asarray(tr.diagnostics.converged)))


def test_bad_values_are_refused_by_name():
    asm = Assembly(gravity=9.81)
    body = asm.add_body("stick", mass=1.0, inertia=(1.0, 1.0, 1.0))
    base = dict(restitution=0.0, friction=0.5, half_extents=(0.5, 0.3, 0.2), b=body, radius=0.05, half_length=0.2)
    cases = [
        (dict(radius=-0.05), r"radius = -0.05 breaks the rule"),
        (dict(half_length=0.0), r"half_length = 0.0 breaks the rule"),
        (dict(half_extents=(0.5, 0.3)), r"half_extents = \(0.5, 0.3\) must be three value specs"),
        (dict(axis_b=(0.0, 0.0, 0.0)), r"axis_b = \[0.0, 0.0, 0.0\] breaks the rule: finite and non-zero"),
        (dict(box_orientation=(1.0, 1.0, 0.0, 0.0)), r"box_orientation = .* must be a unit quaternion"),
    ]
    for i, (change, message) in enumerate(cases):
        one = Assembly(gravity=9.81)
        stick = one.add_body("stick", mass=1.0, inertia=(1.0, 1.0, 1.0))
        one.add_contact(CapsuleBox(f"c{i}", **(base | {"b": stick} | change)))
        with pytest.raises(ValueError, match=message):
            one.validate({})

"""Convex mesh on a plane (``MeshPlane``): one contact per vertex of the mesh's convex hull.

Gaps against hand values, the hull's vertices (interior, face and edge points dropped; a flat set's corners), a
mesh of a box's 8 vertices equal to ``BoxPlane``, the gaps' Jacobian in q and in the scale against finite
differences, bad vertex arrays refused by name, and a tetrahedron dropped a little tilted that comes to rest on
a face, at its inradius, for two scales in one batch.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, BoxPlane, MeshPlane, Plane, rotations
from jaxcontact.stepping.moreau_jean import MoreauJean

# A regular tetrahedron, centroid at the origin: its face opposite (1, 1, 1) lies 1/√3 from the centre (the
# inradius), that vertex √3 away.
TETRA = np.asarray([[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])
UP = np.ones(3) / np.sqrt(3.0)
# The rotation turning (1, 1, 1)/√3 to e_z: the tetrahedron on the face of vertices 1, 2, 3.
FACE_DOWN = rotations.from_axis_angle(jnp.asarray(np.cross(UP, [0.0, 0.0, 1.0])), float(np.arccos(UP[2])))


def _mesh(vertices=TETRA, scale="s", plane=Plane(), hull=True, friction=0.5):
    asm = Assembly(gravity=9.81)
    body = asm.add_body("solid", mass=1.0, inertia=("0.4 * s**2",) * 3)  # the regular tetrahedron's m a²/20
    asm.add_contact(
        MeshPlane(
            "floor",
            restitution=0.0,
            friction=friction,
            body=body,
            vertices=vertices,
            scale=scale,
            plane=plane,
            hull=hull,
        )
    )
    return asm


def test_gaps_of_a_tetrahedron_on_its_face():
    """Face down at height h (scale s): the face's three vertices at h − s/√3, the top one at h + s√3."""
    system = _mesh().system()
    s, h = 0.1, 0.2
    q = jnp.concatenate([jnp.asarray([0.3, -0.2, h]), FACE_DOWN])
    gaps = np.asarray(system.gaps(q, 0.0, {"s": jnp.asarray(s)}))
    np.testing.assert_allclose(gaps, [h + s * np.sqrt(3.0)] + [h - s / np.sqrt(3.0)] * 3, atol=1e-15)


def test_gaps_on_a_tilted_plane():
    """Unturned, centre x, on the plane n·x = 0.05 with n ∝ (1, 0, 2): g_i = n·(x + s v_i) − 0.05, the points
    x + s v_i and the normals n."""
    plane = Plane(normal=(1.0, 0.0, 2.0), offset=0.05)
    asm = _mesh(plane=plane)
    x = np.asarray([0.1, 0.4, 0.5])
    q = jnp.concatenate([jnp.asarray(x), jnp.asarray([1.0, 0.0, 0.0, 0.0])])
    contact = asm.contacts[0]
    gaps, points, normals, _, _ = contact.frames(q, {"s": jnp.asarray(0.2)})
    n = np.asarray([1.0, 0.0, 2.0]) / np.sqrt(5.0)
    np.testing.assert_allclose(gaps, (x + 0.2 * TETRA) @ n - 0.05, atol=1e-15)
    np.testing.assert_allclose(points, x + 0.2 * TETRA, atol=1e-15)
    np.testing.assert_allclose(normals, [n] * 4, atol=1e-15)


CUBE = np.asarray([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


@pytest.mark.parametrize(
    "vertices, kept",
    [
        # a cube with its centre, a face centre and an edge's midpoint inserted: the 8 corners, in input order
        (np.insert(CUBE, [2, 5, 5], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], axis=0), CUBE),
        # a flat set (a square and its centre, in a tilted plane): the 4 corners
        (
            [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.5, 0.5, 0.5], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]],
            [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]],
        ),
        ([[0.0, 0.0, 1.0], [0.0, 0.0, 3.0], [0.0, 0.0, -1.0]], [[0.0, 0.0, 3.0], [0.0, 0.0, -1.0]]),  # a line
        ([[0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5]]),  # one point
    ],
)
def test_the_contacts_are_the_hull_vertices(vertices, kept):
    contact = _mesh(vertices=vertices).contacts[0]
    np.testing.assert_array_equal(contact.points, kept)
    assert contact.size == len(kept)
    every = MeshPlane("all", restitution=0.0, friction=0.5, body=contact.body, vertices=vertices, hull=False)
    np.testing.assert_array_equal(every.points, vertices)


def test_a_mesh_of_a_box_vertices_is_box_plane():
    """A box placed off the centre of mass and turned in a turned body: the mesh of its 8 body-frame vertices
    (at half size, scale 2) gives BoxPlane's gaps, points and normals, in the same order."""
    half = np.asarray([0.3, 0.2, 0.1])
    centre = np.asarray([0.05, -0.02, 0.01])
    turn = rotations.from_axis_angle(jnp.asarray([1.0, 2.0, 0.5]), 0.7)
    vertices = centre + (CUBE * half) @ np.asarray(rotations.matrix(turn)).T
    plane = Plane(normal=(0.1, -0.2, 1.0), offset=-0.3)
    asm = Assembly(gravity=9.81)
    body = asm.add_body("box", mass=1.0, inertia=(1.0, 1.0, 1.0))
    box = BoxPlane(
        "box",
        restitution=0.0,
        friction=0.5,
        body=body,
        half_extents=tuple(half),
        plane=plane,
        centre=tuple(centre),
        orientation=tuple(np.asarray(turn)),
    )
    mesh = MeshPlane("mesh", restitution=0.0, friction=0.5, body=body, vertices=vertices / 2, scale=2.0, plane=plane)
    assert mesh.size == 8
    q = jnp.concatenate([jnp.asarray([0.4, 0.1, 0.7]), rotations.from_axis_angle(jnp.asarray([0.3, -1.0, 0.2]), 2.1)])
    for a, b in zip(box.frames(q, {})[:3], mesh.frames(q, {})[:3], strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), atol=1e-15)


def test_gap_jacobian_in_q_and_in_the_scale_matches_finite_differences():
    """∂g/∂q and ∂g/∂s (reverse mode) against central differences at a turned pose; ∂g/∂s = n·R v_i."""
    system = _mesh().system()
    q = jnp.concatenate([jnp.asarray([0.1, 0.2, 0.3]), rotations.from_axis_angle(jnp.asarray([1.0, 0.5, -0.3]), 0.8)])
    f = jax.jit(lambda q, s: system.gaps(q, 0.0, {"s": s}))
    s = jnp.asarray(0.15)
    jq, js = jax.jacrev(f, argnums=(0, 1))(q, s)
    fd_q = np.stack([(f(q + 1e-6 * e, s) - f(q - 1e-6 * e, s)) / 2e-6 for e in np.eye(7)], axis=1)
    fd_s = (f(q, s + 1e-6) - f(q, s - 1e-6)) / 2e-6
    np.testing.assert_allclose(jq, fd_q, atol=1e-9)
    np.testing.assert_allclose(js, fd_s, atol=1e-9)
    np.testing.assert_allclose(js, TETRA @ np.asarray(rotations.matrix(q[3:]))[2], atol=1e-14)


@pytest.mark.parametrize(
    "vertices, message",
    [
        ([], r"vertices of shape \(0,\) breaks the rule: a \(k, 3\) array with k >= 1 vertices"),
        (np.zeros((0, 3)), r"vertices of shape \(0, 3\) breaks the rule: a \(k, 3\) array with k >= 1"),
        ([[1.0, 2.0], [3.0, 4.0]], r"vertices of shape \(2, 2\) breaks the rule: a \(k, 3\) array"),
        ([[1.0, 2.0, 3.0], [1.0, 2.0]], r"vertices = .* must be a \(k, 3\) array of numbers"),
        ([[0.0, 0.0, 0.0], [1.0, np.nan, 0.0]], r"vertices = .*nan.* breaks the rule: finite"),
    ],
)
def test_bad_vertices_are_refused_by_name(vertices, message):
    with pytest.raises(ValueError, match=r"contact 'floor' " + message):
        _mesh(vertices=vertices)


def test_a_non_positive_scale_and_a_non_bool_hull_are_refused():
    with pytest.raises(ValueError, match=r"contact 'floor' scale = -0.1 breaks the rule"):
        _mesh(scale=-0.1).validate({"s": 0.1})
    with pytest.raises(ValueError, match=r"contact 'floor' hull = 'yes' must be True or False"):
        _mesh(hull="yes")


def test_a_tetrahedron_comes_to_rest_on_a_face():
    """Dropped 1 mm, face down but tilted 3° about x, for s = 0.05 and 0.1 in one batch, without friction: it
    rocks down onto the face, at rest after 0.5 s with its three vertices closed, its centre at the inradius
    s/√3 and still above its start (no horizontal force), the face flat; every solve converged.

    (With friction, the cones' solvers — Gauss–Seidel with any sweeps or relaxation, Newton — stall above
    tol = 1e-10 at the step where the face lands: a matter of the solver, not of the mesh's gaps.)"""
    system = _mesh(friction=0.0).system()
    tilted = rotations.multiply(rotations.from_axis_angle(jnp.asarray([1.0, 0.0, 0.0]), np.deg2rad(3.0)), FACE_DOWN)
    scales = np.asarray([0.05, 0.1])
    at_zero = jnp.concatenate([jnp.zeros(3), tilted])
    # the height that puts the lowest vertex 1 mm above the plane (the gaps are z plus the vertices' offsets)
    heights = [1e-3 - float(system.gaps(at_zero, 0.0, {"s": jnp.asarray(s)}).min()) for s in scales]
    q0 = jnp.stack([at_zero.at[2].set(z) for z in heights])
    tr = simulate(
        system,
        {"s": jnp.asarray(scales)},
        q0,
        jnp.zeros((2, 6)),
        dt=1e-3,
        n_steps=500,
        scheme=MoreauJean(tol=1e-10, iterations=500),
    )
    for i, s in enumerate(scales):
        q, u = np.asarray(tr.q[i, -1]), np.asarray(tr.u[i, -1])
        assert np.max(np.abs(u)) < 1e-6 and bool(np.all(np.asarray(tr.diagnostics.converged[i])))
        np.testing.assert_allclose(q[:2], 0.0, atol=1e-12)
        assert list(np.flatnonzero(np.asarray(tr.active[i, -1]))) == [1, 2, 3]
        gaps = np.asarray(jax.vmap(lambda q, s=s: system.gaps(q, 0.0, {"s": jnp.asarray(s)}))(tr.q[i]))
        # A vertex lands up to v dt deep, v its approach speed (the scheme keeps ġ ≥ 0 from then on, not g).
        deep = 1e-3 * np.max(-np.diff(gaps[:, 1:], axis=0) / 1e-3)
        assert np.all(gaps[-1, 1:] <= 0.0) and np.all(gaps[-1, 1:] >= -deep)
        assert s / np.sqrt(3.0) - deep - 1e-6 < q[2] <= s / np.sqrt(3.0)  # the inradius, less the penetration
        up = np.asarray(rotations.matrix(jnp.asarray(q[3:]))) @ UP  # the face's inward normal, from 3° to flat
        assert np.arccos(min(up[2], 1.0)) < 2 * deep / s < np.deg2rad(3.0)

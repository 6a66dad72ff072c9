"""Box–box contact (``BoxBox``): each box's vertices against the other box, and the edges crossing.

A box on a box (four vertices on the lower box's face, the rest open), a pyramid of three boxes that settles
and rests with every solve converged, and the gradient of the top box's height in a box's size against
finite differences; two edges crossing (their gap, normal and point by hand, its gradient against finite
differences, a box dropped edge-first on a ridge held by the edge contact).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, BoxBox, BoxPlane, rotations
from jaxcontact.spatial.geometry import box_box_edge_gaps, box_box_gaps
from jaxcontact.stepping.moreau_jean import MoreauJean

EYE = jnp.eye(3)


def test_a_box_on_a_box_touches_at_four_vertices():
    """b (half 0.1) on the middle of a's top face (a: half 0.2, 0.2, 0.1): b's four lower vertices on it, its
    upper ones 0.2 above; a's vertices outside b (their distance to it)."""
    gaps, points, normals = box_box_gaps(
        jnp.zeros(3), EYE, jnp.asarray([0.2, 0.2, 0.1]), jnp.asarray([0.0, 0.0, 0.2]), EYE, jnp.full(3, 0.1)
    )
    gaps = np.asarray(gaps)
    np.testing.assert_allclose(np.sort(gaps[:8])[:4], 0.0, atol=1e-15)
    np.testing.assert_allclose(np.sort(gaps[:8])[4:], 0.2, atol=1e-15)
    assert np.all(gaps[8:] > 0.1)
    lower = np.argsort(gaps[:8])[:4]
    np.testing.assert_allclose(np.asarray(normals)[lower], [[0.0, 0.0, 1.0]] * 4, atol=1e-15)
    np.testing.assert_allclose(np.asarray(points)[lower, 2], 0.1, atol=1e-15)


def _pyramid():
    """Three boxes, each smaller than the one under it, on the floor; the middle and top shifted in x."""
    asm = Assembly(gravity=9.81)
    halves = [("h1x", "h1y", "h1z"), ("h2x", "h2y", "h2z"), ("h3x", "h3y", "h3z")]
    boxes = [
        asm.add_body(
            f"box{i + 1}", mass=1.0, inertia=tuple(f"({h[(k + 1) % 3]}**2 + {h[(k + 2) % 3]}**2)/3" for k in range(3))
        )
        for i, h in enumerate(halves)
    ]
    asm.add_contact(BoxPlane("floor", restitution=0.0, friction=0.5, body=boxes[0], half_extents=halves[0]))
    for i in range(2):
        asm.add_contact(
            BoxBox(
                f"box{i + 1}-box{i + 2}",
                restitution=0.0,
                friction=0.5,
                a=boxes[i],
                half_extents_a=halves[i],
                b=boxes[i + 1],
                half_extents_b=halves[i + 1],
            )
        )
    return asm


PYRAMID = _pyramid()
SIZES = {
    "h1x": 0.2,
    "h1y": 0.15,
    "h1z": 0.05,
    "h2x": 0.12,
    "h2y": 0.1,
    "h2z": 0.04,
    "h3x": 0.06,
    "h3y": 0.05,
    "h3z": 0.03,
}
SCHEME = MoreauJean(tol=1e-10, iterations=500, differentiation="implicit")


def _drop(p, steps):
    """The boxes stacked with 1 mm gaps between them and above the floor, at rest."""
    z1 = p["h1z"] + 1e-3
    z2 = z1 + p["h1z"] + p["h2z"] + 1e-3
    z3 = z2 + p["h2z"] + p["h3z"] + 1e-3
    one = jnp.asarray([1.0, 0.0, 0.0, 0.0])
    q0 = jnp.concatenate(
        [
            jnp.stack([0.0 * z1, 0.0 * z1, z1]),
            one,
            jnp.stack([0.03 + 0.0 * z1, 0.0 * z1, z2]),
            one,
            jnp.stack([0.05 + 0.0 * z1, 0.0 * z1, z3]),
            one,
        ]
    )
    return simulate(PYRAMID.system(), p, q0, jnp.zeros(18), dt=1e-3, n_steps=steps, scheme=SCHEME)


@pytest.mark.slow  # about a minute on 2 cores; box–box dynamics run by default in tests/io (the door)
def test_a_pyramid_of_boxes_settles_and_rests():
    p = {k: jnp.asarray(v) for k, v in SIZES.items()}
    tr = _drop(p, 300)
    q, u = np.asarray(tr.q[-1]).reshape(3, 7), np.asarray(tr.u[-1])
    heights = [SIZES["h1z"], 2 * SIZES["h1z"] + SIZES["h2z"], 2 * SIZES["h1z"] + 2 * SIZES["h2z"] + SIZES["h3z"]]
    np.testing.assert_allclose(q[:, 2], heights, atol=3e-4)  # within the landing's penetration v h
    np.testing.assert_allclose(q[:, 3:], [[1.0, 0.0, 0.0, 0.0]] * 3, atol=1e-9)
    assert np.max(np.abs(u)) < 1e-6 and bool(np.all(np.asarray(tr.diagnostics.converged)))
    active = np.asarray(tr.active[-1])
    # Per box pair 25 points: 16 vertices (4 of the upper box's on the lower's face), then 9 edge pairs (none
    # crossing: the boxes are not turned).
    assert active[:8].sum() == 4 and active[8:24].sum() == 4 and active[33:49].sum() == 4
    assert active[24:33].sum() == 0 and active[49:].sum() == 0


@pytest.mark.slow  # a gradient through 150 steps of three boxes: about a minute of compile on 2 cores
def test_gradient_of_the_top_height_in_a_box_size_matches_finite_differences():
    def top(h2z):
        p = {k: jnp.asarray(v) for k, v in SIZES.items()} | {"h2z": h2z}
        return _drop(p, 150).q[-1, 16]

    h = jnp.asarray(SIZES["h2z"])
    grad = float(jax.grad(top)(h))
    fd = float((top(h + 1e-6) - top(h - 1e-6)) / 2e-6)
    assert grad == pytest.approx(fd, rel=1e-4)
    assert grad == pytest.approx(2.0, abs=0.05)  # the middle box's height counts twice


def _turn(axis, degrees):
    """The rotation by ``degrees`` about ``axis`` (any length)."""
    axis = jnp.asarray(axis, float)
    return rotations.matrix(rotations.from_axis_angle(axis / jnp.sqrt(axis @ axis), jnp.radians(degrees)))


@pytest.mark.parametrize("height", [0.05, 0.0, -0.01])
def test_two_edges_crossing_meet_at_their_crossing(height):
    """a: a unit-half cube turned 45° about x (an edge along x on top, at z = √2/2); b: the same turned 45° about
    y (an edge along y at its bottom), its bottom edge ``height`` above a's top edge. No vertex of either is
    near the other box; the edge–edge contact of the axis pair (x, y) has gap ``height`` (negative: passed
    through), normal +z, point on the crossing; the other eight axis pairs are inactive (their gap exceeds
    every distance between the boxes' points)."""
    half, r = jnp.full(3, 0.5), np.sqrt(0.5)
    Ra, Rb = _turn([1, 0, 0], 45), _turn([0, 1, 0], 45)
    centre_b = jnp.asarray([0.0, 0.0, 2 * r + height])
    gaps, points, normals = (np.asarray(v) for v in box_box_edge_gaps(jnp.zeros(3), Ra, half, centre_b, Rb, half))
    assert gaps[1] == pytest.approx(height, abs=1e-15)  # a's x axis with b's y axis
    np.testing.assert_allclose(normals[1], [0.0, 0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(points[1], [0.0, 0.0, r + height / 2], atol=1e-15)
    assert np.all(np.delete(gaps, 1) > 2 * r)
    vertex_gaps = np.asarray(box_box_gaps(jnp.zeros(3), Ra, half, centre_b, Rb, half)[0])
    assert np.min(vertex_gaps) > 0.1  # the vertices see nothing: only the edges touch


def test_edge_gap_gradient_matches_finite_differences():
    """The crossing edges' gap in both boxes' poses (b moved and turned off the symmetric crossing) against
    central differences."""
    half = jnp.asarray([0.5, 0.4, 0.3])

    def gap(x):
        Ra = _turn([1.0, 0.1, 0.0], 45.0 + x[3])
        Rb = _turn([0.1, 1.0, 0.0], 40.0 + x[4])
        return box_box_edge_gaps(jnp.zeros(3), Ra, half, x[:3], Rb, half)[0][1]

    x = jnp.asarray([0.03, -0.02, 0.85, 2.0, -3.0])
    assert float(gap(x)) < 0.2
    grad = jax.grad(gap)(x)
    fd = np.array([(gap(x.at[i].add(1e-6)) - gap(x.at[i].add(-1e-6))) / 2e-6 for i in range(5)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)


def test_a_box_dropped_edge_on_an_edge_rests_on_it():
    """A box turned 45° about y dropped edge-first across a ground box turned 45° about x (edge up, crossing at
    right angles): vertex contacts alone let it fall through; with the edge contact it lands on the crossing
    (plastic impact) and, pivoting there, tips over — its centre never goes below the crossing's height."""
    asm = Assembly(gravity=9.81)
    box = asm.add_body("box", mass=1.0, inertia=(1 / 6, 1 / 6, 1 / 6))
    r = np.sqrt(0.5)
    quat = lambda axis: tuple(float(v) for v in np.r_[np.cos(np.pi / 8), np.sin(np.pi / 8) * np.asarray(axis)])  # noqa: E731
    asm.add_contact(
        BoxBox(
            "ridge",
            restitution=0.0,
            friction=0.5,
            a=None,
            half_extents_a=(0.5, 0.5, 0.5),
            orientation_a=quat([1.0, 0.0, 0.0]),
            b=box,
            half_extents_b=(0.5, 0.5, 0.5),
        )
    )
    system, p = asm.build({})
    q0 = jnp.concatenate([jnp.asarray([0.02, 0.01, 2 * r + 0.05]), jnp.asarray(quat([0.0, 1.0, 0.0]))])
    tr = simulate(system, p, q0, jnp.zeros(6), dt=1e-3, n_steps=300, scheme=MoreauJean())
    z = np.asarray(tr.q[:, 2])
    assert np.min(z) > 2 * r - 0.01 and bool(np.all(tr.diagnostics.converged))
    assert np.max(np.asarray(tr.impulse_normal)[:, 16:]) > 0  # the edge contact carried it

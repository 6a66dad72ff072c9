"""Box–box contact (``BoxBox``): each box's vertices against the other box.

A box on a box (four vertices on the lower box's face, the rest open), a pyramid of three boxes that settles
and rests with every solve converged, and the gradient of the top box's height in a box's size against
finite differences.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, BoxBox, BoxPlane
from jaxcontact.spatial.geometry import box_box_gaps
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
    assert active[:8].sum() == 4 and active[8:24].sum() == 4 and active[24:].sum() == 4


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

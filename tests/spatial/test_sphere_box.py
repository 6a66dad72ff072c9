"""Sphere–box contact (``SphereBox``): the box's point closest to the sphere's centre.

Hand cases (a face, an edge, a vertex, a centre inside the box, a turned and shifted box), the gap's
gradient against finite differences away from the switches, and a ball coming to rest on a box that rests on
the floor.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, BoxPlane, SphereBox
from jaxcontact.spatial.geometry import sphere_box_gap
from jaxcontact.stepping.moreau_jean import MoreauJean

HALF = jnp.asarray([1.0, 2.0, 3.0])
EYE = jnp.eye(3)


@pytest.mark.parametrize(
    "centre, gap, point, normal",
    [
        ((3.0, 0.0, 0.0), 1.5, (1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),  # a face
        ((2.0, 3.0, 0.5), np.sqrt(2.0) - 0.5, (1.0, 2.0, 0.5), (np.sqrt(0.5), np.sqrt(0.5), 0.0)),  # an edge
        ((-2.0, -3.0, -4.0), np.sqrt(3.0) - 0.5, (-1.0, -2.0, -3.0), -np.ones(3) / np.sqrt(3.0)),  # a vertex
        ((0.9, 0.0, 0.0), -0.1 - 0.5, (1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),  # inside, nearest the +x face
        ((0.0, -1.7, 0.2), -0.3 - 0.5, (0.0, -2.0, 0.2), (0.0, -1.0, 0.0)),  # inside, nearest the −y face
    ],
)
def test_hand_cases(centre, gap, point, normal):
    g, p, n = sphere_box_gap(jnp.zeros(3), EYE, HALF, jnp.asarray(centre), 0.5)
    assert float(g) == pytest.approx(gap, abs=1e-12)
    np.testing.assert_allclose(p, point, atol=1e-12)
    np.testing.assert_allclose(n, normal, atol=1e-12)


def test_a_turned_shifted_box():
    """The box turned a quarter about z (its x along world y) and centred at (5, 0, 0): a sphere at
    (5, 4, 0) is 2 above its +x face (world +y), 1 away from its side."""
    R = jnp.asarray([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    g, p, n = sphere_box_gap(jnp.asarray([5.0, 0.0, 0.0]), R, HALF, jnp.asarray([5.0, 4.0, 0.0]), 1.0)
    assert float(g) == pytest.approx(2.0)
    np.testing.assert_allclose(p, [5.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(n, [0.0, 1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("centre", [(3.0, 0.3, -0.2), (2.0, 3.0, 0.5), (-2.0, -3.0, -4.0), (0.9, 0.1, 0.2)])
def test_gap_gradient_matches_finite_differences(centre):
    """d gap / d centre by reverse mode against central differences, in a face, an edge, a vertex and the
    inside region (away from the switches between them)."""
    f = lambda c: sphere_box_gap(jnp.zeros(3), EYE, HALF, c, 0.5)[0]  # noqa: E731
    c = jnp.asarray(centre)
    grad = np.asarray(jax.grad(f)(c))
    fd = np.array([(f(c + 1e-6 * e) - f(c - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(grad, fd, atol=1e-8)
    assert np.linalg.norm(grad) == pytest.approx(1.0)


def test_a_ball_rests_on_a_box_on_the_floor():
    """A 0.2 kg ball (r = 0.05) dropped 1 mm onto the top of a 1 kg box (half height 0.05) resting on the
    floor, off its centre: both at rest after 0.3 s, the ball at 0.15, the box at 0.05."""
    asm = Assembly(gravity=9.81)
    box = asm.add_body("box", mass=1.0, inertia=(0.0025, 0.0025, 0.0033))
    ball = asm.add_body("ball", mass=0.2, inertia=(2e-4, 2e-4, 2e-4))
    half = (0.1, 0.08, 0.05)
    asm.add_contact(BoxPlane("floor", restitution=0.0, friction=0.5, body=box, half_extents=half))
    asm.add_contact(SphereBox("top", restitution=0.0, friction=0.5, a=box, half_extents=half, b=ball, radius=0.05))
    q0 = jnp.asarray([0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0, 0.03, -0.02, 0.151, 1.0, 0.0, 0.0, 0.0])
    tr = simulate(
        asm.system(), {}, q0, jnp.zeros(12), dt=1e-3, n_steps=300, scheme=MoreauJean(tol=1e-10, iterations=500)
    )
    q, u = np.asarray(tr.q[-1]).reshape(2, 7), np.asarray(tr.u[-1])
    assert q[0, 2] == pytest.approx(0.05, abs=2e-5) and q[1, 2] == pytest.approx(0.15, abs=5e-5)
    np.testing.assert_allclose(q[1, :2], [0.03, -0.02], atol=1e-9)
    assert np.max(np.abs(u)) < 1e-6

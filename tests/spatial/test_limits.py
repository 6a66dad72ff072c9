"""Joint limits (``jaxcontact.spatial.JointLimit``): the joint coordinate against hand values and finite
differences, and the refusals. Their motion (stops with Newton's restitution) is checked on imported files in
tests/io/test_mjcf.py (gate.xml, slider_stop.xml)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.spatial import Assembly, JointLimit, rotations

jax.config.update("jax_enable_x64", True)


def _door(kind="hinge", **fields):
    asm = Assembly()
    door = asm.add_body("door", mass=1.0, inertia=(1.0, 1.0, 1.0))
    limit = JointLimit(
        name="stop",
        restitution=0.5,
        friction=0.0,
        kind=kind,
        b=door,
        axis=(0.0, 0.0, 2.0),
        **(
            {"point_a": (0.0, 0.0, 0.0), "point_b": (-0.4, 0.0, 0.0), "reference": 0.3, "lower": -1.0, "upper": 0.5}
            | fields
        ),
    )
    return asm, asm.add_contact(limit)


def _pose(angle, travel=0.0):
    """The door turned by ``angle`` about z through the ground point, slid by ``travel`` along z."""
    quat = rotations.from_axis_angle(jnp.asarray([0.0, 0.0, 1.0]), angle)
    centre = rotations.matrix(quat) @ jnp.asarray([0.4, 0.0, 0.0]) + jnp.asarray([0.0, 0.0, travel])
    return jnp.concatenate([centre, quat])


@pytest.mark.parametrize("angle", [0.0, 0.4, -2.5, 3.0])
def test_a_hinges_coordinate_is_its_turn_from_the_reference_pose(angle):
    _, limit = _door()
    q = _pose(angle)
    s = float(limit.coordinate(q, {}))
    assert s == pytest.approx(0.3 + angle, abs=1e-12)
    np.testing.assert_allclose(limit.gaps(q, {}), [s + 1.0, 0.5 - s], atol=1e-12)


def test_a_slides_coordinate_is_the_travel_along_its_axis():
    _, limit = _door("slide", point_b=(0.0, 0.0, 0.0), point_a=(0.4, 0.0, 0.0))
    assert float(limit.coordinate(_pose(0.0, 0.07), {})) == pytest.approx(0.37, abs=1e-12)
    assert limit.point_impulses and not _door()[1].point_impulses  # a slide's stop pushes, a hinge's turns


def test_the_coordinates_gradient_matches_finite_differences():
    _, limit = _door()
    q = _pose(0.7) + jnp.asarray([0.01, -0.02, 0.03, 0.0, 0.0, 0.0, 0.0])
    grad = jax.grad(lambda q: limit.coordinate(q, {}))(q)
    fd = np.array(
        [(limit.coordinate(q.at[i].add(1e-6), {}) - limit.coordinate(q.at[i].add(-1e-6), {})) / 2e-6 for i in range(7)]
    )
    np.testing.assert_allclose(grad, fd, atol=1e-8)


@pytest.mark.parametrize(
    "fields, words",
    [
        ({"friction": 0.3}, "must be 0"),
        ({"lower": 0.5, "upper": 0.5}, "must be below upper"),
        ({"kind": "ball"}, "kind = 'ball'"),
        ({"orientation": (1.0, 1.0, 0.0, 0.0)}, "orientation"),
    ],
)
def test_bad_limits_are_refused_by_name(fields, words):
    asm, _ = _door(**{k: v for k, v in fields.items() if k != "friction"})
    if "friction" in fields:
        asm, _ = _door()
        asm.contacts[0] = JointLimit(**{**asm.contacts[0].__dict__, "friction": fields["friction"]})
    with pytest.raises(ValueError, match=words):
        asm.validate({"gravity": 9.81})

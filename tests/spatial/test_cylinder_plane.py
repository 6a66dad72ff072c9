"""Cylinder–plane contact: the end circles' lowest points and rim points (``CylinderPlane``).

Checks against closed forms: the gap of a tilted cylinder, a cylinder rolling down an incline without
slipping at (2/3) g sin α (and sliding at g sin α without friction), one standing on its face at rest;
gradients finite at the standing pose, where the lowest-point direction is undefined.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, CylinderPlane, Plane, rotations
from jaxcontact.stepping.moreau_jean import MoreauJean

R, H = 0.05, 0.08  # radius, half length
ALPHA = np.deg2rad(10.0)  # the incline


def _cylinder(plane=Plane(), axis=(0.0, 0.0, 1.0)):
    asm = Assembly(gravity=9.81)
    m = 1.0
    along = m * R**2 / 2
    across = m * (3 * R**2 + 4 * H**2) / 12
    inertia = tuple(along if a else across for a in axis)
    body = asm.add_body("can", mass=m, inertia=inertia)
    asm.add_contact(
        CylinderPlane(
            "floor", restitution=0.0, friction="mu", body=body, radius=R, half_length=H, axis=axis, plane=plane
        )
    )
    return asm


def _state(height, tilt):
    quat = rotations.from_axis_angle(jnp.asarray([0.0, 1.0, 0.0]), tilt)
    return jnp.concatenate([jnp.asarray([0.0, 0.0, height]), quat])


@pytest.mark.parametrize("tilt_deg", [0.0, 20.0, 60.0, 90.0])
def test_gaps_of_a_tilted_cylinder(tilt_deg):
    """Axis tilted by θ from the vertical: the lowest point is h cos θ + r sin θ below the centre; standing
    (θ = 0) the whole bottom rim is at h, on its side (θ = 90°) both lowest points at r."""
    asm = _cylinder()
    system, p = asm.system(), {"mu": jnp.asarray(0.5)}
    tilt = np.deg2rad(tilt_deg)
    gaps = np.asarray(system.gaps(_state(1.0, tilt), 0.0, p))
    assert gaps.shape == (14,)
    assert gaps.min() == pytest.approx(1.0 - H * np.cos(tilt) - R * np.sin(tilt), abs=1e-12)
    if tilt_deg == 0.0:
        np.testing.assert_allclose(gaps[:7], 1.0 - H, atol=1e-12)
    if tilt_deg == 90.0:
        assert gaps[0] == pytest.approx(1.0 - R, abs=1e-12) and gaps[7] == pytest.approx(1.0 - R, abs=1e-12)


def test_gradients_are_finite_standing_on_a_face():
    asm = _cylinder()
    system, p = asm.system(), {"mu": jnp.asarray(0.5)}
    g = jax.jacfwd(lambda q: system.gaps(q, 0.0, p))(_state(H, 0.0))
    assert np.all(np.isfinite(np.asarray(g)))


def _rolling(mu):
    """A cylinder on its side (axis along y) on the incline n = (sin α, 0, cos α) through the origin, released
    at rest: 0.5 s at 1 ms. Returns the centre's displacement along the slope."""
    n = (float(np.sin(ALPHA)), 0.0, float(np.cos(ALPHA)))
    asm = _cylinder(Plane(normal=n, offset=0.0), axis=(0.0, 1.0, 0.0))
    centre = R * np.asarray(n)
    q0 = jnp.concatenate([jnp.asarray(centre), jnp.asarray([1.0, 0.0, 0.0, 0.0])])
    p = {"mu": jnp.asarray(mu)}
    tr = simulate(asm.system(), p, q0, jnp.zeros(6), dt=1e-3, n_steps=500, scheme=MoreauJean(tol=1e-10, iterations=200))
    down = np.asarray([np.cos(ALPHA), 0.0, -np.sin(ALPHA)])
    return float((np.asarray(tr.q[-1, :3]) - centre) @ down), np.asarray(tr.u[-1])


def test_rolls_down_an_incline_at_two_thirds_of_g_sin_alpha():
    """With friction (μ = 0.5 ≥ tan α / 3) it rolls without slipping: s = (1/3) g sin α t²; its spin ω = v / r."""
    s, u = _rolling(0.5)
    v = 2 / 3 * 9.81 * np.sin(ALPHA) * 0.5
    assert s == pytest.approx(9.81 * np.sin(ALPHA) * 0.25 / 3, rel=1e-2)
    assert abs(u[4]) == pytest.approx(v / R, rel=1e-2)


def test_slides_down_a_frictionless_incline_at_g_sin_alpha():
    s, u = _rolling(0.0)
    assert s == pytest.approx(9.81 * np.sin(ALPHA) * 0.25 / 2, rel=1e-2)
    assert abs(u[4]) < 1e-9


def test_stands_on_its_face():
    """Dropped 0.1 mm onto its face: at rest after 0.2 s, centre at h above the plane, not tipped."""
    asm = _cylinder()
    p = {"mu": jnp.asarray(0.5)}
    tr = simulate(
        asm.system(),
        p,
        _state(H + 1e-4, 0.0),
        jnp.zeros(6),
        dt=1e-3,
        n_steps=200,
        scheme=MoreauJean(tol=1e-10, iterations=200),
    )
    q, u = np.asarray(tr.q[-1]), np.asarray(tr.u[-1])
    assert q[2] == pytest.approx(H, abs=5e-5)
    assert np.max(np.abs(q[4:])) < 1e-9 and np.max(np.abs(u)) < 1e-6


def test_rim_must_hold_three_points():
    asm = Assembly(gravity=9.81)
    body = asm.add_body("can", mass=1.0, inertia=(1.0, 1.0, 1.0))
    asm.add_contact(CylinderPlane("floor", restitution=0.0, friction=0.5, body=body, radius=R, half_length=H, rim=2))
    with pytest.raises(ValueError, match="rim = 2 must be an int >= 3"):
        asm.validate({"gravity": 9.81, "floor_friction": 0.5})

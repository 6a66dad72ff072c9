"""The spatial revolute clearance joint (a pin in a hole): geometry by hand, statics of a pin resting in a fixed
hole, Newton's restitution across the clearance, and a batch against single runs.

Every Moreau–Jean run uses 300 steps (dt varies), so one compiled program serves them all (and one more the batch).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, PinInHole, rotations
from jaxcontact.spatial.geometry import pin_in_hole_gaps


def test_gaps_normals_and_points_by_hand():
    """A hole along z through (1, 2, 3), clearance 0.5, pin radius 0.2: pin-axis points at radial offsets 0.3 e_x
    and 0.4 e_y have gaps 0.2 and 0.1, normals −e_x and −e_y (from the wall to the pin), contact points on the
    pin's surface 0.2 further out; a point on the axis has the gap c and a finite, zero gradient."""
    ends = jnp.asarray([[1.3, 2.0, 5.0], [1.0, 2.4, -1.0]])
    gaps, points, normals = jax.jit(pin_in_hole_gaps)(
        jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([0.0, 0.0, 1.0]), ends, 0.2, 0.5
    )
    assert np.allclose(gaps, [0.2, 0.1], atol=1e-15)
    assert np.allclose(normals, [[-1, 0, 0], [0, -1, 0]], atol=1e-15)
    assert np.allclose(points, [[1.5, 2.0, 5.0], [1.0, 2.6, -1.0]], atol=1e-15)

    def centred(e):
        return pin_in_hole_gaps(jnp.zeros(3), jnp.asarray([0.0, 0.0, 1.0]), e, 0.2, 0.5)[0].sum()

    e = jnp.asarray([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    assert jax.jit(centred)(e) == 1.0
    g = jax.jit(jax.grad(centred))(e)
    assert np.all(np.isfinite(g)) and np.all(g == 0.0)


def _bearing():
    """A pin along its body's x axis, its centre δ from its centre of mass along it, in a fixed hole along world x."""
    asm = Assembly(gravity="gravity")
    pin = asm.add_body(
        "pin", mass="mass", inertia=("mass*rp**2/2", "mass*(3*rp**2 + L**2)/12", "mass*(3*rp**2 + L**2)/12")
    )
    asm.add_contact(
        PinInHole(
            "bearing",
            restitution="restitution",
            friction="friction",
            a=None,
            b=pin,
            hole_radius="rh",
            pin_radius="rp",
            pin_length="L",
            hole_axis=(1.0, 0.0, 0.0),
            pin_axis=(1.0, 0.0, 0.0),
            pin_centre=("delta", 0.0, 0.0),
        )
    )
    return asm


BEARING = _bearing()
SYSTEM = BEARING.system()
STEPS = 300
_gaps = jax.jit(jax.vmap(lambda q, p: SYSTEM.gaps(q, 0.0, p), in_axes=(0, None)))


def _params(**kw):
    p = {
        "gravity": 9.81,
        "mass": 0.5,
        "rp": 0.01,
        "rh": 0.0105,
        "L": 0.06,
        "delta": 0.01,
        "restitution": 0.0,
        "friction": 0.2,
    }
    p.update(kw)
    BEARING.validate(p)
    return {k: jnp.asarray(v, float) for k, v in p.items()}


def _state(x, v):
    return jnp.concatenate([jnp.asarray(x, float), jnp.asarray([1.0, 0.0, 0.0, 0.0])]), jnp.concatenate(
        [jnp.asarray(v, float), jnp.zeros(3)]
    )


def test_tilted_pin_gap():
    """The pin turned by φ about y at the hole's centre: both ends are (L/2) sin φ off the axis (δ = 0)."""
    phi = 0.01
    p = _params(delta=0.0)
    q = jnp.concatenate([jnp.zeros(3), rotations.from_axis_angle([0.0, 1.0, 0.0], phi)])
    assert np.allclose(SYSTEM.gaps(q, 0.0, p), 0.0005 - 0.03 * np.sin(phi), rtol=0, atol=1e-15)


def test_pin_rests_on_the_bottom_of_the_hole_with_the_static_split():
    """Held by gravity on the bottom of the hole (its axis c below the hole's): it stays there (gaps 0, no motion),
    and the ends carry the weight as statics says — the end L/2 + δ from the centre of mass m g (L/2 − δ)/L and the
    other m g (L/2 + δ)/L (here 1/3 and 2/3 of the weight), with no net friction."""
    p = _params()
    dt = 1e-3
    traj = simulate(SYSTEM, p, *_state([0.0, 0.0, -0.0005], [0.0, 0.0, 0.0]), dt=dt, n_steps=STEPS)
    assert np.max(np.abs(np.asarray(_gaps(traj.q, p)))) < 1e-15
    assert np.max(np.abs(np.asarray(traj.u))) < 1e-15
    weight = 0.5 * 9.81
    force = np.asarray(traj.impulse_normal[1:]) / dt  # end −L/2 (at δ − L/2 = −0.02), end +L/2 (at 0.04)
    assert np.allclose(force[:, 0], weight * 2 / 3, rtol=1e-12)
    assert np.allclose(force[:, 1], weight * 1 / 3, rtol=1e-12)
    # Friction: no net force. The two ends' axial slips are one and the same row (v_x − r_p ω_y at both), so the
    # split of axial friction between them is not unique: a self-equilibrating pair inside the cones is a solution.
    T = np.asarray(traj.impulse_tangent[1:]).reshape(-1, 2, 2)
    assert np.max(np.abs(T.sum(axis=1))) < 1e-15
    assert np.all(np.linalg.norm(T, axis=2) <= 0.2 * np.asarray(traj.impulse_normal[1:]) * (1 + 1e-12))


@pytest.mark.parametrize(
    "start, velocity",
    [
        ([0.0, 0.0, 0.0], [0.0, 0.1, 0.0]),  # from the centre (the normal undefined there), straight across
        ([0.0, 0.0002, 0.0], [0.02, 0.0, -0.1]),  # off centre, obliquely, and sliding along the axis
    ],
    ids=["centred", "oblique"],
)
def test_pin_bounces_across_the_clearance_with_the_restitution(start, velocity):
    """Launched across the clearance (c = 0.5 mm) without gravity or friction, the pin hits the wall with both ends
    at once: after the impact step the radial velocity (along the normal of the step, the radial of its middle
    point q_M) is −ε times the one before (1e-12), the rest of the velocity is kept and the pin does not turn —
    the two end impulses split as the lever arms say. It then crosses the hole and hits the far side 2c/(ε v)
    later (within two steps)."""
    e, dt = 0.6, 1e-4
    p = _params(gravity=0.0, friction=0.0, restitution=e)
    traj = simulate(SYSTEM, p, *_state(start, velocity), dt=dt, n_steps=STEPS)
    P = np.asarray(traj.impulse_normal)
    hits = np.flatnonzero(P.sum(axis=1) > 0)
    hit = hits[0]
    assert np.all(P[hit] > 0)
    assert abs(P[hit, 0] / P[hit, 1] - 2.0) < 1e-10  # lever arms 0.02 and 0.04 from the centre of mass
    before, after = np.asarray(traj.u[hit - 1]), np.asarray(traj.u[hit])
    q_mid = np.asarray(traj.q[hit - 1, :3]) + 0.5 * dt * before[:3]
    radial = np.array([0.0, q_mid[1], q_mid[2]]) / np.hypot(q_mid[1], q_mid[2])
    v_n = before[:3] @ radial
    assert v_n > 0
    assert abs(after[:3] @ radial + e * v_n) < 1e-12
    assert np.allclose(after[:3] - (after[:3] @ radial) * radial, before[:3] - v_n * radial, rtol=0, atol=1e-12)
    assert np.max(np.abs(np.asarray(traj.u[:, 3:]))) < 1e-12
    if start == [0.0, 0.0, 0.0]:
        second = hits[hits > hit + 1][0]
        assert abs((second - hit) * dt - 2 * 0.0005 / (e * 0.1)) <= 2 * dt
        assert np.asarray(_gaps(traj.q, p)).min() > -0.5 * dt * 0.1 - 1e-15


def test_pin_radius_at_least_the_hole_radius_is_refused_by_name():
    with pytest.raises(
        ValueError,
        match=r"contact 'bearing' pin_radius = 0.0105 >= hole_radius = 0.0105 breaks the "
        r"rule pin_radius < hole_radius",
    ):
        _params(rp=0.0105)
    with pytest.raises(ValueError, match=r"pin_radius = \[0.01 0.02\] >= hole_radius = 0.0105"):
        _params(rp=np.array([0.01, 0.02]))
    with pytest.raises(ValueError, match=r"contact 'bearing' pin_length = 0.0 breaks the rule > 0"):
        _params(L=0.0)
    asm = Assembly()
    pin = asm.add_body("pin", mass=1.0, inertia=(1.0, 1.0, 1.0))
    asm.add_contact(
        PinInHole(
            "j",
            restitution=0.0,
            friction=0.0,
            b=pin,
            hole_radius=0.02,
            pin_radius=0.01,
            pin_length=0.05,
            hole_axis=(0.0, 0.0, "ax"),
        )
    )
    with pytest.raises(
        ValueError,
        match=r"contact 'j' hole_axis = \[0.0, 0.0, 0.0\] breaks the rule: finite and "
        r"non-zero",
    ):
        asm.validate({"gravity": 9.81, "ax": 0.0})
    with pytest.raises(ValueError, match=r"contact 'k': b must be a body of this assembly"):
        asm.add_contact(
            PinInHole("k", restitution=0.0, friction=0.0, a=pin, hole_radius=0.02, pin_radius=0.01, pin_length=0.05)
        )


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_batch_of_restitutions_and_clearances_equals_single_runs():
    values = {"restitution": [0.3, 0.6, 0.9], "rh": [0.0105, 0.011, 0.012]}
    singles = [_params(gravity=0.0, friction=0.0, **{k: v[i] for k, v in values.items()}) for i in range(3)]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *singles)
    q0, u0 = _state([0.0, 0.0, 0.0], [0.0, 0.1, 0.0])
    traj = simulate(SYSTEM, batch, jnp.stack([q0] * 3), jnp.stack([u0] * 3), dt=1e-4, n_steps=STEPS)
    for i in range(3):
        one = simulate(SYSTEM, singles[i], q0, u0, dt=1e-4, n_steps=STEPS)
        assert np.max(np.abs(traj.q[i] - one.q)) < 1e-15
        assert np.max(np.abs(traj.u[i] - one.u)) < 1e-14
        assert np.array_equal(traj.active[i], one.active)
        # The first rebound speed is ε times the launch speed.
        hit = np.flatnonzero(np.asarray(one.impulse_normal).sum(axis=1) > 0)[0]
        assert abs(float(one.u[hit, 1]) + values["restitution"][i] * 0.1) < 1e-12


@pytest.mark.slow
def test_derivative_in_the_restitution_matches_finite_differences_and_the_rebound():
    """After the first impact (step k, at the middle t_k − h/2 of the step) the pin moves at −ε v, so
    ∂y(t)/∂ε = −v (t − t_k + h/2) until the second impact: forward mode through the steps gives it to 1e-10 and
    central differences agree to 1e-7."""
    dt, v = 1e-4, 0.1
    q0, u0 = _state([0.0, 0.0, 0.0], [0.0, v, 0.0])
    base = _params(gravity=0.0, friction=0.0)
    row = 150  # t = 15 ms: after the first impact (5 ms), before the second (≈ 21.7 ms)

    def y(e):
        return simulate(SYSTEM, {**base, "restitution": e}, q0, u0, dt=dt, n_steps=STEPS).q[row, 1]

    e = jnp.asarray(0.6)
    dy = jax.jacfwd(y)(e)
    traj = simulate(SYSTEM, {**base, "restitution": e}, q0, u0, dt=dt, n_steps=STEPS)
    hit = np.flatnonzero(np.asarray(traj.impulse_normal).sum(axis=1) > 0)[0]
    assert hit < row < np.flatnonzero(np.asarray(traj.impulse_normal).sum(axis=1) > 0)[1]
    assert abs(dy - (-v * (row - hit + 0.5) * dt)) < 1e-10
    fd = (y(e + 1e-6) - y(e - 1e-6)) / 2e-6
    assert abs(dy - fd) < 1e-7


def test_pin_in_a_moving_housing_exchanges_momentum_by_newtons_law():
    """Both free, gravity off, frictionless: a housing (mass 2, its hole along its body x, turned 30° about z) moves
    at 0.1 m/s down onto a pin (mass 0.5, parallel, centred, at rest). After the impact step the relative normal
    velocity is −ε times the one before and the momentum is kept (1e-12): v_a' = (p − m_b v_rel')/(m_a + m_b),
    v_b' = v_a' + v_rel', nothing turns."""
    asm = Assembly(gravity=0.0)
    housing = asm.add_body("housing", mass=2.0, inertia=(0.001, 0.002, 0.002))
    pin = asm.add_body("pin", mass=0.5, inertia=(0.00003, 0.0002, 0.0002))
    asm.add_contact(
        PinInHole(
            "bearing",
            restitution="restitution",
            friction=0.0,
            a=housing,
            b=pin,
            hole_radius=0.0105,
            pin_radius=0.01,
            pin_length=0.06,
            hole_axis=(1.0, 0.0, 0.0),
            pin_axis=(1.0, 0.0, 0.0),
        )
    )
    e = 0.6
    asm.validate({"restitution": e})
    turn = rotations.from_axis_angle([0.0, 0.0, 1.0], np.pi / 6)
    q0 = jnp.concatenate([jnp.zeros(3), turn, jnp.zeros(3), turn])
    u0 = jnp.zeros(12).at[2].set(-0.1)
    traj = simulate(asm.system(), {"restitution": jnp.asarray(e)}, q0, u0, dt=1e-4, n_steps=100)
    hit = np.flatnonzero(np.asarray(traj.impulse_normal).sum(axis=1) > 0)[0]
    assert np.flatnonzero(np.asarray(traj.impulse_normal).sum(axis=1) > 0).size == 1
    u = np.asarray(traj.u[hit]).reshape(2, 6)
    v_rel = -e * 0.1  # b relative to a: 0.1 up before, −ε times that after
    va = (2.0 * -0.1 - 0.5 * v_rel) / 2.5
    assert np.allclose(u[:, :3], [[0.0, 0.0, va], [0.0, 0.0, va + v_rel]], rtol=0, atol=1e-12)
    assert np.max(np.abs(u[:, 3:])) < 1e-12

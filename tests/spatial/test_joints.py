"""Spatial joints in Moreau–Jean: constraint projection, pendulum periods, the planar special case."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.planar import Mechanism
from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, Cylindrical, Fixed, Prismatic, Revolute, Spherical, Universal, rotations
from jaxcontact.stepping.manifold_projection import project_on_manifold
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.projection import Projection

PROJECTED = MoreauJean(projection=Projection())


def _pendulum():
    """A ball (radius r) hanging from a ground pivot by a massless link of length L to its centre."""
    asm = Assembly(gravity="gravity")
    ball = asm.add_body("ball", mass="mass", inertia=("0.4*mass*radius**2",) * 3)
    asm.add_joint(Spherical("pivot", None, (0.0, 0.0, 0.0), ball, (0.0, 0.0, "length")))
    return asm.system()


PENDULUM = _pendulum()
P_PENDULUM = {"gravity": 9.81, "mass": 1.5, "radius": 0.05, "length": 0.5}


def _hanging(tilt, p=P_PENDULUM):
    """The ball turned by ``tilt`` about e_y, its pivot point at the origin."""
    quat = rotations.from_axis_angle([0.0, 1.0, 0.0], tilt)
    centre = -rotations.rotate(quat, jnp.asarray([0.0, 0.0, p["length"]]))
    return jnp.concatenate([centre, quat])


def test_spherical_pendulum_small_amplitude_period():
    """T = 2π √((I_c + m L²) / (m g L)) (1 + θ₀²/16) for the compound pendulum, I_c = 2/5 m r²."""
    p, theta0, dt = P_PENDULUM, 0.02, 1e-3
    traj = simulate(PENDULUM, p, _hanging(theta0), jnp.zeros(6), dt=dt, n_steps=3000, scheme=PROJECTED)
    x, t = np.asarray(traj.q[:, 0]), np.asarray(traj.t)
    i = np.flatnonzero(np.sign(x[1:]) != np.sign(x[:-1]))
    crossings = t[i] - x[i] * dt / (x[i + 1] - x[i])  # linear interpolation of each zero crossing
    period = 2 * np.mean(np.diff(crossings))
    m, L, r, g = p["mass"], p["length"], p["radius"], p["gravity"]
    exact = 2 * np.pi * np.sqrt((0.4 * m * r**2 + m * L**2) / (m * g * L)) * (1 + theta0**2 / 16)
    assert abs(period - exact) < 2e-5 * exact
    assert np.max(np.asarray(traj.diagnostics.phi)) < 1e-10
    assert np.max(np.abs(np.linalg.norm(traj.q[:, 3:], axis=1) - 1)) < 1e-12


def test_conical_pendulum_steady_state():
    """Centre circling at a fixed angle α below the pivot: Ω² = g / (L cos α) (exact for a ball: isotropic inertia).

    Started on it, the steps stay on it to O(h): Moreau–Jean enforces the joint's velocity rows at the step's
    θ-point, which makes it first order with joints (halving h halves the departure)."""
    p, alpha = P_PENDULUM, np.deg2rad(30.0)
    L, g = p["length"], p["gravity"]
    omega = np.sqrt(g / (L * np.cos(alpha)))
    q0 = _hanging(-alpha)  # centre at L (sin α, 0, −cos α)
    v0 = omega * jnp.cross(jnp.asarray([0.0, 0.0, 1.0]), q0[:3])
    w_body = rotations.matrix(q0[3:]).T @ jnp.asarray([0.0, 0.0, omega])
    departures = []
    for dt in (1e-3, 5e-4):  # about 1.5 turns
        traj = simulate(
            PENDULUM, p, q0, jnp.concatenate([v0, w_body]), dt=dt, n_steps=int(round(1.0 / dt)), scheme=PROJECTED
        )
        departures.append(np.max(np.abs(np.asarray(traj.q[:, 2]) + L * np.cos(alpha))))
        azimuth = np.unwrap(np.arctan2(np.asarray(traj.q[:, 1]), np.asarray(traj.q[:, 0])))
        rate = np.polyfit(np.asarray(traj.t), azimuth, 1)[0]
        assert abs(rate - omega) < 1e-3 * omega
        assert np.max(np.asarray(traj.diagnostics.phi)) < 1e-10
    assert departures[0] < 2e-4 * L
    assert 1.8 < departures[0] / departures[1] < 2.2


JOINTS = {
    "spherical": lambda a, b: Spherical("j", a, (0.3, 0.0, 0.0), b, (0.0, 0.0, 0.0)),
    "universal": lambda a, b: Universal(
        "j", a, (0.3, 0.0, 0.0), b, (0.0, 0.0, 0.0), axis_a=(0.0, 1.0, 0.0), axis_b=(0.0, 0.0, 1.0)
    ),
    "revolute": lambda a, b: Revolute(
        "j", a, (0.3, 0.0, 0.0), b, (0.0, 0.0, 0.0), axis_a=(0.0, 1.0, 0.0), axis_b=(0.0, 1.0, 0.0)
    ),
    "cylindrical": lambda a, b: Cylindrical(
        "j", a, (0.3, 0.0, 0.0), b, (0.0, 0.0, 0.0), axis_a=(1.0, 0.0, 0.0), axis_b=(1.0, 0.0, 0.0)
    ),
    "prismatic": lambda a, b: Prismatic(
        "j", a, (0.3, 0.0, 0.0), b, (0.0, 0.0, 0.0), axis_a=(1.0, 0.0, 0.0), axis_b=(1.0, 0.0, 0.0)
    ),
    "fixed": lambda a, b: Fixed("j", a, (0.3, 0.0, 0.0), b, (0.0, 0.0, 0.0)),
}


@pytest.mark.parametrize("kind", list(JOINTS))
@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_each_joint_stays_assembled_with_projection(kind):
    """Two bars, the first on a ground ball joint, the second on the joint under test, tumbling under gravity
    from a random consistent velocity: ‖Φ‖ ≤ 1e-10 at every step with the projection (and it drifts without).

    Each joint compiles its own two programs (tens of seconds): all are slow tests (the pendulum tests cover the
    spherical joint, the spatial tutorial a revolute joint kept by the projection)."""
    asm = Assembly(gravity="gravity")
    one = asm.add_body("one", mass=1.0, inertia=(0.01, 0.03, 0.035))
    two = asm.add_body("two", mass=0.7, inertia=(0.02, 0.015, 0.03))
    asm.add_joint(Spherical("pivot", None, (0.0, 0.0, 0.0), one, (-0.3, 0.0, 0.0)))
    asm.add_joint(JOINTS[kind](one, two))
    system = asm.system()
    p = {"gravity": 9.81}
    identity = jnp.asarray([1.0, 0.0, 0.0, 0.0])
    q0 = jnp.concatenate([jnp.asarray([0.3, 0.0, 0.0]), identity, jnp.asarray([0.6, 0.0, 0.0]), identity])
    u_guess = jax.random.normal(jax.random.PRNGKey(0), (12,))
    q0, u0 = jax.jit(project_on_manifold, static_argnums=0)(system, q0, u_guess, 0.0, p)
    assert np.allclose(q0[:3], [0.3, 0.0, 0.0])  # already assembled: the positions do not move
    projected = simulate(system, p, q0, u0, dt=1e-3, n_steps=400, scheme=PROJECTED)
    free = simulate(system, p, q0, u0, dt=1e-3, n_steps=400)
    assert np.max(np.asarray(projected.diagnostics.phi)) <= 1e-10
    assert np.max(np.asarray(projected.diagnostics.phi_dot)) <= 1e-10
    assert np.max(np.asarray(free.diagnostics.phi)) > 1e-8
    assert np.all(np.asarray(projected.diagnostics.converged))


def test_planar_special_case_equals_the_planar_builder():
    """A bar on a revolute joint about e_y, swinging in the x–z plane, is the planar builder's pendulum in x–y:
    the same Moreau–Jean steps, so the same trajectory to 1e-10 (planar θ = −rotation about e_y)."""
    p = {"m": 0.5, "l": 0.4, "gravity": 9.81}
    mech = Mechanism("pendulum")
    bar = mech.body("bar", mass="m", inertia="m*l**2/12")
    mech.revolute(bar, ("-l/2", 0.0), None, (0.0, 0.0), name="pivot")
    mech.gravity("gravity")
    planar, _ = mech.build(p)

    asm = Assembly(gravity="gravity")
    sbar = asm.add_body("bar", mass="m", inertia=("m*l**2/100", "m*l**2/12", "m*l**2/12"))
    asm.add_joint(
        Revolute(
            "pivot", None, (0.0, 0.0, 0.0), sbar, ("-l/2", 0.0, 0.0), axis_a=(0.0, 1.0, 0.0), axis_b=(0.0, 1.0, 0.0)
        )
    )
    spatial = asm.system()

    n, dt = 1000, 1e-3
    a = simulate(planar, p, jnp.asarray([0.2, 0.0, 0.0]), jnp.zeros(3), dt=dt, n_steps=n)
    b = simulate(spatial, p, jnp.asarray([0.2, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), jnp.zeros(6), dt=dt, n_steps=n)
    quat = np.asarray(b.q[:, 3:])
    angle = -2 * np.arctan2(quat[:, 2], quat[:, 0])
    assert np.max(np.abs(np.asarray(a.q[:, 0]) - np.asarray(b.q[:, 0]))) < 1e-10
    assert np.max(np.abs(np.asarray(a.q[:, 1]) - np.asarray(b.q[:, 2]))) < 1e-10
    assert np.max(np.abs(np.asarray(a.q[:, 2]) - angle)) < 1e-10
    assert np.max(np.abs(np.asarray(a.u[:, 2]) + np.asarray(b.u[:, 4]))) < 1e-10
    assert np.max(np.abs(np.asarray(b.q[:, 1]))) < 1e-14
    assert float(np.min(np.asarray(a.q[:, 1]))) < -0.19  # it swung down

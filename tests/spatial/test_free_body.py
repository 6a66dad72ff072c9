"""A free spatial rigid body in Moreau–Jean: quaternion kinematics, gyroscopic terms, conservation laws."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, rotations
from jaxcontact.stepping.event_driven import EventDriven
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.penalty import Penalty
from jaxcontact.system import kinematics

MOMENTS = (1.0, 2.0, 3.0)


def _free_body():
    asm = Assembly(gravity="gravity")
    asm.add_body("body", mass="mass", inertia=("I1", "I2", "I3"))
    return asm, asm.system()


ASM, SYSTEM = _free_body()
PARAMS = {"gravity": 0.0, "mass": 2.0, "I1": MOMENTS[0], "I2": MOMENTS[1], "I3": MOMENTS[2]}


def _angular_momentum(q, u):
    """World angular momentum R (I ω) about the centre."""
    return rotations.matrix(q[3:]) @ (jnp.asarray(MOMENTS) * u[3:])


def _run(dt, t_final, u0, params=PARAMS, q0=None):
    q0 = jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]) if q0 is None else q0
    return simulate(SYSTEM, params, q0, jnp.asarray(u0), dt=dt, n_steps=int(round(t_final / dt)))


def test_rotations_match_the_rate_and_the_matrix():
    q = rotations.from_axis_angle([1.0, 2.0, -0.5], 0.7)
    w = jnp.asarray([0.3, -1.1, 0.8])
    # Exponential map: exact for constant body ω, so a tiny step agrees with the rate.
    h = 1e-6
    assert np.allclose((rotations.advance(q, w, h) - q) / h, rotations.rate(q, w), atol=1e-6)
    # R(q) is a rotation, and R(q ⊗ r) = R(q) R(r).
    r = rotations.from_axis_angle([0.0, 1.0, 1.0], -1.3)
    R = rotations.matrix(q)
    assert np.allclose(R @ R.T, np.eye(3), atol=1e-14) and np.isclose(jnp.linalg.det(R), 1.0)
    assert np.allclose(rotations.matrix(rotations.multiply(q, r)), R @ rotations.matrix(r), atol=1e-14)
    # A rotation by π/2 about z takes x to y.
    assert np.allclose(
        rotations.rotate(rotations.from_axis_angle([0, 0, 1], np.pi / 2), jnp.asarray([1.0, 0, 0])),
        [0, 1, 0],
        atol=1e-15,
    )
    # exp is smooth at 0: finite gradient.
    g = jax.grad(lambda v: rotations.exp(v)[1])(jnp.zeros(3))
    assert np.all(np.isfinite(g)) and np.allclose(g, [0.5, 0, 0])


def test_torque_free_body_conserves_energy_and_momentum_to_second_order():
    u0 = [0.0, 0.0, 0.0, 0.4, 0.2, 0.9]  # close to the stable major axis, yet tumbling
    errors = []
    for dt in (0.02, 0.01):
        traj = _run(dt, 10.0, u0)
        e = np.asarray(traj.diagnostics.energy)
        L = np.asarray(jax.vmap(_angular_momentum)(traj.q, traj.u))
        errors.append(
            (np.max(np.abs(e - e[0])) / e[0], np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0]))
        )
        # Unit quaternion to rounding at every step.
        assert np.max(np.abs(np.linalg.norm(traj.q[:, 3:], axis=1) - 1.0)) < 1e-12
    (e1, l1), (e2, l2) = errors
    assert e1 < 1e-3 and l1 < 1e-3
    # Second order: halving the step divides the drifts by 4 (3.5–4.5).
    assert 3.5 < e1 / e2 < 4.5 and 3.5 < l1 / l2 < 4.5


def test_penalty_rk4_on_a_free_body_is_fourth_order_and_keeps_the_quaternion_unit():
    """The penalty scheme on a spatial body: RK4 on q̇ = T(q) u with the gyroscopic force, retracted each step.
    Energy and world angular momentum drift at O(h⁴) (halving h divides them by ~16); |quaternion| = 1 to rounding."""
    u0 = [0.0, 0.0, 0.0, 0.4, 0.2, 0.9]
    errors = []
    for dt in (0.04, 0.02):
        traj = simulate(
            SYSTEM,
            PARAMS,
            jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
            jnp.asarray(u0),
            dt=dt,
            n_steps=int(round(4.0 / dt)),
            scheme=Penalty(),
        )
        e = np.asarray(traj.diagnostics.energy)
        L = np.asarray(jax.vmap(_angular_momentum)(traj.q, traj.u))
        errors.append(
            (np.max(np.abs(e - e[0])) / e[0], np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0]))
        )
        assert np.max(np.abs(np.linalg.norm(traj.q[:, 3:], axis=1) - 1.0)) < 1e-14
    (e1, l1), (e2, l2) = errors
    assert e1 < 1e-5 and l1 < 1e-5
    assert 12 < e1 / e2 < 20 and 12 < l1 / l2 < 20, errors


def test_intermediate_axis_flips():
    """Dzhanibekov: a spin about the intermediate axis with a small perturbation reverses periodically."""
    traj = _run(0.01, 40.0, [0.0, 0.0, 0.0, 0.01, 1.0, 0.0])
    w2 = np.asarray(traj.u[:, 4])
    assert w2.min() < -0.99 and w2.max() > 0.99  # flips to −ω and back
    flips = np.flatnonzero(np.diff(np.sign(w2)))
    assert len(flips) >= 2
    # Energy and |L| stay put through the flips.
    e = np.asarray(traj.diagnostics.energy)
    assert np.max(np.abs(e - e[0])) / e[0] < 1e-4
    # A spin about the major axis with the same perturbation stays there.
    stable = _run(0.01, 40.0, [0.0, 0.0, 0.0, 0.01, 0.0, 1.0])
    assert np.asarray(stable.u[:, 5]).min() > 0.99


def test_projectile_is_exact():
    p = {**PARAMS, "gravity": 9.81}
    v0 = np.asarray([1.0, -0.5, 3.0])
    traj = _run(0.01, 1.0, [*v0, 0.3, -0.2, 0.1], params=p)
    t = np.asarray(traj.t)[:, None]
    exact = v0 * t + 0.5 * np.asarray([0.0, 0.0, -9.81]) * t**2
    assert np.max(np.abs(np.asarray(traj.q[:, :3]) - exact)) < 1e-12
    assert np.max(np.abs(np.asarray(traj.u[:, 2]) - (3.0 - 9.81 * t[:, 0]))) < 1e-12


def test_jacobians_are_in_the_velocities():
    """W_N = (∂g/∂q T(q))ᵀ: the normal velocity is W_Nᵀ u (checked against the time derivative of the gap)."""
    from jaxcontact.models import sphere_on_plane as sop

    p = {**sop.DEFAULTS, "slope_deg": 30.0}
    q = jnp.concatenate([jnp.asarray([0.1, 0.2, 0.4]), rotations.from_axis_angle([1, 1, 0], 0.5)])
    u = jnp.asarray([0.3, -0.2, 0.5, 1.0, 2.0, -1.0])
    kin = jax.jit(kinematics, static_argnums=0)(sop.SYSTEM, q, 0.0, p)
    assert kin.W_N.shape == (6, 1) and kin.W_T.shape == (6, 2)
    h = 1e-7
    gap = jax.jit(lambda q: sop.SYSTEM.gaps(q, 0.0, p))
    gap_rate = (gap(sop.SYSTEM.position_update(q, u, h)) - gap(q)) / h
    assert np.allclose(kin.W_N.T @ u, gap_rate, atol=1e-6)


def test_schemes_without_spatial_support_are_refused_by_name():
    with pytest.raises(ValueError, match="event-driven scheme advances q by q̇ = u only"):
        simulate(
            SYSTEM, PARAMS, jnp.asarray([0, 0, 0, 1.0, 0, 0, 0]), jnp.zeros(6), dt=0.01, n_steps=2, scheme=EventDriven()
        )
    with pytest.raises(ValueError, match="u0 must have shape"):
        simulate(SYSTEM, PARAMS, jnp.asarray([0, 0, 0, 1.0, 0, 0, 0]), jnp.zeros(7), dt=0.01, n_steps=2)
    with pytest.raises(ValueError, match="force_rule = 'siconos' is not available"):
        simulate(
            SYSTEM,
            PARAMS,
            jnp.asarray([0, 0, 0, 1.0, 0, 0, 0]),
            jnp.zeros(6),
            dt=0.01,
            n_steps=2,
            scheme=MoreauJean(force_rule="siconos"),
        )
    from jaxcontact.models import get_model
    from jaxcontact.simulate import simulate_model

    with pytest.raises(ValueError, match="solver = 'lemke' cannot solve spatial Coulomb friction"):
        simulate_model(get_model("sphere-on-plane"), scheme=MoreauJean(solver="lemke"))


def test_assembly_names_the_broken_value():
    with pytest.raises(ValueError, match=r"body 'body' mass = -1.0 breaks the rule > 0"):
        ASM.validate({**PARAMS, "mass": -1.0})
    with pytest.raises(ValueError, match="triangle rule"):
        ASM.validate({**PARAMS, "I3": 5.0})
    from jaxcontact.models import get_model
    from jaxcontact.models import sphere_on_plane as sop

    with pytest.raises(ValueError, match=r"contact 'plane' restitution = 1.5 breaks the rule in \[0, 1\]"):
        sop.ASSEMBLY.validate({**sop.DEFAULTS, "restitution": 1.5})
    with pytest.raises(ValueError, match=r"parameter friction = -0.1 breaks the rule friction >= 0"):
        get_model("sphere-on-plane", friction=-0.1)
    with pytest.raises(ValueError, match="puts a vertex of the box below the plane"):
        get_model("box-toss", height=0.01)
    asm = Assembly()
    b = asm.add_body("b", mass="m", inertia=(1.0, 1.0, 1.0))
    from jaxcontact.spatial import Spherical

    asm.add_joint(Spherical("pin", None, (0.0, 0.0, "L"), b, (0.0, 0.0, 0.0)))
    with pytest.raises(ValueError, match=r"joint 'pin' point_a: unknown parameter\(s\) \['L'\]"):
        asm.validate({"gravity": 9.81, "m": 1.0})
    with pytest.raises(ValueError, match="joins the ground to itself"):
        asm.add_joint(Spherical("nothing", None, (0.0, 0.0, 0.0), None, (0.0, 0.0, 0.0)))

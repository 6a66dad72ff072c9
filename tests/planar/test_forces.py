"""Applied loads: conservative forces equal −∂V/∂q (two independent code paths), dampers
dissipate, time-dependent loads follow t, gravity acts at the centres of mass."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.planar import Mechanism


def build(damping=0.0, **extra):
    mech = Mechanism("loads")
    a = mech.body("a", mass="ma", inertia="Ja")
    b = mech.body("b", mass="mb", inertia="Jb")
    mech.gravity("g", direction=(0.3, -1.0))
    mech.torque(a, "T", reaction=b)
    mech.force(b, ("Fx", "Fy"), at=("sx", "sy"))
    mech.spring_damper(a, (0.1, 0.2), b, ("sx", -0.05), stiffness="k", damping=damping, rest_length="L0")
    mech.spring_damper(None, (1.0, 2.0), a, (-0.2, 0.0), stiffness="k2", rest_length=0.3)
    return mech.build(
        {
            "ma": 1.5,
            "Ja": 0.2,
            "mb": 0.7,
            "Jb": 0.05,
            "g": 9.81,
            "T": 2.0,
            "Fx": 1.0,
            "Fy": -3.0,
            "sx": 0.3,
            "sy": 0.1,
            "k": 50.0,
            "L0": 0.4,
            "k2": 20.0,
            **extra,
        }
    )


SYS, P = build()
forces = jax.jit(lambda q, u, t, p: SYS.forces(q, u, t, p))
grad_v = jax.jit(jax.grad(lambda q, p: SYS.potential(q, 0.0, p)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_conservative_forces_are_minus_grad_potential(seed):
    q = jnp.asarray(np.random.default_rng(seed).normal(size=6))
    np.testing.assert_allclose(forces(q, jnp.zeros(6), 0.0, P), -grad_v(q, P), rtol=1e-12, atol=1e-12)


def test_gravity_acts_on_centres_along_its_direction():
    mech = Mechanism("g")
    mech.body("a", mass=2.0, inertia=1.0)
    system, p = mech.build()
    d = np.array([0.0, -1.0])
    np.testing.assert_allclose(system.forces(jnp.ones(3), jnp.zeros(3), 0.0, p), [0.0, 0.0, 0.0])
    mech.gravity(9.81)
    system, p = mech.build()
    np.testing.assert_allclose(system.forces(jnp.ones(3), jnp.zeros(3), 0.0, p), [*(2.0 * 9.81 * d), 0.0])
    assert p["gravity_g"] == 9.81 and p["a_mass"] == 2.0


def test_damper_dissipates_and_matches_rate_of_length():
    system, p = build(damping="c", c=3.0)
    system0, p0 = build()
    rng = np.random.default_rng(3)
    q, u = jnp.asarray(rng.normal(size=6)), jnp.asarray(rng.normal(size=6))
    h_damp = np.asarray(system.forces(q, u, 0.0, p) - system0.forces(q, u, 0.0, p0))

    def length(qq):  # the spring a–b written out by hand
        def pt(i, s):
            c, sn = jnp.cos(qq[3 * i + 2]), jnp.sin(qq[3 * i + 2])
            return qq[3 * i : 3 * i + 2] + jnp.array([c * s[0] - sn * s[1], sn * s[0] + c * s[1]])

        return jnp.linalg.norm(pt(1, (0.3, -0.05)) - pt(0, (0.1, 0.2)))

    Ldot = float(jax.jvp(length, (q,), (u,))[1])
    assert float(h_damp @ np.asarray(u)) == pytest.approx(-3.0 * Ldot**2, rel=1e-12)
    np.testing.assert_allclose(h_damp, -3.0 * Ldot * np.asarray(jax.grad(length)(q)), rtol=1e-12, atol=1e-14)


def test_time_dependent_torque_and_reaction():
    mech = Mechanism("motor")
    rotor = mech.body("rotor", mass=1.0, inertia=0.1)
    stator = mech.body("stator", mass=5.0, inertia=1.0)
    mech.torque(rotor, "T0*sin(w*t)", reaction=stator)
    system, p = mech.build({"T0": 2.0, "w": 3.0})
    h = np.asarray(system.forces(jnp.zeros(6), jnp.zeros(6), 0.5, p))
    np.testing.assert_allclose(h, [0, 0, 2.0 * np.sin(1.5), 0, 0, -2.0 * np.sin(1.5)], atol=1e-15)
    # A load varying in time has no potential: the energy diagnostic then counts kinetic energy only.
    assert float(system.potential(jnp.ones(6), 0.5, p)) == 0.0


def test_generalized_force_and_point_readouts():
    mech = Mechanism("user")
    a = mech.body("a", mass=1.0, inertia=0.5)
    mech.generalized_force(lambda q, u, t, p: -p["c"] * u, name="drag")
    system, p = mech.build({"c": 0.3})
    u = jnp.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(system.forces(jnp.zeros(3), u, 0.0, p), -0.3 * u)
    assert system.potential is not None and float(system.potential(jnp.zeros(3), 0.0, p)) == 0.0
    q = jnp.array([1.0, 2.0, np.pi / 2])
    np.testing.assert_allclose(mech.point_position(a, (0.5, 0.0), q, p), [1.0, 2.5], atol=1e-15)
    np.testing.assert_allclose(mech.point_velocity("a", (0.5, 0.0), q, u, p), [1.0 - 0.25, -2.0], atol=1e-15)
    assert mech.index("a", "theta") == 2
    with pytest.raises(ValueError, match=r"generalized force 'bad': 3 is not callable"):
        mech.generalized_force(3, name="bad")

"""The builder's surface: errors that name the bad value, literals as parameters, printing,
batching over parameters (vmap equals single runs), float32."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import four_bar
from jaxcontact.planar import Mechanism
from jaxcontact.system import kinematics


def pendulum():
    mech = Mechanism("pendulum")
    bar = mech.body("bar", mass="m", inertia="m*l**2/12")
    mech.revolute(bar, ("-l/2", 0.0), name="hinge")
    mech.gravity("g")
    floor = mech.line(point=(0.0, "-depth"), normal=(0.0, 1.0))
    mech.point_contact("tip", bar, ("l/2", 0.0), floor, restitution="e", friction="mu")
    return mech


DEFAULTS = {"m": 1.0, "l": 0.5, "g": 9.81, "depth": 0.3, "e": 0.5, "mu": 0.2}


def test_build_returns_system_and_params():
    mech = pendulum()
    system, p = mech.build(DEFAULTS)
    assert system.n_dof == 3 and system.names == ("bar.x", "bar.y", "bar.theta")
    assert mech.constraint_names == ("hinge.x", "hinge.y") and mech.contact_names == ("tip",)
    assert set(p) == set(DEFAULTS) and all(v.dtype == jnp.float64 and v.shape == () for v in p.values())
    np.testing.assert_allclose(system.mass(jnp.zeros(3), p), np.diag([1.0, 1.0, 0.25 / 12]), rtol=1e-15)
    laws = system.laws(p)
    np.testing.assert_allclose([laws.restitution[0], laws.tangential_restitution[0], laws.friction[0]], [0.5, 0, 0.2])


def test_printing():
    mech = pendulum()
    text = repr(mech)
    assert "Body('bar', mass=m, inertia=m*l**2/12, q[0:3])" in text
    assert "Revolute('hinge': bar(-l/2, 0.0) = ground(0.0, 0.0))" in text
    assert "PointLine('tip'" in text and "ε_N=e" in text and "μ=mu" in text
    assert repr(mech.bodies[0]).startswith("Body('bar'")


def test_literals_become_named_parameters():
    mech = Mechanism("ball")
    ball = mech.body("ball", mass=2.0, inertia=0.1)
    mech.gravity(9.81)
    mech.circle_contact("floor", ball, (0.0, 0.0), 0.05, mech.line((0.0, 0.0), (0.0, 1.0)), restitution=0.9)
    system, p = mech.build()
    assert {k: float(v) for k, v in p.items()} == {
        "ball_mass": 2.0,
        "ball_inertia": 0.1,
        "gravity_g": 9.81,
        "floor_radius": 0.05,
        "floor_restitution": 0.9,
    }
    assert system.slip_velocity is None  # friction=None: frictionless by structure
    p2 = {**p, "ball_mass": jnp.asarray(3.0)}
    assert float(system.mass(jnp.zeros(3), p2)[0, 0]) == 3.0
    with pytest.raises(ValueError, match=r"\['ball_mass'\] are given in defaults and also as literals"):
        mech.build({"ball_mass": 1.0})


@pytest.mark.parametrize(
    "override, message",
    [
        ({"m": -1.0}, r"'bar' mass = -1.0 \(from m\) must be > 0"),
        ({"e": 1.5}, r"'tip' restitution = 1.5 \(from e\) must be in \[0, 1\]"),
        ({"mu": -0.1}, r"'tip' friction = -0.1 \(from mu\) must be >= 0"),
        ({"l": float("nan")}, r"parameter 'l' = nan must be a finite number"),
    ],
)
def test_bad_values_are_named(override, message):
    mech = pendulum()
    with pytest.raises(ValueError, match=message):
        mech.build({**DEFAULTS, **override})
    _, p = mech.build(DEFAULTS)
    with pytest.raises(ValueError, match=message):
        mech.validate({**p, **{k: jnp.asarray(v) for k, v in override.items()}})


def test_batched_validation_names_the_bad_samples():
    mech = pendulum()
    _, p = mech.build(DEFAULTS)
    batch = {**p, "e": jnp.array([0.2, 1.3, 0.5])}
    with pytest.raises(ValueError, match=r"restitution = \[1.3\]"):
        mech.validate(batch)


def test_structural_errors():
    mech = Mechanism("m")
    a = mech.body("a", mass=1.0, inertia=1.0)
    with pytest.raises(ValueError, match=r"unknown body 'b'; bodies: \['a'\]"):
        mech.revolute("b", (0.0, 0.0))
    other = Mechanism("other").body("x", mass=1.0, inertia=1.0)
    with pytest.raises(ValueError, match=r"body 'x' belongs to another mechanism"):
        mech.revolute(other, (0.0, 0.0))
    with pytest.raises(ValueError, match=r"body name 'a' is already used"):
        mech.body("a", mass=1.0, inertia=1.0)
    with pytest.raises(ValueError, match=r"both ends on body 'a'"):
        mech.revolute(a, (0.0, 0.0), a, (1.0, 0.0))
    with pytest.raises(ValueError, match=r"coordinate 'phi' must be one of"):
        mech.driver(a, "phi", "w*t")
    with pytest.raises(ValueError, match=r"point 0.5 must be a pair"):
        mech.revolute(a, 0.5)
    with pytest.raises(ValueError, match=r"'c' mass: expression 'm\*t' uses time t"):
        mech.body("c", mass="m*t", inertia=1.0)
    assert "c" not in mech._names and "c_inertia" not in mech.literals  # a failed call changes nothing
    mech.body("c", mass=1.0, inertia=1.0)
    with pytest.raises(ValueError, match=r"is not a Line"):
        mech.point_contact("p", a, (0.0, 0.0), (0.0, 1.0), restitution=0.5)
    with pytest.raises(ValueError, match=r"no bodies"):
        Mechanism("empty").build()
    j = mech.revolute(a, ("half", 0.0))
    assert j.name == "revolute1"  # failed revolute calls above consumed no name
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['half'\]"):
        mech.build()
    mech2 = Mechanism("lam")
    b = mech2.body("b", mass=lambda p: p["mass_of_b"], inertia=1.0)
    with pytest.raises(ValueError, match=r"unknown parameter 'mass_of_b'"):
        mech2.build()
    assert b.name == "b"


def test_vmap_over_parameters_matches_single_evaluations():
    """One compiled function, a batch of lengths and masses: equal to per-sample evaluation."""
    system, p = four_bar.SYSTEM, four_bar.model().params
    rng = np.random.default_rng(0)
    B = 8
    batch = {k: jnp.full((B,), v) for k, v in p.items()}
    batch["l1"] = jnp.asarray(0.2 + 0.02 * rng.random(B))
    batch["l3"] = batch["l1"]
    batch["m2"] = jnp.asarray(0.2 + 0.1 * rng.random(B))
    batch["wall_distance"] = jnp.asarray(0.05 + 0.02 * rng.random(B))

    def f(pp):
        q, _ = four_bar.initial_state(pp)
        k = kinematics(system, q, 0.0, pp)
        return q, k.phi, k.phi_q, k.gap, k.W_N, system.mass(q, pp), system.forces(q, q, 0.0, pp)

    fj = jax.jit(f)
    out_b = jax.jit(jax.vmap(f))(batch)
    for i in range(B):
        out_i = fj({k: v[i] for k, v in batch.items()})
        for a, b in zip(out_b, out_i):
            np.testing.assert_allclose(a[i], b, rtol=1e-14, atol=1e-15)
        assert float(out_i[3][0]) == pytest.approx(float(batch["wall_distance"][i]), abs=1e-15)


def test_float32_build():
    system, p = pendulum().build(DEFAULTS, dtype=jnp.float32)
    assert all(v.dtype == jnp.float32 for v in p.values())
    q = jnp.array([0.25, 0.0, 0.0], jnp.float32)
    k = kinematics(system, q, 0.0, p)
    assert k.phi_q.dtype == jnp.float32 and k.gap.dtype == jnp.float32
    assert system.mass(q, p).dtype == jnp.float32 and system.forces(q, q, 0.0, p).dtype == jnp.float32
    np.testing.assert_allclose(k.gap, [0.3], rtol=1e-6)


def test_literal_names_need_not_be_identifiers():
    """Element names with dashes still give working literal parameters (not parsed as expressions)."""
    mech = Mechanism("dashes")
    b = mech.body("bar-1", mass=0.5, inertia=0.1)
    mech.torque(b, 2.0, name="motor-torque")
    system, p = mech.build()
    assert set(p) == {"bar-1_mass", "bar-1_inertia", "motor-torque_value"}
    assert float(system.mass(jnp.zeros(3), p)[0, 0]) == 0.5
    assert float(system.potential(jnp.ones(3), 0.0, p)) == -2.0  # constant torque: V = −T θ

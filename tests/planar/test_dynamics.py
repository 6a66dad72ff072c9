"""Builder + Moreau–Jean end to end, against analytic mechanics: a disk rolling (and sliding)
down an incline, two disks colliding, a spring oscillator, a pin rattling in a hole."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.planar import Mechanism
from jaxcontact.simulate import simulate

G = 9.81


def incline_disk():
    mech = Mechanism("disk on incline")
    disk = mech.body("disk", mass="m", inertia="m*r**2/2")
    mech.gravity("g")
    slope = mech.line(point=(0.0, 0.0), normal=("-sin(alpha)", "cos(alpha)"))
    mech.circle_contact("slope", disk, (0.0, 0.0), "r", slope, restitution=0.0, friction="mu")
    return mech.build({"m": 2.0, "r": 0.1, "g": G, "alpha": 0.3, "mu": 0.5})


SYS_DISK, P_DISK = incline_disk()


@pytest.mark.parametrize("mu", [0.5, 0.05])
def test_disk_on_incline_rolls_or_slides(mu):
    """Rolling (μ ≥ tan α / 3): a = (2/3) g sin α, ω r = −v. Sliding: a = g (sin α − μ cos α),
    angular acceleration 2 μ g cos α / r (clockwise for a disk going down to the left)."""
    a_ = 0.3
    p = {**P_DISK, "mu": jnp.asarray(mu)}
    n = np.array([-math.sin(a_), math.cos(a_)])
    q0 = jnp.array([*(0.1 * n), 0.0])
    T, dt = 0.5, 1e-3
    tr = simulate(SYS_DISK, p, q0, jnp.zeros(3), dt=dt, n_steps=int(T / dt))
    down = -np.array([math.cos(a_), math.sin(a_)])  # unit vector down the slope
    s = (np.asarray(tr.q[-1, :2]) - np.asarray(q0[:2])) @ down
    v = np.asarray(tr.u[-1, :2]) @ down
    w = float(tr.u[-1, 2])
    rolling = mu >= math.tan(a_) / 3
    acc = (2 / 3) * G * math.sin(a_) if rolling else G * (math.sin(a_) - mu * math.cos(a_))
    assert s == pytest.approx(0.5 * acc * T**2, rel=5e-3)
    assert v == pytest.approx(acc * T, rel=1e-3)
    if rolling:
        # down the slope is to the left: rolling turns the disk counter-clockwise, v = ω r
        assert w * 0.1 == pytest.approx(v, rel=1e-6)
        assert np.max(np.abs(np.asarray(tr.impulse_tangent[1:]))) < mu * np.max(np.asarray(tr.impulse_normal[1:]))
    else:
        assert w == pytest.approx(2 * mu * G * math.cos(a_) / 0.1 * T, rel=1e-3)
    gaps = np.asarray(jax.jit(jax.vmap(lambda qq: SYS_DISK.gaps(qq, 0.0, p)[0]))(tr.q))
    assert np.all(np.abs(gaps) < 1e-6)  # stays on the slope


def test_two_disks_collide_with_restitution():
    """Equal disks, head-on: momentum conserved, relative velocity reversed times ε."""
    mech = Mechanism("billiards")
    a = mech.body("a", mass="m", inertia="m*r**2/2")
    b = mech.body("b", mass="m", inertia="m*r**2/2")
    mech.circle_circle_contact("ab", a, (0.0, 0.0), "r", b, (0.0, 0.0), "r", restitution="e")
    system, p = mech.build({"m": 0.5, "r": 0.05, "e": 0.6})
    q0 = jnp.array([0.0, 0.0, 0.0, 0.3, 0.0, 0.0])
    u0 = jnp.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    tr = simulate(system, p, q0, u0, dt=1e-3, n_steps=400)
    ua, ub = float(tr.u[-1, 0]), float(tr.u[-1, 3])
    assert ua + ub == pytest.approx(1.0, abs=1e-12)
    assert ub - ua == pytest.approx(0.6, abs=1e-12)
    assert int(np.sum(np.asarray(tr.impulse_normal) > 0)) == 1  # one impact


def test_spring_oscillator_period():
    """A body on a spring to the ground (and a damper set to zero): ω = √(k/m)."""
    mech = Mechanism("oscillator")
    box = mech.body("box", mass="m", inertia=1.0)
    mech.spring_damper(None, ("-L0", 0.0), box, (0.0, 0.0), stiffness="k", damping="c", rest_length="L0")
    system, p = mech.build({"m": 2.0, "k": 50.0, "c": 0.0, "L0": 1.0})
    dt, n = 1e-3, 2000
    tr = simulate(system, p, jnp.array([0.1, 0.0, 0.0]), jnp.zeros(3), dt=dt, n_steps=n)
    t = np.asarray(tr.t)
    np.testing.assert_allclose(np.asarray(tr.q[:, 0]), 0.1 * np.cos(5.0 * t), atol=2e-4)
    e = np.asarray(tr.diagnostics.energy)
    assert np.max(np.abs(e - e[0])) < 1e-4 * e[0]


def test_pin_rattling_in_a_hole_stays_inside():
    """A free pin thrown inside a fixed hole (clearance joint, ε = 0.7): it stays within
    penetration O(dt · speed), and the normal impulses only push it back to the centre."""
    mech = Mechanism("rattle")
    pin = mech.body("pin", mass=0.1, inertia=1e-5)
    mech.clearance_revolute(
        "journal", pin, (0.0, 0.0), None, (0.0, 0.0), pin_radius=0.01, clearance="c", restitution=0.7, friction=0.2
    )
    system, p = mech.build({"c": 1e-3})
    dt = 1e-4
    tr = simulate(system, p, jnp.zeros(3), jnp.array([0.3, 0.2, 0.0]), dt=dt, n_steps=500)
    gap = np.asarray(jax.jit(jax.vmap(lambda q: system.gaps(q, 0.0, p)[0]))(tr.q))
    speed = np.max(np.hypot(np.asarray(tr.u[:, 0]), np.asarray(tr.u[:, 1])))
    assert np.min(gap) > -dt * speed
    assert int(np.sum(np.asarray(tr.impulse_normal) > 0)) >= 3  # it bounces around the hole
    ecc = np.hypot(np.asarray(tr.q[:, 0]), np.asarray(tr.q[:, 1]))
    assert np.max(ecc) < 1e-3 + dt * speed

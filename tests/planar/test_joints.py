"""Bilateral constraints: the four-bar loop, a prismatic slider, a rheonomic driver."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import four_bar
from jaxcontact.planar import Mechanism
from jaxcontact.system import kinematics

SYS = four_bar.SYSTEM
P = four_bar.model().params
kin = jax.jit(lambda q, t, p: kinematics(SYS, q, t, p))


def parallelogram(th1, p=P):
    """Analytic configuration of the parallelogram four-bar with bar 1 at angle th1."""
    l1, l2, l3, d = (float(p[k]) for k in ("l1", "l2", "l3", "ground_length"))
    c, s = math.cos(th1), math.sin(th1)
    return np.array(
        [l1 / 2 * c, l1 / 2 * s, th1, l1 * c + l2 / 2, l1 * s, 0.0, d + l3 / 2 * c, l3 / 2 * s, th1 - math.pi / 2]
    )


def test_four_bar_paper_q0_closes_the_loop_to_its_rounding():
    q_paper = jnp.array([0.0, 0.1, 1.57, 0.2, 0.2, 0.0, 0.4, 0.1, 0.0])
    phi = np.asarray(kin(q_paper, 0.0, P).phi)
    # 1.57 instead of π/2 moves bar 1's ends by (l1/2)(π/2 − 1.57) ≈ 8e-5 m.
    assert 1e-6 < np.max(np.abs(phi)) < 0.1 * (math.pi / 2 - 1.57) * 1.01
    q0, u0 = four_bar.initial_state(P)
    np.testing.assert_allclose(q0, q_paper, atol=1e-3)
    np.testing.assert_allclose(q0, parallelogram(math.pi / 2), atol=1e-15)
    assert np.max(np.abs(np.asarray(kin(q0, 0.0, P).phi))) < 1e-15


@pytest.mark.parametrize("th1", [math.pi / 2, 1.9, 1.2, 2.6])
def test_four_bar_one_degree_of_freedom(th1):
    q = jnp.asarray(parallelogram(th1))
    k = kin(q, 0.0, P)
    assert np.max(np.abs(np.asarray(k.phi))) < 1e-15
    sv = np.linalg.svd(np.asarray(k.phi_q), compute_uv=False)
    assert sv.shape == (8,) and sv[-1] > 1e-3  # full row rank 8: 9 coordinates − 8 = 1 DOF
    np.testing.assert_array_equal(np.asarray(k.phi_t), 0.0)
    # Velocity of the one-DOF motion, by differentiating the analytic parallelogram in θ1 (ω = 2.5 rad/s).
    u = 2.5 * (parallelogram(th1 + 1e-6) - parallelogram(th1 - 1e-6)) / 2e-6
    assert np.max(np.abs(np.asarray(k.phi_q) @ u)) < 1e-8


def test_four_bar_closure_from_varied_lengths():
    """initial_state closes the loop for lengths away from the parallelogram (circle intersection)."""
    p = four_bar.model(l1=0.23, l2=0.37, l3=0.18, ground_length=0.42, initial_angle=1.8).params
    q0, _ = four_bar.initial_state(p)
    k = kin(q0, 0.0, p)
    assert np.max(np.abs(np.asarray(k.phi))) < 1e-15
    # Velocity along the closure branch: derivative of q0 with respect to bar 1's angle.
    dq = jax.jit(jax.jacfwd(lambda a: four_bar.initial_state({**p, "initial_angle": a})[0]))(p["initial_angle"])
    assert np.max(np.abs(np.asarray(k.phi_q @ dq))) < 1e-13
    assert abs(float(dq[2]) - 1.0) < 1e-15


def slider_system():
    mech = Mechanism("slider")
    s = mech.body("slider", mass="m", inertia="J")
    mech.prismatic(None, (0.0, "h"), s, (0.0, 0.0), axis_angle="alpha")
    mech.driver(s, "x", "v*t + x0", name="push")
    return mech.build({"m": 1.0, "J": 0.1, "h": 0.5, "alpha": 0.3, "v": 2.0, "x0": 0.1})


def test_prismatic_and_driver():
    system, p = slider_system()
    f = jax.jit(lambda q, t: kinematics(system, q, t, p))
    a, h = 0.3, 0.5
    # On the axis through (0, h) at angle α, at x = v t + x0, unrotated: Φ = 0.
    t = 0.7
    x = 2.0 * t + 0.1
    q = jnp.array([x, h + x * math.tan(a), 0.0])
    k = f(q, t)
    np.testing.assert_allclose(k.phi, 0.0, atol=1e-15)
    np.testing.assert_allclose(k.phi_t, [0.0, 0.0, -2.0], atol=1e-15)
    assert np.linalg.matrix_rank(np.asarray(k.phi_q)) == 3
    # Moving off the axis by δ along its normal gives the offset row = δ; a rotation gives the angle row.
    n = np.array([-math.sin(a), math.cos(a)])
    k2 = f(q + jnp.array([*(0.01 * n), 0.02]), t)
    np.testing.assert_allclose(k2.phi[:2], [0.02, 0.01], atol=1e-15)


def slider_crank(clearance: bool):
    """Crank (ground pivot) – rod – slider on the x-axis; the crank–rod joint ideal or with clearance."""
    mech = Mechanism("slider-crank")
    crank = mech.body("crank", mass="m1", inertia="m1*r**2/12")
    rod = mech.body("rod", mass="m2", inertia="m2*l**2/12")
    slider = mech.body("slider", mass="m3", inertia="J3")
    mech.revolute(crank, ("-r/2", 0.0), None, (0.0, 0.0), name="O")
    if clearance:
        mech.clearance_revolute(
            "A", crank, ("r/2", 0.0), rod, ("-l/2", 0.0), pin_radius="rp", clearance="c", restitution="e", friction="mu"
        )
    else:
        mech.revolute(crank, ("r/2", 0.0), rod, ("-l/2", 0.0), name="A")
    mech.revolute(rod, ("l/2", 0.0), slider, (0.0, 0.0), name="B")
    mech.prismatic(None, (0.0, 0.0), slider, (0.0, 0.0), name="slide")
    system, p = mech.build(
        {"m1": 1.0, "m2": 2.0, "m3": 1.0, "J3": 0.01, "r": 0.1, "l": 0.3, "rp": 0.01, "c": 5e-4, "e": 0.5, "mu": 0.1}
    )
    return mech, system, p


def crank_state(phi, r=0.1, l=0.3):
    """Analytic slider–crank configuration for crank angle φ (slider on the positive x-axis)."""
    ax, ay = r * math.cos(phi), r * math.sin(phi)
    beta = -math.asin(ay / l)  # rod angle
    bx = ax + l * math.cos(beta)
    return np.array([ax / 2, ay / 2, phi, (ax + bx) / 2, ay / 2, beta, bx, 0.0, 0.0])


def test_slider_crank_ideal_and_with_clearance():
    mech, system, p = slider_crank(clearance=False)
    q = crank_state(0.7)
    k = jax.jit(lambda qq: kinematics(system, qq, 0.0, p))(jnp.asarray(q))
    assert k.phi.shape == (8,) and np.max(np.abs(np.asarray(k.phi))) < 1e-15
    u = 4.0 * (crank_state(0.7 + 1e-6) - crank_state(0.7 - 1e-6)) / 2e-6
    mech.check_state(system, q, p, u=u, tol=1e-8)  # assembled, full rank, consistent velocity
    mech_c, system_c, p_c = slider_crank(clearance=True)
    kin_c = jax.jit(lambda qq: kinematics(system_c, qq, 0.0, p_c))
    k = kin_c(jnp.asarray(q))
    assert k.phi.shape == (6,) and np.linalg.matrix_rank(np.asarray(k.phi_q)) == 6  # 3 DOF: the pin is free
    assert float(k.gap[0]) == 5e-4 and np.all(np.isfinite(np.asarray(k.W_N)))  # centred pin
    q_off = q.copy()
    q_off[3] += 3e-4  # rod shifted by 0.3 mm: the hole moves off the pin
    mech_c.check_state(system_c, q_off, p_c, tol=1e-3)
    assert float(kin_c(jnp.asarray(q_off)).gap[0]) == pytest.approx(2e-4, abs=1e-12)


def test_check_state_names_the_broken_rule():
    mech, system, p = slider_crank(clearance=False)
    q = crank_state(0.7)
    bad = q.copy()
    bad[6] += 0.01
    with pytest.raises(ValueError, match=r"constraint row 'B.x': Φ = -1.000e-02"):
        mech.check_state(system, bad, p)
    with pytest.raises(ValueError, match=r"constraint row '.*': Φ_q u \+ Φ_t = "):
        mech.check_state(system, q, p, u=np.ones(9))
    mech.driver("crank", "theta", "w*t + 0.7", name="motor")
    mech.driver("slider", "y", 0.0, name="redundant")  # already fixed by the prismatic joint
    system2, p2 = mech.build({"m1": 1.0, "m2": 2.0, "m3": 1.0, "J3": 0.01, "r": 0.1, "l": 0.3, "w": 2.0})
    with pytest.raises(ValueError, match=r"rank 9 < 10 rows"):
        mech.check_state(system2, q, p2)
    np.testing.assert_allclose(jax.jit(lambda qq: kinematics(system2, qq, 0.5, p2))(jnp.asarray(q)).phi_t[8], -2.0)


def test_relative_angle_driver():
    mech = Mechanism("motor")
    a = mech.body("a", mass=1.0, inertia=1.0)
    b = mech.body("b", mass=1.0, inertia=1.0)
    mech.driver(b, "theta", lambda t, p: p["omega"] * t, relative_to=a)
    system, p = mech.build({"omega": 3.0})
    k = kinematics(system, jnp.array([0.0, 0.0, 0.2, 1.0, 0.0, 0.2 + 3.0 * 0.4]), 0.4, p)
    np.testing.assert_allclose(k.phi, [0.0], atol=1e-15)
    np.testing.assert_allclose(k.phi_q, [[0, 0, -1, 0, 0, 1]])
    np.testing.assert_allclose(k.phi_t, [-3.0])

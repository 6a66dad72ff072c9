"""Bilateral constraints: the four-bar loop (E1), a prismatic slider, a rheonomic driver."""

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
    return np.array([l1 / 2 * c, l1 / 2 * s, th1, l1 * c + l2 / 2, l1 * s, 0.0,
                     d + l3 / 2 * c, l3 / 2 * s, th1 - math.pi / 2])


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
    dq = jax.jacfwd(lambda a: four_bar.initial_state({**p, "initial_angle": a})[0])(p["initial_angle"])
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

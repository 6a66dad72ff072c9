"""Contact geometry: gaps at known configurations, γ_N against finite differences of the gap,
γ_T against hand-derived slip velocities, finite gradients at degenerate points."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.planar import Mechanism
from jaxcontact.system import kinematics


def build():
    """Two bodies exercising every geometry, lines on the ground and on a moving body."""
    mech = Mechanism("zoo")
    a = mech.body("a", mass="ma", inertia="Ja")
    b = mech.body("b", mass="mb", inertia="Jb")
    ground = mech.line(point=(0.0, "floor"), normal=(0.0, 1.0))
    wall = mech.line(point=("wall", 0.0), normal=(-1.0, 0.0))  # a wall on the right, free side to the left
    on_b = mech.line(point=(0.0, "hb"), normal=(0.0, 1.0), body=b)  # b's top face, fixed in b
    mech.point_contact("corner_floor", a, ("wa", "-ha"), ground, restitution="e", friction="mu")
    mech.circle_contact("disk_wall", a, (0.0, 0.0), "r", wall, restitution="e", friction="mu")
    mech.point_contact("corner_on_b", a, ("-wa", "-ha"), on_b, restitution="e", friction="mu")
    mech.circle_circle_contact("disks", a, (0.0, 0.0), "r", b, ("cb", 0.0), "rb", restitution="e", friction="mu")
    mech.clearance_revolute(
        "journal", a, ("pa", 0.0), b, (0.0, 0.0), pin_radius="rp", clearance="c", restitution="e", friction="mu"
    )
    params = {
        "ma": 1.0,
        "Ja": 0.1,
        "mb": 2.0,
        "Jb": 0.3,
        "floor": -0.5,
        "wall": 1.0,
        "hb": 0.2,
        "wa": 0.15,
        "ha": 0.1,
        "r": 0.12,
        "cb": 0.05,
        "rb": 0.2,
        "pa": 0.3,
        "rp": 0.02,
        "c": 0.001,
        "e": 0.5,
        "mu": 0.3,
    }
    return mech, *mech.build(params)


MECH, SYS, P = build()
NAMES = MECH.contact_names
gaps = jax.jit(lambda q, p: SYS.gaps(q, 0.0, p))
slip = jax.jit(lambda q, u, p: SYS.slip_velocity(q, u, 0.0, p))
kin = jax.jit(lambda q, p: kinematics(SYS, q, 0.0, p))


def rot(th, v):
    c, s = math.cos(th), math.sin(th)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def cross_w(w, r):
    """ω ẑ × r in the plane."""
    return w * np.array([-r[1], r[0]])


def test_gaps_at_a_known_configuration():
    qa = np.array([0.3, -0.2, 0.4])
    qb = np.array([0.05, -0.6, -0.3])
    q = jnp.asarray(np.concatenate([qa, qb]))
    g = np.asarray(gaps(q, P))
    ra, rb_ = qa[:2], qb[:2]
    corner = ra + rot(qa[2], [0.15, -0.1])
    exp = {
        "corner_floor": corner[1] + 0.5,
        "disk_wall": 1.0 - qa[0] - 0.12,
        "corner_on_b": np.dot(rot(qb[2], [0, 1]), ra + rot(qa[2], [-0.15, -0.1]) - (rb_ + rot(qb[2], [0, 0.2]))),
        "disks": np.linalg.norm(ra - (rb_ + rot(qb[2], [0.05, 0]))) - 0.12 - 0.2,
        "journal": 0.001 - np.linalg.norm(ra + rot(qa[2], [0.3, 0]) - rb_),
    }
    for i, name in enumerate(NAMES):
        assert g[i] == pytest.approx(exp[name], abs=1e-15), name


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_normal_velocity_is_the_time_derivative_of_the_gap(seed):
    """γ_N = W_Nᵀ u + g_t equals d/dt g_N(q(t)) along q(t) = q + u t (central differences)."""
    rng = np.random.default_rng(seed)
    q = jnp.asarray(rng.normal(size=6) * 0.3)
    u = jnp.asarray(rng.normal(size=6))
    k = kin(q, P)
    gamma = np.asarray(k.W_N.T @ u + k.gap_t)
    eps = 1e-6
    fd = (np.asarray(gaps(q + eps * u, P)) - np.asarray(gaps(q - eps * u, P))) / (2 * eps)
    np.testing.assert_allclose(gamma, fd, atol=1e-8)


def test_disk_slip_velocity_is_xdot_plus_r_thetadot():
    """A disk of radius r on the ground: γ_T = ẋ + r θ̇ (zero when rolling: ẋ = −r θ̇)."""
    mech = Mechanism("disk")
    d = mech.body("disk", mass=1.0, inertia=0.5)
    mech.circle_contact(
        "floor", d, (0.0, 0.0), "radius", mech.line((0.0, 0.0), (0.0, 1.0)), restitution=0.0, friction=0.5
    )
    system, p = mech.build({"radius": 0.3})
    q = jnp.array([1.2, 0.3, 0.7])
    for xd, yd, wd in [(1.0, 0.0, 0.0), (0.0, 0.0, 2.0), (0.6, -0.2, -2.0), (0.3, 0.1, 0.5)]:
        g = float(system.slip_velocity(q, jnp.array([xd, yd, wd]), 0.0, p)[0])
        assert g == pytest.approx(xd + 0.3 * wd, abs=1e-15)
    assert float(system.gaps(q, 0.0, p)[0]) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1])
def test_slip_velocities_match_hand_derivation(seed):
    """γ_T = t · (v_A(P_A) − v_B(P_B)), t = (n_y, −n_x), contact points written out by hand."""
    rng = np.random.default_rng(seed)
    qa, qb = rng.normal(size=3) * 0.3, rng.normal(size=3) * 0.3
    ua, ub = rng.normal(size=3), rng.normal(size=3)
    q, u = jnp.asarray(np.concatenate([qa, qb])), jnp.asarray(np.concatenate([ua, ub]))
    g = np.asarray(slip(q, u, P))

    def vel(qq, uu, point):
        return uu[:2] + cross_w(uu[2], point - qq[:2])

    def tangent(n):
        return np.array([n[1], -n[0]])

    exp = {}
    corner = qa[:2] + rot(qa[2], [0.15, -0.1])
    exp["corner_floor"] = tangent([0, 1]) @ vel(qa, ua, corner)
    pc = qa[:2] + 0.12 * np.array([1.0, 0.0])  # disk's point touching the right wall, n = (−1, 0)
    exp["disk_wall"] = tangent([-1, 0]) @ vel(qa, ua, pc)
    nb = rot(qb[2], [0, 1])
    c2 = qa[:2] + rot(qa[2], [-0.15, -0.1])
    exp["corner_on_b"] = tangent(nb) @ (vel(qa, ua, c2) - vel(qb, ub, c2))
    cb = qb[:2] + rot(qb[2], [0.05, 0])
    n = (qa[:2] - cb) / np.linalg.norm(qa[:2] - cb)
    exp["disks"] = tangent(n) @ (vel(qa, ua, qa[:2] - 0.12 * n) - vel(qb, ub, cb + 0.2 * n))
    pin = qa[:2] + rot(qa[2], [0.3, 0])
    e = (pin - qb[:2]) / np.linalg.norm(pin - qb[:2])
    exp["journal"] = tangent(-e) @ (vel(qa, ua, pin + 0.02 * e) - vel(qb, ub, qb[:2] + 0.021 * e))
    for i, name in enumerate(NAMES):
        assert g[i] == pytest.approx(exp[name], abs=1e-13), name


def test_gears_rolling_without_slip_and_journal_spin():
    """Counter-rotating disks with ω_a r_a = −ω_b r_b have zero slip; a pin spinning at ω in
    contact with a fixed hole slips at ω r_p."""
    mech = Mechanism("gears")
    a = mech.body("a", mass=1.0, inertia=1.0)
    b = mech.body("b", mass=1.0, inertia=1.0)
    mech.circle_circle_contact("mesh", a, (0.0, 0.0), "ra", b, (0.0, 0.0), "rb", restitution=0.0, friction=1.0)
    mech.clearance_revolute(
        "pin", a, (0.0, 0.0), None, ("cx", 0.0), pin_radius="rp", clearance="c", restitution=0.0, friction=1.0
    )
    system, p = mech.build({"ra": 0.1, "rb": 0.3, "rp": 0.01, "c": 0.002, "cx": -0.002})
    q = jnp.array([0.0, 0.0, 0.3, 0.4, 0.0, -1.0])
    u = jnp.array([0.0, 0.0, 3.0, 0.0, 0.0, -1.0])  # 3 · 0.1 = −(−1) · 0.3
    gap, sl = system.gaps(q, 0.0, p), system.slip_velocity(q, u, 0.0, p)
    assert float(gap[0]) == pytest.approx(0.0, abs=1e-15) and float(sl[0]) == pytest.approx(0.0, abs=1e-15)
    # pin centre at x = 0, hole centre at −0.002: eccentricity 0.002 = c → touching at +x
    assert float(gap[1]) == pytest.approx(0.0, abs=1e-15)
    assert float(sl[1]) == pytest.approx(3.0 * 0.01, abs=1e-15)


def test_clearance_joint_centred_has_finite_gradients():
    """Zero eccentricity: gap = c, and every derivative is finite (double-where safe norm)."""
    mech = Mechanism("centred")
    crank = mech.body("crank", mass=1.0, inertia=0.1)
    rod = mech.body("rod", mass=1.0, inertia=0.1)
    mech.clearance_revolute(
        "joint", crank, ("l", 0.0), rod, ("-lr", 0.0), pin_radius="rp", clearance="c", restitution="e", friction="mu"
    )
    system, p = mech.build({"l": 0.25, "lr": 0.25, "rp": 0.01, "c": 5e-4, "e": 0.9, "mu": 0.1})
    q = jnp.array([0.0, 0.0, 0.0, 0.5, 0.0, 0.0])  # crank end (0.25, 0) = rod end (0.5 − 0.25, 0) exactly
    u = jnp.array([0.1, -0.2, 1.0, 0.3, 0.1, -0.5])
    assert float(system.gaps(q, 0.0, p)[0]) == 5e-4
    k = jax.jit(lambda qq, pp: kinematics(system, qq, 0.0, pp))(q, p)
    for leaf in jax.tree.leaves(k):
        assert np.all(np.isfinite(np.asarray(leaf)))
    np.testing.assert_array_equal(np.asarray(k.W_N), 0.0)  # the gap's cone tip: gradient 0, not NaN
    grads = jax.jit(jax.grad(lambda pp: system.gaps(q, 0.0, pp)[0] + system.slip_velocity(q, u, 0.0, pp)[0]))(p)
    for name, g in grads.items():
        assert np.isfinite(float(g)), name
    assert float(jax.jit(jax.grad(lambda pp: system.gaps(q, 0.0, pp)[0]))(p)["c"]) == 1.0
    hq = jax.jit(jax.hessian(lambda qq: system.gaps(qq, 0.0, p)[0]))(q)
    assert np.all(np.isfinite(np.asarray(hq)))
    gq = jax.jit(jax.grad(lambda qq: jnp.sum(system.slip_velocity(qq, u, 0.0, p) ** 2)))(q)
    assert np.all(np.isfinite(np.asarray(gq)))


def test_coincident_circle_centres_are_finite():
    mech = Mechanism("coincident")
    a = mech.body("a", mass=1.0, inertia=0.1)
    mech.circle_circle_contact("c", a, (0.0, 0.0), 0.1, None, (0.0, 0.0), 0.2, restitution=0.5)
    system, p = mech.build()
    q = jnp.zeros(3)
    assert float(system.gaps(q, 0.0, p)[0]) == pytest.approx(-0.3)
    assert np.all(np.isfinite(np.asarray(jax.jit(jax.jacfwd(lambda qq: system.gaps(qq, 0.0, p)))(q))))

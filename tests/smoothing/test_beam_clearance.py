"""Clearance joints at ANCF beam nodes: the rigid ClearanceJoint's gap, normal velocity and slip on a straight
beam moving rigidly, finite gradients at zero eccentricity, the reversed joint, beam to beam, user errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import flexible_slider_crank as fsc
from jaxcontact.models import slider_crank as sc
from jaxcontact.planar import Mechanism
from jaxcontact.smoothing.beam import Beam, Clearance, flexible_system, straight_beam
from jaxcontact.system import compliant_contact_forces

N_EL = 3


def _rigid_state():
    """A slider–crank state (rigid model's q, u: crank, rod, slider) with the journal off-centre and every
    body moving, and the same state for the flexible model (rod straight, its nodes moving rigidly)."""
    p = sc.build("rigid")[2]
    l1, l2 = float(p["l1"]), float(p["l2"])
    th1, th2 = 0.7, -0.3
    tip = np.array([l1 * np.cos(th1), l1 * np.sin(th1)])
    e = np.array([2e-4, -1e-4])  # journal eccentricity, inside the 0.5 mm clearance
    c2, s2 = np.cos(th2), np.sin(th2)
    rod_c = tip + e + l2 / 2 * np.array([c2, s2])
    slider = rod_c + l2 / 2 * np.array([c2, s2])
    q = np.array([l1 / 2 * np.cos(th1), l1 / 2 * np.sin(th1), th1, *rod_c, th2, slider[0], 0.0, 0.0])
    u = np.array([0.3, -1.2, 200.0, 2.1, 0.4, -31.0, 1.7, 0.0, 0.0])
    # Flexible: crank, slider, then the rod's nodes moving with the rigid rod's velocity field.
    vc, w2 = u[3:5], u[5]
    nodes_q, nodes_u = [], []
    for s in np.linspace(0.0, 1.0, N_EL + 1):
        r = tip + e + s * l2 * np.array([c2, s2])
        v = vc + w2 * np.array([-(r - rod_c)[1], (r - rod_c)[0]])
        nodes_q += [*r, c2, s2]
        nodes_u += [*v, -w2 * s2, w2 * c2]
    qf = np.concatenate([q[0:3], q[6:9], nodes_q])
    uf = np.concatenate([u[0:3], u[6:9], nodes_u])
    return q, u, qf, uf, e


@pytest.mark.parametrize("contact", ["rigid", "compliant"])
def test_node_clearance_matches_the_rigid_clearance_joint(contact):
    # The rod moving rigidly: the beam node's journal has the rigid journal's gap, normal velocity and slip
    # (the node's material rotation, the slope's angle, turns at the rigid rod's ω).
    q, u, qf, uf, e = _rigid_state()
    _, rigid, p = sc.build(contact)
    m = fsc.model(contact, N_EL)
    flex, pf = m.system, m.params
    gaps = "gaps" if contact == "rigid" else "compliant_gaps"
    slips = "slip_velocity" if contact == "rigid" else "compliant_slip_velocity"
    t = jnp.asarray(0.0)
    g, gn = jax.jvp(lambda q: getattr(rigid, gaps)(q, t, p), (jnp.asarray(q),), (jnp.asarray(u),))
    gf, gnf = jax.jvp(lambda q: getattr(flex, gaps)(q, t, pf), (jnp.asarray(qf),), (jnp.asarray(uf),))
    np.testing.assert_allclose(gf, float(p["clearance"]) - np.linalg.norm(e), rtol=1e-12)
    np.testing.assert_allclose(gf, g, rtol=1e-12)
    np.testing.assert_allclose(gnf, gn, rtol=1e-9)
    assert abs(float(gn[0])) > 1.0  # the state does move the journal relative to the hole
    slip = getattr(rigid, slips)(jnp.asarray(q), jnp.asarray(u), t, p)
    slip_f = getattr(flex, slips)(jnp.asarray(qf), jnp.asarray(uf), t, pf)
    assert abs(float(slip[0])) > 0.1
    np.testing.assert_allclose(slip_f, slip, rtol=1e-9)


def test_gap_gradient_is_finite_at_zero_eccentricity():
    for contact in ("rigid", "compliant"):
        m = fsc.model(contact, N_EL)
        q0, u0 = m.initial_state(m.params)
        fn = m.system.gaps if contact == "rigid" else m.system.compliant_gaps
        g = fn(q0, 0.0, m.params)
        G = jax.jacfwd(fn)(q0, 0.0, m.params)
        np.testing.assert_allclose(g, m.params["clearance"], rtol=1e-15)  # journal centred
        assert np.all(np.isfinite(G)) and np.all(G == 0.0)
        if contact == "compliant":  # the penalty scheme's contact force and its gradient through q
            Q, F_N, _ = compliant_contact_forces(m.system, q0, u0, 0.0, m.params)
            assert np.all(np.isfinite(Q)) and float(F_N[0]) == 0.0
            dQ = jax.jacfwd(lambda q: compliant_contact_forces(m.system, q, u0, 0.0, m.params)[0])(q0)
            assert np.all(np.isfinite(dQ))


def _held_crank():
    mech = Mechanism("holder")
    crank = mech.body("crank", 0.3, 1e-4)
    for c, v in (("x", 0.0), ("y", 0.0), ("theta", 0.0)):
        mech.driver(crank, c, v)
    return mech.build()[0], crank


def test_reversed_joint_hole_at_the_node():
    # Pin on the rigid body, hole at the beam node: the same gap; for a translation the same slip.
    rigid, crank = _held_crank()
    beam = Beam("b", 1)
    laws = dict(pin_radius=0.01, clearance=5e-4, restitution=0.9, friction=0.1)
    one = flexible_system([beam], rigid=rigid, clearances=[Clearance("j", beam, 0, crank, point=(0.02, 0.0), **laws)])
    rev = flexible_system(
        [beam], rigid=rigid, clearances=[Clearance("j", beam, 0, crank, point=(0.02, 0.0), pin_on_beam=False, **laws)]
    )
    q = jnp.asarray(np.concatenate([[0.0, 0.0, 0.0], straight_beam(beam, 0.1, start=(0.0203, 0.0002), angle=0.4)]))
    u = jnp.zeros(q.shape).at[3:5].set(jnp.array([0.7, -0.2]))  # the node translates; nothing turns
    p = {"g": jnp.asarray(9.81), "h": jnp.asarray(0.0)}
    np.testing.assert_allclose(rev.gaps(q, 0.0, p), one.gaps(q, 0.0, p), rtol=1e-14)
    np.testing.assert_allclose(one.gaps(q, 0.0, p), 5e-4 - np.hypot(3e-4, 2e-4), rtol=1e-12)
    s = one.slip_velocity(q, u, 0.0, p)
    assert abs(float(s[0])) > 0.1
    np.testing.assert_allclose(rev.slip_velocity(q, u, 0.0, p), s, rtol=1e-12)
    # A turning node: its section turns with the slope, so the pin's contact point moves at ω r_p along t.
    w = 3.0
    c, sn = np.cos(0.4), np.sin(0.4)
    u_turn = jnp.zeros(q.shape).at[5:7].set(jnp.array([-w * sn, w * c]))  # r' turns at ω, the node stays
    np.testing.assert_allclose(one.slip_velocity(q, u_turn, 0.0, p), w * 0.01, rtol=1e-12)


def test_beam_to_beam_clearance():
    a, b = Beam("a", 1), Beam("b", 1)
    system = flexible_system(
        [a, b],
        clearances=[Clearance("ab", a, -1, b, 0, pin_radius="r", clearance="c", compliant=dict(stiffness="K"))],
    )
    qa = straight_beam(a, 1.0)
    qb = straight_beam(b, 1.0, start=(1.0 + 1e-4, 0.0), angle=0.5)
    q = jnp.asarray(np.concatenate([qa, qb]))
    p = {
        "g": jnp.asarray(9.81),
        "h": jnp.asarray(0.0),
        "r": jnp.asarray(0.01),
        "c": jnp.asarray(3e-4),
        "K": jnp.asarray(1e9),
    }
    np.testing.assert_allclose(system.compliant_gaps(q, 0.0, p), 2e-4, rtol=1e-10)
    G = jax.jacfwd(system.compliant_gaps)(q, 0.0, p)
    np.testing.assert_allclose(G[0, [4, 5, 8, 9]], [1.0, 0.0, -1.0, 0.0], atol=1e-12)  # ∂(c − |x_a − x_b|)
    assert system.compliant_laws(p).exponent[0] == 1.5  # the compliant defaults of Mechanism


def test_user_errors_name_the_rule():
    rigid, crank = _held_crank()
    beam = Beam("b", 1)
    with pytest.raises(ValueError, match="either restitution .* or compliant.*neither"):
        Clearance("j", beam, 0, crank)
    with pytest.raises(ValueError, match="not both"):
        Clearance("j", beam, 0, crank, restitution=0.9, compliant=dict(stiffness=1e9))
    with pytest.raises(ValueError, match="compliant needs 'stiffness'.*got \\['damping'\\]"):
        Clearance("j", beam, 0, crank, compliant=dict(damping=1.0))
    with pytest.raises(ValueError, match="same node 1"):
        Clearance("j", beam, 1, beam, -1, restitution=0.5)
    with pytest.raises(ValueError, match="lubrication must be a dict with viscosity and length.*'oil'"):
        Clearance("j", beam, 0, crank, restitution=0.5, lubrication=dict(viscosity=0.04, oil=1))
    with pytest.raises(ValueError, match="lubrication must be a dict"):
        Clearance("j", beam, 0, crank, restitution=0.5, lubrication=dict(viscosity=0.04))
    with pytest.raises(ValueError, match="film 'full' must be one of"):
        Clearance("j", beam, 0, crank, restitution=0.5, lubrication=dict(viscosity=0.04, length=0.01, film="full"))
    other = Beam("other", 1)
    with pytest.raises(ValueError, match="beam 'other' is not one of the system's beams"):
        flexible_system([beam], rigid=rigid, clearances=[Clearance("j", other, 0, crank, restitution=0.5)])
    j = Clearance("j", beam, 0, crank, restitution=0.5)
    with pytest.raises(ValueError, match="names must be distinct"):
        flexible_system([beam], rigid=rigid, clearances=[j, j])


def test_the_rigid_systems_own_contacts_stay_before_the_clearance_joints():
    # A held crank and a free ball on the floor (the rigid system's contact), a beam hanging in a hole of the crank.
    from jaxcontact.simulate import simulate
    from jaxcontact.stepping import MoreauJean

    mech = Mechanism("with a floor")
    crank = mech.body("crank", 0.3, 1e-4)
    for c, v in (("x", 0.0), ("y", 0.0), ("theta", 0.0)):
        mech.driver(crank, c, v)
    ball = mech.body("ball", 0.1, 1e-5)
    mech.gravity("g")
    floor = mech.line(point=(0.0, -0.5), normal=(0.0, 1.0))
    mech.circle_contact("ball_floor", ball, (0.0, 0.0), 0.02, floor, restitution=0.5, friction=0.3)
    rigid, rp = mech.build({"g": 9.81})
    beam = Beam("b", 1)
    joint = Clearance("j", beam, 0, crank, pin_radius=0.01, clearance=5e-4, restitution=0.9, friction=0.1)
    system = flexible_system([beam], rigid=rigid, clearances=[joint])
    assert system.contact_names == ("ball_floor", "j")
    p = {**rp, "h": jnp.asarray(4e-4), "b_rho": 7800.0, "b_E": 2e9, "b_A": 1e-4, "b_I": 1e-9, "b_L": 0.3}
    p = {k: jnp.asarray(v) for k, v in p.items()}
    qb = straight_beam(beam, 0.3, start=(2e-4, 0.0), angle=-1.2)
    q0 = jnp.asarray(np.concatenate([[0.0, 0.0, 0.0, 0.1, -0.48, 0.0], qb]))
    u0 = jnp.zeros_like(q0).at[3].set(0.5)  # the ball slides on the floor (touching it)
    gaps = system.gaps(q0, 0.0, p)
    np.testing.assert_allclose(gaps[0], rigid.gaps(q0[:6], 0.0, rp)[0], atol=1e-15)
    np.testing.assert_allclose(gaps[1], 5e-4 - 2e-4, rtol=1e-12)
    laws = system.laws(p)
    np.testing.assert_allclose(laws.restitution, [0.5, 0.9])
    np.testing.assert_allclose(laws.friction, [0.3, 0.1])
    np.testing.assert_allclose(system.slip_velocity(q0, u0, 0.0, p)[0], 0.5)  # the ball's slip, as the rigid system's
    tr = simulate(system, p, q0, u0, dt=1e-4, n_steps=300, scheme=MoreauJean(), save_every=30)
    assert np.all(tr.diagnostics.converged)
    g = jax.vmap(lambda q: system.gaps(q, 0.0, p))(tr.q)
    assert float(g[:, 0].min()) > -1e-6 and float(g[:, 1].min()) > -1e-5  # the ball rests, the pin stays in
    assert np.all(np.asarray(tr.impulse_normal)[1:].max(axis=0) > 0)  # the ball presses; the beam hits the wall
    assert 0.0 < float(tr.u[-1, 3]) < 0.5 - 0.3 * 9.81 * 0.02  # friction slows the ball down
    with pytest.raises(ValueError, match="compliant_damping = 'paper' differs from the rigid system's"):
        soft = Mechanism("soft floor")
        blob = soft.body("blob", 0.1, 1e-5)
        soft.circle_contact(
            "blob_floor",
            blob,
            (0.0, 0.0),
            0.02,
            soft.line(point=(0.0, -0.5), normal=(0.0, 1.0)),
            compliant=dict(stiffness=1e5),
        )
        flexible_system([beam], rigid=soft.build()[0], compliant_damping="paper")

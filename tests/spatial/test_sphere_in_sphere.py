"""The spherical clearance joint (ball in socket): geometry, a bounce inside a fixed socket, zero eccentricity."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, SphereInSphere, rotations
from jaxcontact.spatial.contacts import sphere_in_sphere_gap
from jaxcontact.stepping.moreau_jean import MoreauJean

P = {"gravity": 0.0, "mass": 0.5, "ball": 0.04, "socket": 0.05, "restitution": 0.5, "friction": 0.0}


def _ball_in_socket(socket_point=(0.0, 0.0, 0.0)):
    asm = Assembly(gravity="gravity")
    ball = asm.add_body("ball", mass="mass", inertia=("0.4*mass*ball**2",) * 3)
    contact = asm.add_contact(
        SphereInSphere(
            "socket",
            restitution="restitution",
            friction="friction",
            a=None,
            socket_point=socket_point,
            socket_radius="socket",
            b=ball,
            ball_radius="ball",
        )
    )
    return asm, contact


ASM, CONTACT = _ball_in_socket()
SYSTEM = ASM.system()


def compliant_ball_in_socket(**law):
    """(assembly, system) of the ball in a compliant socket: ``law`` names the parameters of its compliant law
    (stiffness, damping, slip_width…); the friction is ``friction``, the radii ``ball`` and ``socket``."""
    asm = Assembly(gravity="gravity")
    ball = asm.add_body("ball", mass="mass", inertia=("0.4*mass*ball**2",) * 3)
    asm.add_contact(
        SphereInSphere(
            "socket", restitution=None, friction="friction", a=None, socket_radius="socket", b=ball, ball_radius="ball"
        ),
        compliant=law,
    )
    return asm, asm.system()


def _q(centre, quat=(1.0, 0.0, 0.0, 0.0)):
    return jnp.concatenate([jnp.asarray(centre, float), jnp.asarray(quat, float)])


def test_gap_point_and_normal_of_an_eccentric_ball():
    """gap = c − |e|, touching point x_b + r_b ê, normal −ê (a ball point off the body centre, a moving socket)."""
    asm = Assembly(gravity="gravity")
    crank = asm.add_body("crank", mass="mass", inertia=(1.0, 1.0, 1.0))
    rod = asm.add_body("rod", mass="mass", inertia=(1.0, 1.0, 1.0))
    c = asm.add_contact(
        SphereInSphere(
            "joint",
            restitution=0.5,
            friction=0.1,
            a=crank,
            socket_point=(0.1, 0.0, 0.0),
            socket_radius="socket",
            b=rod,
            ball_point=(0.0, -0.2, 0.0),
            ball_radius="ball",
        )
    )
    quat = rotations.from_axis_angle([0.0, 0.0, 1.0], np.pi / 2)  # crank's x → world y
    socket = np.array([1.0, 2.0, 3.0]) + np.array([0.0, 0.1, 0.0])
    e = np.array([0.003, -0.004, 0.012])  # |e| = 0.013 > c = 0.01: penetration 0.003
    ball_centre = socket + e
    q = jnp.concatenate([_q([1.0, 2.0, 3.0], quat), _q(ball_centre + np.array([0.0, 0.2, 0.0]))])
    gap, point, normal, a, b = c.frames(q, P)
    unit = e / np.linalg.norm(e)
    np.testing.assert_allclose(gap, [0.01 - 0.013], atol=1e-15)
    np.testing.assert_allclose(point[0], ball_centre + 0.04 * unit, atol=1e-15)
    np.testing.assert_allclose(normal[0], -unit, atol=1e-15)
    assert a is crank and b is rod
    # ġ = n·(v_b − v_a) at the touching point: the gap's rate by autodiff along a velocity of the rod
    u = jnp.zeros(12).at[6:9].set(jnp.asarray([0.3, -0.2, 0.5]))
    rate = jax.jvp(lambda qq: c.gaps(qq, P), (q,), (jnp.concatenate([jnp.zeros(7), u[6:9], jnp.zeros(4)]),))[1]
    np.testing.assert_allclose(rate, [-unit @ np.array([0.3, -0.2, 0.5])], rtol=1e-12)


def test_zero_eccentricity_is_finite_in_value_and_gradient():
    """Centred ball: gap = c, gradient 0 (|e|'s subgradient at its minimum), normal −e_z; no NaN anywhere."""
    q = _q([0.0, 0.0, 0.0])
    gap, point, normal, _, _ = CONTACT.frames(q, P)
    np.testing.assert_allclose(gap, [0.01], atol=1e-16)
    np.testing.assert_allclose(normal[0], [0.0, 0.0, -1.0])
    grad = jax.grad(lambda qq: CONTACT.gaps(qq, P)[0])(q)
    assert np.all(np.isfinite(grad)) and np.allclose(grad, 0.0)
    jac = jax.jacfwd(lambda qq: CONTACT.frames(qq, P)[2])(q)
    assert np.all(np.isfinite(jac))
    jac_p = jax.jacfwd(lambda s: CONTACT.gaps(q, {**P, "socket": s})[0])(0.05)
    np.testing.assert_allclose(jac_p, 1.0)  # ∂gap/∂r_s = 1 even when centred
    assert np.all(np.isfinite(jax.jacrev(lambda qq: CONTACT.slips(qq, jnp.ones(6), P))(q)))


def test_gap_gradient_matches_finite_differences():
    """∂g/∂q by autodiff against central differences, at an eccentric pose of a rotated ball-carrying body."""
    asm = Assembly(gravity="gravity")
    rod = asm.add_body("rod", mass="mass", inertia=(1.0, 1.0, 1.0))
    c = asm.add_contact(
        SphereInSphere(
            "joint",
            restitution=0.5,
            friction=0.1,
            a=None,
            socket_radius="socket",
            b=rod,
            ball_point=(0.0, -0.2, 0.05),
            ball_radius="ball",
        )
    )
    quat = rotations.from_axis_angle([1.0, -2.0, 0.5], 0.4)
    q = _q([0.0, 0.0, 0.0], quat)
    q = q.at[:3].set(-rotations.rotate(quat, jnp.asarray([0.0, -0.2, 0.05])) + jnp.asarray([0.004, 0.003, -0.006]))
    g = jax.grad(lambda qq: c.gaps(qq, P)[0])(q)
    h = 1e-7
    fd = np.array([(c.gaps(q.at[i].add(h), P)[0] - c.gaps(q.at[i].add(-h), P)[0]) / (2 * h) for i in range(7)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_gap_matches_a_direct_formula_under_rotation():
    for e in ([0.02, 0.0, 0.0], [0.0, -0.005, 0.0], [1e-9, 2e-9, -3e-9]):
        gap, point, n = sphere_in_sphere_gap(jnp.zeros(3), 0.05, jnp.asarray(e), 0.04)
        np.testing.assert_allclose(gap, 0.01 - np.linalg.norm(e), rtol=1e-14)
        np.testing.assert_allclose(np.linalg.norm(n), 1.0, rtol=1e-14)


def test_ball_bounces_inside_a_fixed_socket_with_restitution():
    """Free flight from the centre at v₀, first impact after c/|v₀|, then across the socket (2c) and back:
    after the k-th impact the velocity is (−e)^k v₀ — the normal velocity ratio is −e (frictionless, radial)."""
    v0 = 0.5 * np.array([1.0, 2.0, -2.0]) / 3.0
    dt, c, n_steps = 1e-3, 0.01, 120
    for e in (0.5, 0.9):
        p = {**P, "restitution": e}
        traj = simulate(
            SYSTEM,
            p,
            _q([0.0, 0.0, 0.0]),
            jnp.concatenate([jnp.asarray(v0), jnp.zeros(3)]),
            dt=dt,
            n_steps=n_steps,
            scheme=MoreauJean(),
        )
        v, t = np.asarray(traj.u[:, :3]), np.asarray(traj.t)
        hits = [c / np.linalg.norm(v0)]
        while hits[-1] < t[-1]:
            hits.append(hits[-1] + 2 * c / (e ** len(hits) * np.linalg.norm(v0)))
        k = np.searchsorted(np.asarray(hits), t)  # impacts before each row
        away = np.min(np.abs(t[:, None] - np.asarray(hits)[None]), axis=1) > 3 * dt  # impacts land up to a step late
        expected = (-e) ** k[:, None] * v0
        np.testing.assert_allclose(v[away], expected[away], rtol=1e-10, atol=1e-14)
        assert len(hits) - 1 >= 2  # two impacts at least in the window
        gaps = np.asarray(jax.vmap(lambda qq: CONTACT.gaps(qq, p))(traj.q))
        assert gaps.min() > -np.linalg.norm(v0) * dt  # at most one step of penetration
        assert int(np.sum(np.asarray(traj.impulse_normal) > 0)) == len(hits) - 1


def test_dropped_ball_settles_at_the_socket_bottom_with_friction():
    """Gravity: the ball falls c, bounces with decaying heights and rests on the bottom (gap 0) in a rough socket."""
    p = {**P, "gravity": 9.81, "restitution": 0.3, "friction": 0.3}
    traj = simulate(SYSTEM, p, _q([0.0, 0.0, 0.0]), jnp.zeros(6), dt=1e-3, n_steps=300, scheme=MoreauJean())
    q = np.asarray(traj.q)
    v_hit = np.sqrt(2 * 9.81 * 0.01)
    # at rest on the bottom, within the penetration Moreau–Jean's velocity-level law leaves (< one step at v_hit)
    np.testing.assert_allclose(q[-1, :2], [0.0, 0.0], atol=1e-12)
    assert -0.01 - v_hit * 1e-3 < q[-1, 2] <= -0.01
    assert np.max(np.abs(traj.u[-1])) < 1e-9
    first = np.argmax(np.asarray(traj.impulse_normal)[:, 0] > 0)
    np.testing.assert_allclose(float(traj.t[first]), np.sqrt(2 * 0.01 / 9.81), atol=2e-3)
    np.testing.assert_allclose(float(traj.u[first, 2]), 0.3 * v_hit, atol=9.81 * 2e-3)


def test_bad_radii_are_refused_by_name():
    def refused(on_ball=True, **fields):
        asm = Assembly()
        ball = asm.add_body("ball", mass=1.0, inertia=(1.0, 1.0, 1.0))
        asm.add_contact(
            SphereInSphere("j", restitution=0.5, friction=0.0, a=None, b=ball if on_ball else None, **fields)
        )
        asm.validate({"gravity": 9.81})

    with pytest.raises(
        ValueError,
        match=r"contact 'j' clearance = socket_radius − ball_radius = 0.0 breaks the "
        r"rule > 0",
    ):
        refused(socket_radius=0.04, ball_radius=0.04)
    with pytest.raises(ValueError, match="contact 'j' ball_point .* three coordinates"):
        refused(socket_radius=0.05, ball_radius=0.04, ball_point=(0.0, 1.0))
    with pytest.raises(ValueError, match="contact 'j': b must be a body of this assembly"):
        refused(on_ball=False, socket_radius=0.05, ball_radius=0.04)
    with pytest.raises(ValueError, match="contact 'socket' clearance = .* breaks the rule > 0"):
        ASM.validate({**P, "socket": 0.03})
    ASM.validate(P)


def test_compliant_socket_rebounds_with_the_matched_restitution():
    """Compliant ball in socket (Hertz K δ^1.5, Hunt–Crossley c matched exactly to ε at the impact speed), stepped
    by the penalty scheme on the spatial body: an isolated radial impact leaves at −ε v₀ (the exact relation)."""
    from jaxcontact.contact_laws import restitution_damping
    from jaxcontact.stepping.penalty import Penalty

    asm, system = compliant_ball_in_socket(stiffness="K", damping="c")
    v = 0.5
    d = np.array([2.0, -1.0, 2.0]) / 3.0
    for e in (0.6, 0.9):
        p = {**P, "K": 1e8, "c": float(restitution_damping(1e8, e, v))}
        asm.validate(p)
        traj = simulate(
            system,
            p,
            _q(0.009 * d),
            jnp.concatenate([jnp.asarray(v * d), jnp.zeros(3)]),
            dt=1e-5,
            n_steps=600,
            scheme=Penalty(),
        )
        u = np.asarray(traj.u)
        assert float(jnp.max(traj.impulse_normal)) > 0 and not bool(traj.active[-1, 0])  # hit, then left
        np.testing.assert_allclose(u[-1, :3], -e * v * d, rtol=1e-6)
        np.testing.assert_allclose(u[-1, 3:], 0.0, atol=1e-12)
    # Oblique, rough: the regularized friction's impulse slows the slip, spins the ball and stays within μ P_N
    # (here below it: the slip is stopped within the contact, as a ball's that starts rolling).
    # (Its slope μ F_N / v_r makes the tangential motion stiff: the slip width must be resolved by the step.)
    t = np.array([1.0, 2.0, 0.0]) / np.sqrt(5.0)  # ⊥ d
    p = {**P, "friction": 0.2, "K": 1e8, "c": float(restitution_damping(1e8, 0.9, v)), "w": 1e-2}
    _, rough = compliant_ball_in_socket(stiffness="K", damping="c", slip_width="w")
    u0 = jnp.concatenate([jnp.asarray(v * d + 0.2 * t), jnp.zeros(3)])
    traj = simulate(rough, p, _q(0.009 * d), u0, dt=1e-5, n_steps=600, scheme=Penalty())
    P_N = float(jnp.sum(traj.impulse_normal))
    P_T = np.asarray(jnp.sum(traj.impulse_tangent, axis=0))
    assert P_N > 0 and 0.0 < np.linalg.norm(P_T) <= 0.2 * P_N * (1 + 1e-12)
    dv = np.asarray(traj.u[-1, :3]) - np.asarray(u0[:3])
    assert dv @ t < -0.01  # the slip along t is slowed
    assert np.linalg.norm(np.asarray(traj.u[-1, 3:])) > 1.0  # and the ball is set spinning


def test_compliant_contact_refuses_a_restitution_and_rigid_needs_one():
    asm = Assembly()
    ball = asm.add_body("ball", mass=1.0, inertia=(1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="compliant contact has no restitution"):
        asm.add_contact(
            SphereInSphere("j", restitution=0.5, friction=0.0, a=None, socket_radius=0.05, b=ball, ball_radius=0.04),
            compliant=dict(stiffness=1e8),
        )
    with pytest.raises(ValueError, match="rigid contact needs a restitution"):
        asm.add_contact(
            SphereInSphere("j", restitution=None, friction=0.0, a=None, socket_radius=0.05, b=ball, ball_radius=0.04)
        )
    with pytest.raises(ValueError, match=r"compliant needs 'stiffness'"):
        asm.add_contact(
            SphereInSphere("j", restitution=None, friction=0.0, a=None, socket_radius=0.05, b=ball, ball_radius=0.04),
            compliant=dict(damping=1.0),
        )
    asm.add_contact(
        SphereInSphere("j", restitution=None, friction=0.0, a=None, socket_radius=0.05, b=ball, ball_radius=0.04),
        compliant=dict(stiffness="K"),
    )
    with pytest.raises(ValueError, match="contact 'j' stiffness = -1.0 breaks the rule >= 0"):
        asm.validate({"gravity": 9.81, "K": -1.0})


def test_rebound_gradient_through_the_spatial_penalty_matches_finite_differences():
    """d(rebound velocity)/d(damping) by forward mode through 250 RK4 steps of the compliant ball (friction on, at
    zero slip: the vector law's v = 0 branch) against central differences."""
    from jaxcontact.stepping.penalty import Penalty

    _, system = compliant_ball_in_socket(stiffness="K", damping="c")
    d = jnp.asarray([2.0, -1.0, 2.0]) / 3.0

    def rebound(c):
        p = {**P, "friction": 0.2, "K": 1e8, "c": c}
        traj = simulate(
            system,
            p,
            _q(0.0095 * d),
            jnp.concatenate([0.5 * d, jnp.zeros(3)]),
            dt=2e-5,
            n_steps=250,
            scheme=Penalty(diagnostics=False),
        )
        return traj.u[-1, :3] @ d

    # h = c0/1000: the rebound is only piecewise smooth in c (the force's δ^1.5 and its clip at separation sit
    # inside steps), so much smaller differences pick up kinks (1e-4-level scatter at h = c0/1e5). (Reverse mode
    # agrees with forward to 1e-10; one mode keeps the test's compile short.)
    c0, h = 1e8, 1e5
    g = jax.jacfwd(rebound)(c0)
    fd = (rebound(c0 + h) - rebound(c0 - h)) / (2 * h)
    assert -0.5 < float(rebound(c0)) < -0.1 and float(g) > 0  # a damper slows the rebound
    np.testing.assert_allclose(g, fd, rtol=1e-5)

"""Projection correction (position, velocity, contacts) and Baumgarte stabilisation.

Independent truths: the closest point on the pendulum's one-dimensional
manifold by a scalar minimisation over θ (scipy), the radial projection onto a
circle, null-space orthogonality computed by scipy, an active-set enumeration
of the velocity QP with two coupled contacts, central finite differences, and
the implicit-Euler solution of the damped oscillator by numpy.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from jaxcontact.stepping.baumgarte import baumgarte_acceleration_rhs, baumgarte_velocity_target
from jaxcontact.stepping.projection import project, project_position, project_velocity, resting_contacts
from jaxcontact.system import ContactLaws, LagrangianSystem

jax.config.update("jax_enable_x64", True)

# ----------------------------------------------------------------------------- systems
# A uniform bar of length l and mass m in absolute coordinates q = (x, y, θ) of its
# centre, pinned to the ground at the origin at one end: the centre sits at
# (l/2)(sin θ, −cos θ) (θ = 0 hangs straight down); the tip at l (sin θ, −cos θ).


def bar_mass(q, p):
    m, l = p["m"], p["l"]
    return jnp.diag(jnp.stack([m, m, m * l**2 / 12.0]))


def pin(q, t, p):
    x, y, th = q
    return jnp.stack([x - 0.5 * p["l"] * jnp.sin(th), y + 0.5 * p["l"] * jnp.cos(th)])


def pin_and_motor(q, t, p):
    return jnp.concatenate([pin(q, t, p), jnp.stack([q[2] - p["omega"] * t])])


def tip_walls(q, t, p):
    """A wall at x = a (right) and one at x = −b (left): gaps of the bar's tip."""
    x, y, th = q
    x_tip = x + 0.5 * p["l"] * jnp.sin(th)  # tip = centre + (l/2) along the bar's axis
    return jnp.stack([p["a"] - x_tip, x_tip + p["b"]])


def gravity(q, u, t, p):
    return jnp.stack([0.0 * q[0], -p["m"] * 9.81, 0.0 * q[2]])


def laws2(p):
    z = jnp.zeros(2)
    return ContactLaws(z, z, z)


PENDULUM = LagrangianSystem(3, bar_mass, gravity, constraints=pin)
MOTOR = LagrangianSystem(3, bar_mass, gravity, constraints=pin_and_motor)
WALLS = LagrangianSystem(3, bar_mass, gravity, constraints=pin, gaps=tip_walls, laws=laws2)

P = {"m": jnp.array(0.7), "l": jnp.array(1.3), "omega": jnp.array(2.0), "a": jnp.array(1.3 * 0.9), "b": jnp.array(1.0)}


def on_manifold(th, l=1.3):
    return np.array([0.5 * l * np.sin(th), -0.5 * l * np.cos(th), th])


# Compiled once per module; static options are closed over.
position = jax.jit(
    project_position, static_argnums=0, static_argnames=("iterations", "contacts", "contact_mode", "contact_iterations")
)
velocity = jax.jit(
    project_velocity, static_argnums=0, static_argnames=("contacts", "contact_mode", "contact_iterations")
)
both = jax.jit(project, static_argnums=0)
damped_position = jax.jit(project_position, static_argnums=0, static_argnames=("iterations",))


@functools.partial(jax.jit, static_argnums=0)
def _phi(system, q, t, p):
    return system.constraints(q, jnp.asarray(t, q.dtype), p)


def phi_norm(system, q, t, p):
    return float(np.max(np.abs(_phi(system, q, t, p))))


@functools.partial(jax.jit, static_argnums=0)
def phi_dot(system, q, u, t, p):
    """Φ_q u + Φ_t by one forward-mode pass."""
    t = jnp.asarray(t, q.dtype)
    return jax.jvp(lambda x, s: system.constraints(x, s, p), (q, t), (u, jnp.ones_like(t)))[1]


# ----------------------------------------------------------------------------- position


def test_position_newton_converges_quadratically():
    q_tilde = jnp.asarray(on_manifold(0.7) + np.array([1e-3, -2e-3, 1.5e-3]))
    errs = [phi_norm(PENDULUM, position(PENDULUM, q_tilde, 0.0, P, iterations=k), 0.0, P) for k in range(3)]
    assert errs[0] > 1e-3
    assert errs[2] <= 1e-10
    # quadratic: e_{k+1} ≤ C e_k² with a moderate C (curvature of Φ over G)
    assert errs[1] <= 10 * errs[0] ** 2
    assert errs[2] <= 10 * errs[1] ** 2


def closest_point_on_pendulum(q_tilde, m, l):
    """argmin over θ of ‖q(θ) − q̃‖²_M on the one-dimensional manifold (scalar minimisation)."""
    J = m * l**2 / 12

    def f(th):
        d = on_manifold(th, l) - q_tilde
        return m * (d[0] ** 2 + d[1] ** 2) + J * d[2] ** 2

    def df(th):
        d = on_manifold(th, l) - q_tilde
        return 2 * m * (d[0] * 0.5 * l * np.cos(th) + d[1] * 0.5 * l * np.sin(th)) + 2 * J * d[2]

    th0 = q_tilde[2]
    th = scipy.optimize.brentq(df, th0 - 0.3, th0 + 0.3, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    assert f(th) <= min(f(th0 - 0.3), f(th0 + 0.3))
    return on_manifold(th, l)


def test_position_is_the_mass_metric_closest_point():
    rng = np.random.default_rng(0)
    for _ in range(4):
        th = rng.uniform(-2, 2)
        q_tilde = on_manifold(th) + rng.normal(scale=2e-3, size=3)
        ref = closest_point_on_pendulum(q_tilde, 0.7, 1.3)
        q5 = np.asarray(position(PENDULUM, jnp.asarray(q_tilde), 0.0, P, iterations=5))
        q2 = np.asarray(position(PENDULUM, jnp.asarray(q_tilde), 0.0, P, iterations=2))
        np.testing.assert_allclose(q5, ref, atol=1e-13)
        # two iterations: on the manifold and at the closest point up to the drift's cube
        np.testing.assert_allclose(q2, ref, atol=1e-9)


CIRCLE = LagrangianSystem(
    2,
    lambda q, p: p["m"] * jnp.eye(2),
    lambda q, u, t, p: jnp.zeros(2),
    constraints=lambda q, t, p: jnp.stack([q @ q - p["r"] ** 2]),
)


def test_position_on_a_circle_is_the_radial_projection():
    p = {"m": jnp.array(2.0), "r": jnp.array(0.8)}
    q_tilde = np.array([0.5, 0.66])
    q = np.asarray(position(CIRCLE, jnp.asarray(q_tilde), 0.0, p, iterations=4))
    np.testing.assert_allclose(q, 0.8 * q_tilde / np.linalg.norm(q_tilde), atol=1e-14)


def test_rheonomic_constraint_position_and_velocity():
    t = 0.37
    q_tilde = jnp.asarray(on_manifold(2.0 * t) + np.array([2e-4, 1e-4, -3e-4]))
    q = position(MOTOR, q_tilde, t, P, iterations=2)
    assert phi_norm(MOTOR, q, t, P) <= 1e-10
    assert abs(float(q[2]) - 2.0 * t) <= 1e-10
    u = velocity(MOTOR, q, jnp.array([0.3, -0.2, 0.0]), t, P)
    assert float(jnp.max(jnp.abs(phi_dot(MOTOR, q, u, t, P)))) <= 1e-12
    np.testing.assert_allclose(float(u[2]), 2.0, atol=1e-12)  # θ̇ = ω: Φ_t = −ω was used


# ----------------------------------------------------------------------------- velocity


def test_velocity_projection_is_m_orthogonal_and_idempotent():
    q = jnp.asarray(on_manifold(0.4))
    u_tilde = jnp.array([0.3, -1.1, 2.0])
    u = velocity(PENDULUM, q, u_tilde, 0.0, P)
    assert float(jnp.max(jnp.abs(phi_dot(PENDULUM, q, u, 0.0, P)))) <= 1e-12
    J = np.asarray(jax.jacfwd(pin)(q, 0.0, P))
    N = scipy.linalg.null_space(J)  # tangent space of the manifold
    M = np.asarray(bar_mass(q, P))
    du = np.asarray(u - u_tilde)
    assert np.linalg.norm(du) > 0.1
    assert np.max(np.abs(N.T @ M @ du)) <= 1e-13 * np.linalg.norm(M @ du)
    np.testing.assert_allclose(velocity(PENDULUM, q, u, 0.0, P), u, atol=1e-15)


# ----------------------------------------------------------------------------- contacts

TH_WALL = np.arcsin(0.9)  # the tip touches the right wall (x_tip = 0.9 l = a)


def test_contact_projection_lifts_a_penetrating_tip_to_the_wall():
    q_tilde = jnp.asarray(on_manifold(TH_WALL + 0.01) + np.array([1e-4, -2e-4, 0.0]))
    assert float(tip_walls(q_tilde, 0.0, P)[0]) < -1e-3
    for mode in ("equality", "inequality"):
        q = position(WALLS, q_tilde, 0.0, P, iterations=3, contact_mode=mode)
        g = np.asarray(tip_walls(q, 0.0, P))
        assert phi_norm(WALLS, q, 0.0, P) <= 1e-10
        assert abs(g[0]) <= 1e-10, mode
        # a one-DOF manifold meets the wall at one point: the projection must be it
        np.testing.assert_allclose(q, on_manifold(TH_WALL), atol=1e-10)
    q_off = position(WALLS, q_tilde, 0.0, P, iterations=3, contacts=False)
    assert float(tip_walls(q_off, 0.0, P)[0]) < -1e-3  # without contacts: still inside


def test_candidates_and_resting_contacts_select_what_is_lifted():
    q_tilde = jnp.asarray(on_manifold(TH_WALL + 0.01) + np.array([1e-4, -2e-4, 0.0]))
    q = position(WALLS, q_tilde, 0.0, P, iterations=3, candidates=jnp.array([False, True]))
    np.testing.assert_array_equal(
        np.asarray(q), np.asarray(position(WALLS, q_tilde, 0.0, P, iterations=3, contacts=False))
    )
    q_wall = jnp.asarray(on_manifold(TH_WALL))
    P_N = jnp.array([0.5, 0.0])
    slow, fast = jnp.array([0.0, 0.0, 1e-3]), jnp.array([0.0, 0.0, 1.0])  # θ̇: tip speed 1.3·0.44·θ̇
    np.testing.assert_array_equal(resting_contacts(WALLS, q_wall, slow, 0.0, P, P_N, 1e-2), [True, False])
    np.testing.assert_array_equal(resting_contacts(WALLS, q_wall, fast, 0.0, P, P_N, 1e-2), [False, False])


def test_contact_projection_leaves_open_contacts_alone():
    q_tilde = jnp.asarray(on_manifold(0.5) + np.array([1e-3, 2e-3, -1e-3]))
    assert np.all(np.asarray(tip_walls(q_tilde, 0.0, P)) > 0.1)
    ref = position(WALLS, q_tilde, 0.0, P, iterations=3, contacts=False)
    for mode in ("equality", "inequality"):
        q = position(WALLS, q_tilde, 0.0, P, iterations=3, contact_mode=mode)
        np.testing.assert_array_equal(np.asarray(q), np.asarray(ref))


def test_velocity_contact_stops_approach_and_keeps_separation():
    q = jnp.asarray(on_manifold(TH_WALL))
    W = np.asarray(jax.jacfwd(tip_walls)(q, 0.0, P))  # (k, n): γ_N = W u
    approach = jnp.array([0.0, 0.0, 1.0])  # θ̇ > 0: tip moves into the wall
    u = velocity(WALLS, q, approach, 0.0, P)
    assert abs(float(W[0] @ u)) <= 1e-12
    assert float(jnp.max(jnp.abs(phi_dot(WALLS, q, u, 0.0, P)))) <= 1e-12
    # on a one-DOF pendulum touching the wall the only admissible motion is rest
    np.testing.assert_allclose(u, 0.0, atol=1e-12)
    separate = jnp.array([0.0, 0.0, -1.0])
    u_sep = velocity(WALLS, q, separate, 0.0, P)
    np.testing.assert_array_equal(np.asarray(u_sep), np.asarray(velocity(WALLS, q, separate, 0.0, P, contacts=False)))
    assert float(W[0] @ u_sep) > 0.1
    # an equality row would glue the separating contact (why the default is an inequality)
    u_glued = velocity(WALLS, q, separate, 0.0, P, contact_mode="equality")
    assert abs(float(W[0] @ u_glued)) <= 1e-12


# A free bar (x, y, θ) lying on the ground y = 0 with both ends touching: two coupled contacts.
def bar_ends_on_ground(q, t, p):
    x, y, th = q
    return jnp.stack([y + 0.5 * p["l"] * jnp.sin(th), y - 0.5 * p["l"] * jnp.sin(th)])


FREE_BAR = LagrangianSystem(3, bar_mass, gravity, gaps=bar_ends_on_ground, laws=laws2)


def qp_by_active_sets(M, W, u_tilde):
    """min ½‖u − ũ‖²_M s.t. Wᵀu ≥ 0 by enumerating active sets (exact KKT check)."""
    k = W.shape[1]
    Minv = np.linalg.inv(M)
    sols = []
    for mask in range(1 << k):
        A = [i for i in range(k) if mask >> i & 1]
        lam = np.zeros(k)
        if A:
            WA = W[:, A]
            lam[A] = np.linalg.solve(WA.T @ Minv @ WA, -WA.T @ u_tilde)
        u = u_tilde + Minv @ W @ lam
        if np.all(lam >= -1e-14) and np.all(W.T @ u >= -1e-12):
            sols.append(u)
    assert len(sols) >= 1
    return sols[0]


@pytest.mark.parametrize("u_tilde", [[0.3, -1.0, 3.0], [0.0, -1.0, 0.5], [0.1, 0.5, 0.4]])
def test_velocity_contact_lcp_matches_active_set_qp(u_tilde):
    p = {"m": jnp.array(1.0), "l": jnp.array(1.0)}
    q = jnp.zeros(3)
    u_tilde = np.asarray(u_tilde)
    W = np.asarray(jax.jacfwd(bar_ends_on_ground)(q, 0.0, p)).T
    M = np.asarray(bar_mass(q, p))
    ref = qp_by_active_sets(M, W, u_tilde)
    u = velocity(FREE_BAR, q, jnp.asarray(u_tilde), 0.0, p, contact_iterations=50)
    np.testing.assert_allclose(u, ref, atol=1e-10)
    assert np.all(W.T @ np.asarray(u) >= -1e-10)


def test_equality_on_approaching_contacts_only_is_not_the_projection():
    # Documented reason for the LCP: fixing only the approaching end pulls the other into approach.
    p = {"m": jnp.array(1.0), "l": jnp.array(1.0)}
    q = jnp.zeros(3)
    u_tilde = jnp.array([0.3, -1.0, 3.0])  # γ = (0.5, −2.5)
    W = np.asarray(jax.jacfwd(bar_ends_on_ground)(q, 0.0, p)).T
    only_second = velocity(FREE_BAR, q, u_tilde, 0.0, p, contact_mode="equality", closed=jnp.array([False, True]))
    assert float(W[:, 0] @ only_second) < -0.5
    u = velocity(FREE_BAR, q, u_tilde, 0.0, p)
    assert np.all(W.T @ np.asarray(u) >= -1e-10)


def test_project_position_then_velocity_with_contacts():
    q_tilde = jnp.asarray(on_manifold(TH_WALL + 0.001) + np.array([2e-4, 0.0, 0.0]))
    u_tilde = jnp.array([0.05, 0.02, 0.8])
    W = np.asarray(jax.jacfwd(tip_walls)(on_manifold(TH_WALL), 0.0, P))
    # default: contacts at the position level only; the approaching velocity is left to the
    # stepper's impact law (Φ̇ = 0 still)
    q, u = both(WALLS, q_tilde, u_tilde, 0.0, P)
    assert phi_norm(WALLS, q, 0.0, P) <= 1e-10
    assert abs(float(tip_walls(q, 0.0, P)[0])) <= 1e-10
    assert float(jnp.max(jnp.abs(phi_dot(WALLS, q, u, 0.0, P)))) <= 1e-12
    assert float(W[0] @ np.asarray(u)) < -0.1
    # told that the wall contact is closed: its approach is stopped too
    q2, u2 = both(WALLS, q_tilde, u_tilde, 0.0, P, velocity_closed=jnp.array([True, False]))
    np.testing.assert_array_equal(np.asarray(q2), np.asarray(q))
    np.testing.assert_allclose(u2, 0.0, atol=1e-12)  # one DOF, wall closed, approaching


# ----------------------------------------------------------------------------- gradients, vmap, jit


def projected_loss(l, q_tilde, u_tilde, system):
    p = dict(P, l=l)
    q, u = project(system, q_tilde, u_tilde, 0.1, p, position_iterations=2)
    w = jnp.array([1.0, -2.0, 0.5])
    return jnp.sum(w * q) + jnp.sum(jnp.array([0.3, 0.7, -0.2]) * u) + jnp.sum(q * q * u)


value_and_grad_loss = jax.jit(jax.value_and_grad(projected_loss, argnums=(0, 1, 2)), static_argnums=3)


def loss(l, q_tilde, u_tilde, system):
    return value_and_grad_loss(l, q_tilde, u_tilde, system)[0]


@pytest.mark.parametrize("system,th", [(PENDULUM, 0.6), (WALLS, TH_WALL + 0.003)])
def test_gradients_through_projection_match_finite_differences(system, th):
    l = jnp.array(1.3)
    q_tilde = jnp.asarray(on_manifold(th) + np.array([3e-4, -1e-4, 2e-4]))
    u_tilde = jnp.array([0.2, -0.1, 0.6])
    g_l, g_q, g_u = value_and_grad_loss(l, q_tilde, u_tilde, system)[1]
    eps = 1e-6

    def fd(f, x):
        x = np.asarray(x, float)
        out = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[i] = eps
            out[i] = (float(f(jnp.asarray(x + e))) - float(f(jnp.asarray(x - e)))) / (2 * eps)
        return out

    fd_l = fd(lambda v: loss(v, q_tilde, u_tilde, system), l)
    fd_q = fd(lambda v: loss(l, v, u_tilde, system), q_tilde)
    fd_u = fd(lambda v: loss(l, q_tilde, v, system), u_tilde)
    g = np.concatenate([np.ravel(g_l), np.asarray(g_q), np.asarray(g_u)])
    ref = np.concatenate([np.ravel(fd_l), fd_q, fd_u])
    assert np.all(np.isfinite(g))
    # 1e-6 relative to the gradient's size (at the wall ∂/∂ũ vanishes: the velocity is fixed)
    np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-6 * np.max(np.abs(ref)))


def test_vmap_equals_single_calls():
    rng = np.random.default_rng(3)
    B = 6
    ths = rng.uniform(-1, 1.1, B)
    qs = jnp.asarray(np.stack([on_manifold(th) for th in ths]) + rng.normal(scale=1e-3, size=(B, 3)))
    us = jnp.asarray(rng.normal(size=(B, 3)))
    ls = jnp.asarray(rng.uniform(1.2, 1.4, B))
    ps = dict({k: jnp.broadcast_to(v, (B,)) for k, v in P.items()}, l=ls)
    batched = jax.jit(jax.vmap(lambda q, u, p: project(WALLS, q, u, 0.0, p)))
    qb, ub = batched(qs, us, ps)
    for i in range(B):
        pi = {k: v[i] for k, v in ps.items()}
        qi, ui = both(WALLS, qs[i], us[i], 0.0, pi)
        np.testing.assert_allclose(qb[i], qi, rtol=0, atol=1e-14)
        np.testing.assert_allclose(ub[i], ui, rtol=0, atol=1e-14)


def _free_bar_velocity(l, u_tilde):
    p = {"m": jnp.array(1.0), "l": l}
    return project_velocity(FREE_BAR, jnp.array([0.0, 0.0, 0.05]), u_tilde, 0.0, p, contact_iterations=60)


free_bar_jac = jax.jit(jax.jacrev(_free_bar_velocity, argnums=(0, 1)))
free_bar_velocity = jax.jit(_free_bar_velocity)


def test_gradient_through_the_velocity_contact_lcp():
    # both ends approaching, both multipliers strictly positive: a smooth piece of the QP
    l, u_tilde = jnp.array(1.0), jnp.array([0.1, -1.0, 0.5])
    J_l, J_u = free_bar_jac(l, u_tilde)
    eps = 1e-6
    fd_l = (free_bar_velocity(l + eps, u_tilde) - free_bar_velocity(l - eps, u_tilde)) / (2 * eps)
    fd_u = np.stack(
        [
            (free_bar_velocity(l, u_tilde + eps * e) - free_bar_velocity(l, u_tilde - eps * e)) / (2 * eps)
            for e in np.eye(3)
        ],
        axis=1,
    )
    scale = max(np.max(np.abs(fd_l)), np.max(np.abs(fd_u)))
    np.testing.assert_allclose(J_l, fd_l, rtol=1e-6, atol=1e-6 * scale)
    np.testing.assert_allclose(J_u, fd_u, rtol=1e-6, atol=1e-6 * scale)


# ----------------------------------------------------------------------------- a Moreau–Jean step + projection
# The call site a stepper uses: after each step, project the end state before the next
# contact problem; contacts only once they rest (module docstring, "Contacts in a time stepper").


def driven(q, u, t, p):
    return jnp.stack([0.0 * q[0], -p["m"] * 9.81, p["T"]])  # a motor torque drives the tip into the wall


def wall_laws(p):
    return ContactLaws(jnp.stack([p["eps"], p["eps"]]), jnp.zeros(2), jnp.zeros(2))


DRIVEN = LagrangianSystem(3, bar_mass, driven, constraints=pin, gaps=tip_walls, laws=wall_laws)


@functools.partial(jax.jit, static_argnames=("corrected",))
def _moreau_jean_run(q0, p, *, corrected):
    from jaxcontact.stepping.moreau_jean import MoreauJean, initial_state, step

    scheme = MoreauJean()

    def body(st, _):
        st, info = step(DRIVEN, scheme, p, st, 0.01)
        if corrected:
            rest = resting_contacts(DRIVEN, st.q, st.u, st.t, p, info.P_N, 1e-2)
            q, u = project(
                DRIVEN,
                st.q,
                st.u,
                st.t,
                p,
                position_iterations=3,
                position_candidates=rest,
                velocity_closed=rest,
                velocity_contact_mode="equality",
            )
            st = st._replace(q=q, u=u)
        J = jax.jacfwd(pin)(st.q, st.t, p)
        return st, (
            jnp.max(jnp.abs(pin(st.q, st.t, p))),
            jnp.max(jnp.abs(J @ st.u)),
            tip_walls(st.q, st.t, p)[0],
            st.q[2],
            info.P_N[0],
        )

    return jax.lax.scan(body, initial_state(DRIVEN, q0, jnp.zeros(3), 0.0, p), None, length=300)[1]


def test_moreau_jean_with_projection_keeps_constraints_and_rests_on_the_wall():
    p = dict(P, T=jnp.array(6.0), eps=jnp.array(0.5))
    q0 = jnp.asarray(on_manifold(0.3))
    phi, dphi, gap, th, P_N = map(np.asarray, _moreau_jean_run(q0, p, corrected=True))
    assert np.max(phi) <= 1e-10 and np.max(dphi) <= 1e-10  # every step
    assert np.all(np.abs(gap[-50:]) <= 1e-10)  # resting on the wall, not in it
    assert abs(th[-1] - TH_WALL) <= 1e-10
    # it bounced (ε = 0.5): the gap reopens after the first contact
    first = np.argmax(gap <= 1e-12)
    assert np.max(gap[first:]) > 0.1
    phi0, _, gap0, th0, _ = map(np.asarray, _moreau_jean_run(q0, p, corrected=False))
    assert phi0[-1] > 1e-3 and phi0[-1] > 10 * phi0[10]  # uncorrected: the drift grows
    assert gap0[-1] < -1e-5  # and it rests inside the wall
    assert abs(th0[-1] - TH_WALL) > 1e-3


DRIVEN_FREE = LagrangianSystem(3, bar_mass, driven, constraints=pin)


def _window_loss(T, l, q0):
    """Final-state loss after 20 Moreau–Jean steps with projection (the driven bar, no wall)."""
    from jaxcontact.stepping.moreau_jean import MoreauJean, initial_state, step

    p = dict(P, T=T, l=l, a=0.9 * l, eps=jnp.array(0.5))
    scheme = MoreauJean(diagnostics=False)

    def body(st, _):
        st, _ = step(DRIVEN_FREE, scheme, p, st, 0.01)
        q, u = project(DRIVEN_FREE, st.q, st.u, st.t, p)
        return st._replace(q=q, u=u), None

    st = jax.lax.scan(body, initial_state(DRIVEN_FREE, q0, jnp.zeros(3), 0.0, p), None, length=20)[0]
    return jnp.sum(jnp.array([1.0, -0.5, 0.3]) * st.q) + 0.1 * jnp.sum(st.u**2)


window_value_and_grad = jax.jit(jax.value_and_grad(_window_loss, argnums=(0, 1)))


def window_loss(T, l, q0):
    return window_value_and_grad(T, l, q0)[0]


def test_gradients_through_steps_with_projection_match_finite_differences():
    T, l = jnp.array(6.0), jnp.array(1.3)
    q0 = jnp.asarray(on_manifold(0.3) + np.array([1e-4, -1e-4, 0.0]))  # drifted start, projected at step 1
    g_T, g_l = window_value_and_grad(T, l, q0)[1]
    eps = 1e-6
    fd_T = (window_loss(T + eps, l, q0) - window_loss(T - eps, l, q0)) / (2 * eps)
    fd_l = (window_loss(T, l + eps, q0) - window_loss(T, l - eps, q0)) / (2 * eps)
    np.testing.assert_allclose(g_T, fd_T, rtol=1e-6)
    np.testing.assert_allclose(g_l, fd_l, rtol=1e-6)


# ----------------------------------------------------------------------------- rank loss

# A point on two unit circles centred at (0, 0) and (2, 0): they touch at (1, 0), where
# Φ_q = [[2, 0], [−2, 0]] has rank 1 (a two-link chain stretched straight).
TWO_CIRCLES = LagrangianSystem(
    2,
    lambda q, p: p["m"] * jnp.eye(2),
    lambda q, u, t, p: jnp.zeros(2),
    constraints=lambda q, t, p: jnp.stack([q @ q - 1.0, (q[0] - 2.0) ** 2 + q[1] ** 2 - 1.0]),
)
PM = {"m": jnp.array(1.0), "r": jnp.array(1.0)}


def _two_circle_loss(x):
    return jnp.sum(project(TWO_CIRCLES, x, jnp.array([0.3, 0.4]), 0.0, PM)[0] ** 2)


two_circle_grad = jax.jit(jax.grad(_two_circle_loss))


@pytest.mark.parametrize("q_tilde", [[1.0, 0.0], [1.01, 0.0], [1.0, 0.05]])
def test_singular_configuration_gives_finite_output_and_gradient(q_tilde):
    q_tilde = jnp.asarray(q_tilde)
    q = position(TWO_CIRCLES, q_tilde, 0.0, PM, iterations=2)
    u = velocity(TWO_CIRCLES, q, jnp.array([0.3, 0.4]), 0.0, PM)
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(u))
    # at (and on the symmetry line through) the singular point the error never grows
    before = np.max(np.abs(TWO_CIRCLES.constraints(q_tilde, 0.0, PM)))
    after = np.max(np.abs(TWO_CIRCLES.constraints(q, 0.0, PM)))
    assert after <= before + 1e-15
    assert np.all(np.isfinite(two_circle_grad(q_tilde)))


def test_near_singular_configuration_newton_overshoots_and_damping_fixes_it():
    # 1e-6 off the tangency, 1e-3 off the root (1, 0): plain Newton (the paper's) reads the residual
    # of the double root as a nearly-null direction and jumps; Levenberg–Marquardt damping does not.
    q_tilde = jnp.array([0.999, -1e-6])
    phi0 = np.max(np.abs(TWO_CIRCLES.constraints(q_tilde, 0.0, PM)))
    plain = position(TWO_CIRCLES, q_tilde, 0.0, PM, iterations=2)
    assert np.all(np.isfinite(plain))
    assert np.max(np.abs(TWO_CIRCLES.constraints(plain, 0.0, PM))) > phi0  # documented failure
    damped = damped_position(TWO_CIRCLES, q_tilde, 0.0, PM, iterations=2, damping=1.0)
    np.testing.assert_allclose(damped, [1.0, 0.0], atol=2e-6)
    assert np.max(np.abs(TWO_CIRCLES.constraints(damped, 0.0, PM))) <= 1e-11
    assert np.all(np.isfinite(two_circle_grad(q_tilde)))


def test_damping_keeps_regular_convergence():
    q_tilde = on_manifold(0.7) + np.array([1e-3, -2e-3, 1.5e-3])
    q = damped_position(PENDULUM, jnp.asarray(q_tilde), 0.0, P, iterations=2, damping=1.0)
    assert phi_norm(PENDULUM, q, 0.0, P) <= 1e-10
    np.testing.assert_allclose(q, closest_point_on_pendulum(q_tilde, 0.7, 1.3), atol=1e-9)


circle_grad = jax.jit(jax.grad(lambda x, p: jnp.sum(project_position(CIRCLE, x, 0.0, p) ** 2)))


def test_vanishing_jacobian_is_finite():
    # Φ = |q|² − r² at q = 0: Φ_q = 0, G = 0; no direction helps, the point is left where it is.
    p = {"m": jnp.array(1.0), "r": jnp.array(0.5)}
    q = position(CIRCLE, jnp.zeros(2), 0.0, p, iterations=2)
    np.testing.assert_array_equal(np.asarray(q), 0.0)
    assert np.all(np.isfinite(circle_grad(jnp.zeros(2), p)))


# ----------------------------------------------------------------------------- float32 and errors


def test_float32_projection():
    p32 = jax.tree.map(lambda v: v.astype(jnp.float32), P)
    q_tilde = jnp.asarray(on_manifold(0.7) + np.array([1e-3, -2e-3, 1.5e-3]), jnp.float32)
    q = position(PENDULUM, q_tilde, 0.0, p32, iterations=2)
    assert q.dtype == jnp.float32
    assert phi_norm(PENDULUM, q, 0.0, p32) <= 1e-6
    u = velocity(PENDULUM, q, jnp.array([0.3, -1.1, 2.0], jnp.float32), 0.0, p32)
    assert u.dtype == jnp.float32
    assert float(jnp.max(jnp.abs(phi_dot(PENDULUM, q, u, 0.0, p32)))) <= 1e-5


def test_bad_options_raise_clear_errors():
    q = jnp.asarray(on_manifold(0.3))
    with pytest.raises(ValueError, match="iterations"):
        project_position(PENDULUM, q, 0.0, P, iterations=-1)
    with pytest.raises(ValueError, match="contact_mode"):
        project_position(WALLS, q, 0.0, P, contact_mode="soft")
    with pytest.raises(ValueError, match="shape"):
        project_position(PENDULUM, jnp.zeros(4), 0.0, P)
    with pytest.raises(ValueError, match="u must have"):
        project_velocity(PENDULUM, q, jnp.zeros(2), 0.0, P)
    with pytest.raises(ValueError, match="closed"):
        project_velocity(WALLS, q, jnp.zeros(3), 0.0, P, closed=jnp.array([True]))
    with pytest.raises(TypeError, match="LagrangianSystem"):
        project_position(object(), q, 0.0, P)


# ----------------------------------------------------------------------------- Baumgarte


def test_velocity_target_is_implicit_euler_of_the_damped_oscillator():
    h, alpha, beta = 0.01, 3.0, 5.0
    A = np.array([[0.0, 1.0], [-(beta**2), -2 * alpha]])  # d/dt (Φ, Φ̇)
    step = np.linalg.inv(np.eye(2) - h * A)  # implicit Euler
    z = np.array([1e-3, -2e-3])
    phi, dphi = jnp.array([1e-3]), jnp.array([-2e-3])
    for _ in range(200):
        z = step @ z
        dphi = baumgarte_velocity_target(phi, dphi, h, alpha, beta)
        phi = phi + h * dphi  # the stepper's position update
        np.testing.assert_allclose([float(phi[0]), float(dphi[0])], z, rtol=1e-12, atol=1e-18)
    assert abs(z[0]) < 2e-6  # decayed (e^{−αt} ≈ 2.5e-3 at t = 2)
    # limits: α → ∞ gives the plain velocity constraint 0; α = β = 0 keeps Φ̇
    np.testing.assert_allclose(baumgarte_velocity_target(1.0, 2.0, h, 1e12, 5.0), 0.0, atol=1e-9)
    assert float(baumgarte_velocity_target(1.0, 2.0, h, 0.0, 0.0)) == 2.0
    np.testing.assert_allclose(
        baumgarte_acceleration_rhs(jnp.array(2.0), jnp.array(3.0), 0.5, 4.0), -2 * 0.5 * 3.0 - 16 * 2.0
    )


def _pendulum_dae_rhs(q, u, t, p, alpha, beta, stabilise):
    """u̇ of the bar pendulum from the index-1 DAE with optional Baumgarte terms."""
    M = bar_mass(q, p)
    J = jax.jacfwd(pin)(q, t, p)
    # Φ̈ = J u̇ + (∂(J u)/∂q) u  ⇒  J u̇ = −(∂(J u)/∂q) u + rhs
    conv = jax.jvp(lambda x: jax.jacfwd(pin)(x, t, p) @ u, (q,), (u,))[1]
    rhs = -conv
    if stabilise:
        rhs = rhs + baumgarte_acceleration_rhs(pin(q, t, p), J @ u, alpha, beta)
    K = jnp.block([[M, J.T], [J, jnp.zeros((2, 2))]])
    sol = jnp.linalg.solve(K, jnp.concatenate([gravity(q, u, t, p), rhs]))
    return sol[:3]


@functools.partial(jax.jit, static_argnames=("stabilise", "n"))
def _semi_implicit_euler(q0, u0, h, alpha, beta, *, stabilise, n):
    def body(c, _):
        q, u = c
        u = u + h * _pendulum_dae_rhs(q, u, 0.0, P, alpha, beta, stabilise)
        q = q + h * u
        return (q, u), jnp.linalg.norm(pin(q, 0.0, P))

    return jax.lax.scan(body, (q0, u0), None, length=n)[1]


def test_baumgarte_keeps_acceleration_level_drift_bounded():
    q0 = jnp.asarray(on_manifold(1.2))
    u0 = jnp.zeros(3)
    h, n = 2e-3, 2500  # 5 s, a few swings
    free = np.asarray(_semi_implicit_euler(q0, u0, h, 0.0, 0.0, stabilise=False, n=n))
    stab = np.asarray(_semi_implicit_euler(q0, u0, h, 20.0, 20.0, stabilise=True, n=n))
    # without: the drift grows over the run; with: it stays bounded at a small level
    assert free[-1] > 10 * free[n // 10]
    assert free[-1] > 1e-3
    assert np.max(stab) < 0.05 * free[-1]
    assert np.max(stab[n // 2 :]) <= 2 * np.max(stab[: n // 2])


@functools.partial(jax.jit, static_argnames=("stabilise", "n"))
def _velocity_level_euler(q0, u0, h, alpha, beta, *, stabilise, n):
    """u_E = velocity projection of u_A + h M⁻¹f onto Φ_q u = target; q_E = q_A + h u_E."""

    def body(c, _):
        q, u = c
        u_free = u + h * jnp.linalg.solve(bar_mass(q, P), gravity(q, u, 0.0, P))
        target = None
        if stabilise:
            J = jax.jacfwd(pin)(q, 0.0, P)
            target = baumgarte_velocity_target(pin(q, 0.0, P), J @ u, h, alpha, beta)
        u = project_velocity(PENDULUM, q, u_free, 0.0, P, target=target)
        q = q + h * u
        return (q, u), jnp.linalg.norm(pin(q, 0.0, P))

    return jax.lax.scan(body, (q0, u0), None, length=n)[1]


def test_baumgarte_velocity_target_keeps_velocity_level_drift_bounded():
    q0 = jnp.asarray(on_manifold(1.2))
    h, n = 1e-2, 1000  # 10 s
    free = np.asarray(_velocity_level_euler(q0, jnp.zeros(3), h, 0.0, 0.0, stabilise=False, n=n))
    stab = np.asarray(_velocity_level_euler(q0, jnp.zeros(3), h, 0.5 / h, 0.5 / h, stabilise=True, n=n))
    assert free[-1] > 5 * free[n // 10]
    assert np.max(stab) < 0.1 * free[-1]
    assert np.max(stab[n // 2 :]) <= 2 * np.max(stab[: n // 2])


def test_baumgarte_rates_are_batchable_differentiable_leaves():
    alphas, betas = jnp.array([0.0, 1.0, 10.0]), jnp.array([2.0, 3.0, 30.0])
    batched = jax.vmap(baumgarte_velocity_target, in_axes=(None, None, None, 0, 0))(
        jnp.array([1e-3, -2e-3]), jnp.array([0.1, 0.2]), 0.01, alphas, betas
    )
    for i in range(3):
        np.testing.assert_array_equal(
            batched[i],
            baumgarte_velocity_target(jnp.array([1e-3, -2e-3]), jnp.array([0.1, 0.2]), 0.01, alphas[i], betas[i]),
        )
    # ∂target/∂α = −2h · target / (1 + 2hα + h²β²), analytically
    h, a, b, phi, dphi = 0.01, 3.0, 5.0, 1e-3, 0.2
    g = jax.grad(lambda a_: baumgarte_velocity_target(phi, dphi, h, a_, b))(a)
    den = 1 + 2 * h * a + (h * b) ** 2
    np.testing.assert_allclose(g, -2 * h * (dphi - h * b**2 * phi) / den**2, rtol=1e-14)

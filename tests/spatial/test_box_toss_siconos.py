"""The box toss against Siconos 4.4's mechanics module (Newton–Euler body, Bullet box–box detection).

The reference ``tests/data/siconos/box_toss_bullet.npz`` is written by ``bench/siconos_box_toss.py``
(its docstring lists the settings and what Bullet's detection changes). The two codes share the
model (Moreau–Jean θ = ½, Newton's law at 8 vertices, Coulomb cones) but not the discretisation
of a contact: Siconos takes the contact point and its Jacobian from Bullet at the step start,
jaxcontact at q_M = q + h/2 u. Both are consistent, so they differ by O(h): the lever arm of a
vertex that moves at v during the step differs by h |v| / 2, relatively h |v| / (2 r) at a
distance r from the centre of mass — about 1 % here (``lever_arm_error``). Through the first
bounce the difference indeed halves with h (bench/RESULTS.md). While the box rocks on its faces
Bullet's persistent manifold keeps points that lag behind the vertices and Siconos' rest pose
does not converge in h (ours does): the spread of its own runs (h, h/2, h/4; Newton iterated or
one linearisation per step; stored) bounds what can be compared there.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.models import box_toss
from jaxcontact.spatial import rotations

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "siconos" / "box_toss_bullet.npz"
LARGE = 0.15  # N·s: the bounces (a vertex arriving at ≳ 0.15 m/s), not the last rocking touches


def _ref():
    return dict(np.load(REFERENCE))


def lever_arm_error(traj, step, p):
    """h |v| / (2 r) of the vertex that hits first at ``step``: the relative O(h) difference of the two codes."""
    q, u = np.asarray(traj.q[step - 1]), np.asarray(traj.u[step - 1])
    half = np.array([p["half_x"], p["half_y"], p["half_z"]])
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    R = np.asarray(rotations.matrix(jnp.asarray(q[3:])))
    arms = signs * half  # body frame
    low = np.argmin(q[2] + (arms @ R.T)[:, 2])
    speed = np.linalg.norm(u[:3] + R @ np.cross(u[3:], arms[low]))
    return float(traj.t[1] - traj.t[0]) * speed / (2 * np.linalg.norm(arms[low]))


def yaw_deg(q):
    """Heading of the body x axis in the horizontal plane (the box rests on a y face: x is horizontal)."""
    R = np.asarray(rotations.matrix(jnp.asarray(q[3:])))
    return np.degrees(np.arctan2(R[1, 0], R[0, 0]))


def rest_time(t, u):
    moving = np.flatnonzero(np.max(np.abs(u), axis=1) > 1e-9)
    return float(t[moving[-1] + 1])


def test_reference_is_the_model():
    """Same parameters, step, θ, initial pose and twist, inertia, as the stored Siconos run."""
    ref = _ref()
    m = box_toss.model()
    for k, v in m.params.items():
        assert float(ref[f"param_{k}"]) == float(v), k
    assert float(ref["h"]) == m.dt and float(ref["t_final"]) == m.t_final and float(ref["theta"]) == 0.5
    q0, u0 = box_toss.initial_state(m.params)
    assert np.allclose(ref["q0"], q0, atol=1e-15) and np.allclose(ref["v0"], u0, atol=1e-15)
    M = np.asarray(box_toss.SYSTEM.mass(q0, m.params))
    assert np.allclose(np.diag(M)[3:], ref["inertia"], rtol=1e-14)
    assert np.allclose(np.diag(M)[:3], m.params["mass"], rtol=1e-14)
    # Siconos' NSGS reached the FCLIB bar (error ≤ 1e-8) at every step before the box comes to rest.
    assert ref["solver_error"][:550].max() < 1e-8


def test_box_toss_matches_siconos(box_toss_run):
    m, traj = box_toss_run
    ref = _ref()
    h = m.dt
    q, u, t = np.asarray(traj.q), np.asarray(traj.u), np.asarray(traj.t)
    P = np.asarray(traj.impulse_normal).sum(axis=1)
    P_ref = ref["impulse_normal"]
    assert np.allclose(ref["t"], t, atol=1e-12)

    # Free flight: both second-order in h; they differ by the quaternion update (Siconos: q + h T(q) ω̄,
    # renormalised; ours: the exponential map), O(h² |ω|²) per unit time.
    first = min(np.flatnonzero(P > 0)[0], np.flatnonzero(P_ref > 0)[0])
    omega = np.linalg.norm(u[0, 3:])
    bound = h**2 * omega**2 * t[first]
    assert np.max(np.abs(q[:first] - ref["q"][:first])) < bound
    assert np.max(np.abs(u[:first] - ref["v"][:first])) < bound * omega

    # The first bounce: the same step, the impulse and the velocities after it within the lever arm's O(h).
    ours, theirs = np.flatnonzero(P > LARGE), np.flatnonzero(P_ref > LARGE)
    assert ours[0] == theirs[0]
    rel = lever_arm_error(traj, ours[0], m.params)
    assert 0.005 < rel < 0.02  # about 1 % for this toss (a vertex at ~2.5 m/s, 0.13 m from the centre)
    assert abs(P[ours[0]] - P_ref[theirs[0]]) <= rel * P_ref[theirs[0]]
    k = theirs[1] - 1  # in flight after the first bounce, before the second
    assert np.max(np.abs(u[k] - ref["v"][k])) <= rel * np.max(np.abs(ref["v"][k]))

    # The two bounces on landing that follow (the box's flight ends): each within a step (Bullet: on contact;
    # ours: at q_M), impulses within the O(h) error of each bounce so far, added up. After them the box rocks
    # on its faces, where Bullet's contact points lag behind the vertices.
    for j in (1, 2):
        assert abs(ours[j] - theirs[j]) <= 1
        assert abs(P[ours[j]] - P_ref[theirs[j]]) <= (j + 1) * rel * P_ref[theirs[j]], (j, P[ours[j]], P_ref[theirs[j]])

    # At rest: on the same face (body −y down), the lowest vertices on the plane up to Bullet's resting points
    # (its box stands on manifold points up to 0.2 mm off its vertices). Position, heading, rest time and
    # the number of impacts (> 0.05 N·s) within the spread of Siconos' own runs.
    qf, qf_ref = q[-1], ref["q"][-1]
    down = np.asarray(rotations.matrix(jnp.asarray(qf[3:]))).T @ [0.0, 0.0, -1.0]
    down_ref = np.asarray(rotations.matrix(jnp.asarray(qf_ref[3:]))).T @ [0.0, 0.0, -1.0]
    assert np.allclose(down, [0.0, -1.0, 0.0], atol=1e-3) and np.allclose(down_ref, [0.0, -1.0, 0.0], atol=1e-3)
    assert abs(qf[2] - qf_ref[2]) < 2e-4
    runs = np.vstack([qf_ref, ref["spread_final_q"]])
    for i in (0, 1):
        assert abs(qf[i] - qf_ref[i]) <= np.ptp(runs[:, i]), i
    yaws = [yaw_deg(r) for r in runs]
    assert abs(yaw_deg(qf) - yaws[0]) <= np.ptp(yaws)
    rests = np.concatenate([[rest_time(ref["t"], ref["v"])], ref["spread_rest_time"]])
    assert abs(rest_time(t, u) - rests[0]) <= np.ptp(rests)
    counts = [int(np.sum(P_ref > 0.05))] + [int(np.sum(row > 0.05)) for row in ref["spread_impact_impulses"]]
    assert min(counts) <= int(np.sum(P > 0.05)) <= max(counts)


def test_siconos_reference_and_jax_agree_on_gaps():
    """Our vertex gaps at Siconos' states: no vertex of its run goes through the plane deeper than Moreau–Jean's
    O(h · speed) penetration (as in ours), and at its rest four vertices are on the plane."""
    ref = _ref()
    m = box_toss.model()
    gaps = np.asarray(jax.vmap(lambda q: box_toss.SYSTEM.gaps(q, 0.0, m.params))(jnp.asarray(ref["q"])))
    assert gaps.min() > -2e-3
    final = np.sort(gaps[-1])
    assert np.all(np.abs(final[:4]) < 2e-4) and np.allclose(final[4:], 2 * m.params["half_y"], atol=2e-4)

"""Batched and single runs of the four-bar with wall friction: what is equal, and why impulses may differ.

The linkage has one degree of freedom, so at the wall contact the Delassus
matrix W = H S Hᵀ (H: the normal and tangential contact rows, S: the inverse
mass restricted to motions the joints allow) has rank 1 for two impulse
components: only one combination of the normal and tangential impulses moves
the mechanism, the rest is carried by the joints. The split (P_N, P_T) is
therefore not unique, and the iterative contact solver lands on a
rounding-dependent point of the solution set: a vmapped batch and a single run
round differently (other kernel fusion), so their impulses can differ by a few
percent while positions and velocities agree to ~1e-14. This test states
exactly what is equal: q and u to 1e-12, the impulses' effect on the motion
(W ΔP = 0 to rounding), and both impulse sets inside the friction cone.
Contacts with a unique impulse (the ball, the block on an incline) have equal
impulses in batch and single runs (tests/test_simulate.py).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate


def _delassus(system, p, q):
    """W = H S Hᵀ at q: H the (normal; tangential) contact rows,
    S = M⁻¹ − M⁻¹Φ_qᵀ(Φ_q M⁻¹Φ_qᵀ)⁻¹Φ_q M⁻¹ (the inverse mass on the motions the joints allow)."""
    M = system.mass(q, p)
    Mi = jnp.linalg.inv(M)
    Pq = jax.jacfwd(lambda x: system.constraints(x, 0.0, p))(q)
    S = Mi - Mi @ Pq.T @ jnp.linalg.solve(Pq @ Mi @ Pq.T, Pq @ Mi)
    HN = jax.jacfwd(lambda x: system.gaps(x, 0.0, p))(q)
    HT = jax.jacfwd(lambda u: system.slip_velocity(q, u, 0.0, p))(jnp.zeros_like(q))
    H = jnp.concatenate([HN, HT])
    return H @ S @ H.T


@pytest.mark.slow  # two four-bar compilations (batched and single), ~15 s of CPU
def test_four_bar_batch_equals_single_in_motion_and_in_the_impulses_effect():
    m = get_model("four-bar")
    B, n, dt = 2, 600, 1e-3
    p = {k: jnp.broadcast_to(v, (B,)) for k, v in m.params.items()}
    p["friction"] = jnp.array([0.1, 0.3])
    p["restitution"] = jnp.array([0.7, 0.9])
    q0, u0 = jax.vmap(m.initial_state)(p)
    batch = simulate(m.system, p, q0, u0, dt=dt, n_steps=n)
    W = jax.jit(jax.vmap(lambda q: _delassus(m.system, pi, q)))
    for i in range(B):
        pi = {k: v[i] for k, v in p.items()}
        single = simulate(m.system, pi, q0[i], u0[i], dt=dt, n_steps=n)
        np.testing.assert_allclose(batch.q[i], single.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(batch.u[i], single.u, rtol=0, atol=1e-12)
        Pb = np.concatenate([batch.impulse_normal[i], batch.impulse_tangent[i]], axis=1)
        Ps = np.concatenate([single.impulse_normal, single.impulse_tangent], axis=1)
        assert Ps[:, 0].max() > 1.0  # the wall is hit
        # W at the θ-point q_M = q_A + h/2 u_A of each step (θ = ½), where the step evaluates its contact rows
        qM = np.asarray(single.q[:-1] + 0.5 * dt * single.u[:-1])
        Ws = np.asarray(W(qM))
        dP = (Pb - Ps)[1:]
        effect = np.einsum("sij,sj->si", Ws, dP)
        scale = np.abs(Ws).max() * np.abs(Ps).max()
        assert np.abs(effect).max() <= 1e-9 * scale, np.abs(effect).max() / scale
        for P in (Pb, Ps):  # both splits obey Coulomb's law |P_T| ≤ μ P_N
            assert np.all(np.abs(P[:, 1]) <= float(pi["friction"]) * P[:, 0] + 1e-12)
            assert np.all(P[:, 0] >= -1e-12)

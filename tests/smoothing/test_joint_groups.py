"""Clearance joints between beam nodes are evaluated as one vectorised group: the same rows, in the
joints' order, as each joint evaluated alone."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.models import flexible_arm
from jaxcontact.planar.bodies import Frames
from jaxcontact.smoothing.beam import Beam, Clearance, _clearance_joints, _joint_groups, flexible_system


def _state(m, seed):
    q0, _ = m.initial_state(m.params)
    rng = np.random.default_rng(seed)
    return q0 + jnp.asarray(1e-4 * rng.normal(size=q0.shape)), jnp.asarray(rng.normal(size=q0.shape))


def test_the_arms_gaps_and_slips_equal_each_joint_alone():
    """Four links: joint 1 on the hub (alone), joints 2–4 between nodes (one group), rows in joint order."""
    n_links = 4
    m = flexible_arm.model("rigid", n_links)
    q, u = _state(m, 0)
    gaps = np.asarray(m.system.gaps(q, 0.0, m.params))
    slips = np.asarray(m.system.slip_velocity(q, u, 0.0, m.params))
    # The same joints one by one, through the planar joint's own formulas.
    links = [Beam(f"link{k}", 1) for k in range(1, n_links + 1)]
    specs = [
        Clearance(
            f"joint_{k}",
            links[k - 1],
            0,
            to=links[k - 2],
            to_node=-1,
            pin_radius="pin_radius",
            clearance=f"clearance_{k}",
            pin_on_beam=False,
            restitution=0.5,
        )
        for k in range(2, n_links + 1)
    ]
    offsets = {b.name: 3 + 8 * i for i, b in enumerate(links)}

    def node_slice(beam, node):
        start = offsets[beam.name] + 4 * (node % 2)
        return slice(start, start + 2)

    joints, _ = _clearance_joints(tuple(specs), links, node_slice, 3)
    p = m.params
    alone_g = [float(j.gap(Frames(q), 0.0, p)) for j in joints]
    alone_s = [float(j.slip(Frames(q), u, 0.0, p)) for j in joints]
    np.testing.assert_allclose(gaps[1:], alone_g, rtol=0, atol=1e-15)
    np.testing.assert_allclose(slips[1:], alone_s, rtol=1e-13, atol=1e-15)
    # Each joint's own clearance: the gap of joint k reads clearance_k.
    p2 = {**m.params, "clearance_3": m.params["clearance_3"] + 1e-3}
    moved = np.asarray(m.system.gaps(q, 0.0, p2)) - gaps
    np.testing.assert_allclose(moved, [0, 0, 1e-3, 0], atol=1e-12)


def test_groups_keep_the_joints_order_when_node_joints_are_interleaved():
    """A ground joint between node joints: its row stays in its place."""
    a, b, c = Beam("a", 1), Beam("b", 1), Beam("c", 1)
    common = dict(pin_radius=0.01, clearance="cl", restitution=0.5)
    specs = (
        Clearance("ab", b, 0, to=a, to_node=-1, **common),
        Clearance("ground", a, 0, to=None, point=(0.0, 0.0), **common),
        Clearance("bc", c, 0, to=b, to_node=-1, **common),
    )
    system = flexible_system([a, b, c], clearances=specs)
    parts, position = _joint_groups(_clearance_joints(specs, (a, b, c), lambda bm, nd: slice(0, 2), 0)[0])
    assert len(parts) == 2 and list(position) == [0, 2, 1]
    p = {"g": 9.81, "h": 0.0, "cl": 1e-3}
    for beam in ("a", "b", "c"):
        p.update({f"{beam}_rho": 2700.0, f"{beam}_E": 7e10, f"{beam}_A": 1e-4, f"{beam}_I": 1e-9, f"{beam}_L": 0.1})
    q = jnp.asarray(np.random.default_rng(1).normal(size=system.n_dof) * 1e-3)
    # Pins at the nodes of each beam's start, holes at the other side: gap = cl − ‖pin − hole‖.
    gaps = np.asarray(system.gaps(q, 0.0, p))
    qa, qb, qc = q[0:8], q[8:16], q[16:24]
    expect = [
        1e-3 - np.linalg.norm(qb[0:2] - qa[4:6]),
        1e-3 - np.linalg.norm(qa[0:2]),
        1e-3 - np.linalg.norm(qc[0:2] - qb[4:6]),
    ]
    np.testing.assert_allclose(gaps, expect, rtol=1e-12)
    J = jax.jacfwd(lambda x: system.gaps(x, 0.0, p))(q)
    assert J.shape == (3, system.n_dof) and bool(jnp.all(jnp.isfinite(J)))

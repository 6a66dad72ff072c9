"""Alike contacts computed as one group (``jaxcontact.spatial.contact_groups``) against the same contacts computed
one by one: the gaps, the slips and their rows of W on assemblies whose members differ in their bodies, their
declared values and their order, and a Moreau–Jean run (the bodies' velocity map and position update under one
vmap too: both follow ``bodies.VMAP_FROM``); which contacts may share a group."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.spatial import bodies, contact_groups
from jaxcontact.spatial.assembly import Assembly
from jaxcontact.spatial.contact_groups import ContactGroups
from jaxcontact.spatial.contacts import BoxPlane, CylinderPlane, SpherePlane, SphereSphere
from jaxcontact.stepping import MoreauJean
from tests.spatial.test_contact_rows import _random_pose, _rows_by_pattern

jax.config.update("jax_enable_x64", True)


def _mixed(n=4):
    """Spheres of their own radii in a column, and a box beside it, the contacts listed out of kind: each
    sphere's contact with the one below comes between sphere–plane contacts of offset centres."""
    asm = Assembly(gravity="gravity")
    balls = [asm.add_body(f"ball{i}", mass="m", inertia=("0.4*m*0.05**2",) * 3) for i in range(n)]
    box = asm.add_body("box", mass="m", inertia=("m/6*0.01",) * 3)
    for i in range(n):
        asm.add_contact(
            SpherePlane(f"floor{i}", "e", "mu", body=balls[i], radius=f"r{i}", centre=(0.01 * i, 0.0, f"-0.002*{i}"))
        )
        if i:
            asm.add_contact(
                SphereSphere(f"pair{i}", "e", "mu", a=balls[i - 1], b=balls[i], radius_a=f"r{i - 1}", radius_b=f"r{i}")
            )
        if i == 1:
            asm.add_contact(BoxPlane("box", "e", "mu", body=box, half_extents=("0.05", "0.05", "0.05")))
    params = {"m": 1.0, "e": 0.2, "mu": 0.4, "gravity": 9.81, **{f"r{i}": 0.04 + 0.005 * i for i in range(n)}}
    return asm, {k: jnp.asarray(v) for k, v in params.items()}


def _grouped(monkeypatch, smallest):
    """Alike contacts (and bodies) under one vmap from ``smallest`` on."""
    monkeypatch.setattr(bodies, "VMAP_FROM", smallest)


def _cases():
    asm, params = _mixed()
    cradle = get_model("newton-cradle")
    return {"mixed column and box": (asm.system(), params), "newton cradle": (cradle.system, cradle.params)}


@pytest.mark.parametrize("name", list(_cases()))
def test_grouped_contacts_give_the_gaps_slips_and_rows_of_the_contacts_one_by_one(name, monkeypatch):
    system, params = _cases()[name]
    n_bodies = system.n_dof // 7
    q = _random_pose(n_bodies, seed=3)
    u = jnp.asarray(np.random.default_rng(4).normal(size=6 * n_bodies))
    out = {}
    for smallest in (10**9, 2):
        _grouped(monkeypatch, smallest)
        # Jitted apart: the program of each grouping is traced anew.
        rows = jax.jit(lambda q, p: _rows_by_pattern(system, q, 0.0, p))(q, params)
        slips = jax.jit(lambda q, u, p: system.slip_velocity(q, u, 0.0, p))(q, u, params)
        out[smallest] = [np.asarray(x) for x in (*rows, slips)]
    for alone, grouped in zip(out[10**9], out[2], strict=True):
        np.testing.assert_allclose(grouped, alone, rtol=1e-12, atol=1e-14)


def test_a_column_run_with_grouped_contacts_equals_the_run_contact_by_contact(monkeypatch):
    i = jnp.arange(4.0)
    balls = jnp.stack([0.003 * i, 0 * i, 0.05 + 0.12 * i, 1 + 0 * i, 0 * i, 0 * i, 0 * i], axis=1)
    q0 = jnp.concatenate([balls.reshape(-1), jnp.asarray([0.5, 0.0, 0.06, 1.0, 0.0, 0.0, 0.0])])
    u0 = jnp.zeros(30).at[0].set(0.2)
    runs = []
    for smallest in (10**9, 2):
        _grouped(monkeypatch, smallest)
        asm, params = _mixed()  # a system of its own: its program is traced anew, not taken from the cache
        tr = simulate(asm.system(), params, q0, u0, dt=1e-3, n_steps=150, scheme=MoreauJean())
        runs.append((np.asarray(tr.q), np.asarray(tr.diagnostics.converged)))
    (q_alone, converged_alone), (q_grouped, converged_grouped) = runs
    assert np.min(q_alone[:, 2]) < 0.045  # the bottom sphere lands: contacts act in the window
    assert np.mean(converged_alone) > 0.95
    np.testing.assert_array_equal(converged_grouped, converged_alone)
    np.testing.assert_allclose(q_grouped, q_alone, atol=1e-9)


def test_contacts_share_a_group_only_where_they_differ_in_bodies_and_declared_values(monkeypatch):
    _grouped(monkeypatch, 2)
    asm, _ = _mixed()
    groups = ContactGroups.of(asm.contacts)
    sizes = sorted(len(part.bodies) for part in groups.parts if isinstance(part, contact_groups._Group))
    assert sizes == [3, 4]  # the sphere pairs, the sphere–plane contacts; the box alone
    assert groups.order is not None
    # A cylinder's rim count is not a declared value: cylinders of different rims are computed apart.
    a = Assembly(gravity="gravity")
    bodies = [a.add_body(f"c{i}", mass="m", inertia=("1", "1", "1")) for i in range(3)]
    cyl = [
        CylinderPlane(f"cyl{i}", "e", "mu", body=b, radius="r", half_length="h", rim=6 + (i == 2))
        for i, b in enumerate(bodies)
    ]
    parts = ContactGroups.of(cyl).parts
    assert [len(p.bodies) if isinstance(p, contact_groups._Group) else 1 for p in parts] == [2, 1]
    # Below the smallest group, contacts run one by one in the assembly's order.
    _grouped(monkeypatch, 10**9)
    alone = ContactGroups.of(asm.contacts)
    assert alone.parts == tuple(asm.contacts) and alone.order is None

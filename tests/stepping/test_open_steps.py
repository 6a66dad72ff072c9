"""Moreau–Jean's open steps: with no contact active, the step skips the contacts and gives the same state.

Under vmap the contacts' assembly and solve sit in a branch taken only when some sample of the batch has a
contact active, and each sample keeps its own branch's result: a batch of box tosses, some landing and some
still in the air, equals its samples run one by one.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping import moreau_jean
from jaxcontact.stepping.moreau_jean import MoreauJean

SCHEME = MoreauJean(tol=1e-8, iterations=200).for_forward_runs()
# Centre heights of an upright box (half height 0.05 m): resting, landing soon, landing late, in the air.
HEIGHTS = (0.0500001, 0.06, 0.1, 0.4)


def _box(height):
    m = get_model("box-toss")
    return m, dict(m.params, height=jnp.asarray(height), tilt_deg=jnp.asarray(0.0), spin_x=jnp.asarray(0.0))


def test_an_open_step_equals_the_step_with_its_contacts_assembled():
    m, p = _box(0.4)
    q0, u0 = m.initial_state(p)
    state = SCHEME.init(m.system, p, q0, u0, 0.0)
    assert moreau_jean.skips_open_steps(SCHEME, m.system)
    skipped, info = jax.jit(lambda s: moreau_jean.step(m.system, SCHEME, p, s, 1e-3))(state)
    full, full_info = jax.jit(lambda s: moreau_jean._step(m.system, SCHEME, p, s, 1e-3))(state)
    np.testing.assert_allclose(skipped.q, full.q, rtol=0, atol=1e-15)
    np.testing.assert_allclose(skipped.u, full.u, rtol=0, atol=1e-14)
    assert not np.any(info.active) and not np.any(full_info.active)
    assert info.P_N.shape == full_info.P_N.shape and info.P_T.shape == full_info.P_T.shape
    assert int(info.iterations) == 0 and bool(info.converged)


def test_a_batch_of_landing_and_flying_boxes_equals_single_runs():
    m, _ = _box(0.4)
    batch = {k: jnp.stack([_box(h)[1][k] for h in HEIGHTS]) for k in m.params}
    run = dict(dt=1e-3, t_final=0.15, scheme=SCHEME)
    traj = simulate_model(m, params=batch, batched=True, **run)
    single = jax.jit(lambda p: simulate_model(m, params=p, **run))
    for i in range(len(HEIGHTS)):
        one = single(jax.tree.map(lambda x: x[i], batch))
        np.testing.assert_allclose(traj.q[i], one.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(traj.u[i], one.u, rtol=0, atol=1e-11)
        assert np.array_equal(traj.active[i], one.active)
    landed = np.any(np.asarray(traj.active), axis=(1, 2))
    assert landed.tolist() == [True, True, True, False]  # the batch mixes open and closed steps


def _inner_jaxprs(eqn):
    for v in eqn.params.values():
        for x in v if isinstance(v, tuple) else (v,):
            inner = getattr(x, "jaxpr", x)
            if hasattr(inner, "eqns"):
                yield inner


def _conds_with_a_scalar_predicate(jaxpr):
    """``cond`` equations (nested ones included) whose predicate is one value for the whole batch."""
    found = 0
    for eqn in jaxpr.eqns:
        found += eqn.primitive.name == "cond" and eqn.invars[0].aval.shape == ()
        found += sum(_conds_with_a_scalar_predicate(inner) for inner in _inner_jaxprs(eqn))
    return found


def test_under_vmap_the_contacts_are_a_branch_of_the_batch_not_a_select():
    m, _ = _box(0.4)
    batch = {k: jnp.stack([_box(h)[1][k] for h in HEIGHTS]) for k in m.params}
    q0, u0 = jax.vmap(m.initial_state)(batch)
    states = jax.vmap(lambda p, q, u: SCHEME.init(m.system, p, q, u, 0.0))(batch, q0, u0)
    batched = jax.make_jaxpr(jax.vmap(lambda p, s: moreau_jean.step(m.system, SCHEME, p, s, 1e-3)))(batch, states)
    unskipped = jax.make_jaxpr(jax.vmap(lambda p, s: moreau_jean._step(m.system, SCHEME, p, s, 1e-3)))(batch, states)
    # Batch-level branches beyond those of the step that always assembles: the open steps' skip.
    assert _conds_with_a_scalar_predicate(batched.jaxpr) > _conds_with_a_scalar_predicate(unskipped.jaxpr)

"""The slider–bar under the event-driven scheme: stick–slip with the friction laws obeyed, constraints kept."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.models.slider_bar import CONSTRAINT_ROWS, SYSTEM, model
from jaxcontact.simulate import simulate
from jaxcontact.stepping.event_driven import EventDriven

DT, STEPS = 5e-4, 2000  # one second: two motor turns
SCHEME = EventDriven()


@pytest.fixture(scope="module")
def batch():
    """e = 0.1 and 0.15 m in one vmapped run, with the forces rebuilt along it."""
    ms = [model(e=e) for e in (0.1, 0.15)]
    params = jax.tree.map(lambda *x: jnp.stack(x), *[m.params for m in ms])
    q0, u0 = jax.vmap(ms[0].initial_state)(params)
    tr = simulate(SYSTEM, params, q0, u0, dt=DT, n_steps=STEPS, scheme=SCHEME)
    reactions = jax.jit(
        jax.vmap(jax.vmap(lambda p, q, u, t: SCHEME.reactions(SYSTEM, p, q, u, t, DT), in_axes=(None, 0, 0, 0)))
    )(params, tr.q, tr.u, tr.t)
    slip = jax.vmap(jax.vmap(lambda p, q, u, t: SYSTEM.compliant_slip_velocity(q, u, t, p), in_axes=(None, 0, 0, 0)))(
        params, tr.q, tr.u, tr.t
    )
    return params, tr, reactions, np.asarray(slip)


def test_registry_builds_the_slider_bar():
    m = get_model("slider-bar", e=0.15)
    assert float(m.params["e"]) == 0.15 and m.system is SYSTEM
    with pytest.raises(ValueError, match="static_friction"):
        model(static_friction=0.1)  # μ0 < μ = 0.2
    with pytest.raises(ValueError, match="e"):
        model(e=-0.1)


def test_stick_slip_obeys_coulomb_with_static_and_dynamic_coefficients(batch):
    """Slipping corners carry |F_T| = μ F_N against the slip; sticking ones |F_T| ≤ μ0 F_N; both phases occur."""
    params, tr, reactions, slip = batch
    assert bool(np.all(tr.diagnostics.converged))
    F_N, F_T = np.asarray(reactions.normal_force), np.asarray(reactions.friction_force)
    mu, mu0 = float(params["friction"][0]), float(params["static_friction"][0])
    sliding = np.abs(slip) > 1e-4
    np.testing.assert_allclose(np.abs(F_T[sliding]), mu * F_N[sliding], rtol=1e-9)
    assert np.all(np.sign(F_T[sliding]) == -np.sign(slip[sliding]))
    stuck = np.abs(slip) < 1e-6
    assert np.all(np.abs(F_T[stuck]) <= mu0 * F_N[stuck] * (1 + 1e-9))
    # Both phases in both cases; the larger eccentricity (larger shaking force) sticks less.
    stuck_fraction = stuck.all(axis=2).mean(axis=1)
    assert 0.05 < stuck_fraction[0] < 0.5 and 0.0 < stuck_fraction[1] < stuck_fraction[0]


def test_constraints_stay_closed_and_the_slider_stays_on_the_floor(batch):
    params, tr, reactions, _ = batch
    assert float(np.max(tr.diagnostics.phi)) < 1e-8  # Baumgarte at the acceleration level
    F_N = np.asarray(reactions.normal_force)
    assert np.all(F_N[:, 1:] > 0)  # never lifts off (our values: vertical load < weight)
    assert float(np.max(np.abs(tr.q[:, :, 2]))) < 1e-3  # the slider only rocks on its compliant corners
    # The motor holds θ2 − θ1 = ω t; its multiplier is the driving torque, bounded by the bar's loads.
    torque = np.asarray(reactions.multipliers[:, :, CONSTRAINT_ROWS.index("motor")])
    m2, e, w = (np.asarray(params[k])[:, None] for k in ("m2", "e", "omega"))
    assert np.all(np.abs(torque) < 2 * m2 * e * (9.81 + e * w**2))

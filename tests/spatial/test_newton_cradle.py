"""Simultaneous impacts: Moreau–Jean's Newton law on every closed contact at once (sphere–sphere contacts)."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import newton_cradle
from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, SphereSphere


def _row():
    """Three balls in free space along x; 2 and 3 touch, 1 approaches."""
    asm = Assembly(gravity=0.0)
    balls = [asm.add_body(f"b{i}", mass=1.0, inertia=("0.4*radius**2",) * 3) for i in range(3)]
    for i in range(2):
        asm.add_contact(
            SphereSphere(
                f"c{i}",
                restitution="restitution",
                friction="friction",
                a=balls[i],
                b=balls[i + 1],
                radius_a="radius",
                radius_b="radius",
            )
        )
    return asm.system()


ROW = _row()


@pytest.mark.parametrize("restitution", [1.0, 0.5, 0.0])
def test_simultaneous_impact_is_the_lcp_of_newton_laws(restitution):
    """Ball 1 at v = 1 hits the touching pair: the velocities after the impact step are the LCP's of Newton's law
    on both contacts at once — (−1/3, 2/3, 2/3) for ε = 1 (energy kept, not "one ball out"), (0, ½, ½) for
    ε = ½, (⅓, ⅓, ⅓) for ε = 0 — and momentum is conserved."""
    p = {"radius": 0.02, "restitution": restitution, "friction": 0.0}
    identity = [1.0, 0.0, 0.0, 0.0]
    q0 = jnp.asarray([-0.0405, 0, 0, *identity, 0.0, 0, 0, *identity, 0.04, 0, 0, *identity])
    u0 = jnp.zeros(18).at[0].set(1.0)
    traj = simulate(ROW, p, q0, u0, dt=1e-3, n_steps=4)
    vx = np.asarray(traj.u).reshape(-1, 3, 6)[:, :, 0]
    expected = newton_cradle.simultaneous_impact(1.0, restitution)
    assert np.allclose(vx[-1], expected, rtol=0, atol=1e-12)
    assert np.allclose(expected, {1.0: [-1 / 3, 2 / 3, 2 / 3], 0.5: [0, 0.5, 0.5], 0.0: [1 / 3] * 3}[restitution])
    assert abs(vx[-1].sum() - 1.0) < 1e-12
    assert np.all(np.abs(np.asarray(traj.u).reshape(-1, 3, 6)[:, :, 1:]) < 1e-14)  # nothing else moves


@pytest.mark.slow
def test_cradle_model_first_impact():
    """The pendulum cradle: the first impact gives the same split up to the step's gravity and joint terms."""
    from jaxcontact.models import get_model
    from jaxcontact.simulate import simulate_model

    m = get_model("newton-cradle")
    traj = simulate_model(m, dt=1e-3, t_final=0.5)
    vx = np.asarray(traj.u).reshape(-1, 3, 6)[:, :, 0]
    hit = np.flatnonzero(np.asarray(traj.impulse_normal).sum(axis=1) > 1e-6)[0]
    assert np.allclose(vx[hit] / vx[hit - 1, 0], [-1 / 3, 2 / 3, 2 / 3], atol=1e-4)
    assert np.all(np.asarray(traj.diagnostics.converged))

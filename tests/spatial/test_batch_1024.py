"""A batch of 1 024 parameter variations of a spatial model equals 1 024 single runs.

Sphere on a rough plane, friction, spin, speed, slope and restitution drawn at random (some samples slip the
whole run, some start rolling, some roll with overspin, some on an incline), 120 steps of 2 ms: the vmapped
program and one jitted single-run program called 1 024 times give the same trajectories to rounding, and
the same contact states.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model

B, DT, T_FINAL = 1024, 2e-3, 0.24


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_batch_of_1024_equals_single_runs():
    m = get_model("sphere-on-plane")
    rng = np.random.default_rng(7)
    drawn = {
        "friction": rng.uniform(0.1, 1.2, B),
        "spin": rng.uniform(-20.0, 40.0, B),
        "speed": rng.uniform(0.5, 3.0, B),
        "slope_deg": rng.uniform(0.0, 15.0, B),
        "restitution": rng.uniform(0.0, 0.9, B),
    }
    batch = {k: jnp.broadcast_to(v, (B,)) for k, v in m.params.items()}
    batch.update({k: jnp.asarray(v) for k, v in drawn.items()})
    traj = simulate_model(m, params=batch, dt=DT, t_final=T_FINAL, batched=True)

    single = jax.jit(lambda p: simulate_model(m, params=p, dt=DT, t_final=T_FINAL))
    rolling_at_end = 0
    for i in range(B):
        one = single(jax.tree.map(lambda x: x[i], batch))
        # Equal up to the rounding of a vectorised evaluation (a few ulps of |u| ≤ 40).
        assert np.max(np.abs(traj.q[i] - one.q)) < 1e-12, i
        assert np.max(np.abs(traj.u[i] - one.u)) < 1e-11, i
        assert np.array_equal(traj.active[i], one.active), i
        v, w = np.asarray(one.u[-1, :3]), np.asarray(one.u[-1, 3:])
        rolling_at_end += bool(abs(np.linalg.norm(v) - float(batch["radius"][i]) * np.linalg.norm(w)) < 1e-6)
    # The draw covers both regimes, so the comparison sees sticking and slipping cones.
    assert 50 < rolling_at_end < B - 50

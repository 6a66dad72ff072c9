"""Applied loads and spring–dampers on spatial bodies against closed-form motions."""

import jax.numpy as jnp
import numpy as np

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, Load, SpringDamper


def test_spring_damper_and_loads():
    """A body hanging from a ground spring (k, c) at its centre: vertical damped oscillation
    ω_d = √(k/m − (c/2m)²) about the static stretch m g / k; a constant world torque τ about e_z spins it up
    at τ / I₃, and a horizontal force F accelerates it at F / m."""
    asm = Assembly(gravity="gravity")
    body = asm.add_body("b", mass="m", inertia=(0.1, 0.1, 0.2))
    asm.add_load(
        SpringDamper(
            "spring", None, (0.0, 0.0, 0.0), body, (0.0, 0.0, 0.0), stiffness="k", rest_length="l0", damping="c"
        )
    )
    asm.add_load(Load("push", body, force=("F", 0.0, 0.0), torque=(0.0, 0.0, "tau")))
    system = asm.system()
    p = {"gravity": 9.81, "m": 2.0, "k": 800.0, "l0": 0.5, "c": 4.0, "F": 0.0, "tau": 0.3}
    m, k, c, g = 2.0, 800.0, 4.0, 9.81
    z_eq = -(0.5 + m * g / k)
    q0 = jnp.asarray([0.0, 0.0, z_eq - 0.01, 1.0, 0.0, 0.0, 0.0])  # 1 cm below the equilibrium, at rest
    dt, n = 1e-4, 5000
    traj = simulate(system, p, q0, jnp.zeros(6), dt=dt, n_steps=n)
    t = np.asarray(traj.t)
    wd = np.sqrt(k / m - (c / (2 * m)) ** 2)
    zeta = c / (2 * m)
    exact = z_eq - 0.01 * np.exp(-zeta * t) * (np.cos(wd * t) + zeta / wd * np.sin(wd * t))
    assert np.max(np.abs(np.asarray(traj.q[:, 2]) - exact)) < 1e-6
    # The spin about the vertical axis (body e_z stays vertical): ω_z = τ t / I₃.
    assert np.allclose(np.asarray(traj.u[:, 5]), 0.3 * t / 0.2, atol=1e-10)
    # Same program, other values: the spring off (k = c = 0) and a horizontal push F: x = F t² / (2m) exactly.
    push = simulate(system, {**p, "F": 1.0, "tau": 0.0, "k": 0.0, "c": 0.0}, q0, jnp.zeros(6), dt=dt, n_steps=n)
    assert np.allclose(np.asarray(push.q[:, 0]), t**2 / (2 * m), rtol=0, atol=1e-12)

"""Spatial bodies in Moreau–Jean: accuracy figures and step rates of the spatial models.

    python bench/accuracy/spatial.py          # prints the figures recorded in bench/RESULTS.md ("Spatial rigid bodies")

* free rigid body (torque-free, θ = ½): energy and angular momentum drift over 20 s against dt, |q| − 1;
* sphere on plane: slip→roll time and final speed against the analytic solution;
* step rates: sphere-on-plane single and batched (256), box-toss with a fixed sweep count and with the
  cones' Gauss–Seidel stopped at Siconos' error (compile time apart: each program is run twice).
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.models import sphere_on_plane as sop  # noqa: E402
from jaxcontact.simulate import simulate, simulate_model  # noqa: E402
from jaxcontact.spatial import Assembly, rotations  # noqa: E402
from jaxcontact.stepping.moreau_jean import MoreauJean  # noqa: E402


def free_body():
    asm = Assembly(gravity=0.0)
    asm.add_body("b", mass=1.0, inertia=(1.0, 2.0, 3.0))
    system = asm.system()
    q0 = jnp.asarray([0, 0, 0, 1.0, 0, 0, 0])
    u0 = jnp.asarray([0, 0, 0, 0.4, 0.2, 0.9])
    for dt in (0.02, 0.01, 0.005):
        tr = simulate(system, {}, q0, u0, dt=dt, n_steps=int(round(20 / dt)))
        e = np.asarray(tr.diagnostics.energy)
        L = np.asarray(jax.vmap(lambda q, u: rotations.matrix(q[3:]) @ (jnp.asarray([1.0, 2, 3]) * u[3:]))(tr.q, tr.u))
        print(
            f"free body dt={dt:g}: max |ΔE|/E = {np.max(np.abs(e - e[0])) / e[0]:.3g}, "
            f"max |ΔL|/|L| = {np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0]):.3g}, "
            f"max ||q|-1| = {np.max(np.abs(np.linalg.norm(tr.q[:, 3:], axis=1) - 1)):.2g}"
        )


def sphere():
    m = get_model("sphere-on-plane")
    tr = simulate_model(m, dt=1e-4, t_final=0.6)
    slip = np.asarray(sop.slip_speed(tr.u, m.params))
    t_star, _ = sop.slip_to_roll(m.params)
    first = float(tr.t[np.flatnonzero(np.abs(slip) < 1e-10)[0]])
    v = float(sop.down_slope_speed(tr.u[-1], m.params))
    print(
        f"sphere dt=1e-4: t* = {t_star:.6f} s, first rolling step at {first:.4f} s; final speed {v:.15f} "
        f"(5/7 v0 = {5 / 7 * 2:.15f}, rel. error {abs(v - 10 / 7) / (10 / 7):.2g})"
    )


def rate(label, run, steps):
    t0 = time.perf_counter()
    jax.block_until_ready(run())
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(run())
    wall = time.perf_counter() - t0
    print(f"{label}: first call {first:.1f} s (compile), then {wall:.2f} s = {steps / wall:.3g} steps/s")


def speeds():
    m = get_model("sphere-on-plane")
    rate("sphere-on-plane, 1000 steps", lambda: simulate_model(m).q, 1000)
    B = 256
    batch = {k: jnp.broadcast_to(v, (B,)) for k, v in m.params.items()}
    batch["friction"] = jnp.linspace(0.1, 0.4, B)
    rate(f"sphere-on-plane, batch {B} x 1000 steps", lambda: simulate_model(m, params=batch, batched=True).q, B * 1000)
    b = get_model("box-toss")
    rate("box-toss, 2000 steps, 50 sweeps per step", lambda: simulate_model(b).q, 2000)
    rate(
        "box-toss, 2000 steps, sweeps until Siconos error <= 1e-12",
        lambda: simulate_model(b, scheme=MoreauJean(differentiation="implicit", iterations=500, tol=1e-12)).q,
        2000,
    )


if __name__ == "__main__":
    free_body()
    sphere()
    speeds()

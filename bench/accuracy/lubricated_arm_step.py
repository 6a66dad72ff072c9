"""Where the lubricated arm's joints ring: a grid of clearances and oil viscosities, by RK4 and by the penalty
scheme's linearly implicit (Rosenbrock-W) step, and what a step of each costs.

    OPENBLAS_NUM_THREADS=1 python bench/accuracy/lubricated_arm_step.py [--dt 1e-6] [--t-final 0.05]
        [--clearances 7e-5,8e-5,9e-5,1e-4] [--viscosities 0.02,0.05,0.08] [--joints all|6] [--steps 100]

Each grid point is one sample of ``flexible-arm-6-lubricated`` at the study's drive (40 rad/s), with every
joint's clearance (``--joints all``) or joint 6's alone at the value, run as one batch by each step. A run
rings when a velocity leaves the range the drive gives every resolved run (``--ring`` times its largest
speed over the grid's quietest runs) or turns non-finite: the joints then rattle off their walls, finite and
wrong. The cost: µs per sample-step of the batched step (B = 1 and 64), compile apart.
"""

from __future__ import annotations

import argparse
import itertools
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import Penalty  # noqa: E402

DRIVE_OMEGA = 40.0  # the study's drive


def grid_speeds(m, combos, joints, dt, t_final, implicit):
    """The largest speed of each grid point's run, NaN where it turned non-finite, and the wall time."""
    batch = {k: jnp.full((len(combos),) + jnp.shape(v), v) for k, v in m.params.items()}
    for k in range(1, 7) if joints == "all" else (6,):
        batch[f"clearance_{k}"] = jnp.array([c for c, _ in combos])
    batch["viscosity"] = jnp.array([mu for _, mu in combos])
    if m.derive is not None:
        batch = jax.vmap(m.derive)(batch)
    q0, u0 = jax.vmap(m.initial_state)(batch)
    start = time.perf_counter()
    tr = simulate(
        m.system,
        batch,
        q0,
        u0,
        dt=dt,
        n_steps=int(round(t_final / dt)),
        scheme=Penalty(implicit=implicit, diagnostics=False),
        save_every=max(1, int(round(1e-5 / dt))),
    )
    u = np.asarray(tr.u)
    speed = np.max(np.abs(u), axis=(1, 2))
    return np.where(np.isfinite(u).all(axis=(1, 2)), speed, np.nan), time.perf_counter() - start


def step_cost(m, implicit, B, steps):
    """µs per sample-step of ``steps`` batched steps of B copies of the model's start (compile apart)."""
    scheme = Penalty(implicit=implicit, diagnostics=False)
    p = m.params
    q0, u0 = m.initial_state(p)
    state = jax.tree.map(lambda x: jnp.broadcast_to(x, (B,) + jnp.shape(x)), scheme.init(m.system, p, q0, u0, 0.0))

    def run(state):
        return jax.lax.scan(lambda s, _: (scheme.step(m.system, p, s, 1e-6)[0], None), state, None, length=steps)[0]

    f = jax.jit(jax.vmap(run))
    start = time.perf_counter()
    jax.block_until_ready(f(state))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(f(state))
    return (time.perf_counter() - start) / steps / B * 1e6, compile_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dt", type=float, default=1e-6)
    ap.add_argument("--t-final", type=float, default=0.05)
    ap.add_argument("--clearances", default="7e-5,8e-5,9e-5,1e-4")
    ap.add_argument("--viscosities", default="0.02,0.05,0.08")
    ap.add_argument("--joints", choices=("all", "6"), default="all")
    ap.add_argument("--ring", type=float, default=1.5, help="a run rings above this many times the quietest speed")
    ap.add_argument("--steps", type=int, default=100, help="steps timed for the cost (0: skip)")
    args = ap.parse_args()
    m = get_model("flexible-arm-6-lubricated", drive_omega=DRIVE_OMEGA)
    combos = list(
        itertools.product(
            [float(c) for c in args.clearances.split(",")], [float(v) for v in args.viscosities.split(",")]
        )
    )
    print(
        f"flexible-arm-6-lubricated, drive {DRIVE_OMEGA} rad/s, dt {args.dt:g} s, {args.t_final:g} s, "
        f"clearances of joints {args.joints}"
    )
    speeds, walls = {}, {}
    for name, implicit in (("rk4", False), ("rosenbrock-w", True)):
        speeds[name], walls[name] = grid_speeds(m, combos, args.joints, args.dt, args.t_final, implicit)
    quiet = np.nanmin(np.concatenate(list(speeds.values())))
    print(
        "| clearance (mm) | viscosity (Pa·s) | rk4 | rosenbrock-w |  (largest speed, m/s or rad/s; "
        f"quietest {quiet:.3g})"
    )
    print("|---|---|---|---|")
    for i, (c, mu) in enumerate(combos):
        cells = []
        for name in speeds:
            s = speeds[name][i]
            cells.append("non-finite" if np.isnan(s) else f"{s:.3g}" + (" rings" if s > args.ring * quiet else ""))
        print(f"| {c * 1e3:.3f} | {mu:g} | {cells[0]} | {cells[1]} |")
    print("wall s per grid:", {k: round(v, 1) for k, v in walls.items()})
    if args.steps:
        for B in (1, 64):
            for name, implicit in (("rk4", False), ("rosenbrock-w", True)):
                us, compile_s = step_cost(m, implicit, B, args.steps)
                print(f"step cost, B = {B}, {name}: {us:.1f} µs per sample-step (compile {compile_s:.1f} s)")


if __name__ == "__main__":
    main()

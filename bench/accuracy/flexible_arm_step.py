"""The step size the flexible arm's clearance joints need: the N-link arm at several Moreau–Jean steps.

    OPENBLAS_NUM_THREADS=1 python bench/accuracy/flexible_arm_step.py [--links 6] [--dts 1e-4,5e-5,2e-5,1e-5]
                                                  [--t-final 0.5] [--drive-omega 40] [--smoothing S]

Each run: the model's rigid clearance joints by Moreau–Jean with the projection onto the joints, from
the model's initial state, the hub driven at ``--drive-omega`` (40 rad/s throws the joints into free
flight and impacts; the model's default 10 rad/s keeps them loaded). The smoothing window is, by
default, four steps of each run (the model's rule: 8e-5 s at 2e-5 s), so each run is the model a user
runs at that step; ``--smoothing S`` fixes one window for every run instead (the same smoothed arm,
so the distances are the time discretisation's alone). Against the finest step: the largest
distance between the tips over the run (sampled every millisecond), and per run the joints'
free-flight fraction (steps with the joint open, over all joints), the largest joint impulse over the
step (a force), and the wall time of the run (compile apart). The rigid impacts themselves are
resolved at any step (impulses); what limits the step is the links' smoothed elastic modes (explicit
forces) and how finely the impacts' times are sampled.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import flexible_arm  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import MoreauJean  # noqa: E402
from jaxcontact.stepping.projection import Projection  # noqa: E402

SAMPLE = 1e-3  # s between the compared tip positions
WINDOW_STEPS = 4  # the smoothing window in steps (the model's default: 8e-5 s at 2e-5 s)


def run(n_links: int, dt: float, t_final: float, window: float, omega: float) -> dict:
    """One run of the arm at step ``dt``: its tip every SAMPLE s, free flight, peak joint force, times."""
    m = flexible_arm.model("rigid", n_links, smoothing=window, drive_omega=omega)
    q0, u0 = m.initial_state(m.params)
    every = round(SAMPLE / dt)
    n_steps = every * round(t_final / SAMPLE)
    scheme = MoreauJean(projection=Projection())

    @jax.jit
    def go(q0, u0):
        tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=n_steps, scheme=scheme, save_every=1)
        gaps = jax.vmap(lambda qq: m.system.gaps(qq, 0.0, m.params))(tr.q)
        return tr.q[::every], gaps, tr.impulse_normal, tr.diagnostics.converged

    t0 = time.perf_counter()
    jax.block_until_ready(go(q0, u0))
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    q, gaps, impulses, converged = jax.block_until_ready(go(q0, u0))
    wall = time.perf_counter() - t0
    tip = np.stack(flexible_arm.tip(np.asarray(q), n_links), axis=-1)
    return dict(
        dt=dt,
        tip=tip,
        unconverged=int(np.sum(~np.asarray(converged))),
        steps=n_steps,
        free=float(np.mean(np.asarray(gaps) > 1e-9)),
        peak_force=float(np.max(np.asarray(impulses)) / dt),
        compile_s=first - wall,
        wall_s=wall,
    )


def main(argv=None) -> int:
    """Print the table: step, tip distance to the finest run, free flight, peak force, times."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=6)
    ap.add_argument("--dts", default="1e-4,5e-5,2e-5,1e-5", help="comma-separated steps (s), finest last")
    ap.add_argument("--t-final", type=float, default=0.5)
    ap.add_argument("--drive-omega", type=float, default=40.0, help="the hub's drive frequency (rad/s)")
    ap.add_argument("--smoothing", type=float, default=None, help="one smoothing window (s) for every run")
    args = ap.parse_args(argv)
    dts = [float(d) for d in args.dts.split(",")]
    windows = [WINDOW_STEPS * d if args.smoothing is None else args.smoothing for d in dts]
    runs = [run(args.links, d, args.t_final, w, args.drive_omega) for d, w in zip(dts, windows, strict=True)]
    ref = runs[-1]
    window = f"{WINDOW_STEPS} steps" if args.smoothing is None else f"{args.smoothing:g} s"
    print(
        f"{args.links}-link arm, {args.t_final} s, drive {args.drive_omega:g} rad/s, smoothing window {window}; "
        f"tip distance against dt = {ref['dt']:g} s"
    )
    head = ("dt (s)", "max tip distance (mm)", "free flight", "peak joint force (N)", "unconverged steps", "run s")
    print("| " + " | ".join(head) + " | compile s |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        d = 1e3 * np.max(np.linalg.norm(r["tip"] - ref["tip"], axis=1))
        print(
            f"| {r['dt']:g} | {d:.3f} | {100 * r['free']:.2f} % | "
            f"{r['peak_force']:.1f} | {r['unconverged']} of {r['steps']} | {r['wall_s']:.1f} | {r['compile_s']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

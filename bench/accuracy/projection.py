"""Cost and drift of the constraint treatments on the four-bar (docs/theory/projection-baumgarte.md).

Options: none (plain Moreau–Jean), Baumgarte (α = β = 0.5/h), projection of
the joints only, projection with the resting-contact lift (Moreau–Jean
``projection=Projection()``), and the paper's scheme (``ImpactProjection``).

1. Cost per step: the published four-bar run (h = 0.01 s, 200 steps, frictionless wall, PGS)
   at batch 1 and batch ``--batch`` (vmap over identical samples), float64,
   diagnostics off (the throughput configuration); steady-state time of one
   jitted call divided by steps × batch, compile time apart.
2. Drift after 10⁵ steps (h = 0.01 s, 1000 s), diagnostics on, ‖Φ‖ and
   ‖Φ_q u + Φ_t‖ at the end and their max over every 1000th step, for two runs:
   the four-bar as published (the linkage ends resting on the wall), and a free swing
   (torque 0, wall out of reach at 1 m, ground 0.45 m, released at θ1 = π/4 under gravity:
   the parallelogram swings for 10⁵ steps without contact).

Appends a section to bench/RESULTS.md (machine, date, load) unless --no-append.
Run: python bench/accuracy/projection.py [--batch 256] [--drift-steps 100000] [--no-append]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/, for common.py

import common  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--drift-steps", type=int, default=100_000)
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.models import four_bar
    from jaxcontact.simulate import simulate
    from jaxcontact.stepping import ImpactProjection, MoreauJean, Projection, baumgarte_rates

    options = {
        "none": dict(),
        "Baumgarte α = β = 0.5/h": dict(baumgarte=baumgarte_rates(0.5)),
        "projection, joints only": dict(projection=Projection(resting_contacts=False)),
        "projection + resting contacts": dict(projection=Projection()),
    }
    schemes = {name: MoreauJean(**kw) for name, kw in options.items()}
    paper = "paper's scheme (ImpactProjection)"
    schemes[paper] = ImpactProjection()
    h = 0.01
    load_before = os.getloadavg()

    def setup(params):
        system, p = four_bar.mechanism(False).build(params)
        q0, u0 = four_bar.initial_state(p)
        return system, p, q0, u0

    # 1. cost per step
    system, p, q0, u0 = setup(four_bar.DEFAULTS)
    B = args.batch
    pb = jax.tree.map(lambda x: jnp.broadcast_to(x, (B,) + jnp.shape(x)), p)
    qb, ub = jnp.broadcast_to(q0, (B, q0.shape[0])), jnp.broadcast_to(u0, (B, u0.shape[0]))
    cost_rows = []
    cost = {}
    for name, sch in schemes.items():
        sch_fast = type(sch)(**{**sch.__dict__, "diagnostics": False})
        row = [name]
        for batch, (pp, qq, uu) in ((1, (p, q0, u0)), (B, (pb, qb, ub))):
            # Under jit the input checks (outside-jit validation) are traced away: only the scan is timed.
            fn = jax.jit(
                lambda pp, qq, uu: (
                    simulate(system, pp, qq, uu, dt=h, n_steps=args.steps, scheme=sch_fast, save_every=args.steps).q
                )
            )
            tm = common.time_call(fn, pp, qq, uu)
            per = tm.steady_s / (args.steps * batch)
            cost[(name, batch)] = per
            row += [f"{per * 1e6:.2f}", f"{tm.first_s - tm.steady_s:.1f}"]
        cost_rows.append(row)
        print("cost", row, flush=True)
    base1, baseB = cost[("none", 1)], cost[("none", B)]
    for row in cost_rows:
        row += [f"{cost[(row[0], 1)] / base1:.2f}", f"{cost[(row[0], B)] / baseB:.2f}"]

    # 2. drift after many steps
    # ground 0.45 m: a non-Grashof linkage (0.2 + 0.45 > 0.2 + 0.4), so the swing never passes a
    # configuration with all joints collinear (the parallelogram does, at θ1 = 0, where Φ_q loses rank).
    free = dict(four_bar.DEFAULTS, torque=0.0, wall_distance=1.0, initial_angle=math.pi / 4, ground_length=0.45)
    n = args.drift_steps
    save = max(1, n // 100)
    drift_rows = []
    for label, params in (("E1 (rests on the wall)", four_bar.DEFAULTS), ("free swing", free)):
        system, p, q0, u0 = setup(params)
        for name, sch in schemes.items():
            t0 = time.perf_counter()
            tr = simulate(system, p, q0, u0, dt=h, n_steps=n, scheme=sch, save_every=save)
            phi, phid = np.asarray(tr.diagnostics.phi), np.asarray(tr.diagnostics.phi_dot)
            xa = np.asarray(four_bar.point_a(tr.q[-1], p))[0]
            gap = xa + float(p["wall_distance"])
            wall = f"{gap:.1e}" if label.startswith("E1") else "—"
            drift_rows.append(
                [
                    label,
                    name,
                    f"{phi[-1]:.2e}",
                    f"{phi.max():.2e}",
                    f"{phid[-1]:.2e}",
                    f"{phid.max():.2e}",
                    wall,
                    str(bool(np.all(tr.diagnostics.converged))),
                    f"{time.perf_counter() - t0:.1f}",
                ]
            )
            print("drift", drift_rows[-1], flush=True)
    load_after = os.getloadavg()

    info = common.machine_info()
    section = "\n".join(
        [
            "## Four-bar constraint treatments: cost per step and drift (bench/accuracy/projection.py) — "
            + common.utc_date(),
            "",
            common.machine_markdown(
                info,
                {
                    "load average (1, 5, 15 min) before / after": f"{load_before[0]:.1f} {load_before[1]:.1f} "
                    f"{load_before[2]:.1f} / "
                    f"{load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} "
                    "(2 cores shared with other jobs: absolute times are inflated)"
                },
            ),
            "",
            f"Cost per step: the published four-bar at h = {h} s, {args.steps} steps, float64, frictionless wall "
            "(PGS), "
            "diagnostics off, one device; steady-state median of a jitted call / (steps × batch); "
            "compile = first call − steady state.",
            "",
            common.markdown_table(
                [
                    "option",
                    "µs/step, batch 1",
                    "compile s",
                    f"µs/env-step, batch {B}",
                    "compile s",
                    "× none (batch 1)",
                    f"× none (batch {B})",
                ],
                cost_rows,
            ),
            "",
            f"Drift after {n} steps of h = {h} s (‖Φ‖, ‖Φ̇‖ = ‖Φ_q u + Φ_t‖ at the last step and max over every "
            f"{save}th step; final gap of point a to the wall; float64). Free swing: torque 0, wall at 1 m "
            "(never reached), ground 0.45 m (no collinear configuration), released at θ1 = π/4 under gravity.",
            "",
            common.markdown_table(
                ["run", "option", "‖Φ‖ final", "‖Φ‖ max", "‖Φ̇‖ final", "‖Φ̇‖ max", "final gap m", "converged", "wall s"],
                drift_rows,
            ),
        ]
    )
    print(section)
    if not args.no_append:
        common.append_results(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())

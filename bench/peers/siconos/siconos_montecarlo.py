"""The bouncing-ball Monte Carlo study done without jaxcontact: a Python loop over Siconos simulations.

    /usr/bin/python3 bench/peers/siconos/siconos_montecarlo.py --samples bench/out/mc_ball_samples.json [--seconds 30]

Run by Debian's ``/usr/bin/python3`` (python3-siconos 4.4 does not import in
the venv). It is what a user without jaxcontact would write: for each sample
(drop height H, restitution ε) build one Siconos simulation with
``bench/peers/siconos/siconos_simulate.ball_run`` (LagrangianLinearTIDS, LagrangianLinearTIR,
NewtonImpactNSL, MoreauJeanOSI(θ = ½), LCP, TimeStepping — the model of the
simulation bench, reused, not copied), step it to the end while recording
(t, y, v, impulse) every step, and reduce the record to the same outcomes as
``jaxcontact.studies.outcomes`` with the same definitions:

    rebound_y     max of y from the first step with impulse > 1e-9 N·s on
                  (the first rebound height; analytic ε² H)
    impacts       steps whose impulse exceeds 1e-9 after a step at or below it
    rest_time     first time after which |v| ≤ 1e-3 m/s to the end (T if never)
    peak_impulse  largest impulse of one step

The clock runs around the whole per-sample work (model construction, the
stepping loop, recording, reduction): the time per sample a user pays.
Samples are taken in the file's order until all are done or ``--seconds``
of wall time is spent, so the caller's first samples are a paired subset.

Input JSON: {"height": [...], "restitution": [...], "dt": h, "t_final": T,
"mass": m, "gravity": g}. Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import siconos_simulate  # noqa: E402  (H9's ball model; imports siconos.kernel)

IMPACT_THRESHOLD = 1e-9  # N·s, jaxcontact.studies.outcomes.outcome default
REST_TOL = 1e-3  # m/s, idem


def outcomes(traj, T):
    """The study's scalar outcomes from one recorded run [(t, y, v, impulse), ...] (rows after each step)."""
    t, y, v, imp = np.array(traj).T
    on = imp > IMPACT_THRESHOLD
    hit = np.flatnonzero(on)
    rebound = float(np.max(y[hit[0] :])) if hit.size else float("nan")
    impacts = int(np.sum(on & ~np.concatenate([[False], on[:-1]])))
    moving = np.flatnonzero(np.abs(v) > REST_TOL)
    if moving.size == 0:
        rest = 0.0
    else:
        rest = float(t[min(moving[-1] + 1, len(t) - 1)])
    return {
        "rebound_y": rebound,
        "impacts": impacts,
        "rest_time": rest,
        "peak_impulse": float(np.max(imp, initial=0.0)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True, help="JSON file of sample parameters (see the module doc)")
    ap.add_argument("--seconds", type=float, default=30.0, help="wall-time budget for the loop")
    ap.add_argument("--max-samples", type=int, default=None)
    a = ap.parse_args()
    spec = json.load(open(a.samples))
    H, E = spec["height"], spec["restitution"]
    n_max = len(H) if a.max_samples is None else min(len(H), a.max_samples)
    rows, times, steps = [], [], []
    t_start = time.perf_counter()
    for i in range(n_max):
        t0 = time.perf_counter()
        n, _, _, traj = siconos_simulate.ball_run(
            float(H[i]), float(E[i]), m=spec["mass"], g=spec["gravity"], h=spec["dt"], T=spec["t_final"], record=True
        )
        rows.append(outcomes(traj, spec["t_final"]))
        times.append(time.perf_counter() - t0)
        steps.append(n)
        if time.perf_counter() - t_start > a.seconds:
            break
    out = {k: [r[k] for r in rows] for k in rows[0]}
    print(
        json.dumps(
            {
                "n": len(rows),
                "seconds_per_sample": times,
                "steps": steps,
                "outcomes": out,
                "siconos": "4.4 (Debian python3-siconos)",
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()

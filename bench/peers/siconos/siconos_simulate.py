"""Siconos Moreau–Jean throughput on the bouncing ball (run by /usr/bin/python3, python3-siconos 4.4).

    /usr/bin/python3 bench/peers/siconos/siconos_simulate.py [--seconds 3]

The ball of ``jaxcontact.models.bouncing_ball`` written the Siconos way:
LagrangianLinearTIDS (one coordinate y, mass m, constant force −m g),
LagrangianLinearTIR (gap y = H q with H = [1]), NewtonImpactNSL(ε),
MoreauJeanOSI(θ = ½), LCP one-step problem, TimeStepping. Simulations of
10 s at h = 1e-3 run one after another (ε and the drop height vary like the
jax bench's batch) until ``--seconds`` of wall time are spent; steps/s counts
computeOneStep + nextStep only (model construction is timed apart).

The physics is checked on the way, with the criteria of bench/perf/simulate.py:
first impact time against √(2H/g), and the rest time (from then on |v| ≤ 2 g h)
against the analytic accumulation time t∞ = t₁ + 2 ε v₀ / (g (1 − ε)).

The four-bar's Siconos port is ``siconos_four_bar.py`` (C-plugin relations;
Python-callback relations crash in Siconos 4.4), timed by
``montecarlo_four_bar_siconos.py``; this script runs the ball only.

Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import siconos.kernel as sk


def ball_run(H, e, m=1.0, g=9.81, h=1e-3, T=10.0, record=False):
    """One simulation; returns (steps, seconds in the stepping loop, seconds building, trajectory or None)."""
    tb = time.perf_counter()
    ball = sk.LagrangianLinearTIDS([H], [0.0], np.array([[m]]))
    ball.setFExtPtr(np.array([-m * g]))
    inter = sk.Interaction(sk.NewtonImpactNSL(e), sk.LagrangianLinearTIR(np.array([[1.0]])))
    nsds = sk.NonSmoothDynamicalSystem(0.0, T)
    nsds.insertDynamicalSystem(ball)
    nsds.link(inter, ball)
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h), sk.MoreauJeanOSI(0.5), sk.LCP())
    build = time.perf_counter() - tb
    traj = []
    steps = 0
    t0 = time.perf_counter()
    while sim.hasNextEvent():
        sim.computeOneStep()
        if record:
            traj.append((sim.nextTime(), ball.q()[0], ball.velocity()[0], inter.lambda_(1)[0]))
        sim.nextStep()
        steps += 1
    return steps, time.perf_counter() - t0, build, traj


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0, help="wall time to spend on throughput runs")
    a = ap.parse_args()
    g, h = 9.81, 1e-3
    # Physics check on one run: H = 1 m, ε = 0.9 (the analytic case).
    _, _, _, traj = ball_run(1.0, 0.9, record=True)
    tr = np.array(traj)
    t, y, v, imp = tr.T
    t1 = math.sqrt(2.0 / g)
    tinf = t1 + 2 * 0.9 * g * t1 / (g * 0.1)
    first = t[np.argmax(imp > 0)]
    moving = np.abs(v) > 2 * g * h
    last = len(t) - 1 - np.argmax(moving[::-1])
    rest = t[min(last + 1, len(t) - 1)]
    # Throughput: simulations one after another.
    steps = 0
    loop = build = 0.0
    k = 0
    while loop < a.seconds:
        s = k % 97 / 96.0
        n, dt_loop, dt_build, _ = ball_run(0.5 + 1.0 * (1 - s), 0.5 + 0.4 * s)
        steps += n
        loop += dt_loop
        build += dt_build
        k += 1
    row = {
        "model": "ball",
        "solver": "MoreauJeanOSI + LCP",
        "steps_per_s": steps / loop,
        "simulations": k,
        "steps": steps,
        "build_s_per_simulation": build / k,
        "note": (
            f"{k} runs of 10 s at h = 1e-3; H = 1, ε = 0.9: first impact {(first - t1) / h:+.1f} steps "
            f"from √(2H/g), rest − t∞ = {(rest - tinf) / h:+.0f} steps"
        ),
    }
    print(
        json.dumps(
            {
                "rows": [row],
                "siconos": getattr(sk, "__version__", "4.4 (Debian python3-siconos)"),
                "notes": "the four-bar was not ported to Siconos (LagrangianDS + LagrangianScleronomousR "
                "plugins for 8 joint rows and the wall); ball only.",
            }
        )
    )


if __name__ == "__main__":
    main()

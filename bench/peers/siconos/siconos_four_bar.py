"""The four-bar Monte Carlo study done without jaxcontact: a Python loop over Siconos simulations.

    /usr/bin/python3 bench/peers/siconos/siconos_four_bar.py --samples bench/out/mc_four_bar_samples.json [--seconds 60]
    /usr/bin/python3 bench/peers/siconos/siconos_four_bar.py --trajectory OUT.json [--restitution 0.8 ...]

Run by Debian's ``/usr/bin/python3`` (python3-siconos 4.4 does not import in
the venv). The four-bar as ``jaxcontact.models.four_bar`` writes it (same
conventions: absolute coordinates q = (x1, y1, θ1, x2, y2, θ2, x3, y3, θ3),
bars 1 and 2 along their body x-axis, bar 3 along its body y-axis, pivots
at (0, 0) and (ground_length, 0), torque T counter-clockwise on bar 1,
gravity along −y, slender rods J = m l² / 12), written the Siconos way:

* LagrangianLinearTIDS with M = diag(m1, m1, J1, m2, m2, J2, m3, m3, J3)
  (constant) and the constant external force (0, −m1 g, T, 0, −m2 g, 0, 0, −m3 g, 0);
* the 8 revolute rows Φ(q) = 0 as a LagrangianScleronomousR with C plugins
  for h and ∂h/∂q (compiled by gcc on first use; Python callbacks crash
  Siconos 4.4, see PLUGIN_C) and EqualityConditionNSL(8);
* point a against the wall, g = x1 + (l1/2) cos θ1 + wall_distance, as a
  second scleronomous relation (plugins) with NewtonImpactNSL(ε), frictionless;
* MoreauJeanOSI(θ = ½), MLCP one-step problem (equalities + complementarity),
  TimeStepping at h = 1e-3 for 2 s.

Friction is left out: the wall contact here is frictionless, while the
jaxcontact default study samples a wall friction coefficient U(0, 0.3). The
Siconos samples take every other parameter (restitution, wall_distance, l1)
from the caller's file; bench/peers/siconos/montecarlo_four_bar_siconos.py shows how much friction moves the
outcomes in jaxcontact.

The clock runs around the whole per-sample work (model construction, the
stepping loop, recording, reduction): the time per sample a user pays.
Recorded per step: t, x of point a, θ1, the wall impulse, ‖Φ(q)‖; reduced to

    impacts       steps whose wall impulse exceeds 1e-9 N·s after a step at or below it
    peak_impulse  largest wall impulse of one step
    final_theta1  θ1 at the end
    max_phi       max over steps of ‖Φ(q)‖₂ (drift of the joints, no projection)

(the ``jaxcontact.studies.outcomes`` definitions for impacts and peak_impulse).

Input JSON of --samples: {"restitution": [...], "wall_distance": [...], "l1": [...],
"dt": h, "t_final": T}. Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

DEFAULTS = {
    "l1": 0.2,
    "l2": 0.4,
    "l3": 0.2,
    "m1": 0.1,
    "m2": 0.2,
    "m3": 0.1,
    "ground_length": 0.4,
    "torque": 10.0,
    "wall_distance": 0.06,
    "restitution": 0.8,
    "gravity": 9.81,
    "initial_angle": math.pi / 2,
}
IMPACT_THRESHOLD = 1e-9  # N·s, jaxcontact.studies.outcomes default


def phi(q, p):
    """The 8 revolute rows (O1, A, B, O3), same joints as four_bar.mechanism()."""
    x1, y1, t1, x2, y2, t2, x3, y3, t3 = q
    h1, h2, h3 = p["l1"] / 2, p["l2"] / 2, p["l3"] / 2
    c1, s1, c2, s2, c3, s3 = math.cos(t1), math.sin(t1), math.cos(t2), math.sin(t2), math.cos(t3), math.sin(t3)
    return np.array(
        [
            x1 - h1 * c1,
            y1 - h1 * s1,  # O1: bar 1 (−l1/2, 0) at (0, 0)
            x1 + h1 * c1 - x2 + h2 * c2,
            y1 + h1 * s1 - y2 + h2 * s2,  # A: bar 1 (l1/2, 0) = bar 2 (−l2/2, 0)
            x2 + h2 * c2 - x3 + h3 * s3,
            y2 + h2 * s2 - y3 - h3 * c3,  # B: bar 2 (l2/2, 0) = bar 3 (0, l3/2)
            x3 + h3 * s3 - p["ground_length"],
            y3 - h3 * c3,  # O3: bar 3 (0, −l3/2) at (L, 0)
        ]
    )


def phi_q(q, p):
    """∂Φ/∂q (8 × 9)."""
    _, _, t1, _, _, t2, _, _, t3 = q
    h1, h2, h3 = p["l1"] / 2, p["l2"] / 2, p["l3"] / 2
    c1, s1, c2, s2, c3, s3 = math.cos(t1), math.sin(t1), math.cos(t2), math.sin(t2), math.cos(t3), math.sin(t3)
    J = np.zeros((8, 9))
    J[0, 0], J[0, 2] = 1.0, h1 * s1
    J[1, 1], J[1, 2] = 1.0, -h1 * c1
    J[2, 0], J[2, 2], J[2, 3], J[2, 5] = 1.0, -h1 * s1, -1.0, -h2 * s2
    J[3, 1], J[3, 2], J[3, 4], J[3, 5] = 1.0, h1 * c1, -1.0, h2 * c2
    J[4, 3], J[4, 5], J[4, 6], J[4, 8] = 1.0, -h2 * s2, -1.0, h3 * c3
    J[5, 4], J[5, 5], J[5, 7], J[5, 8] = 1.0, h2 * c2, -1.0, h3 * s3
    J[6, 6], J[6, 8] = 1.0, h3 * c3
    J[7, 7], J[7, 8] = 1.0, h3 * s3
    return J


# The relations are C plugins compiled on first use (gcc, -O2): a Python subclass of
# LagrangianScleronomousR overriding computeh / computeJachq (the SWIG-director idiom) does
# not run in Siconos 4.4 — the callbacks are called, then MoreauJeanOSI::computeFreeOutput
# segfaults (a virtual call on a freed object: the director hands back temporary matrices;
# with computeDotJachq not overridden it fails earlier with "argument 2 of type
# 'BlockVector const &'"). Plugins are the Siconos idiom for nonlinear relations anyway.
# The parameters reach them through the DS's z = (l1, l2, l3, ground_length, wall_distance).
PLUGIN_C = r"""
#include <math.h>
/* z = (l1, l2, l3, ground_length, wall_distance); rows as phi() in siconos_four_bar.py */
void joints_h(unsigned int nq, double* q, unsigned int ny, double* y, unsigned int nz, double* z)
{
  double h1 = z[0] / 2, h2 = z[1] / 2, h3 = z[2] / 2;
  double c1 = cos(q[2]), s1 = sin(q[2]), c2 = cos(q[5]), s2 = sin(q[5]), c3 = cos(q[8]), s3 = sin(q[8]);
  y[0] = q[0] - h1 * c1;
  y[1] = q[1] - h1 * s1;
  y[2] = q[0] + h1 * c1 - q[3] + h2 * c2;
  y[3] = q[1] + h1 * s1 - q[4] + h2 * s2;
  y[4] = q[3] + h2 * c2 - q[6] + h3 * s3;
  y[5] = q[4] + h2 * s2 - q[7] - h3 * c3;
  y[6] = q[6] + h3 * s3 - z[3];
  y[7] = q[7] - h3 * c3;
}
#define G(i, j) g[(i) + 8 * (j)] /* column-major 8 x 9 */
void joints_G0(unsigned int nq, double* q, unsigned int ny, double* g, unsigned int nz, double* z)
{
  double h1 = z[0] / 2, h2 = z[1] / 2, h3 = z[2] / 2;
  double c1 = cos(q[2]), s1 = sin(q[2]), c2 = cos(q[5]), s2 = sin(q[5]), c3 = cos(q[8]), s3 = sin(q[8]);
  for (int k = 0; k < 72; k++) g[k] = 0.0;
  G(0, 0) = 1.0; G(0, 2) = h1 * s1;
  G(1, 1) = 1.0; G(1, 2) = -h1 * c1;
  G(2, 0) = 1.0; G(2, 2) = -h1 * s1; G(2, 3) = -1.0; G(2, 5) = -h2 * s2;
  G(3, 1) = 1.0; G(3, 2) = h1 * c1;  G(3, 4) = -1.0; G(3, 5) = h2 * c2;
  G(4, 3) = 1.0; G(4, 5) = -h2 * s2; G(4, 6) = -1.0; G(4, 8) = h3 * c3;
  G(5, 4) = 1.0; G(5, 5) = h2 * c2;  G(5, 7) = -1.0; G(5, 8) = h3 * s3;
  G(6, 6) = 1.0; G(6, 8) = h3 * c3;
  G(7, 7) = 1.0; G(7, 8) = h3 * s3;
}
void wall_h(unsigned int nq, double* q, unsigned int ny, double* y, unsigned int nz, double* z)
{
  y[0] = q[0] + 0.5 * z[0] * cos(q[2]) + z[4];
}
void wall_G0(unsigned int nq, double* q, unsigned int ny, double* g, unsigned int nz, double* z)
{
  for (unsigned int k = 0; k < nq; k++) g[k] = 0.0;
  g[0] = 1.0;
  g[2] = -0.5 * z[0] * sin(q[2]);
}
"""


def plugin_library(build_dir=None) -> str:
    """Compile PLUGIN_C once into ``build_dir`` (default: a temp dir keyed by its hash); the Siconos 'lib' prefix."""
    key = hashlib.sha1(PLUGIN_C.encode()).hexdigest()[:12]
    d = build_dir or os.path.join(tempfile.gettempdir(), f"jaxcontact_siconos_four_bar_{key}")
    os.makedirs(d, exist_ok=True)
    lib = os.path.join(d, "FourBarPlugin")
    if not os.path.exists(lib + ".so"):
        with open(lib + ".c", "w") as fh:
            fh.write(PLUGIN_C)
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", lib + ".so", lib + ".c", "-lm"], check=True)
    return lib


def initial_state(p):
    """q0 from the lengths as four_bar.initial_state (bar 1 at initial_angle, parallelogram branch)."""
    th1 = p["initial_angle"]
    ax, ay = p["l1"] * math.cos(th1), p["l1"] * math.sin(th1)
    ox, oy = p["ground_length"], 0.0
    dx, dy = ox - ax, oy - ay
    d = math.hypot(dx, dy)
    ex, ey = dx / d, dy / d
    a = (p["l2"] ** 2 - p["l3"] ** 2 + d * d) / (2.0 * d)
    h = math.sqrt(max(p["l2"] ** 2 - a * a, 0.0))
    bx, by = ax + a * ex - h * ey, ay + a * ey + h * ex
    th2 = math.atan2(by - ay, bx - ax)
    th3 = math.atan2(-(bx - ox), by - oy)
    return [ax / 2, ay / 2, th1, (ax + bx) / 2, (ay + by) / 2, th2, (ox + bx) / 2, (oy + by) / 2, th3]


def four_bar_run(p, h=1e-3, T=2.0):
    """One simulation; returns (steps, trajectory rows (t, x_a, θ1, impulse, ‖Φ‖), seconds building)."""
    import siconos.kernel as sk  # here, so that phi / outcomes import in the venv too

    tb = time.perf_counter()
    m1, m2, m3, l1, l2, l3, g = (p[k] for k in ("m1", "m2", "m3", "l1", "l2", "l3", "gravity"))
    M = np.diag([m1, m1, m1 * l1**2 / 12, m2, m2, m2 * l2**2 / 12, m3, m3, m3 * l3**2 / 12])
    q0 = initial_state(p)
    ds = sk.LagrangianLinearTIDS(q0, [0.0] * 9, M)
    ds.setFExtPtr(np.array([0.0, -m1 * g, p["torque"], 0.0, -m2 * g, 0.0, 0.0, -m3 * g, 0.0]))
    ds.setzPtr(np.array([l1, l2, l3, p["ground_length"], p["wall_distance"]]))
    lib = plugin_library()
    joints = sk.Interaction(
        sk.EqualityConditionNSL(8), sk.LagrangianScleronomousR(lib + ":joints_h", lib + ":joints_G0")
    )
    wall = sk.Interaction(
        sk.NewtonImpactNSL(p["restitution"]), sk.LagrangianScleronomousR(lib + ":wall_h", lib + ":wall_G0")
    )
    nsds = sk.NonSmoothDynamicalSystem(0.0, T)
    nsds.insertDynamicalSystem(ds)
    nsds.link(joints, ds)
    nsds.link(wall, ds)
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h), sk.MoreauJeanOSI(0.5), sk.MLCP())
    build = time.perf_counter() - tb
    rows = []
    while sim.hasNextEvent():
        sim.computeOneStep()
        q = ds.q()
        rows.append(
            (
                sim.nextTime(),
                q[0] + 0.5 * l1 * math.cos(q[2]),
                q[2],
                wall.lambda_(1)[0],
                float(np.linalg.norm(phi(q, p))),
            )
        )
        sim.nextStep()
    return len(rows), rows, build


def outcomes(rows):
    t, xa, th1, imp, nphi = np.array(rows).T
    on = imp > IMPACT_THRESHOLD
    return {
        "impacts": int(np.sum(on & ~np.concatenate([[False], on[:-1]]))),
        "peak_impulse": float(np.max(imp, initial=0.0)),
        "final_theta1": float(th1[-1]),
        "max_phi": float(np.max(nphi)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", help="JSON file of sample parameters (see the module doc)")
    ap.add_argument("--seconds", type=float, default=60.0, help="wall-time budget for the loop")
    ap.add_argument("--max-samples", type=int, default=None)
    ap.add_argument("--trajectory", help="write one run's (t, x_a, θ1, impulse, ‖Φ‖) rows to this JSON file")
    for k in ("restitution", "wall_distance", "l1"):
        ap.add_argument(f"--{k.replace('_', '-')}", type=float, default=DEFAULTS[k])
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--t-final", type=float, default=2.0)
    a = ap.parse_args()
    if a.trajectory:
        p = dict(DEFAULTS, restitution=a.restitution, wall_distance=a.wall_distance, l1=a.l1)
        n, rows, _ = four_bar_run(p, a.dt, a.t_final)
        json.dump({"params": p, "rows": rows, "outcomes": outcomes(rows)}, open(a.trajectory, "w"))
        print(json.dumps({"steps": n, "outcomes": outcomes(rows)}))
        return
    spec = json.load(open(a.samples))
    n_all = len(spec["restitution"])
    n_max = n_all if a.max_samples is None else min(n_all, a.max_samples)
    res, times, steps = [], [], []
    t_start = time.perf_counter()
    for i in range(n_max):
        t0 = time.perf_counter()
        p = dict(DEFAULTS, **{k: float(spec[k][i]) for k in ("restitution", "wall_distance", "l1")})
        n, rows, _ = four_bar_run(p, spec["dt"], spec["t_final"])
        res.append(outcomes(rows))
        times.append(time.perf_counter() - t0)
        steps.append(n)
        if time.perf_counter() - t_start > a.seconds:
            break
    out = {k: [r[k] for r in res] for k in res[0]}
    print(
        json.dumps(
            {
                "n": len(res),
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

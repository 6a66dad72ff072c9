"""The box-toss model simulated by Siconos 4.4 with one contact Interaction per vertex (no Bullet).

    /usr/bin/python3 bench/references/siconos_box_toss_vertices.py   # writes tests/data/siconos/box_toss_vertices.npz

The body, law, integrator, solver and time stepping are those of ``bench/references/siconos_box_toss.py``
(parameters from ``tests/data/box_toss_summary.json``; ``NewtonEulerDS`` with the box's inertia,
``NewtonImpactFrictionNSL(ε, 0, μ, 3)``, ``MoreauJeanOSI(½)``, ``FrictionContact(3)`` by NSGS to
1e-12, ``TimeStepping`` with Newton iterated); only the contact detection differs: instead of
Bullet's manifold, 8 Interactions, one per vertex of the box, linked to the box alone (the
ground is fixed), as jaxcontact's model has.

The relation. Siconos' ``NewtonEuler3DR`` stores its contact point in the body frame
(``relPc1``) and rotates it with the body's q whenever the output is computed
(NewtonEuler1DR::computeh); its Jacobian (NewtonEuler3DR::FC3DcomputeJachqTFromContacts)
is the contact frame (normal nc, two tangents) times [I | (x_G − P)^ R(q)] at that point,
with the angular velocity in the body frame like the twist of ``NewtonEulerDS``. The
plain relation cannot be used as it is: its position output is NewtonEulerR::computeh's
y = ∇_q h · q + e, the linear form, which for this Jacobian is the normal coordinate of the
centre of mass (the quaternion part is the derivative of the normalised rotation, homogeneous
of degree 0 in q: it contributes nothing), not the vertex's height. Its ``y[0]`` decides
which interactions enter the one-step problem (MoreauJeanOSI::addInteractionInIndexSet:
y + h/2 ẏ ≤ 0), so with it no vertex would ever touch the plane. The relation used is
therefore ``ContactR`` (siconos.mechanics.collision.base), the detection-independent parent of
Bullet's ``BulletR``: a ``NewtonEuler3DR`` whose output is y[0] = distance(), the signed
distance ±|P2 − P1| from the body's point P1 to the point P2 on the other side (here absolute,
there being no second body), positive when (P2 − P1)·nc < 0. It is a C++ class used as is:
no Python subclass (an earlier attempt with one crashed in SWIG's director call, bench/RESULTS.md).

The detection, in this script, is what Bullet's manifold update does for ``BulletR``
(ContactR::updateContactPoints): for every vertex r (body frame), P1 = r in the body frame,
P2 = the vertex's vertical projection on the plane z = 0 (absolute), nc = (0, 0, 1). Then
distance() is the vertex's height exactly. It is done at the start and again after every
step, at the converged state, and the vertex's distance recomputed there (its output at
level 0), so that the index set of the next step is decided by the exact gap at the step
start, g(q_k) + h/2 ẏ ≤ 0 (Siconos' rule; jaxcontact's default activates on g(q_k + h/2 u_k)
≤ 0, the same prediction to O(h²)). Inside the Newton loop P2 stays where it was put at the
step start; only the level-0 output reads it, and the index set is not updated within a step.

The script runs h (the model's step), h/2 and h/4 and stores the first run's every step and
all runs' outcomes.

Stored (every step of the run at h): t, q (7), v (6), the number of contacts in the
one-step problem, the normal impulse of each vertex (8, jaxcontact's vertex order), NSGS'
error; for every run (h, h/2, h/4) its step, rest time, final q, impact times (Σ λ_N > 0.05 N·s),
impulses and the largest NSGS error before rest; the parameters and settings.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from siconos_box_toss import (
    IMPACT,
    SOLVER_MAX_ITER,
    SOLVER_TOL,
    SUMMARY,
    initial_state,
    outcome,  # noqa: E402
    record_steps,
    time_stepping,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "siconos", "box_toss_vertices.npz")
# The steps: the model's h and its halves, for Siconos' own convergence in h.
REFINE = (1, 2, 4)
NEWTON = "SICONOS_TS_NONLINEAR"  # Siconos' default (mechanics_run)


def vertices(p):
    """The 8 vertices in the body frame, in jaxcontact's BoxPlane order (signs of x, y, z; x slowest)."""
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    return signs * np.array([p["half_x"], p["half_y"], p["half_z"]])


def rotation(quat):
    """Body-to-world rotation of the unit quaternion (w, x, y, z)."""
    w, x, y, z = quat / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def run(p, h, t_final):
    """Siconos' run with vertex contacts: every step's t, q, twist, contact count, λ_N per vertex, NSGS error."""
    import siconos.kernel as sk
    from siconos.mechanics.collision.base import ContactR

    m, a, b, c = p["mass"], p["half_x"], p["half_y"], p["half_z"]
    inertia = np.diag([m * (b * b + c * c) / 3.0, m * (a * a + c * c) / 3.0, m * (a * a + b * b) / 3.0])
    q0, v0 = initial_state(p)
    body = sk.NewtonEulerDS(list(q0), list(v0), m, inertia)
    body.setFExtPtr(np.array([0.0, 0.0, -m * p["gravity"]]))

    nsds = sk.NonSmoothDynamicalSystem(0.0, t_final)
    nsds.insertDynamicalSystem(body)
    verts = vertices(p)
    normal = np.array([0.0, 0.0, 1.0])
    relations, interactions = [], []

    def detect(q):
        """Each vertex's contact points: itself (body frame) and its projection on the plane (absolute)."""
        world = q[:3] + verts @ rotation(q[3:]).T
        for r, x, rel in zip(verts, world, relations):
            rel.updateContactPoints(r, np.array([x[0], x[1], 0.0]), normal)

    for r in verts:
        rel = ContactR()
        rel.updateContactPoints(r, np.zeros(3), normal)
        relations.append(rel)
    detect(q0)
    for rel in relations:
        inter = sk.Interaction(sk.NewtonImpactFrictionNSL(p["restitution"], 0.0, p["friction"], 3), rel)
        nsds.link(inter, body)
        interactions.append(inter)

    sim, fc, so = time_stepping(nsds, h, NEWTON)

    n_steps = int(round(t_final / h))
    impulse = np.zeros((n_steps + 1, len(verts)))
    gap = np.zeros((n_steps + 1, len(verts)))
    gap[0] = np.nan  # the outputs are computed when the simulation initialises, in its first step

    def vertex_columns(k, t, q, nc):
        # λ of the interactions out of the one-step problem is zeroed by updateIndexSet (next call).
        impulse[k] = [inter.lambda_(1)[0] for inter in interactions]
        # The detection at the converged state and the distances there: the next index set's gaps.
        detect(q)
        for inter in interactions:
            inter.computeOutput(t, 0)
        gap[k] = [inter.y(0)[0] for inter in interactions]

    res = record_steps(sim, fc, so, body, n_steps, vertex_columns)
    n = len(res["t"])
    return dict(
        res,
        impulse=impulse[:n],
        impulse_normal=impulse[:n].sum(axis=1),
        gap=gap[:n],
        inertia=np.diag(inertia),
        q0=q0,
        v0=v0,
    )


def main():
    summary = json.load(open(SUMMARY))
    p, h, t_final = summary["params"], summary["dt"], summary["t_final"]
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    runs = [run(p, h / k, t_final) for k in REFINE]
    ref = runs[0]
    # The detection's check: Siconos' distance is our vertex height at every stored state.
    heights = np.array([qq[2] + (vertices(p) @ rotation(qq[3:]).T)[:, 2] for qq in ref["q"]])
    detection_error = float(np.max(np.abs(heights - ref["gap"])[1:]))
    outs = [outcome(r) for r in runs]
    rests = [np.flatnonzero(np.max(np.abs(r["v"]), axis=1) > 1e-9)[-1] + 1 for r in runs]
    n_imp = max(len(o["impact_steps"]) for o in outs)
    stored = {k: ref[k] for k in ("t", "q", "v", "contacts", "impulse", "solver_error", "inertia", "q0", "v0")}
    stored.update(
        runs_h=np.array([h / k for k in REFINE]),
        runs_rest_time=np.array([o["rest_time"] for o in outs]),
        runs_final_q=np.array([o["final_q"] for o in outs]),
        runs_impact_times=np.array(
            [
                np.pad(o["impact_steps"] * h / k, (0, n_imp - len(o["impact_steps"])), constant_values=np.nan)
                for o, k in zip(outs, REFINE)
            ]
        ),
        runs_impact_impulses=np.array(
            [np.pad(o["impact_impulses"], (0, n_imp - len(o["impact_impulses"])), constant_values=np.nan) for o in outs]
        ),
        runs_solver_error=np.array([r["solver_error"][:i].max() for r, i in zip(runs, rests)]),
    )
    settings = dict(
        h=h,
        t_final=t_final,
        theta=0.5,
        solver_tol=SOLVER_TOL,
        solver_max_iter=SOLVER_MAX_ITER,
        impact=IMPACT,
        newton_linear=float(NEWTON == "SICONOS_TS_LINEAR"),
    )
    os.makedirs(os.path.dirname(out), exist_ok=True)
    np.savez_compressed(
        out,
        **stored,
        **{f"param_{k}": np.float64(val) for k, val in p.items()},
        **{k: np.float64(val) for k, val in settings.items()},
    )
    report = dict(
        out=out,
        detection_error=detection_error,
        max_contacts=int(ref["contacts"].max()),
        runs=[
            dict(
                h=h / k,
                rest_time=o["rest_time"],
                final_q=o["final_q"].round(5).tolist(),
                impact_times=(o["impact_steps"] * h / k).round(5).tolist(),
                impact_impulses=o["impact_impulses"].round(4).tolist(),
                solver_error=float(e),
            )
            for k, o, e in zip(REFINE, outs, stored["runs_solver_error"])
        ],
    )
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

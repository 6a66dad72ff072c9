"""The box-toss model simulated by Siconos 4.4's mechanics module (Bullet contact detection).

    /usr/bin/python3 bench/references/siconos_box_toss.py     # writes tests/data/siconos/box_toss_bullet.npz (~30 s)

The box, its initial state, gravity, restitution, friction, step and horizon are those of
jaxcontact's ``box-toss`` model, read from ``tests/data/box_toss_summary.json`` (written by
``bench/references/box_toss.py`` from the model itself, so the two sides cannot drift apart): a
``RigidBodyDS`` (Newton–Euler: q = (x, quaternion w x y z), twist = (v in the world frame,
ω in the body frame), as jaxcontact's spatial body) with the box's inertia
diag(m (b² + c²) / 3, …) given explicitly (``setUseContactorInertia(False)``), a ``SiconosBox``
of full sizes 2 (a, b, c), one ``NewtonImpactFrictionNSL(ε, 0, μ, 3)``, ``MoreauJeanOSI(θ = ½)``,
``FrictionContact(3)`` solved by NSGS to Siconos' error 1e-12 (the tolerance of jaxcontact's
run; at most 10 000 sweeps: reached to 1e-8 but in the few steps where the box comes to
rest), ``TimeStepping`` with Siconos' default ``SICONOS_TS_NONLINEAR`` (Newton iterated on the
θ-step: second order in free flight like jaxcontact; with ``SICONOS_TS_LINEAR``, one
linearisation per step, the gyroscopic term makes Siconos' free flight first order).

Contact detection is Bullet's (``SiconosBulletCollisionManager``; the native collision module
only has spheres and disks), not jaxcontact's 8 vertex gaps. What that changes, and the
settings that make the two comparable:

* The ground is a static 10 m × 10 m × 1 m ``SiconosBox`` whose top face is the plane z = 0,
  not a ``SiconosPlane``: against a plane Bullet finds one supporting vertex per step (and,
  with perturbation, those of rotated copies), which here fired the first impact with the
  real vertex 3.7 mm above the plane and ended the run on another face. Bullet's box–box
  detector gives the real vertices: at the first bounce the manifold point is the vertex
  within 1e-6 m.
* ``perturbationIterations`` = 0 (Siconos' default is 3): the extra points come from slightly
  rotated copies of the box with the copies' distances; at h = 5e-4 s they fired the first
  impact with the vertex 1.0 mm above the plane (2.12 N·s instead of 2.99).
* Bullet reports a contact once the shapes touch or penetrate, so an impact can start one
  step later than jaxcontact's (active when the gap at q + h/2 u ≤ 0); in this run they start
  at the same step.
* Bullet's manifold is persistent, ≤ 4 points per pair: points are kept from step to step
  while they stay within ``contactBreakingThreshold`` (2 cm, Siconos' default) and are
  replaced by area maximisation, so while the box rocks and slides some points lag behind
  the vertices (measured: mm off a vertex, and points inside edges) and at rest it stands on
  such points, its vertices up to 0.2 mm off the plane. The rocking phase therefore depends
  on the step: Siconos' rest pose and rest time do not converge as h → 0.
* The convex margin rounds the box's edges with a sphere of radius ``insideMargin``
  (the shape stays inside its sizes): 1e-6 m here (Siconos' default is 2 % of the smallest
  size), so that contact points are vertices to that distance; ``outsideMargin`` 0.

The script also runs the reference at h/2 and h/4, and with SICONOS_TS_LINEAR at h, h/2 and
h/4, and stores their outcomes: their spread is the uncertainty of Siconos' rest pose, which
tests/spatial/test_box_toss_siconos.py uses.

Stored (every step of the reference run): t, q (7), v (6), the number of contacts in the
one-step problem, the sum of their normal impulses λ_N (N·s) and NSGS' error; the
parameters and settings; for the other runs their step, Newton option, rest time, final q,
impact times (Σ λ_N > 0.05 N·s) and impulses.
"""

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUMMARY = os.path.join(ROOT, "tests", "data", "box_toss_summary.json")
OUT = os.path.join(ROOT, "tests", "data", "siconos", "box_toss_bullet.npz")

# The reference's settings (see the docstring). Bullet: margins, manifold, the ground.
REFERENCE = dict(
    contact_breaking_threshold=0.02,  # Siconos' default
    perturbation_iterations=0,  # Siconos' default 3 fires impacts before contact (docstring)
    newton="SICONOS_TS_NONLINEAR",  # Siconos' default (mechanics_run)
    ground="box",
)
INSIDE_MARGIN = 1e-6
OUTSIDE_MARGIN = 0.0
GROUND_SIZE = 10.0  # the ground box: 10 m × 10 m × 1 m, its top face the plane z = 0
# NSGS on the 3D cones, to the error jaxcontact's run asks for.
SOLVER_TOL = 1e-12
SOLVER_MAX_ITER = 10000
# The same run at h/2 and h/4, and with one linearisation per step (SICONOS_TS_LINEAR) at h, h/2, h/4:
# how much Siconos' answer depends on its step and Newton option.
SPREAD = [
    (2, "SICONOS_TS_NONLINEAR"),
    (4, "SICONOS_TS_NONLINEAR"),
    (1, "SICONOS_TS_LINEAR"),
    (2, "SICONOS_TS_LINEAR"),
    (4, "SICONOS_TS_LINEAR"),
]
# Impacts: steps whose total normal impulse exceeds this (N·s), as in bench/references/box_toss.py.
IMPACT = 0.05


def initial_state(p):
    """(q (7), twist (6)) of the box-toss model: centre (0, 0, height), turned by tilt_deg about (1, 1, 0)/√2."""
    half = 0.5 * np.deg2rad(p["tilt_deg"])
    axis = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    q = np.concatenate([[0.0, 0.0, p["height"], np.cos(half)], np.sin(half) * axis])
    v = np.array([p["speed"], 0.0, p["vertical_speed"], p["spin_x"], p["spin_y"], p["spin_z"]])
    return q, v


def time_stepping(nsds, h, newton):
    """Siconos' TimeStepping of the comparison: MoreauJeanOSI(½), FrictionContact(3) by NSGS to SOLVER_TOL,
    Newton option ``newton`` (a name in siconos.kernel); returns (simulation, one-step problem, solver options:
    the residual of the last solve is in its dparam)."""
    import siconos.kernel as sk
    import siconos.numerics as sn

    so = sk.solver_options_create(sn.SICONOS_FRICTION_3D_NSGS)
    so.dparam[sn.SICONOS_DPARAM_TOL] = SOLVER_TOL
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = SOLVER_MAX_ITER
    fc = sk.FrictionContact(3, so)
    fc.setKeepLambdaAndYState(True)
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h))
    sim.insertIntegrator(sk.MoreauJeanOSI(0.5))
    sim.insertNonSmoothProblem(fc)
    sim.setNewtonOptions(getattr(sk, newton))
    return sim, fc, so


def run(p, h, t_final, settings):
    """Siconos' run with the given detection settings: every step's t, q, twist, contact count, Σ λ_N, NSGS error."""
    import siconos.kernel as sk
    from siconos.mechanics.collision.base import RigidBodyDS
    from siconos.mechanics.collision.bullet import (
        SiconosBox,
        SiconosBulletCollisionManager,
        SiconosBulletOptions,
        SiconosContactor,
        SiconosContactorSet,
        SiconosPlane,
    )

    m, a, b, c = p["mass"], p["half_x"], p["half_y"], p["half_z"]
    inertia = np.diag([m * (b * b + c * c) / 3.0, m * (a * a + c * c) / 3.0, m * (a * a + b * b) / 3.0])
    q0, v0 = initial_state(p)

    options = SiconosBulletOptions()
    options.contactBreakingThreshold = settings["contact_breaking_threshold"]
    options.perturbationIterations = settings["perturbation_iterations"]
    options.minimumPointsPerturbationThreshold = settings["perturbation_iterations"]
    manager = SiconosBulletCollisionManager(options)

    box = SiconosBox(2.0 * a, 2.0 * b, 2.0 * c)
    box.setInsideMargin(INSIDE_MARGIN)
    box.setOutsideMargin(OUTSIDE_MARGIN)
    body = RigidBodyDS(list(q0), list(v0), m, inertia)
    body.setUseContactorInertia(False)
    shapes = SiconosContactorSet()
    shapes.append(SiconosContactor(box, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], 0))
    body.setContactors(shapes)
    body.setFExtPtr(np.array([0.0, 0.0, -m * p["gravity"]]))

    if settings["ground"] == "plane":
        plane, gpos = SiconosPlane(), [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    else:
        plane, gpos = SiconosBox(GROUND_SIZE, GROUND_SIZE, 1.0), [0.0, 0.0, -0.5, 1.0, 0.0, 0.0, 0.0]
    plane.setInsideMargin(INSIDE_MARGIN)
    plane.setOutsideMargin(OUTSIDE_MARGIN)
    ground = SiconosContactorSet()
    ground.append(SiconosContactor(plane, gpos, 0))
    manager.insertStaticContactorSet(ground, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    manager.insertNonSmoothLaw(sk.NewtonImpactFrictionNSL(p["restitution"], 0.0, p["friction"], 3), 0, 0)

    nsds = sk.NonSmoothDynamicalSystem(0.0, t_final)
    nsds.insertDynamicalSystem(body)
    sim, fc, so = time_stepping(nsds, h, settings["newton"])
    sim.insertInteractionManager(manager)

    n_steps = int(round(t_final / h))
    impulse_normal = np.zeros(n_steps + 1)

    def impulses(k, t, q, nc):
        if nc:
            impulse_normal[k] = np.asarray(fc.z())[: 3 * nc].reshape(-1, 3)[:, 0].sum()

    res = record_steps(sim, fc, so, body, n_steps, impulses)
    return dict(res, impulse_normal=impulse_normal[: len(res["t"])], inertia=np.diag(inertia), q0=q0, v0=v0)


def record_steps(sim, fc, so, body, n_steps, after):
    """Run at most ``n_steps`` steps of ``sim``; returns t, q, v, the one-step problem's contact count and NSGS'
    error, row 0 the start and one row per step taken. ``after(k, t, q, nc)`` is called after step k, before
    Siconos moves on: the step's impulses and the interactions' outputs are readable there."""
    import siconos.numerics as sn

    t = np.zeros(n_steps + 1)
    q = np.zeros((n_steps + 1, 7))
    v = np.zeros((n_steps + 1, 6))
    contacts = np.zeros(n_steps + 1, dtype=np.int64)
    solver_error = np.zeros(n_steps + 1)
    q[0], v[0] = np.asarray(body.q()), np.asarray(body.twist())
    k = 0
    while sim.hasNextEvent() and k < n_steps:
        sim.computeOneStep()
        k += 1
        t[k] = sim.nextTime()
        q[k], v[k] = np.asarray(body.q()), np.asarray(body.twist())
        nc = fc.getSizeOutput() // 3 if sim.numberOfOSNSProblems() and fc.hasInteractions() else 0
        contacts[k] = nc
        if nc:
            solver_error[k] = so.dparam[sn.SICONOS_DPARAM_RESIDU]
        after(k, t[k], q[k], nc)
        sim.nextStep()
    return dict(
        t=t[: k + 1], q=q[: k + 1], v=v[: k + 1], contacts=contacts[: k + 1], solver_error=solver_error[: k + 1]
    )


def outcome(res):
    """Rest time (every velocity ≤ 1e-9 from then on, as bench/references/box_toss.py), final q, impact steps
    and impulses."""
    moving = np.flatnonzero(np.max(np.abs(res["v"]), axis=1) > 1e-9)
    rest = res["t"][moving[-1] + 1] if len(moving) < len(res["t"]) else np.nan
    impacts = np.flatnonzero(res["impulse_normal"] > IMPACT)
    return dict(
        rest_time=float(rest),
        final_q=res["q"][-1],
        impact_steps=impacts,
        impact_impulses=res["impulse_normal"][impacts],
    )


def main():
    summary = json.load(open(SUMMARY))
    p, h, t_final = summary["params"], summary["dt"], summary["t_final"]
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    ref = run(p, h, t_final, REFERENCE)
    stored = dict(ref)
    # The other runs' outcomes, one row each (impacts padded with nan to a common length).
    spread = [outcome(run(p, h / k, t_final, dict(REFERENCE, newton=newton))) for k, newton in SPREAD]
    n_imp = max(len(v["impact_steps"]) for v in spread)
    stored.update(
        spread_h=np.array([h / k for k, _ in SPREAD]),
        spread_newton_linear=np.array([newton == "SICONOS_TS_LINEAR" for _, newton in SPREAD]),
        spread_rest_time=np.array([v["rest_time"] for v in spread]),
        spread_final_q=np.array([v["final_q"] for v in spread]),
        spread_impact_times=np.array(
            [
                np.pad(v["impact_steps"] * h / k, (0, n_imp - len(v["impact_steps"])), constant_values=np.nan)
                for v, (k, _) in zip(spread, SPREAD)
            ]
        ),
        spread_impact_impulses=np.array(
            [
                np.pad(v["impact_impulses"], (0, n_imp - len(v["impact_impulses"])), constant_values=np.nan)
                for v in spread
            ]
        ),
    )
    settings = dict(
        h=h,
        t_final=t_final,
        theta=0.5,
        inside_margin=INSIDE_MARGIN,
        outside_margin=OUTSIDE_MARGIN,
        ground_size=GROUND_SIZE,
        solver_tol=SOLVER_TOL,
        solver_max_iter=SOLVER_MAX_ITER,
        impact=IMPACT,
        contact_breaking_threshold=REFERENCE["contact_breaking_threshold"],
        perturbation_iterations=REFERENCE["perturbation_iterations"],
    )
    settings["newton_linear"] = float(REFERENCE["newton"] == "SICONOS_TS_LINEAR")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    np.savez_compressed(
        out,
        **stored,
        **{f"param_{k}": np.float64(val) for k, val in p.items()},
        **{k: np.float64(val) for k, val in settings.items()},
    )
    report = dict(
        out=out,
        reference={k: np.asarray(v).tolist() for k, v in outcome(ref).items()},
        steps_with_contacts=int(np.sum(ref["contacts"] > 0)),
        max_contacts=int(ref["contacts"].max()),
        worst_solver_error=float(ref["solver_error"].max()),
        spread=[
            dict(
                h=h / k,
                newton=newton,
                rest_time=o["rest_time"],
                final_q=o["final_q"].round(5).tolist(),
                impact_times=(o["impact_steps"] * h / k).round(5).tolist(),
                impact_impulses=o["impact_impulses"].round(4).tolist(),
            )
            for (k, newton), o in zip(SPREAD, spread)
        ],
    )
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

"""Siconos 4.4's Moreau–Jean against ``MoreauJean(force_rule="siconos")``, step by step.

    # venv: Siconos, compare, store, RESULTS.md
    python bench/references/siconos_moreau_jean.py [--no-store] [--no-append]
    /usr/bin/python3 bench/references/siconos_moreau_jean.py --generate OUT_DIR   # Siconos part only

Two models written the Siconos way (LagrangianLinearTIDS, LagrangianLinearTIR,
MoreauJeanOSI(θ = ½), TimeStepping) and the same models ported to
``jaxcontact.linear.linear_system``:

* ball: Siconos' BouncingBallTS tutorial, q = (z, x, θ), M = diag(m, m, 2/5 m r²),
  F = (−m g, 0, 0), gap z − r (H = [1, 0, 0], b = −r), NewtonImpactNSL(ε = 0.9),
  from z = 1 m at rest, r = 0.05, h = 0.005, 5 s (the ball settles on the ground
  after about 4.3 s), LCP solved by Lemke (Siconos' default for ``LCP()``);
* woodpecker: Siconos' Woodpecker tutorial (Glocker's toy woodpecker: sleeve on a
  pole, body on a rotational spring; WoodPeckerConsts.h parameters), three
  NewtonImpactFrictionNSL(ε_N, ε_T = 0, μ = 0.3, 2) contacts, h = 2e-5, 0.3 s,
  FrictionContact(2) with its default solver (2D NSGS), as the tutorial runs it.
  The script also runs Siconos' 2D Lemke (``SICONOS_FRICTION_2D_LEMKE``): its
  impulses leave the Coulomb cone's edge by up to ~5e-12 relative while a contact
  slides (P_T/P_N − μ), which the woodpecker's ill-conditioned iteration matrix
  (condition number 1.6e5: the sleeve's J_M = 5e-9 kg m²) turns into ~6e-11 in q;
  jaxcontact's Lemke and NSGS both keep P_T = μ P_N to ~1e-14.

With the venv's python the script runs itself under ``/usr/bin/python3``
(python3-siconos does not import beside the venv's numpy), compares every
step of both runs with jaxcontact, writes the subsampled references read by
``tests/stepping/test_siconos_mode.py`` to ``tests/data/siconos/`` (with the
model data, so the tests do not restate the models), appends a section to
``bench/RESULTS.md`` and prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH_DIR)
REFERENCE_DIR = os.path.join(ROOT, "tests", "data", "siconos")

# The bouncing ball (BouncingBallTS with the numbers).
BALL = dict(m=1.0, g=9.81, r=0.05, e=0.9, z0=1.0, h=0.005, T=10.0)

# WoodPeckerConsts.h (Siconos tutorials, examples/mechanics/Woodpecker).
WP = dict(
    r_O=0.0025,
    r_M=0.0031,
    h_M=0.0058,
    l_M=0.010,
    l_G=0.015,
    h_S=0.02,
    l_S=0.0201,
    m_M=0.0003,
    m_S=0.0045,
    J_M=5.0e-9,
    J_S=7.0e-7,
    c_phi=0.0056,
    g=9.81,
    eps_N_1=0.5,
    eps_N_23=0.0,
    eps_T_123=0.0,
    mu_123=0.3,
    y_0=0.0,
    phi_M_0=-0.1036,
    phi_S_0=-0.2788,
    v_0=-0.3411,
    omega_M_0=4.8572e-15,
    omega_S_0=-7.4583,
    h=2e-5,
    T=0.3,
)

# Stored in tests/data/siconos/: every row of the ball; every WOODPECKER_STRIDE-th row of the woodpecker and its last.
WOODPECKER_STRIDE = 10


def ball_matrices(p=BALL):
    """(M, F, H, b, e) of the ball (3 coordinates z, x, θ)."""
    m, r = p["m"], p["r"]
    M = np.diag([m, m, 0.4 * m * r * r])
    F = np.array([-m * p["g"], 0.0, 0.0])
    return M, F, np.array([[1.0, 0.0, 0.0]]), np.array([-r]), p["e"]


def woodpecker_matrices(p=WP):
    """(M, K, F, [(H (2×3), b (2,), ε_N)] per contact, q0, v0) of the woodpecker, as WoodPecker.cpp builds them."""
    mS, mM, lM, lG = p["m_S"], p["m_M"], p["l_M"], p["l_G"]
    M = np.array(
        [
            [mS + mM, mS * lM, mS * lG],
            [mS * lM, p["J_M"] + mS * lM * lM, mS * lM * lG],
            [mS * lG, mS * lM * lG, p["J_S"] + mS * lG * lG],
        ]
    )
    c = p["c_phi"]
    K = np.array([[0.0, 0.0, 0.0], [0.0, c, -c], [0.0, -c, c]])
    F = np.array([-(mS + mM) * p["g"], -mS * lM * p["g"], -mS * lG * p["g"]])
    contacts = [
        (
            np.array([[0.0, 0.0, -p["h_S"]], [1.0, lM, lG - p["l_S"]]]),
            np.array([lM + lG - p["l_S"] - p["r_O"], 0.0]),
            p["eps_N_1"],
        ),
        (np.array([[0.0, p["h_M"], 0.0], [1.0, p["r_M"], 0.0]]), np.array([p["r_M"] - p["r_O"], 0.0]), p["eps_N_23"]),
        (np.array([[0.0, -p["h_M"], 0.0], [1.0, p["r_M"], 0.0]]), np.array([p["r_M"] - p["r_O"], 0.0]), p["eps_N_23"]),
    ]
    q0 = np.array([p["y_0"], p["phi_M_0"], p["phi_S_0"]])
    v0 = np.array([p["v_0"], p["omega_M_0"], p["omega_S_0"]])
    return M, K, F, contacts, q0, v0


# ----------------------------------------------------------------------------------------------
# Siconos side (/usr/bin/python3)


def _run_siconos(sim, ds, inters, n_steps, level_lambda=1):
    """Step a Siconos TimeStepping; per step t, q, v, each interaction's λ and whether it was active."""
    import siconos.kernel as sk  # noqa: F401  (only under /usr/bin/python3)

    n = len(np.asarray(ds.q()))
    t = np.zeros(n_steps + 1)
    q = np.zeros((n_steps + 1, n))
    v = np.zeros((n_steps + 1, n))
    lam = np.zeros((n_steps + 1, len(inters), len(np.asarray(inters[0].lambda_(level_lambda)))))
    q[0], v[0] = np.asarray(ds.q()), np.asarray(ds.velocity())
    k = 0
    t0 = time.perf_counter()
    while sim.hasNextEvent() and k < n_steps:
        sim.computeOneStep()
        k += 1
        t[k] = sim.nextTime()
        q[k], v[k] = np.asarray(ds.q()), np.asarray(ds.velocity())
        for j, inter in enumerate(inters):
            lam[k, j] = np.asarray(inter.lambda_(level_lambda))
        sim.nextStep()
    seconds = time.perf_counter() - t0
    return dict(t=t[: k + 1], q=q[: k + 1], v=v[: k + 1], impulse=lam[: k + 1], seconds=np.array(seconds))


def siconos_ball():
    import siconos.kernel as sk

    p = BALL
    M, F, H, b, e = ball_matrices()
    ds = sk.LagrangianLinearTIDS([p["z0"], 0.0, 0.0], [0.0, 0.0, 0.0], M)
    ds.setFExtPtr(F)
    inter = sk.Interaction(sk.NewtonImpactNSL(e), sk.LagrangianLinearTIR(H, b))
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    nsds.insertDynamicalSystem(ds)
    nsds.link(inter, ds)
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), sk.MoreauJeanOSI(0.5), sk.LCP())
    n_steps = int(round(p["T"] / p["h"]))
    return _run_siconos(sim, ds, [inter], n_steps)


def siconos_woodpecker(solver="nsgs"):
    import siconos.kernel as sk
    import siconos.numerics as sn

    p = WP
    M, K, F, contacts, q0, v0 = woodpecker_matrices()
    ds = sk.LagrangianLinearTIDS(q0, v0, M, K, np.zeros((3, 3)))
    ds.setFExtPtr(F)
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    nsds.insertDynamicalSystem(ds)
    inters = []
    for H, b, eN in contacts:
        inter = sk.Interaction(
            sk.NewtonImpactFrictionNSL(eN, p["eps_T_123"], p["mu_123"], 2), sk.LagrangianLinearTIR(H, b)
        )
        nsds.link(inter, ds)
        inters.append(inter)
    if solver == "lemke":
        osnspb = sk.FrictionContact(2, sn.SICONOS_FRICTION_2D_LEMKE)
    else:  # the tutorial's default (2D NSGS at its default tolerance)
        osnspb = sk.FrictionContact(2)
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), sk.MoreauJeanOSI(0.5), osnspb)
    n_steps = int(np.floor(p["T"] / p["h"]))  # as WoodPecker.cpp: N = floor((T − t0)/h)
    return _run_siconos(sim, ds, inters, n_steps)


def generate(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    np.savez(os.path.join(out_dir, "ball.npz"), **siconos_ball())
    np.savez(os.path.join(out_dir, "woodpecker.npz"), **siconos_woodpecker("nsgs"))
    np.savez(os.path.join(out_dir, "woodpecker_lemke.npz"), **siconos_woodpecker("lemke"))


# ----------------------------------------------------------------------------------------------
# jaxcontact side (the venv)


def jax_ball(n_steps, force_rule="siconos"):
    import jax.numpy as jnp

    from jaxcontact.linear import linear_system
    from jaxcontact.simulate import simulate
    from jaxcontact.stepping import MoreauJean

    p = BALL
    M, F, H, b, e = ball_matrices()
    system, params = linear_system(M, F=F, H_N=H, b_N=b, restitution=e)
    return simulate(
        system,
        params,
        jnp.array([p["z0"], 0.0, 0.0]),
        jnp.zeros(3),
        dt=p["h"],
        n_steps=n_steps,
        scheme=MoreauJean(force_rule=force_rule),
    )


def jax_woodpecker(n_steps, force_rule="siconos", solver="auto"):
    import jax.numpy as jnp

    from jaxcontact.linear import linear_system
    from jaxcontact.simulate import simulate
    from jaxcontact.stepping import MoreauJean

    _, _, _, _, q0, v0 = woodpecker_matrices()
    M, kw = woodpecker_linear_system_args()
    system, params = linear_system(M, **kw)
    return simulate(
        system,
        params,
        jnp.asarray(q0),
        jnp.asarray(v0),
        dt=WP["h"],
        n_steps=n_steps,
        scheme=MoreauJean(force_rule=force_rule, solver=solver),
    )


def _distance(a, b):
    """max over the run of ‖a − b‖∞ / max(1, ‖b‖∞) per step, and the step where it is largest."""
    d = np.max(np.abs(a - b), axis=1) / np.maximum(1.0, np.max(np.abs(b), axis=1))
    return float(d.max()), int(d.argmax())


def compare(gen_dir):
    import jax

    jax.config.update("jax_enable_x64", True)
    rows = {}
    ball = dict(np.load(os.path.join(gen_dir, "ball.npz")))
    n = len(ball["t"]) - 1
    rows["ball"] = _rows(ball, jax_ball(n))
    rows["ball, theta-point rule (jaxcontact's default)"] = _rows(ball, jax_ball(n, "theta-point"))
    wood = dict(np.load(os.path.join(gen_dir, "woodpecker.npz")))
    n = len(wood["t"]) - 1
    rows["woodpecker (jaxcontact NSGS)"] = _rows(wood, jax_woodpecker(n))
    rows["woodpecker (jaxcontact Lemke)"] = _rows(wood, jax_woodpecker(n, solver="lemke"))
    rows["woodpecker, theta-point rule (jaxcontact's default)"] = _rows(wood, jax_woodpecker(n, "theta-point"))
    lemke = dict(np.load(os.path.join(gen_dir, "woodpecker_lemke.npz")))
    sliding = np.abs(lemke["impulse"][:, :, 0]) > 0
    cone = np.abs(lemke["impulse"][:, :, 1]) / np.where(sliding, lemke["impulse"][:, :, 0], 1.0)
    edge = sliding & (np.abs(cone - WP["mu_123"]) < 1e-6)
    rows["woodpecker: Siconos 2D Lemke vs Siconos NSGS"] = {
        "q_max_rel": _distance(lemke["q"], wood["q"])[0],
        "steps": n,
        "lemke_max_rel_cone_edge_error": float(np.max(np.abs(cone[edge] / WP["mu_123"] - 1.0))),
    }
    return rows, ball, wood


def _rows(ref, tr):
    q = np.asarray(tr.q)
    v = np.asarray(tr.u)
    dq, at = _distance(q, ref["q"])
    dv, _ = _distance(v, ref["v"])
    return {
        "steps": len(q) - 1,
        "q_max_rel": dq,
        "worst_step": at,
        "v_max_rel": dv,
        "siconos_seconds": float(ref["seconds"]),
    }


def woodpecker_linear_system_args():
    """(M, keyword arguments of ``linear_system``) of the woodpecker: row 0 of each H → H_N, row 1 → H_T."""
    M, K, F, contacts, _, _ = woodpecker_matrices()
    return M, dict(
        K=K,
        F=F,
        H_N=np.array([H[0] for H, _, _ in contacts]),
        b_N=np.array([b[0] for _, b, _ in contacts]),
        H_T=np.array([H[1] for H, _, _ in contacts]),
        restitution=np.array([e for _, _, e in contacts]),
        tangential_restitution=WP["eps_T_123"],
        friction=WP["mu_123"],
    )


def store(ball, wood):
    """The references the tests read, with the model data (so the tests do not restate the models)."""
    os.makedirs(REFERENCE_DIR, exist_ok=True)
    M, F, H, b, e = ball_matrices()
    np.savez_compressed(
        os.path.join(REFERENCE_DIR, "ball_moreau_jean.npz"),
        t=ball["t"],
        q=ball["q"],
        v=ball["v"],
        impulse=ball["impulse"][:, :, 0],
        h=np.array(BALL["h"]),
        M=M,
        F=F,
        H_N=H,
        b_N=b,
        restitution=np.array(e),
    )
    n = len(wood["t"]) - 1
    rows = np.unique(np.r_[0 : n + 1 : WOODPECKER_STRIDE, n])  # every 10th step and the last
    M, kw = woodpecker_linear_system_args()
    np.savez_compressed(
        os.path.join(REFERENCE_DIR, "woodpecker_moreau_jean.npz"),
        rows=rows,
        t=wood["t"][rows],
        q=wood["q"][rows],
        v=wood["v"][rows],
        n_steps=np.array(n),
        h=np.array(WP["h"]),
        M=M,
        **kw,
    )


ROW_NOTES = {
    "ball": "every step, 10 s (settles at 8.2 s)",
    "ball, theta-point rule (jaxcontact's default)": "forces at the θ-point, conservative separating law: "
    "differs once the ball rests (penetrated contact)",
    "woodpecker (jaxcontact NSGS)": "every step; jaxcontact's default solver with friction",
    "woodpecker (jaxcontact Lemke)": "exact pivoting vs Siconos' NSGS",
    "woodpecker, theta-point rule (jaxcontact's default)": "K explicit at the θ-point (Störmer–Verlet)",
    "woodpecker: Siconos 2D Lemke vs Siconos NSGS": "Siconos against itself: its Lemke leaves the cone edge",
}


def results_section(rows) -> str:
    import common

    table = common.markdown_table(
        ["run", "steps", "max rel. Δq", "max rel. Δu", "note"],
        [
            [
                name,
                str(r["steps"]),
                f"{r['q_max_rel']:.2e}",
                f"{r['v_max_rel']:.2e}" if "v_max_rel" in r else "—",
                ROW_NOTES.get(name, "")
                + (
                    f" (sliding: P_T/(μ P_N) − 1 up to ±{r['lemke_max_rel_cone_edge_error']:.1e})"
                    if "lemke_max_rel_cone_edge_error" in r
                    else ""
                ),
            ]
            for name, r in rows.items()
        ],
    )
    return (
        f"## Siconos-identical Moreau–Jean (`bench/references/siconos_moreau_jean.py`) — {common.utc_date()}\n\n"
        + common.machine_markdown(common.machine_info(), {"Siconos": "4.4.0 (Debian python3-siconos)"})
        + '\n\n`MoreauJean(force_rule="siconos")` against Siconos 4.4\'s MoreauJeanOSI(½) + TimeStepping on '
        "the models of Siconos' tutorials (ball: LCP by Lemke; Woodpecker: FrictionContact(2) with its default "
        "NSGS). Relative Δ = max over the run of ‖a − b‖∞ / max(1, ‖b‖∞) per step.\n\n"
        + table
        + "\n\nThe Lemke rows: every solver here solves each step's contact problem exactly up to rounding, "
        "and the Woodpecker's iteration matrix (condition number 1.6e5, from the sleeve's J_M = 5e-9 kg m²) "
        "amplifies rounding differences in the impulses over the run. Siconos' own 2D Lemke is the "
        "furthest because its impulses of a sliding contact miss the cone edge P_T = μ P_N by up to the "
        "relative error shown; NSGS (Siconos' and jaxcontact's) projects onto the edge exactly, hence 3e-15.\n"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generate", metavar="OUT_DIR", help="Siconos only (run by /usr/bin/python3): write the runs")
    ap.add_argument("--no-store", action="store_true", help="do not rewrite tests/data/siconos/")
    ap.add_argument("--no-append", action="store_true", help="do not append a section to bench/RESULTS.md")
    a = ap.parse_args()
    if a.generate:
        generate(a.generate)
        return
    sys.path.insert(0, BENCH_DIR)  # for common.py
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(
            ["/usr/bin/python3", os.path.abspath(__file__), "--generate", d], check=True, stdout=subprocess.DEVNULL
        )
        rows, ball, wood = compare(d)
    if not a.no_store:
        store(ball, wood)
    if not a.no_append:
        import common

        common.append_results(results_section(rows))
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())

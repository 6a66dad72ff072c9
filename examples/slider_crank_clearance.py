"""Slider–crank with a crank–rod clearance joint: compliant contact (penalty scheme) vs Moreau–Jean impacts.

The mechanism and its values are ``jaxcontact.models.slider_crank`` (Flores et
al.'s geometry, masses and steel pin-in-hole; crank speed ω = 200 rad/s and the
clearance in the crank–rod joint are our choices, see that module). Three runs
from the same dead-centre start, the pin centred in the hole:

* ideal — a perfect revolute joint (penalty scheme, no contact), the reference;
* compliant — Hertz contact K δ^1.5 with Hunt–Crossley damping matched to
  ε = 0.9 at 0.5 m/s, regularized Coulomb friction μ = 0.01; penalty scheme,
  RK4 at ``--dt-compliant`` (default 1e-6 s);
* rigid — Newton impacts ε = 0.9 and Coulomb friction μ = 0.01, Moreau–Jean at
  ``--dt-rigid`` (default 1e-5 s).

Writes, in ``--out`` (default out/slider_crank_clearance):
  journal_path.png     — the journal's centre relative to the bearing's (world frame) inside the
                         clearance circle, compliant and rigid (Flores et al.'s journal-path plot)
  slider_acceleration.png — slider acceleration of the three runs: the clearance joint's impacts
                         show as spikes on the ideal curve. Compliant and ideal: the exact u̇ of the
                         penalty dynamics at the saved states; rigid: (u_{k+1} − u_k)/Δt between saved
                         states (impacts are velocity jumps, so this is an average over Δt)
  contact_force.png    — compliant normal force and the rigid impulse / Δt
  slider_crank_clearance.npz — t, q, u, eccentricities, accelerations of the three runs

Run: python examples/slider_crank_clearance.py [--set name=value ...] [--t-final T]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxcontact.commands.simulate import parse_sets  # noqa: E402
from jaxcontact.models import slider_crank as sc  # noqa: E402
from jaxcontact.simulate import n_steps_for, simulate  # noqa: E402
from jaxcontact.stepping import MoreauJean, Penalty  # noqa: E402

SLIDER_X = 6  # q index of the slider's x


def run(contact: str, dt: float, t_final: float, rows: int, **overrides) -> dict:
    """Simulate one variant; numpy arrays of time, state, eccentricity, slider acceleration, contact force."""
    mech, system, p = sc.build(contact, **overrides)
    q0, u0 = sc.initial_state(p)
    n = n_steps_for(dt, t_final)
    save = max(1, n // rows)
    n -= n % save
    scheme = MoreauJean(diagonal_mass=True) if contact == "rigid" else Penalty(diagonal_mass=True)
    start = time.perf_counter()
    tr = simulate(system, p, q0, u0, dt=dt, n_steps=n, scheme=scheme, save_every=save)
    jax.block_until_ready(tr)
    wall = time.perf_counter() - start
    t, q, u = np.asarray(tr.t), np.asarray(tr.q), np.asarray(tr.u)
    out = {
        "t": t,
        "q": q,
        "u": u,
        "wall": wall,
        "steps": n,
        "phi": np.asarray(tr.diagnostics.phi),
        "converged": bool(np.all(tr.diagnostics.converged)),
    }
    if contact != "ideal":
        out["ecc"] = np.asarray(jax.vmap(lambda qq: sc.journal_eccentricity(mech, qq, p))(tr.q))
        out["clearance"] = float(p["clearance"])
    if contact == "rigid":
        dts = np.diff(t)
        out["acc"] = np.concatenate([[np.nan], np.diff(u[:, SLIDER_X]) / dts])
        out["force"] = np.concatenate([[0.0], np.asarray(tr.impulse_normal[1:, 0]) / dts])
    else:
        dyn = jax.vmap(lambda qq, uu, tt: scheme.dynamics(system, p, qq, uu, tt, dt))(tr.q, tr.u, tr.t)
        out["acc"] = np.asarray(dyn.acceleration[:, SLIDER_X])
        out["force"] = np.asarray(dyn.normal_force[:, 0]) if contact == "compliant" else np.zeros_like(t)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-final", type=float, default=0.06, help="simulated time (default 0.06 s ≈ 2 crank turns)")
    ap.add_argument("--dt-compliant", type=float, default=1e-6)
    ap.add_argument("--dt-rigid", type=float, default=1e-5)
    ap.add_argument("--rows", type=int, default=3000, help="saved rows per run")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="parameter override of jaxcontact.models.slider_crank (repeatable)",
    )
    ap.add_argument("--out", default=os.path.join("out", "slider_crank_clearance"))
    args = ap.parse_args(argv)
    try:
        overrides = parse_sets(args.set)
        res = {
            "ideal": run("ideal", args.dt_compliant, args.t_final, args.rows, **overrides),
            "compliant": run("compliant", args.dt_compliant, args.t_final, args.rows, **overrides),
            "rigid": run("rigid", args.dt_rigid, args.t_final, args.rows, **overrides),
        }
    except ValueError as e:
        print(f"slider_crank_clearance: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    c = res["compliant"]["clearance"]

    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    th = np.linspace(0, 2 * np.pi, 400)
    ax.plot(c * np.cos(th) * 1e3, c * np.sin(th) * 1e3, "k-", lw=1, label="clearance circle")
    for name, style in (("compliant", "C0-"), ("rigid", "C3-")):
        e = res[name]["ecc"] * 1e3
        ax.plot(
            e[:, 0], e[:, 1], style, lw=0.6, label=f"{name} ({'penalty' if name == 'compliant' else 'Moreau–Jean'})"
        )
    ax.set_aspect("equal")
    ax.set_xlabel("e_x (mm)")
    ax.set_ylabel("e_y (mm)")
    ax.set_title("journal centre relative to the bearing centre")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "journal_path.png"), dpi=130)
    plt.close(fig)

    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for ax, name, color in zip(axes, ("ideal", "compliant", "rigid"), ("k", "C0", "C3")):
        r = res[name]
        ax.plot(res["ideal"]["t"], res["ideal"]["acc"], "k-", lw=0.8, alpha=0.5, label="ideal joint")
        if name != "ideal":
            ax.plot(r["t"], r["acc"], color=color, lw=0.6, label=name)
        ax.set_ylabel("slider ẍ (m/s²)")
        ax.legend(fontsize=8, loc="upper right")
    lim = 4 * np.nanmax(np.abs(res["ideal"]["acc"]))
    for ax in axes[1:]:
        ax.set_ylim(-lim, lim)
    axes[-1].set_xlabel("t (s)")
    axes[0].set_title("slider acceleration (clipped at 4× the ideal peak)")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "slider_acceleration.png"), dpi=130)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.plot(res["rigid"]["t"], res["rigid"]["force"], "C3-", lw=0.6, label="rigid: impulse / Δt")
    ax.plot(res["compliant"]["t"], res["compliant"]["force"], "C0-", lw=0.6, label="compliant F_N")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("journal contact force (N)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "contact_force.png"), dpi=130)
    plt.close(fig)

    np.savez(
        os.path.join(args.out, "slider_crank_clearance.npz"),
        **{f"{name}_{k}": v for name, r in res.items() for k, v in r.items()},
    )
    for name, r in res.items():
        line = (
            f"{name:9s}: {r['steps']} steps in {r['wall']:.1f} s wall (incl. compilation), "
            f"max ‖Φ‖ = {r['phi'].max():.2e}, converged: {r['converged']}"
        )
        if "ecc" in r:
            pen = np.linalg.norm(r["ecc"], axis=1).max() - c
            line += f", max penetration {pen * 1e6:.1f} µm ({100 * pen / c:.1f} % of c)"
            dev = np.max(
                np.abs(np.interp(res["ideal"]["t"], r["t"], r["q"][:, SLIDER_X]) - res["ideal"]["q"][:, SLIDER_X])
            )
            line += f", max |x_slider − ideal| = {dev * 1e3:.3f} mm"
        print(line)
    print(f"wrote {args.out}/journal_path.png, slider_acceleration.png, contact_force.png, slider_crank_clearance.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The four-bar linkage driven into a wall (the 2015 projection-correction paper).

The paper's step h = 0.01 s with four drift treatments: none (plain
Moreau–Jean), Baumgarte (α = β = 0.5/h), projection (Moreau–Jean with
``projection=Projection()``) and the paper's scheme (``ImpactProjection``: impact LCP
on the bilateral Schur complement at the projected state, PGS, projection
after every step). The frictionless wall is built without a friction
structure, so the contact LCP is solved by projected Gauss–Seidel.

Converged reference (our choice): Moreau–Jean with projection at
h_ref = 1e-4 s by default (``--h-ref 1e-5`` for the finer one, ~30 s). The two
differ by 7.5e-4 m in x_a at most (impact times converge at first order) and
the reference with and without projection at 1e-5 by 6.5e-6 m, while the
paper's step is off by centimetres around the impacts.

Angle convention and gravity: see ``jaxcontact.models.four_bar`` (θ from the
x-axis to each bar's body axis; bar 3 along its body y-axis so θ3 = 0 is
vertical; T > 0 counter-clockwise drives point a left into the wall at
x = −0.06 m; gravity 9.81 m/s² along −y, our choice).

Writes, in ``--out`` (default out/four_bar_wall):
  point_a.png      — x position and x velocity of point a, no correction, vs the reference
  fig2_velocity.png — velocity of point a, with and without correction (the paper's Fig. 2)
  fig3_position_error.png, fig4_velocity_error.png — |x_a − x_a,ref| and |v_a − v_a,ref|
                     with and without correction (the paper's Figs. 3 and 4)
  constraints.png  — ‖Φ‖ and ‖Φ_q u + Φ_t‖ over time for none / Baumgarte / projection
  four_bar_wall.npz — t, q, u, point-a history and diagnostics of every run

Run: python examples/four_bar_wall.py [--set name=value ...] [--t-final T]
"""

from __future__ import annotations

import argparse
import os
import sys

import jax

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxcontact.models import four_bar, get_model  # noqa: E402
from jaxcontact.simulate import n_steps_for, simulate  # noqa: E402
from jaxcontact.stepping import ImpactProjection, MoreauJean, baumgarte_rates  # noqa: E402
from jaxcontact.stepping.projection import Projection  # noqa: E402

SCHEMES = {
    "none": MoreauJean(),
    "baumgarte": MoreauJean(baumgarte=baumgarte_rates(0.5)),
    "projection": MoreauJean(projection=Projection()),
    "impact_projection": ImpactProjection(),
}
LABELS = {
    "none": "no correction",
    "baumgarte": "Baumgarte α = β = 0.5/h",
    "projection": "Moreau–Jean + projection",
    "impact_projection": "impact LCP + projection (paper)",
}


def run(dt: float, t_final: float, save_every: int = 1, scheme: str = "none", **overrides) -> dict:
    """Simulate the four-bar; return numpy arrays of time, point a, gap and diagnostics."""
    m = get_model("four-bar", **overrides)
    # Frictionless wall (the paper's): no friction structure, so the LCP is normal-only (PGS).
    frictionless = float(m.params["friction"]) == 0.0
    system = four_bar.mechanism(False).build(m.params)[0] if frictionless else m.system
    q0, u0 = m.initial_state(m.params)
    tr = simulate(
        system, m.params, q0, u0, dt=dt, n_steps=n_steps_for(dt, t_final), scheme=SCHEMES[scheme], save_every=save_every
    )
    xa = jax.vmap(four_bar.point_a, (0, None))(tr.q, m.params)
    va = jax.vmap(four_bar.point_a_velocity, (0, 0, None))(tr.q, tr.u, m.params)
    return {
        "t": np.asarray(tr.t),
        "q": np.asarray(tr.q),
        "u": np.asarray(tr.u),
        "xa": np.asarray(xa[:, 0]),
        "va": np.asarray(va[:, 0]),
        "gap": np.asarray(xa[:, 0]) + float(m.params["wall_distance"]),
        "impulse": np.asarray(tr.impulse_normal[:, 0]),
        "phi": np.asarray(tr.diagnostics.phi),
        "phi_dot": np.asarray(tr.diagnostics.phi_dot),
        "energy": np.asarray(tr.diagnostics.energy),
        "wall": -float(m.params["wall_distance"]),
        "converged": np.asarray(tr.diagnostics.converged),
    }


def plot(coarse: dict, fine: dict, out: str, dt: float, h_ref: float) -> list[str]:
    paths = []
    fig, ax = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    ax[0].plot(fine["t"], fine["xa"], "-", color="0.6", lw=1.2, label=f"reference h = {h_ref:g} s")
    ax[0].plot(coarse["t"], coarse["xa"], ".-", lw=0.8, ms=3, label=f"Moreau–Jean h = {dt:g} s")
    ax[0].axhline(coarse["wall"], color="k", lw=1.5, label="wall")
    ax[0].set_ylabel("x of point a [m]")
    ax[0].legend(loc="upper right", fontsize=8)
    ax[1].plot(fine["t"], fine["va"], "-", color="0.6", lw=1.2)
    ax[1].plot(coarse["t"], coarse["va"], ".-", lw=0.8, ms=3)
    ax[1].set_ylabel("velocity of point a, x [m/s]")
    ax[1].set_xlabel("t [s]")
    fig.suptitle("Four-bar linkage hitting a wall (no projection)")
    fig.tight_layout()
    paths.append(os.path.join(out, "point_a.png"))
    fig.savefig(paths[-1], dpi=130)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    tiny = 1e-17
    ax.semilogy(coarse["t"], np.maximum(coarse["phi"], tiny), label=f"‖Φ‖, h = {dt:g} s")
    ax.semilogy(coarse["t"], np.maximum(coarse["phi_dot"], tiny), label=f"‖Φ_q u‖, h = {dt:g} s")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("constraint violation")
    ax.set_title("Drift of the bilateral constraints without projection")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(os.path.join(out, "drift_none.png"))
    fig.savefig(paths[-1], dpi=130)
    plt.close(fig)
    return paths


def plot_corrections(runs: dict, fine: dict, out: str, dt: float, h_ref: float) -> list[str]:
    """The paper's Figs. 2–4 and the constraint violation of every treatment."""
    paths = []
    shown = ("none", "projection", "impact_projection")

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(fine["t"], fine["va"], "-", color="0.6", lw=1.5, label=f"reference h = {h_ref:g} s")
    for name in shown:
        ax.plot(runs[name]["t"], runs[name]["va"], ".-", lw=0.8, ms=3, label=LABELS[name])
    ax.set_xlabel("t [s]")
    ax.set_ylabel("velocity of point a, x [m/s]")
    ax.set_title(f"Fig. 2: velocity of point a, h = {dt:g} s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(os.path.join(out, "fig2_velocity.png"))
    fig.savefig(paths[-1], dpi=130)
    plt.close(fig)

    tiny = 1e-17
    for key, fname, title, unit in (
        ("xa", "fig3_position_error.png", "Fig. 3: position error of point a", "m"),
        ("va", "fig4_velocity_error.png", "Fig. 4: velocity error of point a", "m/s"),
    ):
        fig, ax = plt.subplots(figsize=(7, 4))
        for name in shown:
            ax.semilogy(
                runs[name]["t"],
                np.maximum(np.abs(runs[name][key] - fine[key]), tiny),
                ".-",
                lw=0.8,
                ms=3,
                label=LABELS[name],
            )
        ax.set_xlabel("t [s]")
        ax.set_ylabel(f"|error| [{unit}]")
        ax.set_title(f"{title} (h = {dt:g} s vs reference h = {h_ref:g} s)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(os.path.join(out, fname))
        fig.savefig(paths[-1], dpi=130)
        plt.close(fig)

    fig, ax = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
    for name in ("none", "baumgarte", "projection", "impact_projection"):
        ax[0].semilogy(runs[name]["t"], np.maximum(runs[name]["phi"], tiny), lw=1, label=LABELS[name])
        ax[1].semilogy(runs[name]["t"], np.maximum(runs[name]["phi_dot"], tiny), lw=1, label=LABELS[name])
    ax[0].set_ylabel("‖Φ(q, t)‖")
    ax[1].set_ylabel("‖Φ_q u + Φ_t‖")
    for a in ax:
        a.set_xlabel("t [s]")
    ax[0].legend(fontsize=8)
    fig.suptitle(f"Constraint violation at the end of each step, h = {dt:g} s")
    fig.tight_layout()
    paths.append(os.path.join(out, "constraints.png"))
    fig.savefig(paths[-1], dpi=130)
    plt.close(fig)
    return paths


def parse_overrides(items):
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set expects name=value; got {item!r}")
        out[name] = float(value)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a model parameter")
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--t-final", type=float, default=2.0)
    ap.add_argument("--h-ref", type=float, default=1e-4, help="step of the converged reference")
    ap.add_argument("--out", default=os.path.join("out", "four_bar_wall"))
    args = ap.parse_args(argv)
    overrides = parse_overrides(args.set)
    os.makedirs(args.out, exist_ok=True)
    runs = {name: run(args.dt, args.t_final, scheme=name, **overrides) for name in SCHEMES}
    coarse = runs["none"]
    save = int(round(args.dt / args.h_ref))
    fine = run(args.h_ref, args.t_final, save_every=save, scheme="projection", **overrides)
    if not np.allclose(fine["t"], coarse["t"], atol=1e-9):
        raise SystemExit(f"--h-ref {args.h_ref:g} must divide --dt {args.dt:g}")
    paths = plot(coarse, fine, args.out, args.dt, args.h_ref) + plot_corrections(
        runs, fine, args.out, args.dt, args.h_ref
    )
    np.savez(
        os.path.join(args.out, "four_bar_wall.npz"),
        **{f"{name}_{k}": v for name, r in runs.items() for k, v in r.items()},
        **{f"reference_{k}": v for k, v in fine.items()},
    )
    imp = np.nonzero(coarse["impulse"] > 0)[0]
    print(
        f"four-bar, h = {args.dt:g} s, {len(coarse['t']) - 1} steps, reference: Moreau–Jean + projection at "
        f"h = {args.h_ref:g} s; first impact at t = {coarse['t'][imp[0]]:.3f} s"
        if len(imp)
        else "no impact"
    )
    print(
        f"{'':34s} {'max|Δx_a|':>10s} {'mean|Δx_a|':>10s} {'t≥0.8 max':>10s} {'max|Δv_a|':>10s} "
        f"{'max‖Φ‖':>9s} {'max‖Φ̇‖':>9s} {'final gap':>10s} {'rests at':>8s}"
    )
    late = coarse["t"] >= 0.8
    for name, r in runs.items():
        ex, ev = np.abs(r["xa"] - fine["xa"]), np.abs(r["va"] - fine["va"])
        on_wall = (np.abs(r["gap"]) <= 1e-10) & (r["impulse"] > 0)
        # First time after which point a stays on the wall.
        after = np.nonzero(~on_wall)[0]
        rest = (
            f"{r['t'][after[-1] + 1]:.2f} s"
            if len(after) and after[-1] + 1 < len(r["t"])
            else ("0 s" if not len(after) else "never")
        )
        late_max = ex[late].max() if late.any() else np.nan  # runs shorter than 0.8 s have no late part
        print(
            f"  {LABELS[name]:32s} {ex.max():10.3e} {ex.mean():10.3e} {late_max:10.3e} {ev.max():10.3e} "
            f"{r['phi'].max():9.2e} {r['phi_dot'].max():9.2e} {r['gap'][-1]:10.2e} {rest:>8s}"
            f"{'' if r['converged'].all() else '  (solver not converged at some step)'}"
        )
    for p in paths:
        print(f"  wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Rocking block (Housner 1963): a rigid block released tilted rocks on its corners and comes to rest.

Moreau–Jean with two frictional corner contacts (ε_N = 0, μ = 0.7: see
``jaxcontact.models.rocking_block`` for the values, which are our choice).
The independent check is Housner's (1963) rocking model: each corner switch
multiplies the angular velocity by r = 1 − (3/2) sin² α (α = atan(w/h)), and
the first quarter period is acosh(1/(1 − θ0/α))/p with p² = 3g/(4R).

Writes, in ``--out`` (default out/rocking_block):
  rocking.png — tilt θ, angular velocity with Housner's envelope, energy, corner impulses
  rocking_block.npz — t, q, u, impulses, diagnostics

Run: python examples/rocking_block.py [--set name=value ...] [--dt DT] [--t-final T]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import jax

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxcontact.models import get_model, rocking_block  # noqa: E402
from jaxcontact.simulate import simulate_model  # noqa: E402


def run(dt: float, t_final: float, **overrides) -> dict:
    m = get_model("rocking-block", **overrides)
    tr = simulate_model(m, dt=dt, t_final=t_final)
    return {
        "t": np.asarray(tr.t),
        "q": np.asarray(tr.q),
        "u": np.asarray(tr.u),
        "impulse_normal": np.asarray(tr.impulse_normal),
        "impulse_tangent": np.asarray(tr.impulse_tangent),
        "energy": np.asarray(tr.diagnostics.energy),
        "converged": np.asarray(tr.diagnostics.converged),
        "housner_ratio": float(rocking_block.housner_ratio(m.params)),
        "params": {k: float(v) for k, v in m.params.items()},
    }


def corner_switches(r: dict):
    """(step, ω before, ω after) at every sign change of the tilt."""
    th, w = r["q"][:, 2], r["u"][:, 2]
    idx = np.nonzero(np.diff(np.sign(th)) != 0)[0]
    return [(i, w[i - 1], w[i + 2]) for i in idx if 1 <= i < len(w) - 2]


def plot(r: dict, out: str) -> str:
    t, th, w = r["t"], r["q"][:, 2], r["u"][:, 2]
    sw = corner_switches(r)
    fig, ax = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    ax[0].plot(t, th)
    ax[0].set_ylabel("tilt θ [rad]")
    ax[1].plot(t, w, label="Moreau–Jean")
    if sw:
        k = np.arange(len(sw))
        w0 = abs(sw[0][1])
        ts = [t[i] for i, _, _ in sw]
        ax[1].plot(
            ts,
            w0 * r["housner_ratio"] ** (k + 1),
            "k--",
            lw=1,
            label=f"Housner: |ω| after switch k = |ω before switch 1| r^k, r = {r['housner_ratio']:.2f}",
        )
        ax[1].plot(ts, [abs(a) for _, _, a in sw], "o", ms=4, label="|ω| just after each switch")
    ax[1].set_ylabel("angular velocity [rad/s]")
    ax[1].legend(fontsize=8)
    ax[2].plot(t, r["energy"], label="energy")
    ax2 = ax[2].twinx()
    ax2.plot(t, r["impulse_normal"][:, 0], color="C1", lw=0.8, label="P_N left")
    ax2.plot(t, r["impulse_normal"][:, 1], color="C2", lw=0.8, label="P_N right")
    ax2.set_ylabel("normal impulse per step [N s]")
    ax2.legend(fontsize=8, loc="upper right")
    ax[2].set_ylabel("energy [J]")
    ax[2].set_xlabel("t [s]")
    fig.suptitle("Rocking block: plastic corner impacts, Coulomb friction")
    fig.tight_layout()
    path = os.path.join(out, "rocking.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a model parameter")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--t-final", type=float, default=2.0)
    ap.add_argument("--out", default=os.path.join("out", "rocking_block"))
    args = ap.parse_args(argv)
    overrides = {}
    for item in args.set or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set expects name=value; got {item!r}")
        overrides[name] = float(value)
    os.makedirs(args.out, exist_ok=True)
    r = run(args.dt, args.t_final, **overrides)
    path = plot(r, args.out)
    np.savez(os.path.join(args.out, "rocking_block.npz"), **{k: v for k, v in r.items() if k != "params"})
    p = r["params"]
    alpha = math.atan2(p["width"], p["height"])
    pw = math.sqrt(3 * p["gravity"] / (4 * math.hypot(p["width"] / 2, p["height"] / 2)))
    sw = corner_switches(r)
    print(
        f"rocking block, dt = {args.dt:g} s: {len(sw)} corner switches; first at t = "
        f"{r['t'][sw[0][0]]:.4f} s (Housner {math.acosh(1 / (1 - abs(p['tilt']) / alpha)) / pw:.4f} s)"
        if sw
        else "no corner switch"
    )
    print(
        "  ω after/before at each switch: "
        + ", ".join(f"{a / b:.3f}" for _, b, a in sw[:6])
        + f" (Housner r = {r['housner_ratio']:.3f})"
    )
    print(
        f"  final tilt {r['q'][-1, 2]:.2e} rad, |ω| {abs(r['u'][-1, 2]):.2e} rad/s, energy "
        f"{r['energy'][0]:.4f} → {r['energy'][-1]:.4f} J; solver converged: {bool(r['converged'].all())}"
    )
    print(f"  wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

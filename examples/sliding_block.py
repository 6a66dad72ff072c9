"""Block on a rough incline: it stops (μ > tan α) or keeps sliding (μ < tan α); Moreau–Jean vs analytic.

    python examples/sliding_block.py --out block-out

Writes ``distance.png`` and ``speed.png`` (down-slope distance and speed of both
cases with the analytic s = v₀ t + a t²/2, a = g (sin α − μ cos α), up to the stop),
plus the standard trajectory plots of the stopping case.
"""

from __future__ import annotations

import argparse
import os

import jax

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.models.sliding_block import distance_along_slope  # noqa: E402
from jaxcontact.plotting import plot_trajectory  # noqa: E402
from jaxcontact.simulate import simulate_model  # noqa: E402


def analytic(t, v0, mu, alpha_deg, g):
    a = np.deg2rad(alpha_deg)
    acc = g * (np.sin(a) - mu * np.cos(a))
    if acc < 0:  # decelerates, then sticks
        t_stop = -v0 / acc
        tt = np.minimum(t, t_stop)
    else:
        tt = t
    return v0 * tt + 0.5 * acc * tt**2, v0 + acc * tt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="sliding-block-out")
    ap.add_argument("--dt", type=float, default=1e-3)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    g, alpha, v0 = 9.81, 20.0, 1.0
    cases = {"stops (μ = 0.5)": 0.5, "slides (μ = 0.2)": 0.2}
    fig_s, ax_s = plt.subplots(figsize=(8, 4))
    fig_v, ax_v = plt.subplots(figsize=(8, 4))
    for i, (label, mu) in enumerate(cases.items()):
        model = get_model("sliding-block", friction=mu, slope_deg=alpha, speed=v0, gravity=g)
        traj = simulate_model(model, dt=args.dt, t_final=1.5)
        t = np.asarray(traj.t)
        s = np.asarray(distance_along_slope(traj.q, model.params))
        v = np.asarray(distance_along_slope(traj.u, model.params))
        s_ref, v_ref = analytic(t, v0, mu, alpha, g)
        ax_s.plot(t, s, lw=2, color=f"C{i}", label=f"{label}: Moreau–Jean")
        ax_s.plot(t, s_ref, "k--", lw=1)
        ax_v.plot(t, v, lw=2, color=f"C{i}", label=label)
        ax_v.plot(t, v_ref, "k--", lw=1)
        print(
            f"{label}: distance at t = 1.5 s {s[-1]:.6f} m (analytic {s_ref[-1]:.6f} m, "
            f"relative error {abs(s[-1] - s_ref[-1]) / abs(s_ref[-1]):.1e})"
        )
        if mu == 0.5:
            plot_trajectory(traj, args.out, names=model.system.names, title="sliding block (stops)")
    for ax, lab in ((ax_s, "distance down the slope [m]"), (ax_v, "speed down the slope [m/s]")):
        ax.set_xlabel("t [s]")
        ax.set_ylabel(lab)
        ax.set_title(f"Block on a {alpha:g}° incline, v₀ = {v0:g} m/s (dashed: analytic)")
        ax.legend()
    for fig, name in ((fig_s, "distance.png"), (fig_v, "speed.png")):
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, name), dpi=110)
        plt.close(fig)
    print(f"plots in {args.out}")


if __name__ == "__main__":
    main()

"""The slider–bar ("flat beater") with stick–slip friction, e = 0.1 m and 0.15 m (the 2015 LCP paper's Figs. 2–10).

    python examples/slider_bar.py            # writes out/slider_bar/ (git-ignored)

Event-driven acceleration-level scheme (docs/theory/event-driven.md): compliant floor contacts
F_N = K δ^n + c δ δ̇ and the stick–slip LCP with μ0 = 0.3, μ = 0.2; the unpublished
values are our choices, listed in :mod:`jaxcontact.models.slider_bar`. Writes

* ``slider.png`` — slider displacement x_C1 and angle θ1;
* ``forces.png`` — normal contact force (both corners), joint force ‖λ_A‖ at the pin,
  driving torque (the motor row's Lagrange multiplier);
* ``constraints.png`` — ‖Φ‖ over time (Baumgarte-stabilised at the acceleration level);
* ``stick_slip.png`` — friction force and slip velocity of the floor contact (the sum
  over both corners and the right corner's slip velocity): flat zero-speed stretches
  are sticking, with the friction force inside ±μ0 F_N;

and ``slider_bar.npz`` with the curves.
"""

from __future__ import annotations

import argparse
import os
import time

import jax

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxcontact.models.slider_bar import CONSTRAINT_ROWS, model  # noqa: E402
from jaxcontact.simulate import n_steps_for, simulate  # noqa: E402
from jaxcontact.stepping.event_driven import EventDriven  # noqa: E402

ECCENTRICITIES = (0.1, 0.15)


def run(e: float, dt: float, t_final: float, scheme: EventDriven) -> dict:
    """Simulate one eccentricity; forces along the trajectory by :meth:`EventDriven.reactions`."""
    m = model(e=e)
    q0, u0 = m.initial_state(m.params)
    start = time.perf_counter()
    tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=n_steps_for(dt, t_final), scheme=scheme)
    jax.block_until_ready(tr)
    wall = time.perf_counter() - start
    reactions = jax.jit(jax.vmap(lambda q, u, t: scheme.reactions(m.system, m.params, q, u, t, dt)))(tr.q, tr.u, tr.t)
    slip = jax.vmap(lambda q, u, t: m.system.compliant_slip_velocity(q, u, t, m.params))(tr.q, tr.u, tr.t)
    lam = np.asarray(reactions.multipliers)
    pin = [CONSTRAINT_ROWS.index("A.x"), CONSTRAINT_ROWS.index("A.y")]
    return dict(
        t=np.asarray(tr.t),
        x=np.asarray(tr.q[:, 0]),
        theta=np.asarray(tr.q[:, 2]),
        normal=np.asarray(reactions.normal_force).sum(axis=1),
        friction=np.asarray(reactions.friction_force).sum(axis=1),
        slip=np.asarray(slip[:, 1]),
        joint=np.linalg.norm(lam[:, pin], axis=1),
        torque=lam[:, CONSTRAINT_ROWS.index("motor")],
        phi=np.asarray(tr.diagnostics.phi),
        converged=bool(np.all(tr.diagnostics.converged)),
        wall=wall,
        mu0=float(m.params["static_friction"]),
    )


def _panel(ax, results, key, ylabel):
    for e, r in results.items():
        ax.plot(r["t"], r[key], lw=1, label=f"e = {e} m")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join("out", "slider_bar"))
    ap.add_argument("--dt", type=float, default=5e-4)
    ap.add_argument("--t-final", type=float, default=2.0)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    scheme = EventDriven()
    results = {e: run(e, args.dt, args.t_final, scheme) for e in ECCENTRICITIES}

    figures = {
        "slider.png": [("x", "slider displacement x_C1 [m]"), ("theta", "slider angle θ1 [rad]")],
        "forces.png": [
            ("normal", "normal contact force [N]"),
            ("joint", "joint force ‖λ_A‖ [N]"),
            ("torque", "driving torque [N m]"),
        ],
        "stick_slip.png": [("friction", "friction force [N]"), ("slip", "slip velocity [m/s]")],
    }
    for name, panels in figures.items():
        fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels) + 0.5), sharex=True)
        for ax, (key, label) in zip(axes, panels):
            _panel(ax, results, key, label)
        axes[0].legend(fontsize=8)
        axes[-1].set_xlabel("t [s]")
        fig.suptitle(f"slider–bar (2015 LCP paper), event-driven scheme, h = {args.dt:g} s")
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, name), dpi=110)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(9, 3.2))
    for e, r in results.items():
        ax.semilogy(r["t"], np.where(r["phi"] > 0, r["phi"], np.nan), lw=1, label=f"e = {e} m")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("‖Φ‖")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "constraints.png"), dpi=110)
    plt.close(fig)

    np.savez(
        os.path.join(args.out, "slider_bar.npz"),
        **{f"{k}_e{e}": v for e, r in results.items() for k, v in r.items() if isinstance(v, np.ndarray)},
    )
    for e, r in results.items():
        stuck = np.abs(r["slip"]) < 1e-6
        within = np.all(np.abs(r["friction"][stuck]) <= r["mu0"] * r["normal"][stuck] * (1 + 1e-9))
        print(
            f"e = {e} m: x(t_end) = {r['x'][-1]:+.4f} m, |θ1| ≤ {np.abs(r['theta']).max():.2e} rad, "
            f"sticking {100 * stuck.mean():.0f} % of the time (|F_T| ≤ μ0 F_N there: {within}), "
            f"max ‖Φ‖ = {r['phi'].max():.1e}, converged: {r['converged']}, wall {r['wall']:.1f} s"
        )
    print(f"plots in {args.out}/")


if __name__ == "__main__":
    main()

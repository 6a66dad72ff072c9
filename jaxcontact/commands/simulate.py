"""``jaxcontact simulate <model>``: run one built-in model, write trajectory.npz and plots, print a summary.

    jaxcontact simulate bouncing-ball --set restitution=0.8 --dt 1e-3 --t-final 10 --out ball
"""

from __future__ import annotations

import argparse
import os
import sys
import time

NAME = "simulate"
SCHEMES = ("moreau-jean", "penalty", "event-driven")
HELP = "simulate a built-in model (Moreau–Jean, penalty or event-driven), write trajectory.npz and PNG plots"


def make_scheme(name: str, **moreau_jean):
    """The stepping scheme named by ``--scheme`` (one of SCHEMES), with default options;
    ``moreau_jean`` options (θ, solver, iterations) apply to Moreau–Jean only."""
    from jaxcontact.stepping import EventDriven, MoreauJean, Penalty

    return {"moreau-jean": lambda: MoreauJean(**moreau_jean), "penalty": Penalty, "event-driven": EventDriven}[name]()


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the ``simulate`` options on ``p``."""
    from jaxcontact.models import REGISTRY

    p.add_argument("model", help=f"built-in model: {', '.join(sorted(REGISTRY))}")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter override by name (repeatable)")
    p.add_argument("--dt", type=float, default=None, help="time step (default: the model's)")
    p.add_argument("--t-final", type=float, default=None, help="simulated time (default: the model's)")
    p.add_argument("--scheme", choices=SCHEMES, default="moreau-jean",
                   help="time stepping: moreau-jean (rigid contacts, impulses), penalty (compliant contacts, RK4) "
                        "or event-driven (stick–slip with static friction)")
    p.add_argument("--theta", type=float, default=0.5, help="θ of the Moreau–Jean θ-method (default 0.5)")
    p.add_argument("--solver", choices=("auto", "nsgs", "pgs", "lemke"), default="auto",
                   help="contact solver (auto: NSGS with friction, PGS without)")
    p.add_argument("--iterations", type=int, default=50, help="sweeps of the iterative contact solver")
    p.add_argument("--save-every", type=int, default=1, help="keep every k-th state")
    p.add_argument("--out", default=None, help="output folder (default: simulate-<model>)")
    p.add_argument("--no-plots", action="store_true")


def parse_sets(items) -> dict:
    """``["name=value", ...]`` → {name: float}; a clear error for anything else."""
    out = {}
    for s in items:
        name, eq, value = s.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"--set {s!r}: expected NAME=VALUE")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--set {s!r}: value {value!r} is not a number") from None
    return out


def run(args) -> int:
    """Run ``jaxcontact simulate`` with parsed ``args``: write trajectory.npz and plots; returns the exit status."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxcontact.models import get_model
    from jaxcontact.simulate import n_steps_for, simulate
    try:
        model = get_model(args.model, **parse_sets(args.set))
        dt = model.dt if args.dt is None else args.dt
        t_final = model.t_final if args.t_final is None else args.t_final
        n_steps = n_steps_for(dt, t_final)
        save_every = args.save_every
        if save_every < 1 or n_steps % save_every:
            raise ValueError(f"--save-every {save_every} must be ≥ 1 and divide the step count {n_steps}")
        scheme = make_scheme(args.scheme, theta=args.theta, solver=args.solver, iterations=args.iterations)
        q0, u0 = model.initial_state(model.params)
        start = time.perf_counter()
        traj = simulate(model.system, model.params, q0, u0, dt=dt, n_steps=n_steps, scheme=scheme,
                        save_every=save_every)
        jax.block_until_ready(traj)
        wall = time.perf_counter() - start
    except ValueError as e:
        print(f"jaxcontact simulate: error: {e}", file=sys.stderr)
        return 2

    out = args.out or f"simulate-{args.model}"
    os.makedirs(out, exist_ok=True)
    d = traj.diagnostics
    arrays = {
        "t": traj.t, "q": traj.q, "u": traj.u, "impulse_normal": traj.impulse_normal,
        "impulse_tangent": traj.impulse_tangent, "active": traj.active, "residual": d.residual,
        "converged": d.converged, "iterations": d.iterations, "phi": d.phi, "phi_dot": d.phi_dot,
        "energy": d.energy,
    }
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    params = {f"param_{k}": np.asarray(v) for k, v in model.params.items()}
    np.savez(os.path.join(out, "trajectory.npz"), dt=np.asarray(dt), **arrays, **params)
    paths = [] if args.no_plots else _plots(traj, model, out)

    s = summary(arrays, model.system.names)
    print(f"{model.name}: {n_steps} steps of dt = {dt:g} s to t = {float(arrays['t'][-1]):g} s "
          f"in {wall:.2f} s wall time (including compilation)")
    print(f"  final state: {s['final']}")
    print(f"  impacts (contact activations): {s['impacts']}")
    print(f"  max contact-solver residual: {s['max_residual']:.3g} (unconverged steps: {s['unconverged']})")
    print(f"  energy: {s['energy0']:.6g} → {s['energy1']:.6g} J (change {s['energy1'] - s['energy0']:+.3g} J)")
    if np.any(arrays["phi"] > 0):
        print(f"  max ‖Φ‖ = {arrays['phi'].max():.3g}, max ‖Φ̇‖ = {arrays['phi_dot'].max():.3g}")
    print(f"  wrote {os.path.join(out, 'trajectory.npz')}" + (f" and {len(paths)} plots" if paths else ""))
    return 0


def summary(arrays, names=()) -> dict:
    """Final state, number of impacts (inactive→active transitions), solver and energy figures."""
    import numpy as np

    q, u, act = arrays["q"], arrays["u"], arrays["active"]
    names = names or tuple(f"q{i}" for i in range(q.shape[1]))
    final = ", ".join(f"{n} = {a:.6g} (d/dt {b:.3g})" for n, a, b in zip(names, q[-1], u[-1]))
    impacts = int(np.sum(act[1:] & ~act[:-1])) if act.shape[1] else 0
    return {
        "final": final, "impacts": impacts, "max_residual": float(np.max(arrays["residual"])),
        "unconverged": int(np.sum(~arrays["converged"])), "energy0": float(arrays["energy"][0]),
        "energy1": float(arrays["energy"][-1]),
    }


def _plots(traj, model, out):
    from jaxcontact.plotting import plot_trajectory

    return plot_trajectory(traj, out, names=model.system.names, title=model.name)

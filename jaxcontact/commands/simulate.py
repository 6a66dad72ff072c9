"""``jaxcontact simulate <model>``: run one built-in or user model (FILE.py:FUNCTION), write trajectory.npz
and plots (a spatial model also its page view.html, and with ``--gif`` motion.gif), print a summary.

jaxcontact simulate bouncing-ball --set restitution=0.8 --dt 1e-3 --t-final 10 --out ball
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from jaxcontact.commands import checks
from jaxcontact.commands.scheme_options import (
    add_model_argument,
    add_scheme_arguments,
    default_out,
    model_name,
    scheme_from_args,
)

NAME = "simulate"
HELP = "simulate a built-in or user model (Moreau–Jean, penalty or event-driven), write trajectory.npz and PNG plots"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``simulate`` command's arguments."""
    add_model_argument(p)
    p.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="parameter override by name (repeatable)"
    )
    p.add_argument("--dt", type=checks.positive_float, default=None, help="time step in s (default: the model's)")
    p.add_argument(
        "--t-final", type=checks.positive_float, default=None, help="simulated time in s (default: the model's)"
    )
    add_scheme_arguments(p)
    p.add_argument(
        "--start",
        default="check",
        metavar="{check,project}",
        help="check (default): refuse a start off its joints, manifold or contacts, naming the row; "
        "project: move it onto them first",
    )
    p.add_argument("--save-every", type=checks.positive_int, default=1, help="keep every k-th state (default 1)")
    p.add_argument("--out", default=None, help="output folder, created if needed (default: simulate-<model>)")
    p.add_argument("--no-plots", action="store_true", help="write trajectory.npz only (no plots, no view.html)")
    p.add_argument(
        "--gif",
        action="store_true",
        help="also write motion.gif, an animation of the motion (spatial models; slow: it draws each frame)",
    )
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="run even when the size estimate is far above what a command line usually asks for",
    )
    checks.add_check_option(p)


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
    from jaxcontact.simulate import check_scheme, n_steps_for, simulate

    try:
        name = model_name(args)
        model = get_model(name, **parse_sets(args.set))
        dt = model.dt if args.dt is None else args.dt
        t_final = model.t_final if args.t_final is None else args.t_final
        n_steps = n_steps_for(dt, t_final)
        save_every = args.save_every
        if save_every < 1 or n_steps % save_every:
            raise ValueError(f"--save-every {save_every} must be ≥ 1 and divide the step count {n_steps}")
        scheme = scheme_from_args(args)
        check_scheme(scheme, model.system, model.name)
        if args.gif and model.animation is None:
            raise ValueError(f"--gif: model {model.name!r} has no animation (the spatial models have one)")
        out = checks.output_folder(args.out or default_out("simulate", name))
        size = checks.trajectory_size(model, n_steps, save_every)
        warns = checks.check_size(
            size,
            out,
            args.allow_large,
            max_steps=checks.SINGLE_RUN_STEPS,
            hint="a larger --dt, a shorter --t-final or a larger --save-every",
        )
        for w in warns + checks.step_warnings(model, dt):
            print(f"warning: {w}", file=sys.stderr)
        if args.check:
            print(
                f"{model.name}: {n_steps} steps of dt = {dt:g} s to t = {n_steps * dt:g} s ({scheme.name}); "
                f"{size.describe()}; output folder {out}"
            )
            return 0
        q0, u0 = model.initial_state(model.params)
        start = time.perf_counter()
        traj = simulate(
            model.system,
            model.params,
            q0,
            u0,
            dt=dt,
            n_steps=n_steps,
            scheme=scheme,
            save_every=save_every,
            start=args.start,
        )
        jax.block_until_ready(traj)
        wall = time.perf_counter() - start
    except ValueError as e:
        print(f"jaxcontact simulate: error: {e}", file=sys.stderr)
        return 2

    d = traj.diagnostics
    arrays = {
        "t": traj.t,
        "q": traj.q,
        "u": traj.u,
        "impulse_normal": traj.impulse_normal,
        "impulse_tangent": traj.impulse_tangent,
        "active": traj.active,
        "residual": d.residual,
        "converged": d.converged,
        "iterations": d.iterations,
        "phi": d.phi,
        "phi_dot": d.phi_dot,
        "energy": d.energy,
    }
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    params = {f"param_{k}": np.asarray(v) for k, v in model.params.items()}
    np.savez(os.path.join(out, "trajectory.npz"), dt=np.asarray(dt), **arrays, **params)
    finite = np.isfinite(arrays["q"]).all(axis=1) & np.isfinite(arrays["u"]).all(axis=1) & np.isfinite(arrays["energy"])
    paths = [] if args.no_plots or not finite.all() else _plots(traj, model, out)
    views = [] if not finite.all() else _views(traj, model, out, html=not args.no_plots, gif=args.gif)
    if not finite.all():
        k = int(np.argmin(finite))
        print(
            "jaxcontact simulate: error: the run is not finite (state or energy) from "
            f"t = {float(arrays['t'][k]):g} s (saved row {k}) on: nothing valid after it (a parameter far outside "
            "the model's range, or a --dt too large?); "
            f"wrote {os.path.join(out, 'trajectory.npz')} for inspection",
            file=sys.stderr,
        )
        return 1
    for w in checks.result_warnings(model, arrays["phi"], arrays["converged"], arrays["residual"]):
        print(f"warning: {w}", file=sys.stderr)
    s = summary(arrays, model.system.names)
    print(
        f"{model.name}: {n_steps} steps of dt = {dt:g} s to t = {float(arrays['t'][-1]):g} s "
        f"in {wall:.2f} s wall time (including compilation)"
    )
    print("  path: " + "; ".join(f"{k} {v}" for k, v in scheme.plan(model.system).items()))
    print(f"  final state: {s['final']}")
    print(f"  impacts (contact activations): {s['impacts']}")
    print(f"  max contact-solver residual: {s['max_residual']:.3g} (unconverged steps: {s['unconverged']})")
    print(f"  energy: {s['energy0']:.6g} → {s['energy1']:.6g} J (change {s['energy1'] - s['energy0']:+.3g} J)")
    if np.any(arrays["phi"] > 0):
        print(f"  max ‖Φ‖ = {arrays['phi'].max():.3g}, max ‖Φ̇‖ = {arrays['phi_dot'].max():.3g}")
    print(f"  wrote {os.path.join(out, 'trajectory.npz')}" + (f" and {len(paths)} plots" if paths else ""))
    for path in views:
        print(f"  wrote {path} (open it in a browser)" if path.endswith(".html") else f"  wrote {path}")
    return 0


# The final state's line names at most this many coordinates (a large model's are in trajectory.npz).
FINAL_MAX = 14


def summary(arrays, names=()) -> dict:
    """Final state, number of impacts (inactive→active transitions), solver and energy figures."""
    import numpy as np

    q, u, act = arrays["q"], arrays["u"], arrays["active"]
    names = names or tuple(f"q{i}" for i in range(q.shape[1]))
    k = FINAL_MAX
    if q.shape[1] == u.shape[1]:
        final = ", ".join(f"{n} = {a:.6g} (d/dt {b:.3g})" for n, a, b in zip(names[:k], q[-1, :k], u[-1, :k]))
    else:  # velocities apart from the coordinates (spatial bodies)
        final = (
            ", ".join(f"{n} = {a:.6g}" for n, a in zip(names[:k], q[-1, :k]))
            + "; velocities "
            + ", ".join(f"{b:.3g}" for b in u[-1, :k])
        )
    if q.shape[1] > k:
        final += f" … ({q.shape[1] - k} more coordinates in trajectory.npz)"
    impacts = int(np.sum(act[1:] & ~act[:-1])) if act.shape[1] else 0
    return {
        "final": final,
        "impacts": impacts,
        "max_residual": float(np.max(arrays["residual"])),
        "unconverged": int(np.sum(~arrays["converged"])),
        "energy0": float(arrays["energy"][0]),
        "energy1": float(arrays["energy"][-1]),
    }


def _plots(traj, model, out):
    from jaxcontact.plotting import plot_trajectory

    paths = plot_trajectory(
        traj, out, names=model.system.names, title=model.name, velocity_names=model.system.velocity_names
    )
    if model.picture is not None:  # the model's own picture (spatial models: 3D snapshots)
        paths.append(model.picture(traj, model.params, os.path.join(out, "snapshots.png")))
    return paths


def _views(traj, model, out, *, html: bool, gif: bool):
    """The model's animations of the motion: its page (view.html) and, asked for, its GIF (motion.gif)."""
    paths = []
    if html and model.view is not None:
        paths.append(model.view(traj, model.params, os.path.join(out, "view.html")))
    if gif:  # the model has one: checked before the run
        paths.append(model.animation(traj, model.params, os.path.join(out, "motion.gif")))
    return paths

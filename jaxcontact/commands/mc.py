"""``jaxcontact mc <model>``: a Monte Carlo uncertainty study of a built-in model.

    jaxcontact mc four-bar                      # the four-bar hitting a wall, default uncertainties
    jaxcontact mc four-bar --n 4096 --sampler sobol --param restitution=uniform(0.5,0.9)
    jaxcontact mc bouncing-ball --param restitution=uniform(0.5,0.9) --outcome peak_impulse

Writes ``summary.json``, ``samples.npz`` and PNG figures into ``--out`` and a
``chunks/`` folder that lets an interrupted run (Ctrl-C, a killed job) resume:
rerun the same command.

``--devices K`` splits each chunk over K XLA host devices on a CPU, one per
core. By default K is the number of cores this process may use (``os.sched_getaffinity``):
on a 2-core machine the four-bar study runs 2.1× faster than on one device
(bench/RESULTS.md). ``--devices 1`` keeps one device. With jax 0.10.2 on CPU,
programs that call LAPACK (custom calls such as ``lapack_dpotrf_ffi``: a
model with a full mass matrix or more than 12 coordinates) can *hang* when
several host devices run them on large batches (reproduced with a bare
``cho_factor`` in a ``scan``); the runner therefore runs such a program on one
device and says so (``jaxcontact.studies.runner``). Planar mechanisms (diagonal
mass, unrolled small solves) make no LAPACK call and shard.
"""

from __future__ import annotations

import argparse
import os
import sys

from jaxcontact.commands.simulate import parse_sets

NAME = "mc"
HELP = "Monte Carlo uncertainty study of a built-in model (statistics, Sobol indices, plots)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the ``mc`` options on ``p``."""
    p.add_argument("model", help="built-in model name (e.g. four-bar, bouncing-ball)")
    p.add_argument("--n", type=int, default=None,
                   help="number of simulations (default: the model's default study, 10000 for four-bar)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=DIST(ARGS)",
                   help="uncertain parameter, e.g. restitution=uniform(0.6,0.95); dists: uniform(a,b), "
                        "normal(mu,sigma), truncnormal(mu,sigma,lo,hi), lognormal(mu,sigma), fixed(v). "
                        "Repeatable; replaces the default distribution of that name")
    p.add_argument("--only", action="store_true",
                   help="vary only the --param parameters (drop the model's default uncertainties)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="fixed parameter value for the whole study (repeatable)")
    p.add_argument("--outcome", action="append", default=[], metavar="NAME",
                   help="outcome (repeatable; default: the model's default list): peak_impulse, impacts, "
                        "rest_time, max_penetration, max_phi, max_phi_dot, final:<coord>, max:<coord>, "
                        "min:<coord>, series:<coord>|gap|energy|phi|speed")
    p.add_argument("--chunk", type=int, default=None,
                   help="samples per compiled call, split over the devices (default: 256 per device; four-bar "
                        "on a 2-core CPU, 2 devices: 2124/2493/2641/2611 samples/s at 128/256/512/1024)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sampler", choices=("random", "lhs", "sobol"), default="random")
    p.add_argument("--no-sobol", action="store_true", help="skip Sobol indices (plain design of N samples)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for Sobol-index CIs")
    p.add_argument("--dt", type=float, default=None, help="time step (default: the study's)")
    p.add_argument("--t-final", type=float, default=None, help="simulated time (default: the study's)")
    p.add_argument("--save-every", type=int, default=None, help="keep every k-th row of time series")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--devices", type=int, default=None,
                   help="XLA host devices to shard over on CPU (default: one per usable core; programs with "
                        "LAPACK calls run on one, see the module doc)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=None, help="output folder (default: mc-<model>)")


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _host_devices(requested: int | None) -> None:
    """Ask XLA for ``requested`` CPU devices (None: one per usable core), if the backend has not started yet."""
    from jax._src import xla_bridge

    if requested is not None and requested < 1:
        raise ValueError(f"--devices {requested} must be ≥ 1")
    n = usable_cores() if requested is None else requested
    flags = os.environ.get("XLA_FLAGS", "")
    if n < 2 or "xla_force_host_platform_device_count" in flags:
        return
    if xla_bridge.backends_are_initialized():
        if requested is not None:
            print(f"note: --devices {requested} ignored (the XLA backend is already running)", file=sys.stderr)
        return
    os.environ["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={n}").strip()


def run(args) -> int:
    """Run ``jaxcontact mc`` with parsed ``args``: the study, its summary, files and plots; returns the exit status."""
    try:
        _host_devices(args.devices)
    except ValueError as e:
        print(f"jaxcontact mc: error: {e}", file=sys.stderr)
        return 2
    import jax

    jax.config.update("jax_enable_x64", args.dtype == "float64")
    from jaxcontact.studies.montecarlo import default_study, format_summary, run_study

    try:
        spec = default_study(args.model, n=args.n, params=args.param, only=args.only, outcomes=args.outcome,
                             sampler=args.sampler, seed=args.seed, sensitivity=not args.no_sobol, dt=args.dt,
                             t_final=args.t_final, save_every=args.save_every, overrides=parse_sets(args.set),
                             chunk_size=args.chunk, n_bootstrap=args.bootstrap)
        out = args.out or f"mc-{args.model}"
        summary = run_study(spec, out, progress=not args.quiet, plot=not args.no_plots)
    except ValueError as e:
        print(f"jaxcontact mc: error: {e}", file=sys.stderr)
        return 2
    print(format_summary(summary))
    print(f"wrote {', '.join(os.path.join(out, f) for f in summary['files'])}")
    return 0

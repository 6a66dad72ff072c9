"""``jaxcontact identify <model>``: fit model parameters to a measured trajectory (optax, through the contacts).

    jaxcontact simulate bouncing-ball --t-final 1.5 --out ball
    jaxcontact identify bouncing-ball --data ball/trajectory.npz --fit restitution=0.63 --out fit-ball

``--data`` reads the ``trajectory.npz`` of ``jaxcontact simulate`` (keys t, q, u, dt)
or any npz with ``t`` and ``y`` (observations) or ``q`` (coordinates). ``--observe``
picks coordinates by name or index (default: all); with ``y`` in the file they must
match its columns. Writes ``fit.json`` (estimates, sd, 95 % intervals, loss history,
iterations, wall time), ``convergence.png`` and ``fit_vs_data.png``.
With the Moreau–Jean scheme, impacts are located inside the step by default
(``--impact-location interpolated``; ``step`` reproduces a ``simulate`` run of the same
step exactly) and resting contacts and joints are projected after every step
(``--no-projection``: not), unless ``--smooth`` asks for the other remedy
(:func:`identify_default`). The loss gradient is forward mode for a few parameters
(``--gradient``). A single fit also checks its residuals (lag-1 autocorrelation): correlated ones
mean a systematic misfit, and the command says its intervals then cover noise only.

A multi-experiment ``--data`` (:mod:`jaxcontact.experiments`, e.g. real cube tosses) takes the
route of :mod:`jaxcontact.commands.identify_experiments`: parameters shared by every experiment,
intervals from the scatter between them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from jaxcontact.commands import checks
from jaxcontact.commands.scheme_options import (
    add_experiment_arguments,
    add_model_argument,
    add_scheme_arguments,
    default_out,
    model_name,
    scheme_from_args,
)
from jaxcontact.commands.simulate import parse_sets

NAME = "identify"
# The options of a fit over many experiments, by flag: (attribute, default).
EXPERIMENTS_ONLY = {
    "--tosses": ("tosses", None),
    "--horizon": ("horizon", 100),
    "--batch": ("batch", 32),
    "--substeps": ("substeps", 10),
    "--loss-scale": ("loss_scale", 0.01),
}
HELP = "identify model parameters from a measured trajectory (gradient-based, optax)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``identify`` command's arguments."""
    add_model_argument(p)
    p.add_argument(
        "--data",
        required=True,
        metavar="FILE.npz",
        help="measured data: trajectory.npz of `jaxcontact simulate`, an npz with t and y (or q), or a "
        "multi-experiment npz (jaxcontact.experiments: length, dt, position, quaternion_wxyz, …)",
    )
    p.add_argument(
        "--fit",
        action="append",
        required=True,
        metavar="NAME[=GUESS]",
        help="parameter to fit, with an optional initial guess (default: the model's value); repeatable",
    )
    p.add_argument(
        "--bounds",
        action="append",
        default=[],
        metavar="NAME=LO,HI",
        help="bounds of a fitted parameter (default: guess/4 .. guess*4, restitution (0, 1))",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="known parameter value (repeatable), as in `simulate`",
    )
    p.add_argument(
        "--observe",
        default=None,
        metavar="COORDS",
        help="observed coordinates, comma-separated names or indices (default: all)",
    )
    p.add_argument(
        "--optimizer",
        choices=("lbfgs", "adam"),
        default=None,
        help="optax optimiser: lbfgs (the default for one trajectory) or adam (a fit over experiments: adam only)",
    )
    p.add_argument(
        "--steps",
        type=checks.positive_int,
        default=None,
        help="optimiser iterations (default 50 for one trajectory; a fit over experiments: Adam steps over "
        "minibatches before its Newton steps on them all, default 40)",
    )
    p.add_argument(
        "--learning-rate",
        type=checks.positive_float,
        default=None,
        help="Adam step size (default 0.05; 0.1 for a fit over experiments)",
    )
    p.add_argument(
        "--starts", type=checks.positive_int, default=1, help="multi-start count (vmapped; the best is kept)"
    )
    p.add_argument(
        "--grid-start",
        type=checks.nonnegative_int,
        default=0,
        metavar="K",
        help="K-point coordinate grid search over the bounds before the optimiser (0: off)",
    )
    add_scheme_arguments(p)
    p.add_argument(
        "--no-projection",
        action="store_true",
        help="identify's default moreau-jean (no --impact-location, no --smooth) projects resting contacts "
        "onto their surface and the joints onto their constraints after every step, so a body at "
        "rest sits where a measured one does at any step; this keeps the step's own resting state",
    )
    p.add_argument(
        "--gradient",
        choices=("auto", "forward", "reverse"),
        default="auto",
        help="loss gradient: forward mode (p tangents with one forward pass, no stored steps) or reverse "
        "mode through the steps; auto: forward mode for a few parameters when the scheme allows it",
    )
    p.add_argument(
        "--smooth",
        type=checks.positive_float,
        nargs=2,
        default=None,
        metavar=("TAU_START", "TAU_END"),
        help="soft contact activation annealed from TAU_START to TAU_END (m)",
    )
    p.add_argument(
        "--windows",
        type=checks.positive_int,
        default=1,
        help="data-anchored windows (needs q and u in the data, i.e. a simulate trajectory.npz)",
    )
    p.add_argument(
        "--noise",
        type=checks.positive_float,
        default=None,
        help="measurement sd, in the observed coordinates' units (default: estimated from the residual)",
    )
    p.add_argument(
        "--dt",
        type=checks.positive_float,
        default=None,
        help="simulation time step in s (default: the data's dt, else the spacing of its t)",
    )
    p.add_argument(
        "--posterior",
        type=checks.positive_int,
        nargs="?",
        const=8,
        default=None,
        metavar="CHAINS",
        help="after the fit, sample the posterior with CHAINS vmapped random-walk Metropolis chains "
        "(default 8; Gaussian noise of sd --noise or the residual's, uniform prior in the bounds)",
    )
    p.add_argument("--draws", type=checks.positive_int, default=1000, help="posterior draws per chain (default 1000)")
    p.add_argument("--every", type=checks.positive_int, default=10, help="print progress every k iterations")
    experiments = p.add_argument_group("a fit over many experiments (a multi-experiment --data)")
    add_experiment_arguments(experiments, "fit")
    experiments.add_argument(
        "--horizon",
        type=checks.positive_int,
        default=100,
        help="samples fitted from each experiment's start (default 100)",
    )
    experiments.add_argument(
        "--batch", type=checks.positive_int, default=32, help="experiments per optimiser step (default 32)"
    )
    experiments.add_argument(
        "--loss-scale",
        type=checks.positive_float,
        default=0.01,
        metavar="M",
        help="pose error (m) where the robust loss turns from quadratic to linear (default 0.01)",
    )
    p.add_argument("--no-plots", action="store_true", help="write fit.json only")
    p.add_argument("--out", default=None, help="output folder, created if needed (default: identify-<model>)")
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="run even when the size estimate is far above what a command line usually asks for",
    )
    checks.add_check_option(p)


def parse_fit(items, model) -> dict:
    """``["name", "name=guess", ...]`` → {name: guess} (the model's value when no guess is given)."""
    out = {}
    for s in items:
        name, eq, value = s.partition("=")
        name = name.strip()
        if name not in model.params:
            raise ValueError(f"--fit {s!r}: {name!r} is not a parameter of {model.name}; valid: {sorted(model.params)}")
        try:
            out[name] = float(value) if eq else float(model.params[name])
        except ValueError:
            raise ValueError(f"--fit {s!r}: guess {value!r} is not a number") from None
    return out


def default_bounds(name, guess, table=None) -> tuple:
    """The parameter's own range when it is a finite interval (a restitution's [0, 1]: ``table.bounds``,
    default the conventions by name); guess/4 .. 4·guess otherwise (a sign-preserving wide box)."""
    from jaxcontact.params import conventional_bounds

    own = (table.bounds if table is not None else conventional_bounds)(name)
    if own is not None and all(math.isfinite(b) for b in own):
        return own
    lo, hi = sorted((guess / 4.0, guess * 4.0))
    if guess == 0.0:
        raise ValueError(f"--fit {name}: a guess of 0 needs explicit --bounds {name}=LO,HI")
    return (lo, hi)


def parse_bounds(items) -> dict:
    """``NAME=LO,HI`` strings → {name: (lo, hi)}; ValueError naming the item when malformed or LO ≥ HI."""
    out = {}
    for s in items:
        name, eq, value = s.partition("=")
        parts = value.split(",")
        try:
            lo, hi = (float(v) for v in parts)
        except ValueError:
            raise ValueError(f"--bounds {s!r}: expected NAME=LO,HI") from None
        if not (eq and lo < hi):
            raise ValueError(f"--bounds {s!r}: expected NAME=LO,HI with LO < HI")
        out[name.strip()] = (lo, hi)
    return out


def observed_columns(spec, names, n) -> list:
    """Column indices from ``--observe`` (names or indices, comma-separated); all when None."""
    if spec is None:
        return list(range(n))
    cols = []
    for item in spec.split(","):
        item = item.strip()
        if item in names:
            cols.append(names.index(item))
        elif item.isdigit() and int(item) < n:
            cols.append(int(item))
        else:
            raise ValueError(f"--observe {item!r}: not a coordinate name {list(names)} or an index < {n}")
    return cols


def identify_default(scheme, model, *, projection=True):
    """The scheme identify fits with when none of its impact options is given: impacts located inside the step
    and, with ``projection``, joints and resting contacts (unless the model says they must not be:
    ``Model.resting_projection``) projected after every step; the first of these that
    the scheme and the model accept, else ``scheme`` itself.

    Measured impacts fall anywhere inside a step: located ones keep the misfit continuous in the parameters.
    A measured resting contact sits on its surface, where the step leaves it about g·h² inside (the last free
    sub-step before it comes to rest): the projection puts it back at any step, so a record that ends at rest
    is not fitted by biasing the parameters. A variant that cannot locate impacts (Siconos' rule) keeps its
    own law.
    """
    from jaxcontact.simulate import check_scheme
    from jaxcontact.stepping.projection import Projection

    candidates = []
    try:
        located = scheme.with_impact_location("interpolated")
        if projection:
            candidates.append(lambda: located.with_projection(Projection(resting_contacts=model.resting_projection)))
        candidates.append(lambda: located)
    except ValueError:
        pass
    for make in candidates:
        try:
            s = make()
            check_scheme(s, model.system, model.name)
            return s
        except ValueError:
            continue
    return scheme


def exact_fit(res, name) -> bool:
    """The data are reproduced exactly (zero residual, so a zero Laplace sd): an interval says nothing."""
    return res.std[name] == 0


@checks.releases_locks
def run(args) -> int:
    """Run ``jaxcontact identify`` with parsed ``args``: fit, write fit.json and plots; returns the exit status."""
    from jaxcontact.commands import identify_experiments

    many = identify_experiments.holds_experiments(args.data)
    if many:
        # the experiments split over one host device per core (before jax starts its backend)
        from jaxcontact.commands.devices import host_devices

        host_devices(None)
    import jax

    jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxcontact.models import get_model
    from jaxcontact.simulate import check_scheme, n_steps_for
    from jaxcontact.studies.experiments_fit import ADAM_STEPS
    from jaxcontact.studies.identify import Smoothing, coordinates, fit

    try:
        name = model_name(args)
        model = get_model(name, **parse_sets(args.set))
        scheme = scheme_from_args(args)
        if getattr(args, "impact_location", None) is None and args.smooth is None and scheme.impact_location_available:
            # a fit over experiments projects nothing (jaxcontact.studies.experiments_fit says why)
            scheme = identify_default(scheme, model, projection=not (args.no_projection or many))
        check_scheme(scheme, model.system, model.name)
        if many:
            if args.learning_rate is None:
                args.learning_rate = 0.1
            if args.steps is None:
                args.steps = ADAM_STEPS
            return identify_experiments.run(args, model, scheme.for_forward_runs())
        given = [flag for flag, (attr, default) in EXPERIMENTS_ONLY.items() if getattr(args, attr) != default]
        if given:
            raise ValueError(f"{', '.join(given)}: options of a fit over many experiments; {args.data!r} holds one")
        learning_rate = 0.05 if args.learning_rate is None else args.learning_rate
        if args.steps is None:
            args.steps = 50
        optimizer = args.optimizer or "lbfgs"
        guesses = parse_fit(args.fit, model)
        given = parse_bounds(args.bounds)
        stray = sorted(set(given) - set(guesses))
        if stray:
            raise ValueError(
                f"--bounds for {stray}: not fitted (fitted: {sorted(guesses)}); add --fit NAME or drop those bounds"
            )
        bounds = {n: default_bounds(n, g, model.param_table) for n, g in guesses.items()} | given
        names = model.system.names or tuple(f"q{i}" for i in range(model.system.n_dof))
        cols = observed_columns(args.observe, names, model.system.n_dof)
        t, y, state, data_dt, dt_source = checks.data_file(args.data, model, cols, names)
        if args.windows > 1 and state is None:
            raise ValueError(
                f"--windows {args.windows} needs q and u in the data (a simulate trajectory.npz); "
                f"{args.data!r} has none"
            )
        out = checks.output_folder(args.out or default_out("identify", name))
        smoothing = Smoothing(*args.smooth) if args.smooth else None
        dt = args.dt or data_dt
        size = checks.fit_size(model, n_steps_for(dt, float(t[-1])), args.starts, args.steps)
        warns = checks.check_size(size, out, args.allow_large, hint="a larger --dt, fewer --starts or fewer --steps")
        for w in warns + checks.step_warnings(model, dt):
            print(f"warning: {w}", file=sys.stderr)
        print(
            f"{model.name}: fitting {', '.join(guesses)} to {len(t)} samples of "
            f"{', '.join(names[c] for c in cols)} ({optimizer}, {args.steps} iterations, dt = {dt:g} s "
            f"from {'--dt' if args.dt else dt_source}); {size.describe()}"
        )
        if args.check:
            return 0
        checks.lock_folder(out)
        res = fit(
            model,
            t,
            y,
            tuple(guesses),
            guesses,
            bounds,
            observe=coordinates(*cols),
            optimizer=optimizer,
            steps=args.steps,
            learning_rate=learning_rate,
            smoothing=smoothing,
            windows=args.windows,
            data_state=state if args.windows > 1 else None,
            dt=dt,
            starts=args.starts,
            noise=args.noise,
            progress=args.every,
            scheme=scheme,
            grid_start=args.grid_start,
            gradient=args.gradient,
            posterior=None
            if args.posterior is None
            else {"chains": max(args.posterior, 2), "draws": args.draws, "burn": args.draws // 2},
        )
    except ValueError as e:
        print(f"jaxcontact identify: error: {e}", file=sys.stderr)
        return 2
    summary = {
        "model": model.name,
        "data": args.data,
        "observed": [names[c] for c in cols],
        "optimizer": optimizer,
        "guesses": guesses,
        "bounds": bounds,
        "dt": dt,
        "scheme": scheme.config(),
    } | res.to_json()
    summary["exact_fit"] = {n: exact_fit(res, n) for n in guesses}
    with open(os.path.join(out, "fit.json"), "w") as f:
        json.dump(summary, f, indent=1)
    files = ["fit.json"]
    if not args.no_plots:
        from jaxcontact.studies.identify_plots import convergence_plot, fit_vs_data_plot

        convergence_plot(res, os.path.join(out, "convergence.png"))
        fit_vs_data_plot(
            model,
            res,
            t,
            np.asarray(y),
            coordinates(*cols),
            os.path.join(out, "fit_vs_data.png"),
            dt=dt,
            scheme=scheme,
            labels=[names[c] for c in cols],
        )
        files += ["convergence.png", "fit_vs_data.png"]
        if res.posterior is not None:
            from jaxcontact.studies.identify_plots import corner_plot

            corner_plot(res, os.path.join(out, "posterior.png"))
            files.append("posterior.png")
    for n in guesses:
        lo, hi = res.interval95[n]
        if exact_fit(res, n):
            print(f"  {n} = {res.estimates[n]:.6g} (exact fit, noise-free data: no interval)")
        else:
            how = (
                "Laplace, checked against the loss"
                if res.interval_method.get(n) == "laplace"
                else "read from the loss along the parameter: the Laplace model disagreed"
            )
            print(f"  {n} = {res.estimates[n]:.6g}, Laplace sd {res.std[n]:.3g} (95 %: [{lo:.6g}, {hi:.6g}], {how})")
    if res.residuals and not res.residuals["white"]:
        wide, rho = res.residuals["interval95_correlated"], res.residuals["lag1_autocorrelation"]
        print(
            f"  warning: the residuals are correlated (lag-1 autocorrelation {rho:.2f}"
            f" > 2/sqrt({len(t)})): the misfit is systematic, so the intervals above cover noise only; widened for "
            "an AR(1) misfit: " + ", ".join(f"{n} [{wide[n][0]:.6g}, {wide[n][1]:.6g}]" for n in guesses),
            file=sys.stderr,
        )
    if res.posterior is not None:
        post = res.posterior
        for i, n in enumerate(guesses):
            plo, phi = post.interval95[i]
            print(
                f"  posterior {n}: mean {post.mean[i]:.6g}, sd {post.std[i]:.3g}, 95 % credible [{plo:.6g}, "
                f"{phi:.6g}], R-hat {post.rhat[i]:.3f}, ESS {post.ess[i]:.0f}"
            )
        print(f"  posterior acceptance {np.mean(post.acceptance):.2f} ({len(post.acceptance)} chains)")
    print(f"  loss {res.loss:.3g} after {res.iterations} iterations, {res.wall_time:.1f} s wall time")
    print(f"  wrote {', '.join(os.path.join(out, f) for f in files)}")
    return 0

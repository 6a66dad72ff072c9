"""``jaxcontact identify <model> --data EXPERIMENTS.npz``: shared parameters fitted to many measured experiments.

    jaxcontact identify box-toss --data ../shared/data/contactnets/cube_tosses.npz --set half_x=0.0524 \
        --set half_y=0.0524 --set half_z=0.0524 --set mass=0.37 --fit friction --fit restitution --out fit-cubes

Taken when ``--data`` is a multi-experiment npz (:mod:`jaxcontact.experiments`: it has ``length``). The fit is
:func:`jaxcontact.studies.experiments_fit.fit_experiments`; ``fit.json`` holds the estimates, their intervals
from the scatter between experiments, the population's spread and the settings; ``experiments_fit.png``
shows the convergence, measured against fitted tosses and the residuals by time since the first contact.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from jaxcontact.commands import checks

# The single-trajectory options a multi-experiment fit has no use for, by their flag and default.
SINGLE_ONLY = {
    "--observe": ("observe", None),
    "--starts": ("starts", 1),
    "--grid-start": ("grid_start", 0),
    "--smooth": ("smooth", None),
    "--windows": ("windows", 1),
    "--noise": ("noise", None),
    "--posterior": ("posterior", None),
    "--dt": ("dt", None),
}
# The models whose state map (measured pose → q0, u0) exists.
STATE_MAPS = ("box-toss",)


def holds_experiments(path: str) -> bool:
    """Whether ``path`` is an npz of several experiments (it has an array ``length``); False for anything else,
    which the single-trajectory reader then refuses with its own message."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return "length" in getattr(z, "files", ())
    except Exception:  # not a readable npz: the single-trajectory reader says why
        return False


def parse_fits(items, model) -> dict:
    """``--fit NAME[=GUESS]`` over the model's parameters and the measurement's (table_offset: guess 0)."""
    from jaxcontact.studies.experiments_fit import OBSERVATION_PARAMS

    out = {}
    for s in items:
        name, eq, value = (part.strip() for part in s.partition("="))
        if name not in model.params and name not in OBSERVATION_PARAMS:
            raise ValueError(
                f"--fit {s!r}: {name!r} is neither a parameter of {model.name} ({sorted(model.params)}) nor a "
                f"measurement parameter ({sorted(OBSERVATION_PARAMS)})"
            )
        try:
            out[name] = float(value) if eq else (float(model.params[name]) if name in model.params else 0.0)
        except ValueError:
            raise ValueError(f"--fit {s!r}: guess {value!r} is not a number") from None
    return out


def run(args, model, scheme) -> int:
    """The multi-experiment route of ``jaxcontact identify`` (``args`` parsed by identify's parser)."""
    from jaxcontact.commands.identify import default_bounds, parse_bounds
    from jaxcontact.commands.scheme_options import default_out
    from jaxcontact.experiments import parse_range, read_experiments
    from jaxcontact.studies.experiments_fit import OBSERVATION_PARAMS, fit_experiments

    try:
        given = [flag for flag, (attr, default) in SINGLE_ONLY.items() if getattr(args, attr) != default]
        given += ["--optimizer lbfgs"] if args.optimizer == "lbfgs" else []
        if given:
            raise ValueError(
                f"{', '.join(given)}: single-trajectory option(s); a fit over the experiments of {args.data!r} "
                "uses --tosses, --horizon, --batch, --substeps, --loss-scale, --steps and --learning-rate"
            )
        if model.name not in STATE_MAPS:
            raise ValueError(
                f"model {model.name!r} has no state map from measured poses, so it cannot start from measured "
                f"experiments; multi-experiment fits support {list(STATE_MAPS)}"
            )
        guesses = parse_fits(args.fit, model)
        bounds_given = parse_bounds(args.bounds)
        stray = sorted(set(bounds_given) - set(guesses))
        if stray:
            raise ValueError(f"--bounds for {stray}: not fitted (fitted: {sorted(guesses)})")
        bounds = {
            n: OBSERVATION_PARAMS[n] if n in OBSERVATION_PARAMS else default_bounds(n, g, model.param_table)
            for n, g in guesses.items()
        } | bounds_given
        experiments = read_experiments(args.data)
        index = np.arange(experiments.n) if args.tosses is None else parse_range(args.tosses, experiments.n)
        chosen = experiments.select(index)
        out = checks.output_folder(args.out or default_out("identify", model.name))
        print(
            f"{model.name}: fitting {', '.join(guesses)} to {chosen.n} of {experiments.n} experiments, their first "
            f"{args.horizon} samples each, {args.steps} Adam steps over minibatches of {min(args.batch, chosen.n)}; "
            f"output folder {out}"
        )
        if args.check:
            return 0
        checks.lock_folder(out)
        res = fit_experiments(
            model,
            chosen,
            tuple(guesses),
            guesses,
            bounds,
            horizon=args.horizon,
            substeps=args.substeps,
            scheme=scheme,
            steps=args.steps,
            batch=args.batch,
            learning_rate=args.learning_rate,
            scale=args.loss_scale,
            progress=lambda line: print(f"  {line}", flush=True),
        )
    except ValueError as e:
        print(f"jaxcontact identify: error: {e}", file=sys.stderr)
        return 2
    summary = {
        "model": model.name,
        "data": os.path.abspath(args.data),
        "experiments": index.tolist(),
        "parameters": {k: float(np.asarray(v)) for k, v in model.params.items()},
    } | res.to_json()
    summary["experiment_loss"] = res.experiment_loss.tolist()
    with open(os.path.join(out, "fit.json"), "w") as f:
        json.dump(summary, f, indent=1)
    files = [os.path.join(out, "fit.json")]
    if not args.no_plots:
        from jaxcontact.studies.identify_plots import experiments_fit_plot

        files.append(experiments_fit_plot(res, chosen, model, os.path.join(out, "experiments_fit.png")))
    for line in estimate_lines(res):
        print(line)
    print(
        f"  mean loss {res.loss:.4g} (the first minibatch: {res.loss_first_batch:.4g}, at the guesses "
        f"{res.loss_at_guess:.4g}), {res.wall_time:.0f} s wall time; "
        f"predict held-out experiments with `jaxcontact predict {model.name} --data {args.data} "
        + " ".join(f"--set {k}={v:.6g}" for k, v in res.estimates.items() if k in model.params)
        + " --tosses ...`"
    )
    print(f"  wrote {', '.join(files)}")
    return 0


def estimate_lines(res) -> list[str]:
    """The printed lines of a fit over experiments: each estimate with its interval (or why it has none) and the
    population's spread; for a fit that did not converge, the Newton step its Hessians still ask for."""
    lines = []
    for n, value in res.estimates.items():
        lo, hi = res.interval95[n]
        pop = res.population[n]
        if n in res.interval_notes:
            told = f"no interval: {res.interval_notes[n]}"
        elif n in (res.profiles or {}):
            told = (
                f"95 %: [{lo:.5g}, {hi:.5g}], from a bootstrap over experiments of its profile (its loss is too "
                "rough for the Hessians)"
            )
        else:
            told = f"95 %: [{lo:.5g}, {hi:.5g}], from the scatter between experiments"
        lines.append(
            f"  {n} = {value:.5g} ({told}); per experiment {pop['median']:.3g} (10–90 %: {pop['p10']:.3g}–"
            f"{pop['p90']:.3g}, {pop['experiments']} estimable)"
        )
    left = res.settings["newton_step_left"]
    if not res.settings["newton_status"].startswith("converged") and left:
        lines.append(
            f"  {res.settings['newton_status']}: one more Newton step on every experiment's Hessians would move "
            + ", ".join(f"{k} by {v:+.3g} (its standard error {res.std[k]:.3g})" for k, v in left.items())
        )
    return lines

"""``jaxcontact predict <model>``: simulate measured experiments from their first samples, score the prediction.

jaxcontact predict box-toss --data ../shared/data/contactnets/cube_tosses.npz --set half_x=0.0524 \
    --set half_y=0.0524 --set half_z=0.0524 --set mass=0.37 --set friction=0.18 --set restitution=0.125 \
    --tosses 0:100 --out pred
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from jaxcontact.commands import checks
from jaxcontact.commands.scheme_options import add_experiment_arguments, add_model_argument, default_out, model_name
from jaxcontact.commands.simulate import parse_sets

NAME = "predict"
HELP = (
    "predict measured experiments (a multi-experiment npz, e.g. real cube tosses) from their first samples; "
    "write prediction.json (position and orientation errors, penetration) and plots"
)
# The models whose state map (measured pose → q0, u0) exists: a free rigid box.
STATE_MAPS = ("box-toss",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``predict`` command's arguments."""
    add_model_argument(p)
    p.add_argument(
        "--data",
        required=True,
        help="multi-experiment npz (jaxcontact.experiments: length, dt or t, position, quaternion_wxyz, …)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="parameter override by name (repeatable); table_offset=M puts the table at height M (m) in the data",
    )
    add_experiment_arguments(p, "predict")
    p.add_argument("--batch", type=checks.positive_int, default=16, help="experiments simulated together (default 16)")
    p.add_argument(
        "--fit",
        default=None,
        metavar="FIT.json",
        help="the fit.json of `jaxcontact identify` over experiments: its estimates replace --set for those names",
    )
    p.add_argument(
        "--draws",
        type=checks.nonnegative_int,
        default=0,
        metavar="K",
        help="with --fit: 95 %% prediction bands from K parameter draws of the fit's covariance (K predictions)",
    )
    p.add_argument("--out", default=None, help="output folder, created if needed (default: predict-<model>)")
    p.add_argument("--no-plots", action="store_true", help="write prediction.json only")
    checks.add_check_option(p)


def read_fit(path: str) -> dict:
    """estimates, covariance and bounds of a fit over experiments (its fit.json); ValueError naming the file."""
    import numpy as np

    try:
        with open(path) as f:
            d = json.load(f)
        estimates = {k: float(v) for k, v in d["estimates"].items()}
        cov = d["covariance"]
        if cov["names"] != list(estimates):
            raise KeyError("covariance names")
        return {
            "estimates": estimates,
            "covariance": np.asarray(cov["matrix"], float),
            "bounds": d["settings"]["bounds"],
        }
    except FileNotFoundError:
        raise ValueError(f"--fit {path!r}: no such file") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ValueError(
            f"--fit {path!r} is not the fit.json of a fit over experiments (`jaxcontact identify` with a "
            f"multi-experiment --data): {e}"
        ) from None


def run(args) -> int:
    """Run ``jaxcontact predict`` with parsed ``args``: write prediction.json and plots; returns the exit status."""
    from jaxcontact.commands.devices import host_devices

    host_devices(None)  # the experiments split over one host device per core (before jax starts its backend)
    import jax

    jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxcontact.experiments import parse_range, read_experiments, uniform_step
    from jaxcontact.models import get_model
    from jaxcontact.prediction import OFFSET, parameter_draws, predict, prediction_bands, progress_printer, summary

    try:
        name = model_name(args)
        if name not in STATE_MAPS:
            raise ValueError(
                f"model {name!r} has no state map from measured poses; predict supports {list(STATE_MAPS)}"
            )
        sets = parse_sets(args.set)
        fitted = read_fit(args.fit) if args.fit else None
        if args.draws and fitted is None:
            raise ValueError(f"--draws {args.draws} needs --fit FIT.json (the fit's estimates and covariance)")
        if fitted is not None:
            sets |= fitted["estimates"]  # the fit's values win over --set for the names it fitted
        table_offset = float(sets.pop(OFFSET, 0.0))
        model = get_model(name, **sets)
        experiments = read_experiments(args.data)
        index = np.arange(experiments.n) if args.tosses is None else parse_range(args.tosses, experiments.n)
        chosen = experiments.select(index)
        sample_dt = uniform_step(chosen, f"--data {args.data!r}")
        out = checks.output_folder(args.out or default_out("predict", name))
        steps = int(np.sum(chosen.length - 1)) * args.substeps
        print(
            f"{model.name}: {chosen.n} of {experiments.n} experiments, {steps} steps of h = "
            f"{sample_dt / args.substeps:.4g} s in all; output folder {out}\n  parameters: "
            + ", ".join(f"{k} = {float(np.asarray(v)):g}" for k, v in model.params.items())
            + f"; table at z = {table_offset:g} m"
        )
        if args.check:
            return 0
        print(f"  simulating in batches of {min(args.batch, chosen.n)} (the first one waits for compilation)")
        sys.stdout.flush()
        began = time.perf_counter()
        pred = predict(
            model,
            chosen,
            substeps=args.substeps,
            batch=args.batch,
            progress=progress_printer(sys.stdout),
            table_offset=table_offset,
        )
        bands = None
        if args.draws:
            print(f"  prediction bands: {args.draws} parameter draws from the fit, each predicting every experiment")
            draws = parameter_draws(fitted["estimates"], fitted["covariance"], fitted["bounds"], args.draws)
            bands = prediction_bands(
                lambda values: get_model(name, **(sets | values)),
                chosen,
                draws,
                substeps=args.substeps,
                batch=args.batch,
            )
        wall = time.perf_counter() - began
    except ValueError as e:
        print(f"jaxcontact predict: error: {e}", file=sys.stderr)
        return 2
    broken = np.flatnonzero(~np.isfinite(pred.position_error) | ~np.isfinite(pred.orientation_error_deg))
    if broken.size:
        print(
            f"warning: {broken.size} simulation(s) went non-finite (experiments {index[broken][:10].tolist()}); "
            "their errors are NaN in prediction.json and the summary is NaN: check --set and --substeps",
            file=sys.stderr,
        )
    ids = chosen.info.get("toss_id")
    per = [
        {
            "index": int(i),
            **({"toss_id": int(ids[k])} if ids is not None and np.ndim(ids) else {}),
            "samples": int(chosen.length[k]),
            "position_error": float(pred.position_error[k]),
            "orientation_error_deg": float(pred.orientation_error_deg[k]),
            "penetration_m": float(pred.penetration[k]),
            "start_fit_samples": int(pred.fit_samples[k]),
        }
        for k, i in enumerate(index)
    ]
    result = {
        "model": model.name,
        "data": os.path.abspath(args.data),
        "experiments": len(per),
        "parameters": {k: float(np.asarray(v)) for k, v in model.params.items()},
        "table_offset_m": table_offset,
        "substeps": args.substeps,
        "step_s": sample_dt / args.substeps,
        "wall_time_s": wall,
        "metrics": {
            "position_error": "mean over valid samples of |p_sim - p_meas| / (2 x mean half extent)",
            "orientation_error_deg": "mean over valid samples of the angle between q_sim and q_meas, degrees",
            "penetration_m": "deepest simulated penetration of the lowest vertex at the sample times, m",
        },
        "summary": {
            "position_error": summary(pred.position_error),
            "orientation_error_deg": summary(pred.orientation_error_deg),
            "penetration_m": summary(pred.penetration),
        },
        "experiments_detail": per,
    }
    if bands is not None:
        result["bands"] = {
            "level": bands.level,
            "draws": bands.draws,
            "coverage": "share of an experiment's valid samples whose measured centre lies inside the band",
            "coverage_summary": summary(bands.coverage),
        }
        for row, c in zip(per, bands.coverage):
            row["band_coverage"] = float(c)
    path = os.path.join(out, "prediction.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    s = result["summary"]
    print(
        f"  position error: mean {100 * s['position_error']['mean']:.1f} %, median "
        f"{100 * s['position_error']['median']:.1f} % of the width; orientation error: mean "
        f"{s['orientation_error_deg']['mean']:.1f}°, median {s['orientation_error_deg']['median']:.1f}°; "
        f"deepest penetration {1e3 * s['penetration_m']['max']:.2f} mm"
    )
    if bands is not None:
        print(
            f"  {100 * bands.level:.0f} % bands from {len(bands.draws)} parameter draws hold "
            f"{100 * np.mean(bands.coverage):.0f} % of the measured samples (mean over experiments)"
        )
    print(f"  {len(per)} experiments in {wall:.0f} s wall time (including compilation); wrote {path}")
    if not args.no_plots:
        from jaxcontact.prediction_plots import plot_prediction

        print(f"  wrote {plot_prediction(chosen, pred, model, out, bands=bands)}")
    return 0

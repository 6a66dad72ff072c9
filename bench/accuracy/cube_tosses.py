"""Identification on the real cube tosses: held-out prediction against the nominal values, the effect of the
number of training tosses, and the intervals' coverage on synthetic tosses with known μ, ε.

    python bench/accuracy/cube_tosses.py holdout [--sizes 10,30,100,300] [--held-out 170]
    python bench/accuracy/cube_tosses.py synthetic [--reps 20] [--first 0] [--tosses 30]

holdout: a seeded permutation of the 470 tosses; the first ``--held-out`` are never fitted. For each training
size k the first k of the others are fitted (friction, restitution, table_offset; ``--horizon`` samples per
toss, 30 Adam steps over minibatches of 32: the cube-toss tutorial's settings) and the held-out tosses
predicted over their whole length with the
estimates (``jaxcontact.prediction.predict``); the nominal values (μ 0.18, ε 0.125, table at z = 0) once.

synthetic: each repetition takes ``--tosses`` real starts (ballistic fits), simulates them with known μ, ε by
the fit's own scheme and step, samples them at 148 Hz for 30 samples, adds noise at the level of the real
data's (the rms misfit of the real tosses' ballistic start fits, per axis and per rotation axis), and fits
friction and restitution from guesses 0.4 and 0.5 (30 samples per toss); counts the 95 % intervals that
contain the truth. One seeded random stream draws every repetition's starts and noise, so ``--first K`` runs
repetitions K, K+1, … of the same sequence (the noise of the skipped ones is drawn and dropped, their fits not
run): a run cut short is finished by another instead of repeated.

Writes bench/out/cube_tosses_<part>.json (synthetic: bench/out/cube_tosses_synthetic_from<K>.json when K > 0,
rewritten after every repetition so a run cut short keeps its finished ones) and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jaxcontact.commands.devices import host_devices  # noqa: E402

host_devices(None)  # the fits and predictions split over one host device per core, as the commands do

import jax.numpy as jnp  # noqa: E402
from common import OUT_DIR, cpu_model, git_revision, utc_date  # noqa: E402

from jaxcontact.experiments import check_experiments, read_experiments  # noqa: E402
from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.prediction import measured_scheme, predict, starts, summary  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.spatial import rotations  # noqa: E402
from jaxcontact.studies.experiments_fit import fit_experiments  # noqa: E402
from jaxcontact.toss_states import quaternion_log  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "contactnets", "cube_tosses.npz")
CUBE = {"half_x": 0.0524, "half_y": 0.0524, "half_z": 0.0524, "mass": 0.37}
NOMINAL = {"friction": 0.18, "restitution": 0.125}
BOUNDS = {"friction": (0.02, 1.0), "restitution": (0.0, 1.0), "table_offset": (-0.01, 0.01)}


def _fit(model, experiments, names, guesses, **kw):
    return fit_experiments(
        model, experiments, names, guesses, {k: BOUNDS[k] for k in names}, progress=lambda s: None, steps=30, **kw
    )


def holdout(args):
    data = read_experiments(DATA)
    order = np.random.default_rng(0).permutation(data.n)
    held, pool = order[: args.held_out], order[args.held_out :]
    model = get_model("box-toss", **CUBE, **NOMINAL)
    test = data.select(held)
    rows = []

    def score(label, k, params, offset, fit_s):
        began = time.perf_counter()
        pred = predict(get_model("box-toss", **CUBE, **params), test, table_offset=offset, batch=32)
        rows.append(
            {
                "parameters": label,
                "training_tosses": k,
                "fit_s": fit_s,
                "predict_s": time.perf_counter() - began,
                "position_error": summary(pred.position_error),
                "orientation_error_deg": summary(pred.orientation_error_deg),
                "per_toss_position": pred.position_error.tolist(),
                "per_toss_orientation": pred.orientation_error_deg.tolist(),
                "estimates": params | {"table_offset": offset},
            }
        )
        r = rows[-1]
        print(
            f"{label:>10} k={k:4d}: position {100 * r['position_error']['mean']:.1f} % (median "
            f"{100 * r['position_error']['median']:.1f}), orientation {r['orientation_error_deg']['mean']:.1f}° "
            f"(median {r['orientation_error_deg']['median']:.1f}); fit {fit_s:.0f} s, predict {r['predict_s']:.0f} s",
            flush=True,
        )

    score("nominal", 0, dict(NOMINAL), 0.0, 0.0)
    names = ("friction", "restitution", "table_offset")
    for k in args.sizes:
        began = time.perf_counter()
        res = _fit(
            model,
            data.select(pool[:k]),
            names,
            {"friction": 0.18, "restitution": 0.125, "table_offset": 0.0},
            horizon=args.horizon,
        )
        fit_s = time.perf_counter() - began
        est = res.estimates
        print(f"  fitted on {k}: {est}, 95 %: {res.interval95}", flush=True)
        score("fitted", k, {"friction": est["friction"], "restitution": est["restitution"]}, est["table_offset"], fit_s)
        rows[-1]["interval95"] = res.interval95
        rows[-1]["population"] = res.population
        rows[-1]["loss"], rows[-1]["loss_at_guess"] = res.loss, res.loss_at_guess
        rows[-1]["loss_first_batch"] = res.loss_first_batch
        rows[-1]["newton"] = {k: res.settings[k] for k in ("newton_status", "newton_trials")}
        if k == 100 and args.image:
            from jaxcontact.studies.identify_plots import experiments_fit_plot

            experiments_fit_plot(res, data.select(pool[:k]), model, args.image)
    return {"held_out": held.tolist(), "rows": rows}


def noise_level(model, data, samples=6):
    """Rms misfit of the ballistic start fits over their samples: position per axis (m), rotation per axis (rad)."""
    q0, u0, used = starts(model, data)
    g = float(model.params["gravity"])
    dp, dr = [], []
    for i in range(data.n):
        m = int(used[i])
        t = data.t[i, :m]
        p = q0[i, :3] + np.outer(t, u0[i, :3]) - 0.5 * g * np.outer(t**2, [0.0, 0.0, 1.0])
        dp.append(data.measured["position"][i, :m] - p)
        q = jax.vmap(lambda s: rotations.multiply(jnp.asarray(q0[i, 3:]), rotations.exp(s * jnp.asarray(u0[i, 3:]))))(
            jnp.asarray(t)
        )
        rel = jax.vmap(rotations.multiply)(rotations.conjugate(q), jnp.asarray(data.measured["quaternion_wxyz"][i, :m]))
        dr.append(quaternion_log(np.asarray(rel)))
    dp, dr = np.concatenate(dp), np.concatenate(dr)
    # a fit of 2 values per axis to m samples leaves m − 2 degrees of freedom
    dof = sum(max(int(m) - 2, 1) for m in used) / sum(int(m) for m in used)
    return float(np.sqrt(np.mean(dp**2) / dof)), float(np.sqrt(np.mean(dr**2) / dof))


def synthetic(args, save):
    data = read_experiments(DATA)
    truth = {"friction": args.friction, "restitution": args.restitution}
    model = get_model("box-toss", **CUBE, **truth)
    sigma_p, sigma_r = noise_level(model, data)
    print(f"noise of the real tosses' start fits: position {1e3 * sigma_p:.2f} mm, rotation {sigma_r:.4f} rad")
    scheme = measured_scheme(model).without_diagnostics()
    horizon, substeps = 30, 10
    rng = np.random.default_rng(1)
    order = rng.permutation(data.n)
    # each repetition takes two draws of normal noise (positions, then rotations) of the samples' shape;
    # drawing them for the skipped repetitions leaves the stream where a run from repetition 0 would have it
    noise_shape = (args.tosses, horizon, 3)
    for _ in range(2 * args.first):
        rng.normal(size=noise_shape)
    reps = []
    for r in range(args.first, args.first + args.reps):
        idx = order[(r * args.tosses + np.arange(args.tosses)) % data.n]
        q0, u0, _ = starts(model, data.select(idx))
        p = jax.tree.map(lambda x: jnp.broadcast_to(x, (idx.size,) + jnp.shape(x)), model.params)
        traj = simulate(
            model.system,
            p,
            jnp.asarray(q0),
            jnp.asarray(u0),
            dt=(1 / 148) / substeps,
            n_steps=(horizon - 1) * substeps,
            save_every=substeps,
            start="continue",
            scheme=scheme,
        )
        q = np.asarray(traj.q)
        if q[..., :3].shape != noise_shape:
            raise RuntimeError(f"samples of shape {q[..., :3].shape}: the skipped draws assumed {noise_shape}")
        pos = q[..., :3] + sigma_p * rng.normal(size=q[..., :3].shape)
        turn = np.asarray(
            jax.vmap(rotations.exp)(jnp.asarray(sigma_r * rng.normal(size=q[..., :3].shape).reshape(-1, 3)))
        )
        quat = np.asarray(jax.vmap(rotations.multiply)(jnp.asarray(q[..., 3:].reshape(-1, 4)), jnp.asarray(turn)))
        quat = quat.reshape(q[..., 3:].shape)
        quat = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
        fake = check_experiments(
            {"length": np.full(idx.size, horizon), "dt": np.asarray(1 / 148), "position": pos, "quaternion_wxyz": quat}
        )
        began = time.perf_counter()
        res = _fit(
            get_model("box-toss", **CUBE),
            fake,
            ("friction", "restitution"),
            {"friction": 0.4, "restitution": 0.5},
            horizon=horizon,
        )
        inside = {k: bool(res.interval95[k][0] <= v <= res.interval95[k][1]) for k, v in truth.items()}
        reps.append(
            {
                "repetition": r,
                "estimates": res.estimates,
                "interval95": res.interval95,
                "inside": inside,
                "newton": {k: res.settings[k] for k in ("newton_status", "newton_trials")},
                "fit_s": time.perf_counter() - began,
            }
        )
        print(
            f"rep {r}: {res.estimates}, 95 % {res.interval95}, inside {inside}, Newton steps "
            f"{res.settings['newton_status']}, {reps[-1]['fit_s']:.0f} s",
            flush=True,
        )
        counts = {k: sum(rep["inside"][k] for rep in reps) for k in truth}
        result = {
            "truth": truth,
            "noise": {"position_m": sigma_p, "rotation_rad": sigma_r},
            "first": args.first,
            "reps": reps,
            "inside": counts,
        }
        save(result)
    print(f"intervals containing the truth: {counts} of {len(reps)}")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("holdout", "synthetic"))
    ap.add_argument("--sizes", default="10,30,100,300")
    ap.add_argument("--held-out", type=int, default=170)
    ap.add_argument("--horizon", type=int, default=100, help="holdout: samples fitted per toss")
    ap.add_argument("--image", default=None, help="holdout: write the fit picture of the 100-toss fit here")
    ap.add_argument("--reps", type=int, default=20, help="synthetic: number of repetitions run")
    ap.add_argument(
        "--first",
        type=int,
        default=0,
        help="synthetic: index of the first repetition run (the earlier ones' draws are skipped, not refitted)",
    )
    ap.add_argument("--tosses", type=int, default=30)
    ap.add_argument("--friction", type=float, default=0.2)
    ap.add_argument("--restitution", type=float, default=0.3)
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    if args.first < 0 or args.reps < 1:
        ap.error("--first must be ≥ 0 and --reps ≥ 1")
    began = time.perf_counter()
    os.makedirs(OUT_DIR, exist_ok=True)
    name = f"cube_tosses_{args.part}" + (f"_from{args.first}" if args.part == "synthetic" and args.first else "")
    path = os.path.join(OUT_DIR, f"{name}.json")

    def save(result):
        result = result | {
            "machine": cpu_model(),
            "date": utc_date(),
            "git": git_revision(),
            "wall_s": time.perf_counter() - began,
        }
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        return result

    result = save(holdout(args) if args.part == "holdout" else synthetic(args, save))
    print(f"wrote {path} ({result['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()

"""The four-bar Monte Carlo study: jaxcontact against a Python loop over Siconos simulations.

    nice -n 10 /work/venv/bin/python bench/peers/siconos/montecarlo_four_bar_siconos.py \
        [--n 40] [--cli-n 2000] [--no-append]

The four-bar peer of the ball comparison in ``bench/perf/montecarlo.py`` (the speed targets,
"Bench"). Steps:

1. The first ``--n`` samples of ``jaxcontact mc four-bar``'s default design
   (plain random, seed 0: restitution U(0.6, 0.95), wall_distance
   U(0.04, 0.08), friction U(0, 0.3), l1 U(0.19, 0.21); 2 s at dt = 1e-3).
2. ``/usr/bin/python3 bench/peers/siconos/siconos_four_bar.py`` runs them one Siconos
   simulation at a time (frictionless wall, see below) and times each sample
   (build + 2000 steps + recording + reduction).
3. jaxcontact simulates the same samples (one batched call, the study's
   Moreau–Jean scheme), once with the sampled friction and once with
   friction 0, and the trajectories are reduced by the same numpy function
   (``siconos_four_bar.outcomes``) as Siconos'. Friction: on this
   one-degree-of-freedom linkage the wall contact's Delassus matrix has rank
   1, so friction cannot change the motion (jaxcontact/studies/montecarlo.py
   measured a total Sobol index 0); the two jaxcontact runs show it here on
   the paired samples, so the frictionless Siconos model is the same study.
4. One trajectory (the default parameters) compared in detail: x of point a
   over time, impacts, first-impact time, final θ1.
5. jaxcontact's time per sample: ``jaxcontact mc four-bar --n <cli-n>
   --no-plots`` (the whole command, compile included, and its own samples/s).

Appends a section to ``bench/RESULTS.md`` and writes raw JSON to
``bench/out/montecarlo_four_bar_siconos.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/, for common.py
import common  # noqa: E402
import siconos_four_bar as sfb  # noqa: E402  (phi, outcomes; Siconos itself is imported only in its runs)

SIC_PARAMS = ("restitution", "wall_distance", "l1")


def design_values(n: int, seed: int):
    """The first n samples of the default four-bar study design (as ``jaxcontact mc four-bar`` draws them)."""
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, design

    spec = default_study(get_model("four-bar"), n=n, sensitivity=False, seed=seed)
    values, _, _ = design(spec.space, spec.n, spec.sampler, spec.seed, spec.sensitivity)
    return spec, {k: [float(x) for x in v] for k, v in values.items()}


def jax_rows(spec, values, friction_zero: bool):
    """Per-sample (t, x_a, θ1, impulse, ‖Φ‖) rows from one batched jaxcontact simulation of the samples."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact import models
    from jaxcontact.models import four_bar
    from jaxcontact.simulate import simulate_model

    model = models.get_model("four-bar")
    n = len(values["restitution"])
    params = {k: jnp.full((n,), v) for k, v in model.params.items()}
    for k, v in values.items():
        params[k] = jnp.asarray(v)
    if friction_zero:
        params["friction"] = jnp.zeros((n,))
    traj = simulate_model(model, params=params, dt=spec.dt, t_final=spec.t_final, scheme=spec.scheme, batched=True)
    xa = jax.vmap(jax.vmap(lambda q, p: four_bar.point_a(q, p)[0], in_axes=(0, None)))(traj.q, params)
    t, q, imp = np.asarray(traj.t), np.asarray(traj.q), np.asarray(traj.impulse_normal)[..., 0]
    xa = np.asarray(xa)
    out = []
    for i in range(n):
        p = {k: float(np.asarray(params[k])[i]) for k in params}
        # row 0 is the initial state (no step led there): drop it, as Siconos records after each step
        out.append(
            [
                (t[i, j], xa[i, j], q[i, j, 2], imp[i, j], float(np.linalg.norm(sfb.phi(q[i, j], p))))
                for j in range(1, t.shape[1])
            ]
        )
    return out


def run_siconos(samples_path, n, seconds, python):
    cmd = [
        python,
        str(HERE / "siconos_four_bar.py"),
        "--samples",
        str(samples_path),
        "--seconds",
        str(seconds),
        "--max-samples",
        str(n),
    ]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def run_cli(n, out_dir):
    # `python -m` from the repository root: this checkout's jaxcontact, not whatever the script entry imports.
    cmd = [
        sys.executable,
        "-m",
        "jaxcontact.cli",
        "mc",
        "four-bar",
        "--n",
        str(n),
        "--no-plots",
        "--quiet",
        "--out",
        str(out_dir),
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=common.BENCH_DIR.parent)
    wall = time.perf_counter() - t0
    summary = json.load(open(Path(out_dir) / "summary.json"))
    return wall, summary


def trajectory_check(spec, python):
    """Default parameters, friction 0: Siconos vs jaxcontact x_a(t), impacts, first impact, final θ1."""
    import numpy as np

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "traj.json"
        subprocess.run(
            [
                python,
                str(HERE / "siconos_four_bar.py"),
                "--trajectory",
                str(path),
                "--dt",
                str(spec.dt),
                "--t-final",
                str(spec.t_final),
            ],
            check=True,
            capture_output=True,
        )
        sic = json.load(open(path))
    d = sfb.DEFAULTS
    jr = jax_rows(spec, {k: [d[k]] for k in SIC_PARAMS}, friction_zero=True)[0]
    S, J = np.array(sic["rows"]), np.array(jr)
    first = lambda R: float(R[np.argmax(R[:, 3] > sfb.IMPACT_THRESHOLD), 0])  # noqa: E731
    t1 = min(first(S), first(J))
    before = S[:, 0] < t1
    return {
        "first_impact_siconos": first(S),
        "first_impact_jax": first(J),
        "max_abs_dxa_before_impact": float(np.max(np.abs(S[before, 1] - J[before, 1]))),
        "max_abs_dxa_all": float(np.max(np.abs(S[:, 1] - J[:, 1]))),
        "final_theta1_siconos": float(S[-1, 2]),
        "final_theta1_jax": float(J[-1, 2]),
        "rest_theta1_exact": d["initial_angle"] + math.asin(d["wall_distance"] / d["l1"]),
        "outcomes_siconos": sfb.outcomes(sic["rows"]),
        "outcomes_jax": sfb.outcomes(jr),
    }


def report(res, args) -> str:
    import numpy as np

    sic, tc, cli = res["siconos"], res["trajectory"], res["cli"]
    t = np.array(sic["seconds_per_sample"])
    ms_sic = 1e3 * float(np.median(t))
    ms_cli = 1e3 * cli["wall_s"] / cli["n_simulations"]
    ms_cli_rate = 1e3 / cli["samples_per_second"]
    lines = [
        "## Four-bar Monte Carlo study without jaxcontact: a Python loop over Siconos simulations "
        "(`bench/peers/siconos/montecarlo_four_bar_siconos.py`)",
        "",
        common.machine_markdown(
            res["info"],
            {
                "`uptime` before": f"`{res['up0']}`",
                "`uptime` after": f"`{res['up1']}`",
                "Command": f"`bench/peers/siconos/montecarlo_four_bar_siconos.py --n {args.n} --cli-n {args.cli_n}`",
            },
        ),
        "",
        "Siconos model (`bench/peers/siconos/siconos_four_bar.py`, Debian python3-siconos 4.4 under /usr/bin/python3): "
        "LagrangianLinearTIDS (M = diag(m, m, m l²/12) per bar, constant gravity + torque), the 8 revolute "
        "rows as a LagrangianScleronomousR with EqualityConditionNSL(8), point a vs the wall as a second "
        "LagrangianScleronomousR with NewtonImpactNSL(ε), frictionless; MoreauJeanOSI(½), MLCP, "
        "TimeStepping, dt = 1e-3, 2 s. The relations are C plugins (gcc -O2, compiled once): Python "
        "subclasses overriding computeh/computeJachq crash Siconos 4.4 (segfault in "
        "MoreauJeanOSI::computeFreeOutput after the callbacks run), so the Siconos side here is *faster* "
        "than the Python-callback model a user would first try.",
        "",
        f"One trajectory, default parameters (ε = 0.8, wall 0.06 m, l1 = 0.2 m, friction 0 in both): first "
        f"wall impulse at t = {tc['first_impact_siconos']:.3f} s (Siconos) and {tc['first_impact_jax']:.3f} s "
        f"(jaxcontact); max |Δx_a| before it {common.fmt_num(tc['max_abs_dxa_before_impact'])} m, over the "
        f"whole 2 s {common.fmt_num(tc['max_abs_dxa_all'])} m; impacts {tc['outcomes_siconos']['impacts']} vs "
        f"{tc['outcomes_jax']['impacts']}; final θ1 {tc['final_theta1_siconos']:.5f} vs "
        f"{tc['final_theta1_jax']:.5f} (exact rest against the wall π/2 + asin(d/l1) = "
        f"{tc['rest_theta1_exact']:.5f}); peak impulse {tc['outcomes_siconos']['peak_impulse']:.4f} vs "
        f"{tc['outcomes_jax']['peak_impulse']:.4f} N·s; max ‖Φ‖ {common.fmt_num(tc['outcomes_siconos']['max_phi'])} vs "
        f"{common.fmt_num(tc['outcomes_jax']['max_phi'])} m.",
        "",
    ]
    pr = res["paired"]
    lines += [
        f"Paired, the first {sic['n']} samples of the default design (restitution, wall_distance, l1 as "
        "drawn; Siconos frictionless, jaxcontact with the sampled friction and with friction 0), reduced by "
        "the same numpy function:",
        "",
    ]
    lines.append(
        common.markdown_table(
            [
                "outcome",
                "mean Siconos",
                "mean jaxcontact (friction 0)",
                "median |Δ|",
                "max |Δ|",
                "max |Δ| jaxcontact friction vs 0",
            ],
            [
                [
                    k,
                    common.fmt_num(v["mean_siconos"], 4),
                    common.fmt_num(v["mean_jax"], 4),
                    v["median_abs_diff"],
                    v["max_abs_diff"],
                    v["max_abs_diff_friction"],
                ]
                for k, v in pr.items()
            ],
        )
    )
    lines += [
        "",
        common.markdown_table(
            ["", "what", "ms/sample", "samples/s", "speed-up vs Siconos"],
            [
                [
                    "jaxcontact float64",
                    f"`jaxcontact mc four-bar --n {args.cli_n} --no-plots` whole command "
                    f"({cli['n_simulations']} simulations, compile {cli['compile_seconds']:.1f} s included)",
                    ms_cli,
                    1e3 / ms_cli,
                    f"{ms_sic / ms_cli:.0f}×",
                ],
                [
                    "jaxcontact float64",
                    "its own samples/s (summary.json)",
                    ms_cli_rate,
                    cli["samples_per_second"],
                    f"{ms_sic / ms_cli_rate:.0f}×",
                ],
                [
                    "Siconos loop",
                    f"{sic['n']} samples, median (mean {1e3 * float(np.mean(t)):.1f} ms)",
                    ms_sic,
                    1e3 / ms_sic,
                    "1×",
                ],
            ],
        ),
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="samples run by Siconos and paired (40)")
    ap.add_argument("--seconds", type=float, default=120.0, help="wall-time budget of the Siconos loop")
    ap.add_argument("--cli-n", type=int, default=2000, help="n of the timed `jaxcontact mc four-bar` run (2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--siconos-python", default="/usr/bin/python3")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()

    import jax

    jax.config.update("jax_enable_x64", True)
    import numpy as np

    up0 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    spec, values = design_values(args.n, args.seed)
    out_dir = common.OUT_DIR
    out_dir.mkdir(exist_ok=True)
    samples_path = out_dir / "mc_four_bar_samples.json"
    json.dump(
        {**{k: values[k] for k in SIC_PARAMS}, "friction": values["friction"], "dt": spec.dt, "t_final": spec.t_final},
        open(samples_path, "w"),
    )
    sic = run_siconos(samples_path, args.n, args.seconds, args.siconos_python)
    n = sic["n"]
    sub = {k: v[:n] for k, v in values.items()}
    jz = jax_rows(spec, sub, friction_zero=True)
    jf = jax_rows(spec, sub, friction_zero=False)
    oz = [sfb.outcomes(r) for r in jz]
    of = [sfb.outcomes(r) for r in jf]
    paired = {}
    for k in sic["outcomes"]:
        s = np.array(sic["outcomes"][k], float)
        z = np.array([o[k] for o in oz], float)
        f = np.array([o[k] for o in of], float)
        paired[k] = {
            "mean_siconos": float(s.mean()),
            "mean_jax": float(z.mean()),
            "median_abs_diff": float(np.median(np.abs(s - z))),
            "max_abs_diff": float(np.max(np.abs(s - z))),
            "max_abs_diff_friction": float(np.max(np.abs(f - z))),
        }
    tc = trajectory_check(spec, args.siconos_python)
    with tempfile.TemporaryDirectory() as d:
        wall, summary = run_cli(args.cli_n, Path(d) / "mc")
    cli = {
        "wall_s": wall,
        "n_simulations": summary["study"]["n_simulations"],
        "samples_per_second": summary["timing"]["samples_per_second"],
        "compile_seconds": summary["timing"]["compile_seconds"],
    }
    up1 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    res = {
        "siconos": sic,
        "paired": paired,
        "trajectory": tc,
        "cli": cli,
        "up0": up0,
        "up1": up1,
        "info": common.machine_info(),
    }
    json.dump(res, open(out_dir / "montecarlo_four_bar_siconos.json", "w"), indent=1, default=float)
    text = report(res, args)
    print(text)
    if not args.no_append:
        with open(common.RESULTS_MD, "a") as fh:
            fh.write("\n" + text + "\n")


if __name__ == "__main__":
    main()

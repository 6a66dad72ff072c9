"""Monte Carlo study throughput: samples/s against N and chunk size, and against a Siconos loop.

    nice -n 10 /work/venv/bin/python bench/perf/montecarlo.py                 # default grid (~5 min on 2 cores)
    nice -n 10 /work/venv/bin/python bench/perf/montecarlo.py --grid full     # bigger grids (tens of minutes)
    /work/venv/bin/python bench/perf/montecarlo.py --models ball --dtypes float64 --no-siconos --no-append

What is measured (the Monte Carlo speed targets):

* **The studies** are those ``jaxcontact mc <model>`` runs, built with the
  study engine's own pieces (``default_study``, ``design``, ``check_samples``,
  ``make_evaluator``) and evaluated by the runner's chunk loop
  (``runner.compile_batched`` + ``runner.run_chunks``, one device, no chunk
  files): the per-sample function simulates the model with every step saved
  and reduces the trajectory to the default study's outcomes (scalars and
  kept time series, diagnostics on when an outcome reads them).

  - bouncing ball: uncertain restitution U(0.5, 0.95) and drop height
    U(0.5, 1.5) m, 3 s at dt = 1e-3 (3000 steps), outcomes of the default
    study plus ``rebound:y`` (the first rebound height);
  - four-bar: the default four-bar study (restitution, wall distance, wall
    friction, length of bar 1; 9 outcomes of which 3 time series), 2 s at
    dt = 1e-3 (2000 steps) unless ``--four-bar-t-final`` says otherwise.

  Plain random designs of exactly N samples (no Saltelli blocks: the design
  does not change the cost per sample).
* **samples/s** = N / wall time of the chunk loop (placing each chunk on the
  device, the compiled call, fetching outputs to numpy, padding of the last
  chunk): what the progress bar of ``jaxcontact mc`` shows. Each (N, chunk)
  point runs once (a rerun when it took under 0.5 s: median of 3).
  **compile s** (``lower().compile()`` of the chunk shape) is reported apart;
  a chunk size is compiled once and reused for every N. The chunk actually
  used is ``min(chunk, N)``, as in the runner.
* dtypes float64 and float32, each in its own subprocess (x64 is set before
  any array exists).
* **Without jaxcontact**: ``siconos_montecarlo.py`` under ``/usr/bin/python3``
  (Debian's python3-siconos 4.4) runs the ball study's first samples (same
  heights and restitutions, same dt and duration) one Siconos simulation at
  a time, records every step and reduces to the same outcomes; its time per
  sample is the whole per-sample work. The two are compared on the first
  rebound height (mean within Monte Carlo error, paired per sample, and
  against the analytic ε² H), impacts and rest time (paired). The four-bar's
  Siconos loop is ``montecarlo_four_bar_siconos.py`` (model in ``siconos_four_bar.py``).

Appends a section to ``bench/RESULTS.md`` (machine, date, load average
before and after, tables, a reading) and writes raw JSON to
``bench/out/montecarlo_results.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

MODELS = {"ball": "bouncing-ball", "four-bar": "four-bar"}
# (N sweep at a fixed chunk, chunk sweep at a fixed N): quick keeps the whole bench near 5 minutes.
GRIDS = {
    "quick": {
        "ball": {"ns": (256, 1024, 4096, 16384), "chunk": 1024, "chunks": (64, 256, 1024, 4096), "n_for_chunks": 4096},
        "four-bar": {"ns": (256, 1024), "chunk": 256, "chunks": (64, 256, 1024), "n_for_chunks": 1024},
    },
    "full": {
        "ball": {
            "ns": (256, 1024, 4096, 16384, 65536),
            "chunk": 1024,
            "chunks": (64, 256, 1024, 4096),
            "n_for_chunks": 16384,
        },
        "four-bar": {
            "ns": (256, 1024, 4096, 10000),
            "chunk": 256,
            "chunks": (64, 128, 256, 512, 1024, 2048),
            "n_for_chunks": 4096,
        },
    },
}
BALL_OUTCOMES = ("rebound:y", "peak_impulse", "impacts", "rest_time", "max_penetration", "series:y", "series:energy")
COMPARED = {"rebound:y": "rebound_y", "impacts": "impacts", "rest_time": "rest_time", "peak_impulse": "peak_impulse"}


# --------------------------------------------------------------------------- worker (one dtype)


def study_pieces(name: str, n: int, t_final: float | None, seed: int):
    """The per-sample function and the N sampled inputs of ``name``'s default study (as run_study builds them)."""
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, prepare_study

    model_name = MODELS[name]
    kw = {"t_final": t_final} if t_final is not None else {}
    outs = BALL_OUTCOMES if name == "ball" else ()
    spec = default_study(get_model(model_name), n=n, outcomes=outs, sensitivity=False, seed=seed, **kw)
    study = prepare_study(spec)
    inputs = {k: study.values[k] for k in spec.space.names}
    info = {
        "model": model_name,
        "dt": study.dt,
        "t_final": study.t_final,
        "n_steps": study.n_steps,
        "outcomes": list(spec.outcomes),
        "params": spec.space.to_json(),
        "diagnostics": bool(study.scheme.diagnostics),
        "save_every": spec.save_every,
        "fixed": {k: float(v) for k, v in study.model.params.items() if k not in inputs and k in ("mass", "gravity")},
    }
    return study.evaluate, inputs, info


def worker(args) -> dict:
    import jax

    jax.config.update("jax_enable_x64", args.dtype == "float64")
    import numpy as np

    from jaxcontact.studies import runner

    load0 = os.getloadavg()
    mesh = runner.batch_mesh(jax.devices()[:1])
    sharding = runner.batch_sharding(mesh)
    rows, extra = [], {}
    for name in args.models:
        g = GRIDS[args.grid][name]
        ns = args.ns.get(name, g["ns"])
        chunks = args.chunks.get(name, g["chunks"])
        chunk0 = args.chunk.get(name, g["chunk"])
        n_for_chunks = args.n_for_chunks.get(name, g["n_for_chunks"])
        n_max = max(max(ns), n_for_chunks)
        evaluate, inputs, info = study_pieces(
            name, n_max, args.four_bar_t_final if name == "four-bar" else None, args.seed
        )
        inputs = runner._canonical(inputs)
        compiled = {}

        def batch_fn_for(c):
            if c not in compiled:
                example = jax.tree.map(lambda a: a[:c], inputs)
                fn, secs = runner.compile_batched(evaluate, example, sharding)
                compiled[c] = (lambda chunk, fn=fn: runner._fetch(fn(runner._place(chunk, sharding))), secs)
                print(f"{name} {args.dtype}: compiled chunk {c} in {secs:.1f} s", file=sys.stderr)
            return compiled[c]

        points = [(n, chunk0, "N") for n in ns] + [(n_for_chunks, c, "chunk") for c in chunks]
        done = {}
        last_out = None
        for n, c, sweep in points:
            eff = runner.chunk_size_for(c, n, 1)  # one device: no padding
            key = (n, eff)
            if key in done:
                rows.append({**done[key], "sweep": sweep})
                continue
            fn, compile_s = batch_fn_for(eff)
            part = jax.tree.map(lambda a: a[:n], inputs)
            times = []
            while True:
                out, n_comp, _, secs = runner.run_chunks(fn, part, chunk_size=eff, store=None, progress=False)
                times.append(secs)
                if len(times) >= 3 or (len(times) == 1 and secs >= 0.5):
                    break
            secs = float(np.median(times))
            valid = np.asarray(out["converged"]) & np.asarray(out["state_finite"])
            r = {
                "model": name,
                "dtype": args.dtype,
                "n": n,
                "chunk": eff,
                "sweep": sweep,
                "seconds": secs,
                "runs": len(times),
                "samples_per_s": n / secs,
                "ms_per_sample": 1e3 * secs / n,
                "env_steps_per_s": n * info["n_steps"] / secs,
                "compile_s": compile_s,
                "valid_fraction": float(valid.mean()),
                "load1": os.getloadavg()[0],
            }
            done[key] = r
            rows.append(r)
            print(
                f"{name:8s} {args.dtype} N={n:6d} chunk={eff:5d}: {r['samples_per_s']:8.1f} samples/s "
                f"({r['env_steps_per_s']:.3g} env-steps/s), compile {compile_s:.1f} s, valid "
                f"{r['valid_fraction']:.4f}, load {r['load1']:.1f}",
                file=sys.stderr,
            )
            if last_out is None or n >= last_out[0]:
                last_out = (n, out)
        extra[name] = {"study": info}
        if name == "ball":
            n, out = last_out
            keep = {k: np.asarray(out[k]).astype(float).tolist() for k in COMPARED}
            keep["valid"] = (np.asarray(out["converged"]) & np.asarray(out["state_finite"])).tolist()
            extra[name]["outcomes"] = keep
            extra[name]["samples"] = {k: np.asarray(v[:n]).astype(float).tolist() for k, v in inputs.items()}
        elif "four-bar" == name:
            n, out = last_out
            valid = np.asarray(out["converged"]) & np.asarray(out["state_finite"])
            extra[name]["outcome_means"] = {
                k: float(np.nanmean(np.asarray(v)[valid]))
                for k, v in out.items()
                if np.ndim(v) == 1 and k not in ("converged", "state_finite")
            }
            extra[name]["n_for_means"] = n
    full = None
    if args.full_study:
        full = full_study(args)
    return {"rows": rows, "extra": extra, "full_study": full, "load_start": load0, "load_end": os.getloadavg()}


def full_study(args) -> dict:
    """``jaxcontact mc <model> --n N`` end to end (run_study: Saltelli design, chunk files, statistics, no plots)."""
    import tempfile

    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, run_study

    name = MODELS[args.full_study]
    spec = default_study(get_model(name), n=args.full_n)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        s = run_study(spec, d, progress=False, plot=False)
        wall = time.perf_counter() - t0
    tm = s["timing"]
    print(
        f"full study {name} N={args.full_n} {args.dtype}: wall {wall:.1f} s, compile {tm['compile_seconds']:.1f} s, "
        f"{tm['samples_per_second']:.1f} samples/s",
        file=sys.stderr,
    )
    return {
        "model": name,
        "n": args.full_n,
        "dtype": args.dtype,
        "wall_s": wall,
        **tm,
        "n_failed": s["failures"]["n_failed"],
        "n_simulations": s["study"]["n_simulations"],
    }


# --------------------------------------------------------------------------- comparison with Siconos


def compare_ball(jax_ball: dict, sic: dict) -> dict:
    """Statistics of the shared outcomes: jaxcontact (all N) vs Siconos (its first n samples), paired and analytic."""
    import numpy as np

    H = np.asarray(jax_ball["samples"]["height"])
    E = np.asarray(jax_ball["samples"]["restitution"])
    valid = np.asarray(jax_ball["outcomes"]["valid"], bool)
    m = sic["n"]
    res = {"n_jax": int(valid[m:].sum()), "n_siconos": m, "outcomes": {}}
    for jname, sname in COMPARED.items():
        xj = np.asarray(jax_ball["outcomes"][jname])
        xs = np.asarray(sic["outcomes"][sname], float)
        # Independent draws on both sides: jaxcontact's samples after the first m (Siconos ran the first m).
        rest = np.zeros(len(xj), bool)
        rest[m:] = True
        a = xj[valid & np.isfinite(xj) & rest]
        se_j = a.std(ddof=1) / math.sqrt(len(a))
        se_s = xs.std(ddof=1) / math.sqrt(m)
        diff = xs.mean() - a.mean()
        z = diff / math.hypot(se_j, se_s) if math.hypot(se_j, se_s) > 0 else float("nan")
        pj = xj[:m]
        d = xs - pj
        res["outcomes"][jname] = {
            "mean_jax": float(a.mean()),
            "sem_jax": float(se_j),
            "mean_siconos": float(xs.mean()),
            "sem_siconos": float(se_s),
            "diff": float(diff),
            "z": float(z),
            "paired_mean_jax": float(np.nanmean(pj)),
            "paired_max_abs_diff": float(np.nanmax(np.abs(d))),
            "paired_median_abs_diff": float(np.nanmedian(np.abs(d))),
            "paired_equal_fraction": float(np.mean(np.isclose(xs, pj, rtol=0, atol=1e-9))),
        }
    # Analytic first rebound height of a point ball dropped from rest: ε² H.
    exact = E**2 * H
    res["analytic_rebound"] = {
        "mean_design": float(exact[valid].mean()),
        "mean_jax_all": float(np.asarray(jax_ball["outcomes"]["rebound:y"])[valid].mean()),
        "sem_jax_all": float(np.asarray(jax_ball["outcomes"]["rebound:y"])[valid].std(ddof=1) / math.sqrt(valid.sum())),
        # E[ε²] E[H] for independent ε ~ U(0.5, 0.95), H ~ U(0.5, 1.5)
        "mean_distribution": (0.95**3 - 0.5**3) / (3 * 0.45) * 1.0,
        "max_abs_err_jax": float(
            np.nanmax(np.abs(np.asarray(jax_ball["outcomes"]["rebound:y"])[valid] - exact[valid]))
        ),
        "max_abs_err_siconos": float(np.nanmax(np.abs(np.asarray(sic["outcomes"]["rebound_y"]) - exact[:m]))),
    }
    return res


# --------------------------------------------------------------------------- report


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def report(args, info, results, sic, cmp, up0, up1, wall) -> str:
    lines = [
        "## Monte Carlo studies: samples/s vs N and chunk size, and a Siconos loop (`bench/perf/montecarlo.py`)",
        "",
        common.machine_markdown(
            info,
            {
                "`uptime` before": f"`{up0}`",
                "`uptime` after": f"`{up1}`",
                "Command": "`"
                + " ".join(["bench/perf/montecarlo.py", *[a for a in sys.argv[1:] if a != "--no-append"]])
                + "` "
                f"(grid {args.grid}; whole bench {wall:.0f} s wall)",
            },
        ),
        "",
    ]
    any_res = next(iter(results.values()))
    for name in args.models:
        st = any_res["extra"][name]["study"]
        lines.append(
            f"- **{name}** study: {st['n_steps']} steps of dt = {st['dt']:g} s ({st['t_final']:g} s), "
            f"uncertain {', '.join(f'{k} {v}' for k, v in st['params'].items())}; outcomes "
            f"{', '.join(st['outcomes'])}; every step simulated and reduced, series kept every "
            f"{st['save_every']} steps; diagnostics {'on' if st['diagnostics'] else 'off'}."
        )
    lines += [
        "",
        "samples/s = N / wall time of the runner's chunk loop (transfers and padding included, one "
        "XLA CPU device), compile s apart (once per chunk shape). `chunk` is the chunk actually used "
        "(min(chunk, N)). valid = converged and finite.",
        "",
    ]
    for name in args.models:
        for sweep, title in (("N", "against N"), ("chunk", "against chunk size")):
            rows = [r for d in results.values() for r in d["rows"] if r["model"] == name and r["sweep"] == sweep]
            if not rows:
                continue
            lines += [f"### {name}: samples/s {title}", ""]
            lines.append(
                common.markdown_table(
                    [
                        "dtype",
                        "N",
                        "chunk",
                        "samples/s",
                        "ms/sample",
                        "env-steps/s",
                        "compile s",
                        "valid",
                        "load 1 min",
                    ],
                    [
                        [
                            r["dtype"],
                            str(r["n"]),
                            str(r["chunk"]),
                            r["samples_per_s"],
                            r["ms_per_sample"],
                            r["env_steps_per_s"],
                            r["compile_s"],
                            f"{r['valid_fraction']:.4f}",
                            f"{r['load1']:.2f}",
                        ]
                        for r in rows
                    ],
                )
            )
            lines.append("")
    if "four-bar" in args.models:
        fb = any_res["extra"]["four-bar"]
        lines.append(
            f"four-bar outcome means over the valid ones of {fb['n_for_means']} samples ({next(iter(results))}): "
            + ", ".join(f"{k} {common.fmt_num(v)}" for k, v in fb["outcome_means"].items())
            + "."
        )
        lines.append("")
    for d, res in results.items():
        if res.get("full_study"):
            f = res["full_study"]
            lines.append(
                f"End to end, `run_study` of the default {f['model']} study with n = {f['n']} ({d}, "
                f"Saltelli design, {f['n_simulations']} simulations, chunk files, statistics, Sobol "
                f"indices, no plots): wall {f['wall_s']:.1f} s, compile {f['compile_seconds']:.1f} s, "
                f"{f['samples_per_second']:.1f} samples/s, {f['n_failed']} failed."
            )
            lines.append("")
    best = {}
    if sic is not None:
        t = sic["seconds_per_sample"]
        ms_sic = 1e3 * float(sorted(t)[len(t) // 2])
        lines += [
            "### Bouncing-ball study without jaxcontact: a Python loop over Siconos simulations",
            "",
            "`/usr/bin/python3 bench/peers/siconos/siconos_montecarlo.py` "
            f"(Siconos {sic['siconos']}, Python {sic['python']}): "
            f"{sic['n']} samples (the first of the jaxcontact design: same heights, restitutions, dt "
            f"and duration), one MoreauJeanOSI/LCP TimeStepping simulation each, every step recorded and "
            f"reduced to the same outcomes; median {ms_sic:.1f} ms per sample "
            f"(mean {1e3 * sum(t) / len(t):.1f} ms; build + {sic['steps'][0]} steps + reduction).",
            "",
        ]
        rows = []
        for d, res in results.items():
            rr = [r for r in res["rows"] if r["model"] == "ball"]
            if rr:
                b = max(rr, key=lambda r: r["samples_per_s"])
                best[d] = b
                rows.append(
                    [
                        f"jaxcontact {d}",
                        f"N {b['n']}, chunk {b['chunk']}",
                        b["ms_per_sample"],
                        b["samples_per_s"],
                        f"{ms_sic / b['ms_per_sample']:.0f}×",
                    ]
                )
        rows.append(["Siconos loop", f"{sic['n']} samples", ms_sic, 1e3 / ms_sic, "1×"])
        lines.append(common.markdown_table(["", "best point", "ms/sample", "samples/s", "speed-up vs Siconos"], rows))
        lines.append("")
    if cmp is not None:
        lines += [
            f"Agreement. Unpaired: Siconos on its {cmp['n_siconos']} samples against jaxcontact {cmp['dtype']} on the "
            f"{cmp['n_jax']} valid samples after them (independent draws of the same distribution); "
            "z = (mean_S − mean_J)/√(se_J² + se_S²), |z| ≲ 2 expected. Paired: the same first samples "
            "on both sides.",
            "",
        ]
        lines.append(
            common.markdown_table(
                [
                    "outcome",
                    "mean jaxcontact ± se",
                    "mean Siconos ± se",
                    "z",
                    "paired mean jaxcontact",
                    "paired median |Δ|",
                    "paired max |Δ|",
                    "paired identical (1e-9)",
                ],
                [
                    [
                        k,
                        f"{common.fmt_num(v['mean_jax'], 4)} ± {common.fmt_num(v['sem_jax'], 2)}",
                        f"{common.fmt_num(v['mean_siconos'], 4)} ± {common.fmt_num(v['sem_siconos'], 2)}",
                        f"{v['z']:+.2f}",
                        common.fmt_num(v["paired_mean_jax"], 4),
                        v["paired_median_abs_diff"],
                        v["paired_max_abs_diff"],
                        f"{v['paired_equal_fraction']:.3f}",
                    ]
                    for k, v in cmp["outcomes"].items()
                ],
            )
        )
        a = cmp["analytic_rebound"]
        lines += [
            "",
            f"Analytic first rebound ε² H: mean over the design {a['mean_design']:.4f} "
            f"(distribution mean E[ε²]E[H] = {a['mean_distribution']:.4f}; jaxcontact's mean over all "
            f"{int(cmp['n_jax'] + cmp['n_siconos'])} samples {a['mean_jax_all']:.4f} ± {a['sem_jax_all']:.4f}); "
            "worst |rebound − ε² H| "
            f"jaxcontact {common.fmt_num(a['max_abs_err_jax'])} m, Siconos "
            f"{common.fmt_num(a['max_abs_err_siconos'])} m.",
            "",
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_map(s: str | None, cast=int) -> dict:
    """``ball=256,1024;four-bar=256`` -> {"ball": (256, 1024), "four-bar": (256,)}."""
    out = {}
    for part in (s or "").split(";"):
        if part.strip():
            k, _, v = part.partition("=")
            vals = tuple(cast(x) for x in v.split(",") if x.strip())
            out[k.strip()] = vals
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--grid", choices=tuple(GRIDS), default="quick")
    p.add_argument("--models", default="ball,four-bar")
    p.add_argument("--dtypes", default="float64,float32")
    p.add_argument("--ns", default=None, help="N sweep per model, e.g. 'ball=256,4096;four-bar=256'")
    p.add_argument("--chunk", default=None, help="chunk of the N sweep per model, e.g. 'ball=1024;four-bar=256'")
    p.add_argument("--chunks", default=None, help="chunk sweep per model, e.g. 'ball=64,4096;four-bar=128'")
    p.add_argument("--n-for-chunks", default=None, help="N of the chunk sweep per model, e.g. 'four-bar=2048'")
    p.add_argument("--four-bar-t-final", type=float, default=None, help="simulated seconds of the four-bar (2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--full-study",
        choices=tuple(MODELS),
        default=None,
        help="also time run_study of this model's default study end to end (each dtype)",
    )
    p.add_argument("--full-n", type=int, default=10_000, help="n of --full-study (10000)")
    p.add_argument("--no-siconos", action="store_true")
    p.add_argument("--siconos-python", default="/usr/bin/python3")
    p.add_argument("--siconos-seconds", type=float, default=25.0, help="wall-time budget of the Siconos loop (25)")
    p.add_argument("--siconos-max-samples", type=int, default=2000)
    p.add_argument("--no-append", action="store_true", help="print the report, do not append it to RESULTS.md")
    p.add_argument("--results", default=str(common.RESULTS_MD))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dtype", default="float64", help=argparse.SUPPRESS)
    return p


def normalise(args):
    args.models = [m for m in args.models.split(",") if m]
    for m in args.models:
        if m not in MODELS:
            raise SystemExit(f"--models: unknown model {m!r}; choose from {list(MODELS)}")
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    for d in args.dtypes:
        if d not in ("float64", "float32"):
            raise SystemExit(f"--dtypes: {d!r} must be float64 or float32")
    args.ns = parse_map(args.ns)
    args.chunks = parse_map(args.chunks)
    args.chunk = {k: v[0] for k, v in parse_map(args.chunk).items()}
    args.n_for_chunks = {k: v[0] for k, v in parse_map(args.n_for_chunks).items()}
    return args


def main(argv=None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    args = normalise(parser().parse_args(raw))
    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    t0 = time.perf_counter()
    up0 = uptime()
    info = common.machine_info()  # date and load average at the start
    results = {}
    for d in args.dtypes:
        cmd = [sys.executable, __file__, *[a for a in raw if a != "--no-append"], "--worker", "--dtype", d]
        results[d] = common.run_json_subprocess(cmd, timeout=7200)
    sic = cmp = None
    if not args.no_siconos and "ball" in args.models:
        ref = results.get("float64") or next(iter(results.values()))
        ball = ref["extra"]["ball"]
        st = ball["study"]
        m = min(args.siconos_max_samples, len(ball["samples"]["height"]))
        path = common.OUT_DIR / "mc_ball_samples.json"
        common.write_json(
            {
                "height": ball["samples"]["height"][:m],
                "restitution": ball["samples"]["restitution"][:m],
                "dt": st["dt"],
                "t_final": st["t_final"],
                "mass": st["fixed"].get("mass", 1.0),
                "gravity": st["fixed"].get("gravity", 9.81),
            },
            path,
        )
        sic = common.run_json_subprocess(
            [
                args.siconos_python,
                str(common.BENCH_DIR / "peers" / "siconos" / "siconos_montecarlo.py"),
                "--samples",
                str(path),
                "--seconds",
                str(args.siconos_seconds),
            ],
            timeout=args.siconos_seconds + 600,
        )
        cmp = compare_ball(ball, sic)
        cmp["dtype"] = "float64" if "float64" in results else next(iter(results))
    up1 = uptime()
    text = report(args, info, results, sic, cmp, up0, up1, time.perf_counter() - t0)
    common.write_json(
        {
            "machine": info,
            "results": {
                d: {k: v for k, v in r.items() if k != "extra"}
                | {
                    "extra": {
                        m: {k: v for k, v in e.items() if k not in ("samples", "outcomes")}
                        for m, e in r["extra"].items()
                    }
                }
                for d, r in results.items()
            },
            "siconos": sic,
            "comparison": cmp,
            "uptime": [up0, up1],
        },
        common.OUT_DIR / "montecarlo_results.json",
    )
    print(text)
    if not args.no_append:
        common.append_results(text, Path(args.results))
        print(f"appended to {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Batched throughput on whatever JAX devices exist (meant for one GPU): four scenes × dtypes × batch sizes.

On a GPU host (jax with its CUDA plugin and jaxcontact's dependencies already installed; nothing is downloaded):

    export PYTHONPATH=$PWD                    # (offline, ``pip install -e .`` cannot fetch its build backend)
    python3 bench/perf/gpu.py                 # the full grid within --budget-s; appends a section to bench/RESULTS.md

A CPU smoke run (seconds; what tests/test_bench_gpu.py runs):

    python bench/perf/gpu.py --batches 2 --dtypes float64 --scenes four-bar,box --steps 5 --no-append --out /tmp/g.json

Scenes (each cell is one (scene, dtype, batch); ``--steps`` replaces every scene's step count):

* **four-bar**: the planar four-bar against a wall, with the dt (1e-3 s) and scheme of its default Monte Carlo
  study (``MoreauJean()`` for forward runs, without per-step diagnostics); restitution and wall distance spread
  over the study's ranges; 2000 steps (the study's 2 s).
* **box**: the ``box-toss`` model as ``bench/peers/mujoco/mujoco_spatial.py`` builds it (its speed spread over
  [0.5, 1.5] m/s), with that bench's solve, the box study's: ``MoreauJean(diagnostics=False, tol=1e-4,
  iterations=500).for_forward_runs()``, dt 1e-3 s, 1000 steps.
* **column-10**: ten stacked spheres dropped on a plane (``mujoco_spatial.jax_problem``), same scheme, 500 steps.
The spatial scenes' cone solves run as the schemes choose (``jaxcontact.stepping.cone_contacts.FUSED``, "auto":
one GPU kernel per step, ``jaxcontact.cones.fused``, on a GPU, the staged loops elsewhere); ``--fused`` forces
the kernel (it needs a GPU), ``--staged`` the staged loops.

* **mc-four-bar**, **mc-box-toss**: ``jaxcontact mc four-bar`` (``mc box-toss``) through its Python API
  (``default_study`` + ``run_study``): the default study with n = B samples in one chunk of B (one compiled
  program, as ``--chunk B`` would run it), into a temporary folder, no plots. Its env-steps/s is over the
  study's run time (simulation, fetch and chunk writes); its compile time is the study's own; the note gives
  samples/s and the whole call's wall time (which adds the Sobol indices and their bootstrap).

The first three run one ``jax.jit`` of ``simulate(..., save_every=steps)`` over the batch (vmap) on the first
device: compile s = first call − steady state, the steady state being the median of up to three further calls
(``common.time_call``); env-steps/s = B × steps / steady wall time. "unconverged" is the fraction of samples
whose contact solve did not converge at every step (or whose velocity went non-finite). float32 cells run with
x64 off, so that no constant promotes the state to float64.

A cell whose error (e.g. out of memory) is caught becomes an error row, and the larger batches of its scene and
dtype are skipped. A cell is also skipped when the time spent so far plus an estimate of the cell (the last
finished cell of its scene, its run time scaled linearly with B, plus its compile time) exceeds ``--budget-s``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

SCENES = ("four-bar", "box", "column-10", "mc-four-bar", "mc-box-toss")
STEPS = {"four-bar": 2000, "box": 1000, "column-10": 500, "mc-four-bar": 2000, "mc-box-toss": 2000}
STUDIES = {"mc-four-bar": "four-bar", "mc-box-toss": "box-toss"}  # study scenes: the model each one studies
FOUR_BAR_SPREAD = {"restitution": (0.6, 0.95), "wall_distance": (0.04, 0.08)}  # the default study's ranges
HEADING = "## GPU throughput (`bench/perf/gpu.py`)"


def spatial():
    """``bench/peers/mujoco/mujoco_spatial.py``, whose jax-side scene builders the box and column scenes reuse
    (it imports mujoco only on its MuJoCo side)."""
    sys.path.insert(0, str(common.BENCH_DIR / "peers" / "mujoco"))
    import mujoco_spatial

    return mujoco_spatial


# --------------------------------------------------------------------------- cells


def problem(scene, batch, dtype):
    """(system, batched params, q0, u0, dt, scheme) of a simulate scene."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.stepping.moreau_jean import MoreauJean

    ms = spatial()
    if scene != "four-bar":
        system, params, q0, u0 = ms.jax_problem(scene, batch, dtype)
        scheme = MoreauJean(diagnostics=False, tol=ms.STUDY_TOL, iterations=ms.STUDY_ITERATIONS)
        return system, params, q0, u0, ms.DT, scheme.for_forward_runs()
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study

    study = default_study(get_model("four-bar"))
    m = get_model("four-bar")
    s = ms.spread(batch)
    over = {k: lo + (hi - lo) * s for k, (lo, hi) in FOUR_BAR_SPREAD.items()}
    params = {k: jnp.asarray(over.get(k, np.full(batch, float(v))), dtype) for k, v in m.params.items()}
    q0, u0 = jax.vmap(m.initial_state)(params)
    scheme = study.scheme.without_diagnostics().for_forward_runs()
    return m.system, params, q0.astype(dtype), u0.astype(dtype), study.dt, scheme


def simulate_cell(scene, batch, dtype, steps):
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.simulate import simulate

    system, params, q0, u0, dt, scheme = problem(scene, batch, jnp.dtype(dtype))

    @jax.jit
    def run(p, q, u):
        tr = simulate(system, p, q, u, dt=dt, n_steps=steps, scheme=scheme, save_every=steps)
        # save_every = steps: row 1 summarises every step, so its ``converged`` is "converged at every step".
        return tr.q[:, -1], tr.u[:, -1], jnp.all(tr.diagnostics.converged, axis=1)

    last = {}

    def call(*a):
        last["out"] = run(*a)
        return last["out"]

    timing = common.time_call(call, params, q0, u0, min_repeats=1, max_repeats=3, min_total_s=1.0)
    converged = np.asarray(last["out"][2])
    return {
        "env_steps_per_s": batch * steps / timing.steady_s,
        "wall_s": timing.steady_s,
        "compile_s": timing.compile_s,
        "unconverged_fraction": float(1.0 - converged.mean()),
        "repeats": timing.repeats,
    }


def mc_cell(scene, batch, steps):
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, run_study

    model = get_model(STUDIES[scene])
    t_final = None if steps is None else steps * model.study.dt  # None: the study's
    spec = default_study(model, n=batch, chunk_size=batch, t_final=t_final)
    with tempfile.TemporaryDirectory(prefix="gpu-mc-") as out:
        t0 = time.perf_counter()
        summary = run_study(spec, out, progress=False, plot=False)
        total = time.perf_counter() - t0
    tm, fail = summary["timing"], summary["failures"]
    n_steps = summary["study"]["n_steps"]
    return {
        "steps": n_steps,
        "env_steps_per_s": batch * n_steps / tm["run_seconds"],
        "wall_s": tm["run_seconds"],
        "compile_s": tm["compile_seconds"],
        "unconverged_fraction": fail.get("not_converged", 0) / fail["n_samples"],
        "samples_per_s": batch / tm["run_seconds"],
        "total_wall_s": total,
        "note": f"{batch / tm['run_seconds']:.3g} samples/s; whole call {total:.3g} s",
    }


def estimate(rows, scene, dtype, batch):
    """Seconds the next cell may take, from the last finished cell of the scene (same dtype where there is one):
    its run time scaled linearly with the batch (an over-estimate wherever throughput grows with B) plus its
    compile time; 0 for a scene's first cell."""
    done = [r for r in rows if r["scene"] == scene and "error" not in r]
    done = [r for r in done if r["dtype"] == dtype] or done
    if not done:
        return 0.0
    r = done[-1]
    return r["compile_s"] + max(0.0, r["cell_s"] - r["compile_s"]) * batch / r["batch"]


# --------------------------------------------------------------------------- report


def report(device, info, rows, skipped, command):
    lines = [
        f"{HEADING} on {device}",
        "",
        common.machine_markdown(info, {"device": device, "command": f"`{command}`"}),
        "",
    ]
    table = [
        [
            r["scene"],
            r["dtype"],
            r["batch"],
            r["steps"],
            r.get("env_steps_per_s", "—"),
            r.get("wall_s", "—"),
            r.get("compile_s", "—"),
            r.get("unconverged_fraction", "—"),
            r.get("error", r.get("note", "")),
        ]
        for r in rows
    ]
    lines += [
        common.markdown_table(
            ["scene", "dtype", "B", "steps", "env-steps/s", "wall s", "compile s", "unconverged fraction", "note"],
            table,
        ),
        "",
    ]
    if skipped:
        lines += [
            "Skipped: " + "; ".join(f"{s['scene']} {s['dtype']} B = {s['batch']} ({s['reason']})" for s in skipped),
            "",
        ]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", default="1024,4096,16384,65536")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--scenes", default=",".join(SCENES))
    ap.add_argument("--steps", type=int, default=None, help="steps per timed call (default: per scene)")
    ap.add_argument("--budget-s", type=float, default=420.0, help="total wall budget; later cells are skipped")
    ap.add_argument("--out", default=str(common.OUT_DIR / "gpu_results.json"), help="JSON results")
    ap.add_argument("--no-append", action="store_true", help="do not append to bench/RESULTS.md")
    sweeps = ap.add_mutually_exclusive_group()
    sweeps.add_argument(
        "--fused", action="store_true", help="spatial scenes sweep in one GPU kernel per step (jaxcontact.cones.fused)"
    )
    sweeps.add_argument("--staged", action="store_true", help="spatial scenes sweep in the staged loops")
    args = ap.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    dtypes = args.dtypes.split(",")
    scenes = args.scenes.split(",")
    for name, given, known in (("scene", scenes, SCENES), ("dtype", dtypes, ("float32", "float64"))):
        if set(given) - set(known):
            ap.error(f"unknown {name}(s) {sorted(set(given) - set(known))}; known: {', '.join(known)}")

    import jax

    from jaxcontact.stepping import cone_contacts

    if args.fused or args.staged:
        cone_contacts.FUSED = args.fused
    dev = jax.devices()[0]
    device = f"{dev.device_kind} ({dev.platform}, {jax.device_count()} device(s))"
    print(f"device: {device}", flush=True)
    info = common.machine_info()
    rows, skipped = [], []
    t_start = time.perf_counter()
    for scene in scenes:
        for dtype in dtypes:
            failed = None
            for batch in batches:
                steps = args.steps or STEPS[scene]
                cell = {"scene": scene, "dtype": dtype, "batch": batch, "steps": steps}
                if failed is not None:
                    skipped.append({**cell, "reason": f"B = {failed} failed"})
                    continue
                elapsed = time.perf_counter() - t_start
                guess = estimate(rows, scene, dtype, batch)
                if elapsed + guess > args.budget_s:
                    skipped.append(
                        {
                            **cell,
                            "reason": f"budget: {elapsed:.0f} s spent + {guess:.0f} s estimated > {args.budget_s:g} s",
                        }
                    )
                    continue
                print(f"{scene} {dtype} B = {batch} …", file=sys.stderr, flush=True)
                t0 = time.perf_counter()
                try:
                    with jax.enable_x64(dtype == "float64"):
                        if scene in STUDIES:
                            cell.update(mc_cell(scene, batch, args.steps))
                        else:
                            cell.update(simulate_cell(scene, batch, dtype, steps))
                except Exception as e:  # noqa: BLE001 — out of memory, a compile error…: one row, not the run
                    first = (str(e).strip().splitlines() or [""])[0]
                    cell["error"] = f"{type(e).__name__}: {first[:300]}"
                    failed = batch
                cell["cell_s"] = time.perf_counter() - t0
                rows.append(cell)
                print(json.dumps(cell), file=sys.stderr, flush=True)
                # Written after every cell, so a run stopped from outside keeps what it measured.
                common.write_json({"device": device, "machine": info, "rows": rows, "skipped": skipped}, args.out)
                jax.clear_caches()  # drop this cell's executables before the next, larger one

    command = "python bench/perf/gpu.py " + " ".join(sys.argv[1:] if argv is None else argv)
    text = report(device, info, rows, skipped, command)
    print(text)
    common.write_json(
        {"device": device, "machine": info, "command": command, "rows": rows, "skipped": skipped}, args.out
    )
    if not args.no_append:
        common.append_results(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

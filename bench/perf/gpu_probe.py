"""Where a batched box-toss step spends its time on one device (meant for a GPU): phases, variants, costs.

    python bench/perf/gpu_probe.py --batch 8192 --out /tmp/probe.json [--trace DIR] [--budget-s 300]

The ``box-toss`` model as ``bench/perf/gpu.py`` runs it (the box study's solve: ``MoreauJean(diagnostics=False,
tol=1e-4, iterations=500).for_forward_runs()``, dt 1e-3 s, speeds spread over the batch), float64:

* **windows**: the 2 000-step toss as ten 200-step windows of one compiled program, each timed on its own
  (flight, impacts, sliding and rest cost different sweeps), with each window's mean and largest per-step
  contact work (sweeps plus rescue Newton steps) over the batch and its unconverged sample-steps;
* **variants**: the slowest and the resting windows with the contact solve changed by module switches, each
  compiled anew: the local solve's rare branches taken as selects instead of conds (``select``), no Newton
  rescue of the stragglers (``no-rescue``), checks every 10 sweeps instead of every sweep (``check-10``), the
  fused kernel's rescue after 9 sweeps instead of 50 (``rescue-9``);
* **overheads**: a ``lax.while_loop`` whose predicate lives on the device, and a ``lax.cond``, per iteration;
  one Gauss–Seidel sweep of the resting box's problems over the batch (lanes), with the number of kernels
  (fusions, custom calls) XLA compiled into it;
* ``--trace DIR``: a ``jax.profiler`` trace of one resting window;
* ``--study``: the samples of ``jaxcontact mc box-toss --n B`` (friction, restitution, tilt) instead of spread
  speeds;
* ``--fused``: the cone solves sweep in one GPU kernel per step (:mod:`jaxcontact.cones.fused`);
* **pieces** (with ``--fused``): the parts of a stalled step's solve apart, on the study's four step problems
  that Gauss–Seidel leaves unsolved (``tests/data/box_rescue_warm_start.npz``) repeated over the batch: the
  fused kernel's time per sweep (every lane sweeping: time at 60 sweeps less time at 10, over 50) for several
  problems per kernel program and batch widths, and the stragglers' Newton rescue at the batch's width
  (its starts, and its line search cut to one candidate).

A CPU smoke run at tiny sizes: ``python bench/perf/gpu_probe.py --batch 4 --window 5 --windows 2``.
Every measurement is written to the JSON as it finishes; one that fails becomes an error entry.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402


def call_once(fn, *args):
    """(seconds, output) of one call of an already compiled ``fn``."""
    import jax

    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    return time.perf_counter() - t0, out


def kernel_count(compiled_text: str) -> dict:
    """Fusions and custom calls XLA compiled into a program (each a kernel launch per execution on a GPU)."""
    return {
        "fusions": len(re.findall(r"= [^=]*\bfusion\(", compiled_text)),
        "custom_calls": len(re.findall(r"\bcustom-call\(", compiled_text)),
        "whiles": len(re.findall(r"\bwhile\(", compiled_text)),
        "conditionals": len(re.findall(r"\bconditional\(", compiled_text)),
    }


class Variant:
    """Module switches of the contact solve, set for the duration of a ``with`` (traced anew inside)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        import jax
        import jax.numpy as jnp

        from jaxcontact.cones import lanes, local
        from jaxcontact.stepping import cone_contacts

        self.saved = (local.unless, cone_contacts.RESCUE_AFTER, cone_contacts.CHECK_EVERY, lanes.FUSED_RESCUE_AFTER)
        if "select" in self.name:

            def select(ok, value, fallback, *args):
                other = fallback(*args)
                return jax.tree.map(lambda v, o: jnp.where(ok, v, o), value, other)

            local.unless = select
        if "no-rescue" in self.name:
            cone_contacts.RESCUE_AFTER = None
        if "check-10" in self.name:
            cone_contacts.CHECK_EVERY = 10
        if "rescue-9" in self.name:
            lanes.FUSED_RESCUE_AFTER = 9
        jax.clear_caches()
        return self

    def __exit__(self, *exc):
        import jax

        from jaxcontact.cones import lanes, local
        from jaxcontact.stepping import cone_contacts

        local.unless, cone_contacts.RESCUE_AFTER, cone_contacts.CHECK_EVERY, lanes.FUSED_RESCUE_AFTER = self.saved
        jax.clear_caches()


SKIPPABLE = ("pieces", "fused_solve", "windows", "overheads", "sweep")  # measurements --skip may leave out
STRAGGLERS = common.BENCH_DIR.parent / "tests" / "data" / "box_rescue_warm_start.npz"
PIECE_BLOCKS = "32x1,64x1,128x1,64x8"  # the kernel timed: problems per program x multiple of the batch


def study_problem(batch, dtype):
    """(system, batched params, q0, u0) of ``jaxcontact mc box-toss --n batch``'s samples."""
    import jax
    import jax.numpy as jnp

    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, prepare_study, sample_params

    model = get_model("box-toss")
    prep = prepare_study(default_study(model, n=batch))
    params = jax.vmap(lambda v: sample_params(prep.model, v))(jax.tree.map(jnp.asarray, prep.values))
    params = jax.tree.map(lambda x: jnp.asarray(x, dtype), params)
    q0, u0 = jax.vmap(prep.model.initial_state)(params)
    return prep.model.system, params, q0.astype(dtype), u0.astype(dtype)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--window", type=int, default=200, help="steps per timed window")
    ap.add_argument("--windows", type=int, default=10)
    ap.add_argument("--dtype", default="float64", choices=("float32", "float64"))
    ap.add_argument("--variants", default="select+no-rescue,select,no-rescue,check-10")
    ap.add_argument("--study", action="store_true", help="the box-toss study's samples instead of spread speeds")
    ap.add_argument("--skip", default="", help=f"measurements not to make, of {', '.join(SKIPPABLE)}")
    ap.add_argument("--budget-s", type=float, default=300.0, help="later measurements are skipped past this")
    ap.add_argument("--trace", default=None, help="folder for a jax.profiler trace of one resting window")
    ap.add_argument("--fused", action="store_true", help="sweeps in one GPU kernel per step (jaxcontact.cones.fused)")
    ap.add_argument("--blocks", default=PIECE_BLOCKS, help="pieces: the kernel's problems per program x batch multiple")
    ap.add_argument("--out", default=str(common.OUT_DIR / "gpu_probe.json"))
    args = ap.parse_args(argv)
    skip = set(args.skip.split(",")) - {""}
    if skip - set(SKIPPABLE):
        ap.error(f"--skip {args.skip!r}: unknown {sorted(skip - set(SKIPPABLE))}; known: {', '.join(SKIPPABLE)}")

    import jax

    jax.config.update("jax_enable_x64", args.dtype == "float64")
    import jax.numpy as jnp
    from jax import lax

    sys.path.insert(0, str(common.BENCH_DIR / "peers" / "mujoco"))
    import mujoco_spatial as ms

    from jaxcontact.simulate import simulate
    from jaxcontact.stepping import cone_contacts
    from jaxcontact.stepping.moreau_jean import MoreauJean

    dev = jax.devices()[0]
    # Off a GPU the fused kernel runs through Pallas' interpreter (a CPU smoke run of this probe).
    fused_mode = (True if dev.platform == "gpu" else "interpret") if args.fused else False
    cone_contacts.FUSED = fused_mode
    res = {"device": f"{dev.device_kind} ({dev.platform})", "args": vars(args), "machine": common.machine_info()}
    t_start = time.perf_counter()

    def save():
        common.write_json(res, Path(args.out))

    def over_budget(what):
        if time.perf_counter() - t_start > args.budget_s:
            res.setdefault("skipped", []).append(what)
            save()
            return True
        return False

    def attempt(name, fn):
        print(f"-- {name}", file=sys.stderr, flush=True)
        try:
            res[name] = fn()
        except Exception as e:  # noqa: BLE001 — one failed measurement is an entry, not the end of the probe
            res[name] = {"error": f"{type(e).__name__}: {str(e).strip()[:400]}"}
        res[name + "_at_s"] = round(time.perf_counter() - t_start, 1)
        print(json.dumps({name: res[name]})[:2000], file=sys.stderr, flush=True)
        save()

    dtype = jnp.dtype(args.dtype)
    if args.study:
        system, params, q0, u0 = study_problem(args.batch, dtype)
    else:
        system, params, q0, u0 = ms.jax_problem("box", args.batch, dtype)
    scheme = MoreauJean(diagnostics=False, tol=ms.STUDY_TOL, iterations=ms.STUDY_ITERATIONS).for_forward_runs()
    W = args.window

    def make_run():
        @jax.jit
        def run(q, u, t0):
            tr = simulate(
                system, params, q, u, dt=ms.DT, n_steps=W, t0=t0, scheme=scheme, save_every=1, start="continue"
            )
            d = tr.diagnostics
            work = d.iterations.astype(jnp.float32)
            return tr.q[:, -1], tr.u[:, -1], jnp.mean(work), jnp.max(work), jnp.mean(~d.converged[:, 1:])

        return run

    def window_stats(run, q, u, t0, compiled):
        """A window's output and row: one call if ``run`` is compiled already, else its first call and one more."""
        first = 0.0 if compiled else call_once(run, q, u, t0)[0]
        steady, out = call_once(run, q, u, t0)
        compile_s = max(0.0, first - steady)
        return out, {
            "compile_s": compile_s,
            "ms_per_step": 1e3 * steady / W,
            "mean_work": float(out[2]),
            "max_work": float(out[3]),
            "unconverged_sample_steps": float(out[4]),
        }

    # --- the fused kernel alone first: its compile and its answers against the staged sweeps
    def fused_solve():
        from jaxcontact.cones import delassus, nsgs

        key1, key2, key3 = jax.random.split(jax.random.PRNGKey(1), 3)
        nc, n_u, L = 8, 6, args.batch
        H = jax.random.normal(key1, (L, n_u, 3 * nc), dtype)
        Wf = delassus.Factored(H, H, jnp.full((L, 3 * nc), 0.3, dtype))
        q = jax.random.normal(key2, (L, nc, 3), dtype)
        q = q.at[..., 0].set(-jnp.abs(q[..., 0])).reshape(L, 3 * nc)
        mu = jax.random.uniform(key3, (L, nc), dtype, 0.2, 0.6)
        out = {"nc": nc, "problems": L}
        answers = {}
        for label, mode in (("fused", fused_mode), ("staged", False)):
            solve = jax.jit(
                jax.vmap(
                    lambda W, q, mu, mode=mode: nsgs(
                        W, q, mu, tol=ms.STUDY_TOL, iterations=500, rescue_after=cone_contacts.RESCUE_AFTER, fused=mode
                    )
                )
            )
            first, _ = call_once(solve, Wf, q, mu)
            steady, sol = call_once(solve, Wf, q, mu)
            answers[label] = sol
            out[label] = {
                "compile_s": max(0.0, first - steady),
                "solve_ms": 1e3 * steady,
                "converged": float(jnp.mean(sol.converged)),
                "mean_sweeps": float(jnp.mean(sol.iterations)),
                "max_sweeps": float(jnp.max(sol.iterations)),
            }
        both = answers["fused"].converged & answers["staged"].converged
        gap = jnp.max(jnp.abs(answers["fused"].r - answers["staged"].r), axis=-1)
        out["max_r_difference_where_both_converged"] = float(jnp.max(jnp.where(both, gap, 0.0)))
        return out

    # --- the parts of a stalled step's solve, apart
    def pieces():
        import functools

        import numpy as np

        from jaxcontact.cones import delassus, fused, lanes, sweeps
        from jaxcontact.cones.newton import newton_iterate

        data = np.load(STRAGGLERS)
        interpret = fused_mode == "interpret"
        tol = ms.STUDY_TOL
        out = {"problems": "the four stalled step problems, repeated", "tol": tol}

        def batch(width):
            pick = np.arange(width) % data["q"].shape[0]
            last = lambda k: jnp.asarray(np.moveaxis(data[k][pick], 0, -1), dtype)  # noqa: E731 (lanes last)
            W = delassus.Factored(last("H"), last("X"), last("s"))
            q, mu, r0 = last("q"), last("mu"), last("r0")
            return W, q, mu, r0, lanes.diagonal_lanes(W, mu.shape[0], 3), jnp.ones((width,), dtype)

        saved = fused.BLOCK
        try:
            for block, times in (map(int, b.split("x")) for b in args.blocks.split(",") if b):
                width = args.batch * times
                W, q, mu, r0, diag, om = batch(width)
                done, work = jnp.zeros((width,), bool), jnp.zeros((width,), jnp.int32)
                fused.BLOCK = block
                t = {}
                for limit in (10, 60):  # tol < 0: no lane is ever done, every lane sweeps ``limit`` times
                    run = jax.jit(functools.partial(fused.gs_sweeps_fused, tol=-1.0, limit=limit, interpret=interpret))
                    t[limit] = common.time_call(run, W, q, mu, diag, r0, om, done, work, min_repeats=3).steady_s
                out[f"kernel_block_{block}_lanes_{width}_us_per_sweep"] = 1e6 * (t[60] - t[10]) / 50
        finally:
            fused.BLOCK = saved
        W, q, mu, r0, diag, om = batch(args.batch)
        done, work = jnp.zeros((args.batch,), bool), jnp.zeros((args.batch,), jnp.int32)
        r = jax.jit(functools.partial(fused.gs_sweeps_fused, tol=tol, limit=50, interpret=interpret))(
            W, q, mu, diag, r0, om, done, work
        )[0]
        all_starts = lanes.RESCUE_STARTS
        for starts, line_search in (
            (all_starts, sweeps.RESCUE_LINE_SEARCH),
            (("warm",), 20),
            (("warm",), 1),
        ):

            def rescue(W, q, mu, r0, line_search=line_search):
                return newton_iterate(
                    delassus.to_dense(W), q, mu, r0, tol=tol, iterations=sweeps.RESCUE_STEPS, line_search=line_search
                )

            run = jax.jit(lambda r, rescue=rescue: lanes._rescue_lanes(rescue, tol, W, q, mu, r0, r, done, work))
            lanes.RESCUE_STARTS = starts  # read when the rescue is traced, in the first call
            try:
                timing = common.time_call(run, r, min_repeats=3)
                _, solved, steps = run(r)
            finally:
                lanes.RESCUE_STARTS = all_starts
            out[f"rescue_{'+'.join(starts)}_line_search_{line_search}"] = {
                "ms": 1e3 * timing.steady_s,
                "compile_s": max(0.0, timing.first_s - timing.steady_s),
                "newton_steps_max": int(jnp.max(steps)),
                "solved": float(jnp.mean(solved)),
                "ms_per_newton_step": 1e3 * timing.steady_s / max(1, int(jnp.max(steps))),
            }
        return out

    if args.fused and "pieces" not in skip:
        attempt("pieces", pieces)

    if args.fused and "fused_solve" not in skip:
        attempt("fused_solve", fused_solve)

    # --- windows over the whole toss
    starts = {}

    run = make_run()

    def windows():
        q, u = q0, u0
        rows = []
        for k in range(args.windows):
            starts[k] = (q, u)
            # The first window's first call compiles; the later windows' single calls are steady already.
            out, row = window_stats(run, q, u, jnp.asarray(k * W * ms.DT, dtype), compiled=k > 0)
            row["t0"] = k * W * ms.DT
            rows.append(row)
            q, u = out[0], out[1]
        return rows

    if "windows" not in skip:
        attempt("windows", windows)
    rest = max(starts) if starts else 0
    res["resting_window"] = rest
    rows = res["windows"] if isinstance(res.get("windows"), list) else []
    slowest = max(range(len(rows)), key=lambda k: rows[k]["ms_per_step"]) if rows else 0
    res["slowest_window"] = slowest

    # --- overheads of device-side control flow
    def overheads():
        n = 2000
        x = jnp.ones((args.batch,), dtype)

        @jax.jit
        def wl(x):
            return lax.while_loop(lambda s: s[0] < n + jnp.sum(s[1]) * 0, lambda s: (s[0] + 1, s[1] * 1.0), (0, x))[0]

        @jax.jit
        def fl(x):
            return lax.fori_loop(0, n, lambda i, y: y * 1.0 + 1e-30, x)

        @jax.jit
        def cl(x):
            return lax.fori_loop(
                0, n, lambda i, y: lax.cond(jnp.all(y > -1.0), lambda y: y * 1.0 + 1e-30, lambda y: y - 1.0, y), x
            )

        out = {}
        for label, f in (("while_dynamic", wl), ("fori_static", fl), ("fori_with_cond", cl)):
            out[label + "_us_per_iteration"] = 1e6 * common.time_call(f, x).steady_s / n
        return out

    if "overheads" not in skip and not over_budget("overheads"):
        attempt("overheads", overheads)

    # --- one sweep of resting problems, and its kernels
    def sweep():
        from jaxcontact.cones import delassus
        from jaxcontact.cones.lanes import diagonal_lanes, gs_sweep_lanes

        key = jax.random.PRNGKey(0)
        nc, d, n_u, L = 8, 3, 6, args.batch
        H = jax.random.normal(key, (n_u, nc * d, L), dtype)
        Wf = delassus.Factored(H, H, jnp.full((nc * d, L), 1e-6, dtype))
        q = jnp.tile(jnp.asarray([-1.0, 0.1, 0.0], dtype), nc)[:, None] * jnp.ones((1, L), dtype)
        mu = jnp.full((nc, L), 0.3, dtype)
        r = jnp.zeros((nc * d, L), dtype)
        om = jnp.ones((L,), dtype)
        diag = diagonal_lanes(Wf, nc, d)
        k = 20

        @jax.jit
        def sweeps(r):
            return lax.fori_loop(0, k, lambda _, r: gs_sweep_lanes(Wf, q, mu, diag, r, om), r)

        steady = common.time_call(sweeps, r).steady_s
        text = sweeps.lower(r).compile().as_text()
        return {"us_per_sweep": 1e6 * steady / k, "nc": nc, "kernels_in_program": kernel_count(text)}

    if "sweep" not in skip and not over_budget("sweep"):
        attempt("sweep", sweep)

    # --- a profiler trace of the resting window
    if args.trace and starts and not over_budget("trace"):

        def trace():  # the windows' program, compiled already
            q, u = starts[rest]
            t0 = jnp.asarray(rest * W * ms.DT, dtype)
            jax.profiler.start_trace(args.trace)
            jax.block_until_ready(run(q, u, t0))
            jax.profiler.stop_trace()
            return {"folder": args.trace}

        attempt("trace", trace)

    # --- variants on the first and the resting window
    for name in [v for v in args.variants.split(",") if v]:
        if over_budget(f"variant {name}"):
            continue

        def variant(name=name):
            with Variant(name):
                changed = make_run()
                out = {}
                for i, k in enumerate(sorted({slowest, rest})):  # the variant's first window compiles it
                    q, u = starts[k]
                    _, row = window_stats(changed, q, u, jnp.asarray(k * W * ms.DT, dtype), compiled=i > 0)
                    out[f"window_{k}"] = row
                return out

        attempt(f"variant_{name}", variant)

    res["total_s"] = time.perf_counter() - t_start
    save()
    print(json.dumps({k: v for k, v in res.items() if k != "machine"}, indent=1)[:6000])
    return 0


if __name__ == "__main__":
    sys.exit(main())

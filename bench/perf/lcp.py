"""Batched LCP throughput: jaxcontact's Lemke, PGS and projected Jacobi vs Siconos numerics.

    /work/venv/bin/python bench/perf/lcp.py                 # quick grid (~3–5 min on 2 cores)
    /work/venv/bin/python bench/perf/lcp.py --grid full     # n 2…64 × batch 1…16384 (long)
    /work/venv/bin/python bench/perf/lcp.py --sizes 8 --batches 1,4096 --solvers pgs --dtypes float32

What is measured, per (n, batch, dtype, solver):

* compile time — first call of a fresh ``jax.jit(jax.vmap(solver))`` minus the
  steady-state call time (tracing + XLA compilation, paid once per shape);
* throughput — batch / median wall time of repeated steady-state calls, each
  ending in ``block_until_ready`` (inputs already on the device);
* accuracy of that same output — fraction of problems with ``converged``,
  median natural residual ‖min(z, w)‖∞/max(1, ‖q‖∞), and the worst distance
  ‖z − z_true‖∞ to the solution the problems were built around.

Problems. For each n, a pool of random well-conditioned LCPs with symmetric
positive definite, Delassus-like matrices M = J diag(m⁻¹) Jᵀ + δ I (J is
n × 3n Gaussian, inverse masses in [0.5, 1], δ = 10⁻³·trace/n; median
condition number 3 at n = 2 rising to 13 at n = 64, worst of 300 about 100
at n = 2 and 17 at n = 64) and a *known* solution: a random half of the indices is
active (z ∈ [0.5, 1.5], w = 0), the rest inactive (z = 0, w ∈ [0.5, 1.5]),
and q = w − M z. SPD makes the solution unique, so z_true is the truth for
every solver. The pool is generated from a fixed seed (per n, independent of
the grid), saved to ``bench/out/lcp_problems/lcp_problems_n{n}.npz`` and
solved by Siconos from that file (``bench/peers/siconos/siconos_lcp.py`` under
``/usr/bin/python3``), so both sides solve identical problems. Pools are
capped at 64 MB of float64 M per n; a larger batch repeats the pool
cyclically (a solver's work per problem does not depend on it being unique).
float32 runs use the same problems rounded to float32.

Iteration counts. Lemke runs to its own stopping rule (its default static
pivot cap); the table shows the median number of pivots. PGS and projected
Jacobi run a fixed, static number of sweeps (every sweep is performed). By
default that count is calibrated per (solver, n, dtype): the smallest
multiple of ``--sweep-step`` at which every problem of the pool (hence of
every timed batch) converges by the solver's own ``converged`` flag, found by
chaining warm-started calls; the report states it, and the converged fraction
of each timed batch re-checks it. ``--pgs-sweeps``/``--jacobi-sweeps`` fix it instead.

Skipped combinations (listed in the report): those whose working set would
exceed ``--max-mem-mb``, and those whose single call is predicted (from the
previous batch size) to exceed ``--max-call-s``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# One BLAS/LAPACK thread unless the caller says otherwise (set before numpy and
# jax load OpenBLAS). The matrices here are tiny; parallelism comes from the
# batch. On this 2-core machine, with other processes running, OpenBLAS'
# two-thread float64 SVD (dgesdd, used by jax's CPU jnp.linalg.svd, hence by
# Lemke's polishing solve) took ~300 ms for a 64 × 64 matrix instead of ~1 ms.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

SOLVERS = ("lemke", "pgs", "projected_jacobi")
# jaxcontact solver -> the Siconos solver it is compared with.
SICONOS_OF = {"lemke": "lemke", "pgs": "pgs", "projected_jacobi": "pgs"}
GRIDS = {
    "quick": {"sizes": (4, 16, 64), "batches": (1, 256, 4096)},
    "full": {"sizes": (2, 4, 8, 16, 32, 64), "batches": (1, 16, 256, 4096, 16384)},
}
POOL_BYTES = 64 * 2**20
MIN_POOL = 1024
MAX_SWEEPS = 2000


# --------------------------------------------------------------------------- problems


CHUNK = 256


def make_problems(n: int, count: int, seed: int):
    """``count`` SPD Delassus-like LCPs of size n with known solutions (float64).

    Drawn in chunks of ``CHUNK`` problems, chunk k from the generator seeded
    with (seed, n, k): the first problems are the same whatever ``count`` is,
    so pools from the quick and the full grid agree where they overlap.
    """
    parts = [_chunk(n, CHUNK, seed, k) for k in range(-(-count // CHUNK))]
    return tuple(np.concatenate(a)[:count] for a in zip(*parts))


def _chunk(n: int, count: int, seed: int, k: int):
    rng = np.random.default_rng([seed, n, k])
    m = 3 * n
    J = rng.standard_normal((count, n, m))
    minv = rng.uniform(0.5, 1.0, (count, 1, m))
    M = (J * minv) @ np.swapaxes(J, 1, 2)
    M = 0.5 * (M + np.swapaxes(M, 1, 2))
    delta = 1e-3 * np.trace(M, axis1=1, axis2=2) / n
    M += delta[:, None, None] * np.eye(n)
    active = rng.random((count, n)) < 0.5
    z_true = np.where(active, rng.uniform(0.5, 1.5, (count, n)), 0.0)
    w_true = np.where(active, 0.0, rng.uniform(0.5, 1.5, (count, n)))
    q = w_true - np.einsum("bij,bj->bi", M, z_true)
    return M, q, z_true


def problem_pool(n: int, max_batch: int, seed: int, directory: Path):
    """Load or create the saved pool for size n (enough problems for max_batch, capped)."""
    cap = max(MIN_POOL, POOL_BYTES // (8 * n * n))
    count = min(max(max_batch, MIN_POOL), cap)
    path = directory / f"lcp_problems_n{n}.npz"
    if path.exists():
        with np.load(path) as d:
            if int(d["seed"]) == seed and d["M"].shape[0] >= count:
                return path, d["M"], d["q"], d["z_true"]
    M, q, z_true = make_problems(n, count, seed)
    directory.mkdir(parents=True, exist_ok=True)
    # Plain .npz (no pickles): Debian's numpy 1.24 reads it.
    np.savez(path, M=M, q=q, z_true=z_true, seed=np.int64(seed))
    return path, M, q, z_true


def tiled(a, batch: int):
    """The first ``batch`` problems of the pool, repeating it cyclically if needed."""
    return a[np.arange(batch) % a.shape[0]]


# --------------------------------------------------------------------------- solvers


def solver_callable(name: str, sweeps: int | None, *, warm: bool = False):
    """A per-problem function ``(M, q[, z0]) -> LCPSolution`` with static counts bound."""
    if name == "lemke":
        from jaxcontact.lcp.lemke import lemke

        return lambda M, q: lemke(M, q)
    if name == "pgs":
        from jaxcontact.lcp.pgs import pgs

        if warm:
            return lambda M, q, z0: pgs(M, q, iterations=sweeps, z0=z0)
        return lambda M, q: pgs(M, q, iterations=sweeps)
    if name == "projected_jacobi":
        from jaxcontact.lcp.jacobi import projected_jacobi

        if warm:
            return lambda M, q, z0: projected_jacobi(M, q, iterations=sweeps, z0=z0)
        return lambda M, q: projected_jacobi(M, q, iterations=sweeps)
    raise ValueError(f"unknown solver {name!r}; choose from {', '.join(SOLVERS)}")


def calibrate_sweeps(name: str, M, q, step: int) -> tuple[int, float]:
    """Smallest multiple of ``step`` sweeps at which every problem converges.

    Chains warm-started calls of ``step`` sweeps (for PGS and Jacobi a call
    with z0 = previous z continues the same iteration). Returns the count and
    the converged fraction reached (< 1 only if ``MAX_SWEEPS`` was hit).
    """
    import jax
    import jax.numpy as jnp

    f = jax.jit(jax.vmap(solver_callable(name, step, warm=True)))
    z = jnp.zeros_like(q)
    done = 0
    while True:
        sol = f(M, q, z)
        z = sol.z
        done += step
        frac = float(jnp.mean(sol.converged))
        if frac == 1.0 or done >= MAX_SWEEPS:
            return done, frac


# --------------------------------------------------------------------------- measurement


def working_set_bytes(solver: str, n: int, batch: int, itemsize: int) -> int:
    """Rough peak memory of one batched call: three copies of M (input, row-scaled
    M, output buffers), or of the n × (2n + 2) tableau for Lemke."""
    width = 2 * n + 2 if solver == "lemke" else n
    return 3 * batch * n * width * itemsize


def batched(name, sweeps, chunk: int):
    """The batched solver: one ``vmap`` over the batch, or with ``chunk`` > 0 a
    ``lax.map`` over chunks of ``chunk`` problems (vmap inside a chunk), which
    keeps a chunk's matrices in cache across sweeps."""
    import jax

    one = solver_callable(name, sweeps)
    if chunk <= 0:
        return jax.jit(jax.vmap(one))
    return jax.jit(lambda M, q: jax.lax.map(lambda mq: one(*mq), (M, q), batch_size=chunk))


def measure(name, sweeps, M, q, z_true, sharding=None, chunk: int = 0):
    """Time one (solver, shape) and summarize the accuracy of its output."""
    import jax
    import jax.numpy as jnp

    if sharding is not None:
        M, q = jax.device_put(M, sharding), jax.device_put(q, sharding)
    else:
        M, q = jnp.asarray(M), jnp.asarray(q)
    f = batched(name, sweeps, chunk if M.shape[0] > chunk else 0)
    timing = common.time_call(f, M, q, min_repeats=3, max_repeats=30, min_total_s=0.5)
    sol = jax.device_get(f(M, q))
    z = np.asarray(sol.z, np.float64)
    iters = int(sweeps) if sweeps is not None else float(np.median(np.asarray(sol.iterations)))
    return {
        "compile_s": timing.compile_s,
        "first_call_s": timing.first_s,
        "steady_s": timing.steady_s,
        "repeats": timing.repeats,
        "problems_per_s": M.shape[0] / timing.steady_s,
        "us_per_problem": 1e6 * timing.steady_s / M.shape[0],
        "converged_fraction": float(np.mean(np.asarray(sol.converged))),
        "median_residual": float(np.median(np.asarray(sol.residual, np.float64))),
        "max_truth_error": float(np.max(np.abs(z - z_true))),
        "iterations": iters,
    }


# --------------------------------------------------------------------------- report


def report(args, info, rows, skipped, sweeps, siconos, command) -> str:
    sic_ver = (
        f"{siconos['siconos_debian_package']} (Debian python3-siconos; module reports "
        f"{siconos['siconos_module_version']}), numpy {siconos['numpy']}, Python {siconos['python']}"
        if siconos
        else "not run"
    )
    extra = {
        "Siconos": sic_ver,
        "Command": f"`{command}`",
        "Load average at end (1, 5, 15 min)": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    parts = [
        f"## LCP throughput: jaxcontact vs Siconos numerics — {info['date_utc']}",
        "",
        common.machine_markdown(info, extra),
        "",
        "Problems: random SPD Delassus-like M = J diag(m⁻¹) Jᵀ + 10⁻³·tr/n·I (J n×3n Gaussian) "
        "with a known solution (half the indices active), seed "
        f"{args.seed}; the same problems for every solver and for Siconos "
        "(see `bench/perf/lcp.py`). Throughput = batch / median steady-state call time "
        "(jit + vmap, `block_until_ready`"
        + (
            f"; batches above {args.chunk} run as `lax.map` over chunks of {args.chunk}"
            if args.chunk
            else "; one vmap over the whole batch"
        )
        + (f"; batch sharded over {args.devices} host devices" if args.devices > 1 else "")
        + "); compile s = first call − steady call. "
        "Residual = ‖min(z, Mz+q)‖∞ / max(1, ‖q‖∞); converged = the solver's own flag "
        "(residual ≤ 1e-10 in float64, 1e-4 in float32); |z−z*| = worst ‖z − z_true‖∞ "
        "over the batch. Iters: median Lemke pivots; fixed PGS/Jacobi sweeps.",
        "",
    ]
    if sweeps:
        parts += [
            "Sweeps (smallest multiple of "
            f"{args.sweep_step} converging every problem of the pool, "
            "unless fixed by flags):",
            "",
        ]
        parts.append(
            common.markdown_table(
                ["solver", "dtype"] + [f"n={n}" for n in args.sizes],
                [
                    [s, d] + [str(sweeps.get((s, n, d), "—")) for n in args.sizes]
                    for s in args.solvers
                    if s != "lemke"
                    for d in args.dtypes
                ],
            )
        )
        parts.append("")
    parts.append(
        common.markdown_table(
            [
                "n",
                "batch",
                "dtype",
                "solver",
                "iters",
                "compile s",
                "problems/s",
                "µs/problem",
                "converged",
                "median residual",
                "max |z−z*|",
            ],
            [
                [
                    str(r["n"]),
                    str(r["batch"]),
                    r["dtype"],
                    r["solver"],
                    r["iterations"],
                    r["compile_s"],
                    r["problems_per_s"],
                    r["us_per_problem"],
                    f"{r['converged_fraction']:.4f}",
                    r["median_residual"],
                    r["max_truth_error"],
                ]
                for r in rows
            ],
        )
    )
    if skipped:
        parts += [
            "",
            "Skipped: "
            + "; ".join(f"n={s['n']} batch={s['batch']} {s['dtype']} {s['solver']} ({s['reason']})" for s in skipped)
            + ".",
        ]
    if siconos:
        parts += [
            "",
            "Siconos numerics (float64, one problem per `linearComplementarity_driver` call "
            f"from Python, tolerance {siconos['results'][0]['tol'] if siconos['results'] else '—'}, "
            "single-threaded; first problems of the same pool; median of "
            f"{args.siconos_passes} passes):",
            "",
        ]
        parts.append(
            common.markdown_table(
                [
                    "n",
                    "solver",
                    "problems",
                    "problems/s",
                    "µs/problem",
                    "info ok",
                    "median Siconos error",
                    "median residual",
                    "max |z−z*|",
                    "median iters",
                ],
                [
                    [
                        str(r["n"]),
                        r["solver"].upper(),
                        str(r["problems"]),
                        r["problems_per_s"],
                        r["us_per_problem"],
                        f"{r['info_ok_fraction']:.4f}",
                        r["median_siconos_error"],
                        r["median_natural_residual"],
                        r["max_truth_error"],
                        r["median_iterations"],
                    ]
                    for r in siconos["results"]
                ],
            )
        )
        if siconos["skipped"]:
            parts += [
                "",
                "Siconos skipped: "
                + "; ".join(f"{s['solver'].upper()} n={s['n']} ({s['reason']})" for s in siconos["skipped"])
                + ".",
            ]
        parts += ["", comparison(args, rows, siconos)]
    return "\n".join(parts) + "\n"


def comparison(args, rows, siconos) -> str:
    """Speed-up table: jaxcontact at batch 1 and at its best batch vs the matching Siconos solver."""
    sic = {(r["solver"], r["n"]): r["problems_per_s"] for r in siconos["results"]}
    out_rows = []
    for s in args.solvers:
        for d in args.dtypes:
            for n in args.sizes:
                mine = [r for r in rows if r["solver"] == s and r["dtype"] == d and r["n"] == n]
                ref = sic.get((SICONOS_OF[s], n))
                if not mine or ref is None:
                    continue
                one = next((r for r in mine if r["batch"] == 1), None)
                best = max(mine, key=lambda r: r["problems_per_s"])
                beat = [
                    r["batch"]
                    for r in sorted(mine, key=lambda r: r["batch"])
                    if r["problems_per_s"] > ref and r["converged_fraction"] == 1.0
                ]
                out_rows.append(
                    [
                        s,
                        d,
                        str(n),
                        SICONOS_OF[s].upper(),
                        ref,
                        one["problems_per_s"] / ref if one else "—",
                        best["problems_per_s"] / ref,
                        str(best["batch"]),
                        str(beat[0]) if beat else "never",
                    ]
                )
    return (
        "jaxcontact vs Siconos (ratio of problems/s; > 1 means jaxcontact is faster; "
        "'overtakes at' = smallest batch measured that is faster with every problem converged):\n\n"
        + common.markdown_table(
            [
                "solver",
                "dtype",
                "n",
                "vs Siconos",
                "Siconos problems/s",
                "ratio at batch 1",
                "best ratio",
                "at batch",
                "overtakes at",
            ],
            out_rows,
        )
    )


# --------------------------------------------------------------------------- main


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ints = lambda s: tuple(int(x) for x in s.split(",") if x)  # noqa: E731
    strs = lambda s: tuple(x for x in s.split(",") if x)  # noqa: E731
    p.add_argument(
        "--grid",
        choices=tuple(GRIDS),
        default="quick",
        help="preset sizes/batches: quick = n 4,16,64 × batch 1,256,4096; "
        "full = n 2…64 × batch 1…16384 (default %(default)s)",
    )
    p.add_argument("--sizes", type=ints, help="comma-separated n (overrides --grid)")
    p.add_argument("--batches", type=ints, help="comma-separated batch sizes (overrides --grid)")
    p.add_argument("--solvers", type=strs, default=SOLVERS, help="comma-separated, of " + ",".join(SOLVERS))
    p.add_argument("--dtypes", type=strs, default=("float64", "float32"), help="float64,float32")
    p.add_argument("--pgs-sweeps", type=int, help="fixed PGS sweep count (default: calibrated)")
    p.add_argument("--jacobi-sweeps", type=int, help="fixed projected-Jacobi sweep count (default: calibrated)")
    p.add_argument("--sweep-step", type=int, default=5, help="calibration granularity (default %(default)s)")
    p.add_argument("--max-mem-mb", type=float, default=2048, help="skip larger working sets (default %(default)s)")
    p.add_argument(
        "--max-call-s",
        type=float,
        default=3.0,
        help="skip a batch whose call is predicted to exceed this (default %(default)s)",
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=0,
        help="solve batches larger than this as lax.map over chunks of this many problems "
        "(vmap inside); 0 = one vmap over the whole batch (default %(default)s)",
    )
    p.add_argument(
        "--devices",
        type=int,
        default=1,
        help="XLA host devices to shard the batch over (sets XLA_FLAGS; default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--problems-dir", type=Path, default=common.OUT_DIR / "lcp_problems")
    p.add_argument("--no-siconos", action="store_true", help="skip the Siconos subprocess")
    p.add_argument("--siconos-python", default="/usr/bin/python3")
    p.add_argument("--siconos-solvers", default="lemke,pgs,enum")
    p.add_argument(
        "--siconos-seconds", type=float, default=2.0, help="solver time per (Siconos solver, n) (default %(default)s)"
    )
    p.add_argument("--siconos-max-problems", type=int, default=2000)
    p.add_argument(
        "--siconos-passes",
        type=int,
        default=3,
        help="Siconos solves its problems this many times; median pass counts (default %(default)s)",
    )
    p.add_argument("--results", type=Path, default=common.RESULTS_MD, help="Markdown file to append to")
    p.add_argument("--no-append", action="store_true", help="print the report, do not append it")
    args = p.parse_args(argv)
    grid = GRIDS[args.grid]
    args.sizes = args.sizes or grid["sizes"]
    args.batches = tuple(sorted(args.batches or grid["batches"]))
    for s in args.solvers:
        if s not in SOLVERS:
            p.error(f"--solvers: unknown solver {s!r}; choose from {', '.join(SOLVERS)}")
    for d in args.dtypes:
        if d not in ("float64", "float32"):
            p.error(f"--dtypes: {d!r} is not float64 or float32")
    if args.devices < 1:
        p.error(f"--devices must be >= 1; got {args.devices}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    command = "python bench/perf/lcp.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.devices > 1:  # must happen before jax is imported
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={args.devices}"
        ).strip()
    import jax

    jax.config.update("jax_enable_x64", True)
    sharding = None
    if args.devices > 1:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        sharding = NamedSharding(Mesh(np.array(jax.devices()[: args.devices]), ("batch",)), PartitionSpec("batch"))
    info = common.machine_info()
    t_start = time.perf_counter()

    pools = {}
    for n in args.sizes:
        path, M, q, z_true = problem_pool(n, max(args.batches), args.seed, args.problems_dir)
        pools[n] = (M, q, z_true)
        print(f"problems n={n}: {M.shape[0]} in {path}", file=sys.stderr)

    fixed = {"pgs": args.pgs_sweeps, "projected_jacobi": args.jacobi_sweeps}
    sweeps = {}
    for s in args.solvers:
        if s == "lemke":
            continue
        for n in args.sizes:
            M, q, _ = pools[n]
            for d in args.dtypes:
                if fixed[s] is not None:
                    sweeps[(s, n, d)] = fixed[s]
                    continue
                k, frac = calibrate_sweeps(s, M.astype(d), q.astype(d), args.sweep_step)
                sweeps[(s, n, d)] = k
                print(f"calibrated {s} n={n} {d}: {k} sweeps (converged {frac:.4f})", file=sys.stderr)

    rows, skipped = [], []
    for s in args.solvers:
        for d in args.dtypes:
            itemsize = np.dtype(d).itemsize
            for n in args.sizes:
                M, q, z_true = pools[n]
                per_problem = None
                for b in args.batches:
                    skip = None
                    mb = working_set_bytes(s, n, b, itemsize) / 2**20
                    if mb > args.max_mem_mb:
                        skip = f"~{mb:.0f} MB > --max-mem-mb {args.max_mem_mb:g}"
                    elif per_problem is not None and per_problem * b > args.max_call_s:
                        skip = f"predicted {per_problem * b:.1f} s per call > --max-call-s {args.max_call_s:g}"
                    if skip:
                        skipped.append({"n": n, "batch": b, "dtype": d, "solver": s, "reason": skip})
                        print(f"skip {s} n={n} batch={b} {d}: {skip}", file=sys.stderr)
                        continue
                    use_sharding = sharding if (sharding is not None and b % args.devices == 0) else None
                    r = measure(
                        s,
                        sweeps.get((s, n, d)),
                        tiled(M, b).astype(d),
                        tiled(q, b).astype(d),
                        tiled(z_true, b),
                        use_sharding,
                        args.chunk,
                    )
                    r.update(n=n, batch=b, dtype=d, solver=s)
                    rows.append(r)
                    per_problem = r["us_per_problem"] * 1e-6
                    print(
                        f"{s:16s} n={n:3d} batch={b:6d} {d}: {r['problems_per_s']:.3g}/s, "
                        f"compile {r['compile_s']:.2f}s, converged {r['converged_fraction']:.4f}, "
                        f"median residual {r['median_residual']:.1e}",
                        file=sys.stderr,
                    )

    siconos = None
    if not args.no_siconos:
        cmd = [
            args.siconos_python,
            str(common.BENCH_DIR / "peers" / "siconos" / "siconos_lcp.py"),
            "--problems-dir",
            str(args.problems_dir),
            "--sizes",
            ",".join(map(str, args.sizes)),
            "--solvers",
            args.siconos_solvers,
            "--seconds",
            str(args.siconos_seconds),
            "--max-problems",
            str(args.siconos_max_problems),
            "--passes",
            str(args.siconos_passes),
        ]
        siconos = common.run_json_subprocess(cmd, timeout=3600)

    text = report(args, info, rows, skipped, sweeps, siconos, command)
    common.write_json(
        {
            "machine": info,
            "rows": rows,
            "skipped": skipped,
            "sweeps": {f"{k[0]} n={k[1]} {k[2]}": v for k, v in sweeps.items()},
            "siconos": siconos,
        },
        common.OUT_DIR / "lcp_results.json",
    )
    print(text)
    if not args.no_append:
        print(f"appended to {common.append_results(text, args.results)}", file=sys.stderr)
    print(f"total {time.perf_counter() - t_start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

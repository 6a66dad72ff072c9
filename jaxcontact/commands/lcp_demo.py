"""``jaxcontact lcp-demo``: solve Siconos' LCP test collection with every solver and print a table.

    jaxcontact lcp-demo                 # float64, all solvers
    jaxcontact lcp-demo --float32
    jaxcontact lcp-demo --solvers lemke,robust

Columns: problem, n, solver, converged, residual (‖min(z, w)‖∞ / max(1, ‖q‖∞)),
Siconos' error (‖z − max(0, z − w)‖₂ / ‖q‖₂), iterations (pivots for Lemke,
sweeps or Newton steps, summed over the stages of the robust driver) and the
wall time of one solve after compilation.

To compile each solver once (not once per problem size), problems are
padded to the largest size with decoupled rows (M block I, q = 1, so those z
are 0 with w = 1; every solver here treats them independently of the real
rows: Lemke never pivots on them, Newton's Jacobian and the sweeps are block
diagonal). Residuals, errors and the converged flag are recomputed on the
unpadded problem.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from jaxcontact.commands import checks

NAME = "lcp-demo"
HELP = "solve Siconos' LCP test collection with Lemke, the robust driver, PGS and projected Jacobi"

SOLVERS = ("lemke", "robust", "pgs", "jacobi")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the ``lcp-demo`` options on ``p``."""
    p.add_argument("--float32", action="store_true", help="solve in float32 (default float64)")
    p.add_argument(
        "--solvers", default=",".join(SOLVERS), help=f"comma-separated subset of {', '.join(SOLVERS)} (default: all)"
    )
    p.add_argument(
        "--sweeps", type=checks.positive_int, default=2000, help="sweeps of PGS and projected Jacobi (default 2000)"
    )


def pad_lcp(M, q, size: int):
    """Embed LCP(M, q) in a ``size``-row problem with decoupled rows (M = I, q = 1) appended."""
    n = len(q)
    if size < n:
        raise ValueError(f"pad_lcp: size {size} is smaller than the problem size {n}")
    Mp = np.eye(size, dtype=np.asarray(M).dtype)
    Mp[:n, :n] = M
    qp = np.ones(size, dtype=np.asarray(q).dtype)
    qp[:n] = q
    return Mp, qp


def _solver_functions(names, sweeps):
    import jax

    from jaxcontact.lcp.lemke import lemke
    from jaxcontact.lcp.robust import robust_solve

    fns = {}
    for name in names:
        if name == "lemke":
            fns[name] = jax.jit(lemke)
        elif name == "robust":
            fns[name] = jax.jit(lambda M, q: robust_solve(M, q))
        elif name == "pgs":
            from jaxcontact.lcp.pgs import pgs

            fns[name] = jax.jit(lambda M, q: pgs(M, q, iterations=sweeps))
        elif name == "jacobi":
            from jaxcontact.lcp.jacobi import projected_jacobi

            fns[name] = jax.jit(lambda M, q: projected_jacobi(M, q, iterations=sweeps))
        else:
            raise ValueError(f"lcp-demo: unknown solver {name!r}; choose from {SOLVERS}")
    return fns


def run(args) -> int:
    """Run ``jaxcontact lcp-demo``: solve Siconos' LCP collection with every chosen solver and print a table."""
    import jax

    if not args.float32:
        jax.config.update("jax_enable_x64", True)

    from jaxcontact.lcp.siconos_io import collection_dir, load_collection
    from jaxcontact.lcp.solution import default_tol

    names = [s.strip() for s in args.solvers.split(",") if s.strip()]
    dtype = np.float32 if args.float32 else np.float64
    tol = default_tol(dtype)
    unknown = sorted(set(names) - set(SOLVERS))
    if unknown or not names:
        print(
            f"jaxcontact lcp-demo: error: --solvers {args.solvers!r}: unknown {unknown}; choose from {SOLVERS}",
            file=sys.stderr,
        )
        return 2
    fns = _solver_functions(names, args.sweeps)
    problems = load_collection()
    sizes = [len(p.q) for p in problems]
    size = max(sizes)

    print(
        f"Siconos LCP collection ({collection_dir()}), {len(problems)} dense problems, "
        f"{np.dtype(dtype).name}, converged = residual <= {tol:g}"
    )
    header = (
        f"{'problem':28s} {'n':>3s}  {'solver':7s} {'conv':5s} {'residual':>9s} {'siconos':>9s} {'iters':>6s} "
        f"{'time':>9s}"
    )
    print(header)
    print("-" * len(header))
    compile_s = {}
    t_start = time.perf_counter()
    for p in problems:
        n = len(p.q)
        Mp, qp = pad_lcp(p.M.astype(dtype), p.q.astype(dtype), size)
        for name in names:
            fn = fns[name]
            key = name
            if key not in compile_s:
                t0 = time.perf_counter()
                jax.block_until_ready(fn(Mp, qp))
                compile_s[key] = time.perf_counter() - t0
            t0 = time.perf_counter()
            sol = jax.block_until_ready(fn(Mp, qp))
            dt = time.perf_counter() - t0
            z = np.asarray(sol.z, np.float64)[:n]
            M, q = p.M, p.q
            w = M @ z + q
            res = np.max(np.abs(np.minimum(z, w)), initial=0.0) / max(1.0, np.max(np.abs(q)))
            nq = np.linalg.norm(q)
            err = np.linalg.norm(z - np.maximum(0.0, z - w)) / (nq if nq > 0 else 1.0)
            conv = bool(np.isfinite(res) and res <= tol)
            print(
                f"{p.name:28s} {n:3d}  {name:7s} {str(conv):5s} {res:9.1e} {err:9.1e} "
                f"{int(sol.iterations):6d} {dt * 1e3:7.2f}ms"
            )
    total = time.perf_counter() - t_start
    comp = ", ".join(f"{k} {v:.1f}s" for k, v in compile_s.items())
    print(f"\nproblems padded to n = {size}; compile times: {comp}; total {total:.1f}s")
    return 0

"""``jaxcontact contact-problem``: solve frictional contact problem files and print one line per file.

    jaxcontact contact-problem Rover1039.dat BoxesStack1-i100000-32.hdf5.dat
    jaxcontact contact-problem --bundled --solver proximal-newton --json
    jaxcontact contact-problem FILE --solver nsgs --tol 1e-6 --iterations 5000

Files: Siconos ``FrictionContactProblem`` text files (dense or sparse block)
and FCLIB HDF5 local problems (:mod:`jaxcontact.cones.problem`). Columns:
contacts, solver, iterations (sweeps or Newton steps), residual (Siconos'
``fc3d_compute_error``), converged (residual ≤ tol), the solve time after
compilation (median of ``--repeat`` runs) and the compile time apart.
``newton-sparse-lu`` is :func:`~jaxcontact.cones.newton` with
``linear_solver=SparseLU()``: W by block rows (the file's blocks, or the nonzero
blocks of a dense W), the Newton system by a sparse direct LU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

NAME = "contact-problem"
HELP = "solve 3D (or planar) frictional contact problem files (Siconos .dat, FCLIB .hdf5) and report"

SOLVERS = ("newton", "newton-sparse-lu", "proximal-newton", "nsgs", "jacobi")
BLOCK_SOLVERS = ("newton-sparse-lu",)  # always given W by block rows


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``contact-problem`` command's arguments."""
    p.add_argument("files", nargs="*", help="problem files (.dat Siconos text, .hdf5 FCLIB)")
    p.add_argument("--bundled", action="store_true", help="also every bundled Siconos test problem")
    p.add_argument("--solver", default="newton", choices=SOLVERS, help="solver (default newton)")
    p.add_argument("--tol", type=float, default=1e-8, help="tolerance on Siconos' error (default 1e-8)")
    p.add_argument(
        "--iterations",
        type=int,
        default=None,
        help="maximum Newton steps (newton, newton-sparse-lu) / outer proximal iterations / "
        "sweeps (nsgs / jacobi) (default 200 / 100 / 10000 / 20000)",
    )
    p.add_argument(
        "--sparse",
        action="store_true",
        help="sweeps (nsgs, jacobi) on the 3×3 block rows when the file stores W by blocks",
    )
    p.add_argument("--float32", action="store_true", help="solve in float32 (default float64)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs after compilation (median; default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")


def _solver(name: str, tol: float, iterations):
    from jaxcontact.cones import SparseLU, jacobi, newton, nsgs, proximal_newton

    if name == "newton":
        return lambda W, q, mu: newton(W, q, mu, tol=tol, iterations=iterations or 200)
    if name == "newton-sparse-lu":
        return lambda W, q, mu: newton(W, q, mu, tol=tol, iterations=iterations or 200, linear_solver=SparseLU())
    if name == "proximal-newton":
        return lambda W, q, mu: proximal_newton(W, q, mu, tol=tol, outer=iterations or 100)
    if name == "nsgs":
        return lambda W, q, mu: nsgs(W, q, mu, tol=tol, iterations=iterations or 10000)
    return lambda W, q, mu: jacobi(W, q, mu, tol=tol, iterations=iterations or 20000)


def _bad_options(args, paths) -> str | None:
    """What is wrong with the options (None: nothing), before any file is read."""
    if not paths:
        return "give problem files, or --bundled"
    if not args.tol > 0:
        return f"--tol must be > 0; got {args.tol}"
    if args.iterations is not None and args.iterations < 1:
        return f"--iterations must be >= 1; got {args.iterations}"
    if args.repeat < 1:
        return f"--repeat must be >= 1; got {args.repeat}"
    if args.sparse and args.solver not in ("nsgs", "jacobi"):
        return (
            f"--sparse applies to nsgs and jacobi, not {args.solver} (newton and proximal-newton factorise "
            "W dense; newton-sparse-lu always takes W by block rows)"
        )
    return None


def _error(message: str) -> int:
    """Bad input: one line on stderr, exit status 2."""
    print(f"jaxcontact contact-problem: error: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    """Solve each file's problem and print contacts, solver, iterations, residual, time and convergence."""
    import jax

    if not args.float32:
        jax.config.update("jax_enable_x64", True)
    from jaxcontact.cones.delassus import block_rows
    from jaxcontact.cones.problem import bundled_files, dense_to_blocks, read_problem

    paths = list(args.files) + ([str(f) for f in bundled_files()] if args.bundled else [])
    bad = _bad_options(args, paths)
    if bad:
        return _error(bad)
    dtype = np.float32 if args.float32 else np.float64
    fn = jax.jit(_solver(args.solver, args.tol, args.iterations))
    rows = []
    for path in paths:
        try:
            p = read_problem(path)
        except (ValueError, OSError) as e:
            # A message from the reader names the file; one from the OS or h5py may not.
            return _error(str(e) if str(path) in str(e) else f"{path}: {e}")
        W = p.W.astype(dtype)
        by_blocks = args.solver in BLOCK_SOLVERS or (args.sparse and p.blocks is not None)
        if by_blocks:
            b = p.blocks if p.blocks is not None else dense_to_blocks(p.W, p.dim)
            W = block_rows(type(b)(b.rows, b.cols, b.values.astype(dtype)), p.nc)
        q, mu = p.q.astype(dtype), p.mu.astype(dtype)
        t0 = time.perf_counter()
        sol = jax.block_until_ready(fn(W, q, mu))
        first = time.perf_counter() - t0
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            sol = jax.block_until_ready(fn(W, q, mu))
            times.append(time.perf_counter() - t0)
        t = float(np.median(times))
        rows.append(
            dict(
                file=p.name,
                contacts=p.nc,
                dim=p.dim,
                solver=args.solver,
                storage="blocks" if by_blocks else "dense",
                dtype=np.dtype(dtype).name,
                iterations=int(sol.iterations),
                residual=float(sol.residual),
                converged=bool(sol.converged),
                tol=args.tol,
                time_s=t,
                compile_s=max(first - t, 0.0),
            )
        )
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    head = (
        f"{'problem':34s} {'nc':>4s} {'solver':16s} {'iters':>6s} {'residual':>9s} {'conv':5s} {'time':>10s} "
        f"{'compile':>8s}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['file']:34s} {r['contacts']:4d} {r['solver']:16s} {r['iterations']:6d} {r['residual']:9.1e} "
            f"{str(r['converged']):5s} {r['time_s'] * 1e3:8.2f}ms {r['compile_s']:7.1f}s"
        )
    return 0

"""Siconos numerics side of the LCP benchmark: solve the saved problems one by one.

Run by Debian's interpreter, which has ``python3-siconos`` (the venv's numpy
cannot import it)::

    /usr/bin/python3 bench/peers/siconos/siconos_lcp.py --problems-dir bench/out/lcp_problems --sizes 4,16,64

It reads ``lcp_problems_n{n}.npz`` (written by ``bench/perf/lcp.py``: arrays M
(P, n, n), q (P, n), z_true (P, n) in float64), solves the first problems of
each file one at a time with ``linearComplementarity_driver`` for each
requested solver (LEMKE = lexicographic Lemke, PGS, ENUM), and prints one JSON
document on stdout with problems/s and accuracy. The set is solved
``--passes`` times and the median pass time counts. Only the driver calls are
timed; building the ``sn.LCP`` objects is done before the clock starts. The
per-call Python→C (SWIG) overhead of a few microseconds is part of the time,
as it is for any Python user of Siconos.

Accuracy is reported three ways, all in float64: Siconos' own error
(``options.dparam[SICONOS_DPARAM_RESIDU]``, ‖z − max(0, z − w)‖/‖q‖), the
natural residual ‖min(z, Mz + q)‖∞ / max(1, ‖q‖∞) recomputed here from z
(the definition jaxcontact's solvers report), and the distance ‖z − z_true‖∞
to the known solution the problems were built around.

This file uses only numpy and siconos (no jaxcontact), and keeps to what
numpy 1.24 offers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

try:
    import siconos
    import siconos.numerics as sn
except ImportError as e:  # the message says what to do, instead of a bare traceback
    sys.exit(
        f"siconos_lcp.py: cannot import siconos.numerics ({e}); run it with /usr/bin/python3 (Debian's python3-siconos)"
    )

SOLVERS = {
    "lemke": sn.SICONOS_LCP_LEMKE,
    "pgs": sn.SICONOS_LCP_PGS,
    "enum": sn.SICONOS_LCP_ENUM,
}


def debian_version() -> str:
    import subprocess

    try:
        return subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", "python3-siconos"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def natural_residual(M, q, z):
    w = M @ z + q
    return float(np.max(np.abs(np.minimum(z, w))) / max(1.0, float(np.max(np.abs(q)))))


def solve_many(solver: str, M, q, z_true, *, max_problems: int, seconds: float, tol: float, max_iter: int, passes: int):
    """Solve problems 0, 1, … until ``max_problems`` or ``seconds`` of solver time is used.

    The same problems are then solved ``passes − 1`` more times and the
    median pass time is reported, so a burst of load from other processes on
    a shared machine does not decide the number.
    """
    n = M.shape[1]
    count = min(max_problems, M.shape[0])
    problems = [sn.LCP(np.ascontiguousarray(M[i]), np.ascontiguousarray(q[i])) for i in range(count)]
    options = sn.SolverOptions(SOLVERS[solver])
    options.dparam[sn.SICONOS_DPARAM_TOL] = tol
    if solver != "enum":
        options.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
    z = np.zeros(n)
    w = np.zeros(n)
    # One untimed call, so that first-touch costs (page faults, lazy symbol
    # binding in libsiconos) are not charged to the first timed problem.
    sn.linearComplementarity_driver(problems[0], z, w, options)

    infos, errors, residuals, truth_err, iters = [], [], [], [], []
    elapsed = 0.0
    for i in range(count):
        z[:] = 0.0
        w[:] = 0.0
        t0 = time.perf_counter()
        info = sn.linearComplementarity_driver(problems[i], z, w, options)
        elapsed += time.perf_counter() - t0
        infos.append(int(info))
        errors.append(float(options.dparam[sn.SICONOS_DPARAM_RESIDU]))
        iters.append(int(options.iparam[sn.SICONOS_IPARAM_ITER_DONE]))
        residuals.append(natural_residual(M[i], q[i], z))
        truth_err.append(float(np.max(np.abs(z - z_true[i]))))
        if elapsed >= seconds:
            break
    solved = len(infos)
    pass_times = [elapsed]
    for _ in range(passes - 1):
        t_pass = 0.0
        for i in range(solved):
            z[:] = 0.0
            w[:] = 0.0
            t0 = time.perf_counter()
            sn.linearComplementarity_driver(problems[i], z, w, options)
            t_pass += time.perf_counter() - t0
        pass_times.append(t_pass)
    elapsed = float(np.median(pass_times))
    return {
        "n": int(n),
        "solver": solver,
        "problems": solved,
        "seconds": elapsed,
        "pass_seconds": pass_times,
        "problems_per_s": solved / elapsed,
        "us_per_problem": 1e6 * elapsed / solved,
        "info_ok_fraction": float(np.mean(np.asarray(infos) == 0)),
        "median_siconos_error": float(np.median(errors)),
        "max_siconos_error": float(np.max(errors)),
        "median_natural_residual": float(np.median(residuals)),
        "max_natural_residual": float(np.max(residuals)),
        "median_truth_error": float(np.median(truth_err)),
        "max_truth_error": float(np.max(truth_err)),
        "median_iterations": float(np.median(iters)),
        "tol": tol,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--problems-dir",
        type=Path,
        required=True,
        help="directory holding lcp_problems_n{n}.npz from bench/perf/lcp.py",
    )
    p.add_argument("--sizes", default="2,4,8,16,32,64", help="comma-separated n (default %(default)s)")
    p.add_argument("--solvers", default="lemke,pgs,enum", help="comma-separated, of " + ",".join(SOLVERS))
    p.add_argument(
        "--max-problems",
        type=int,
        default=2000,
        help="solve at most this many problems per (solver, n) (default %(default)s)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        help="stop a (solver, n) after this much solver time (default %(default)s)",
    )
    p.add_argument(
        "--passes",
        type=int,
        default=3,
        help="solve the same problems this many times; report the median pass (default %(default)s)",
    )
    p.add_argument(
        "--tol", type=float, default=1e-10, help="Siconos tolerance (dparam[SICONOS_DPARAM_TOL]) (default %(default)s)"
    )
    p.add_argument(
        "--max-iter",
        type=int,
        default=10000,
        help="iparam[SICONOS_IPARAM_MAX_ITER] for LEMKE/PGS (default %(default)s)",
    )
    p.add_argument(
        "--enum-max-n",
        type=int,
        default=12,
        help="skip ENUM above this n: it visits up to 2^n index sets (default %(default)s)",
    )
    args = p.parse_args(argv)

    sizes = [int(s) for s in args.sizes.split(",") if s]
    solvers = [s for s in args.solvers.split(",") if s]
    for s in solvers:
        if s not in SOLVERS:
            p.error(f"--solvers: unknown solver {s!r}; choose from {', '.join(SOLVERS)}")

    results, skipped = [], []
    for n in sizes:
        path = args.problems_dir / f"lcp_problems_n{n}.npz"
        if not path.exists():
            p.error(f"missing problem file {path} (run bench/perf/lcp.py first)")
        with np.load(path) as data:
            M, q, z_true = data["M"], data["q"], data["z_true"]
        if M.dtype != np.float64 or M.shape[1:] != (n, n):
            p.error(f"{path}: M must be float64 of shape (P, {n}, {n}); got {M.dtype} {M.shape}")
        for s in solvers:
            if s == "enum" and n > args.enum_max_n:
                skipped.append({"n": n, "solver": s, "reason": f"n > --enum-max-n={args.enum_max_n} (2^n index sets)"})
                continue
            r = solve_many(
                s,
                M,
                q,
                z_true,
                max_problems=args.max_problems,
                seconds=args.seconds,
                tol=args.tol,
                max_iter=args.max_iter,
                passes=max(1, args.passes),
            )
            print(
                f"siconos {s:6s} n={n:3d}: {r['problems']:5d} problems, {r['problems_per_s']:.3g}/s, "
                f"info ok {r['info_ok_fraction']:.3f}, median residual {r['median_natural_residual']:.2e}",
                file=sys.stderr,
            )
            results.append(r)

    json.dump(
        {
            "siconos_module_version": str(getattr(siconos, "version", "?")),
            "siconos_debian_package": debian_version(),
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "results": results,
            "skipped": skipped,
        },
        sys.stdout,
        indent=1,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

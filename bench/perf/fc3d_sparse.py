"""Newton with a sparse direct LU of the Newton system against the dense Newton and Siconos' stored times.

    OPENBLAS_NUM_THREADS=1 nice /work/venv/bin/python bench/perf/fc3d_sparse.py [--rounds 3]

(One BLAS thread: on a shared machine the dense LU's BLAS threads contend
with other jobs and its time then says more about the load than the LU.)

float64, Siconos' error ≤ 1e-8, jit, compile apart (first call), then
``--rounds`` rounds in which every configuration of a problem is timed once,
interleaved so that a change of load hits all of them alike; the median per
configuration is reported. Siconos: NSGS, NSN_AC, NSN_FB at 1e-8 from
``tests/data/fc3d_siconos_reference.npz`` (``bench/peers/siconos/siconos_fc3d.py``, same
machine, earlier). Then one Newton step of Capsules-i100-889 split into the
host part of the sparse solve (COO → CSC, SuperLU factorisation and solve)
and the rest (J, F, line search, XLA ↔ host transfer).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

jax.config.update("jax_enable_x64", True)

from jaxcontact.cones import GMRES, SparseLU, block_rows, bundled_dir, newton, read_problem  # noqa: E402

newton_module = importlib.import_module("jaxcontact.cones.newton")  # the package exports the function newton

ROOT = common.BENCH_DIR.parent
FILES = (
    "Capsules-i100-889.dat",
    "Capsules-i100-1090.dat",
    "Capsules-i97-269.hdf5",
    "BoxesStack1-i100000-32.hdf5.dat",
    "OneObject-i100000-316.hdf5.dat",
)
TOL = 1e-8
CONFIGS = {  # name: (storage, keyword arguments of newton)
    "sparse LU, AC": ("blocks", dict(linear_solver=SparseLU())),
    "sparse LU, FB": ("blocks", dict(linear_solver=SparseLU(), function="fischer_burmeister")),
    "dense LU, AC": ("dense", {}),
    "dense LU, FB": ("dense", dict(function="fischer_burmeister")),
    "GMRES 30, AC": ("blocks", dict(linear_solver=GMRES(30))),
}


def once(fn, *args):
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    return out, time.perf_counter() - t0


def solves(rounds):
    sic = np.load(ROOT / "tests" / "data" / "fc3d_siconos_reference.npz")
    rows = []
    for fname in FILES:
        p = read_problem(bundled_dir() / fname)
        Wb = block_rows(p.blocks, p.nc)
        fns, sols, times = {}, {}, {}
        for name, (storage, kw) in CONFIGS.items():
            fns[name] = (
                jax.jit(lambda W, q, mu, kw=kw: newton(W, q, mu, tol=TOL, iterations=200, **kw)),
                Wb if storage == "blocks" else p.W,
            )
            sols[name], _ = once(fns[name][0], fns[name][1], p.q, p.mu)  # compiles
            times[name] = []
        for _ in range(rounds):
            for name, (fn, W) in fns.items():
                times[name].append(once(fn, W, p.q, p.mu)[1])
        for name, sol in sols.items():
            rows.append(
                [
                    p.name,
                    p.nc,
                    name,
                    int(sol.iterations),
                    f"{float(sol.residual):.1e}",
                    "✓" if bool(sol.converged) else "✗",
                    f"{np.median(times[name]) * 1e3:,.1f}",
                ]
            )
            print(rows[-1], flush=True)
        for s in ("NSGS", "NSN_AC", "NSN_FB"):
            key = f"{p.name}/{s}"
            rows.append(
                [
                    p.name,
                    p.nc,
                    f"Siconos {s} (stored)",
                    int(sic[f"{key}/iters8"]),
                    f"{float(sic[f'{key}/error8']):.1e}",
                    "✓" if int(sic[f"{key}/info8"]) == 0 else "✗",
                    f"{float(sic[f'{key}/time8']) * 1e3:,.1f}",
                ]
            )
    return rows


def step_split(steps=20, calls=5):
    """Host time of the sparse solves (CSC assembly, SuperLU) against the whole Newton step."""
    p = read_problem(bundled_dir() / "Capsules-i100-889.dat")
    Wb = block_rows(p.blocks, p.nc)
    spent = {"assembly": 0.0, "factorisation + solve": 0.0, "solves": 0}
    host_solve = newton_module._host_solve

    def timed_host_solve(rows, cols, values, b):
        import scipy.sparse
        import scipy.sparse.linalg

        t0 = time.perf_counter()
        A = scipy.sparse.csc_matrix((values, (rows, cols)), shape=(b.size, b.size))
        t1 = time.perf_counter()
        x = scipy.sparse.linalg.spsolve(A, b)
        t2 = time.perf_counter()
        spent["assembly"] += t1 - t0
        spent["factorisation + solve"] += t2 - t1
        spent["solves"] += 1
        return x.astype(b.dtype)

    newton_module._host_solve = timed_host_solve  # read when the callback is traced below
    try:
        fn = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=0.0, iterations=steps, linear_solver=SparseLU()))
        once(fn, Wb, p.q, p.mu)
        for k in spent:
            spent[k] = 0
        total = sum(once(fn, Wb, p.q, p.mu)[1] for _ in range(calls))
    finally:
        newton_module._host_solve = host_solve
    n = steps * calls
    host = spent["assembly"] + spent["factorisation + solve"]
    return [
        ["whole step", f"{total / n * 1e3:.2f}"],
        ["host: COO → CSC (SciPy)", f"{spent['assembly'] / n * 1e3:.2f}"],
        ["host: SuperLU factorisation + solve", f"{spent['factorisation + solve'] / n * 1e3:.2f}"],
        ["rest (J, F, line search in XLA; callback transfer)", f"{(total - host) / n * 1e3:.2f}"],
        ["sparse solves per step (Levenberg–Marquardt fallbacks add one)", f"{spent['solves'] / n:.2f}"],
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parts", default="solves,split")
    args = ap.parse_args()
    if "solves" in args.parts:
        print(
            common.markdown_table(
                ["problem", "nc", "solver", "steps", "error", "converged ≤ 1e-8", "time ms"], solves(args.rounds)
            )
        )
        print()
    if "split" in args.parts:
        print(common.markdown_table(["Capsules-i100-889, sparse-LU Newton (AC), per step", "ms"], step_split()))


if __name__ == "__main__":
    main()

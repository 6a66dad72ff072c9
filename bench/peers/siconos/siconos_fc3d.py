"""Siconos numerics side of the 3D frictional contact reference and benchmark.

Run by Debian's interpreter, which has ``python3-siconos`` (the venv's numpy
cannot import it)::

    /usr/bin/python3 bench/peers/siconos/siconos_fc3d.py --out tests/data/fc3d_siconos_reference.npz FILE...

Each FILE is either a Siconos ``FrictionContactProblem`` text file (``*.dat``,
read by Siconos' own ``frictionContact_new_from_filename``) or an ``*.npz``
with dense arrays W, q, mu (how ``bench/references/fc3d_reference.py`` hands over the
FCLIB HDF5 problems, which this Siconos build cannot read). For every problem
it stores, under keys prefixed by the problem name:

* ``W`` as Siconos holds it, exported column by column through
  ``fc3d_compute_error`` (which forms w = W z + q): the dense matrix when
  3 nc ≤ 150, else ``W @ v`` for the fixed probe v = sin(1 + k) — enough to
  check a reader entry by entry or by a random projection;
* ``q``, ``mu``; ``probe_r`` (a fixed vector) with Siconos' error at it
  (``probe_error``), to check our implementation of ``fc3d_compute_error``;
* per solver (NSGS, NSN_AC, NSN_FB at tol 1e-10, NSGS 10 000 sweeps, Newton
  1 000 steps): ``r``, ``u``, ``info`` (0 = converged), ``error``, ``iters``;
* timings at tol 1e-8 (median of ``--passes`` calls, driver only):
  ``time_<solver>`` in seconds and ``error8_<solver>``.

Uses only numpy and siconos (no jaxcontact).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import siconos.numerics as sn
except ImportError as e:
    sys.exit(
        f"siconos_fc3d.py: cannot import siconos.numerics ({e}); run it with /usr/bin/python3 "
        "(Debian's python3-siconos)"
    )

SOLVERS = {
    "NSGS": "SICONOS_FRICTION_3D_NSGS",
    "NSN_AC": "SICONOS_FRICTION_3D_NSN_AC",
    "NSN_FB": "SICONOS_FRICTION_3D_NSN_FB",
}
MAX_ITER = {"NSGS": 10000, "NSN_AC": 1000, "NSN_FB": 1000}
DENSE_MAX = 150
SCALE = 2.0**30  # exact power of two: W e_j · SCALE + q loses nothing relative to W e_j


def load(path: Path):
    if path.suffix == ".npz":
        d = np.load(path)
        W, q, mu = d["W"], d["q"], d["mu"]
        return sn.FrictionContactProblem(3, len(mu), np.asarray(W, float), np.asarray(q, float), np.asarray(mu, float))
    return sn.frictionContact_new_from_filename(str(path))


def options(solver: str, tol: float):
    so = sn.SolverOptions(getattr(sn, SOLVERS[solver]))
    so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = MAX_ITER[solver]
    return so


def solve(p, solver: str, tol: float):
    n = 3 * p.numberOfContacts
    r, u = np.zeros(n), np.zeros(n)
    so = options(solver, tol)
    t0 = time.perf_counter()
    info = sn.fc3d_driver(p, r, u, so)
    dt = time.perf_counter() - t0
    return r, u, info, so.dparam[sn.SICONOS_DPARAM_RESIDU], so.iparam[sn.SICONOS_IPARAM_ITER_DONE], dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    out = {}
    for path in args.files:
        name = path.name.removesuffix(".npz").removesuffix(".dat").removesuffix(".hdf5")
        p = load(path)
        nc = p.numberOfContacts
        n = 3 * nc
        q = np.array(p.q, float)
        so = options("NSGS", 1e-8)
        cols = []
        for j in range(n):
            z = np.zeros(n)
            z[j] = SCALE
            w = np.zeros(n)
            sn.fc3d_compute_error(p, z, w, 1e-8, so, 1.0)
            cols.append((w - q) / SCALE)
        W = np.array(cols).T
        v = np.sin(1.0 + np.arange(n))
        if n <= DENSE_MAX:
            out[f"{name}/W"] = W
        out[f"{name}/Wv"] = W @ v
        out[f"{name}/q"] = q
        out[f"{name}/mu"] = np.array(p.mu, float)
        probe = np.abs(np.cos(np.arange(n))) * np.tile([1.0, 0.3, -0.2], nc) * 1e-2
        w = np.zeros(n)
        _, err = sn.fc3d_compute_error(p, probe, w, 1e-8, so, float(np.linalg.norm(q)))
        out[f"{name}/probe_r"] = probe
        out[f"{name}/probe_error"] = np.float64(err)
        for solver in SOLVERS:
            r, u, info, err, it, _ = solve(p, solver, 1e-10)
            for k, val in (("r", r), ("u", u), ("info", info), ("error", err), ("iters", it)):
                out[f"{name}/{solver}/{k}"] = np.asarray(val)
            times = []
            for _ in range(args.passes):
                *_, info8, err8, it8, dt = solve(p, solver, 1e-8)
                times.append(dt)
            out[f"{name}/{solver}/time8"] = np.float64(np.median(times))
            out[f"{name}/{solver}/error8"] = np.float64(err8)
            out[f"{name}/{solver}/info8"] = np.int64(info8)
            out[f"{name}/{solver}/iters8"] = np.int64(it8)
            print(
                f"{name:40s} nc={nc:4d} {solver:7s} info={info} err={err:.1e} it={it} "
                f"tol1e-8: info={info8} err={err8:.1e} t={np.median(times) * 1e3:.2f} ms",
                flush=True,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

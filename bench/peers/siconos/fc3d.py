"""3D frictional contact (Coulomb cones): jaxcontact's solvers against Siconos 4.4, in one run.

    nice -n 10 /work/venv/bin/python bench/peers/siconos/fc3d.py              # everything, appends to RESULTS.md
    /work/venv/bin/python bench/peers/siconos/fc3d.py --parts success --no-append

Parts:

* ``success`` — every bundled problem (``jaxcontact/data/fc3d_siconos``)
  with every solver configuration at Siconos' error ≤ 1e-8 in float64 and
  ≤ 1e-4 in float32 (Jacobi 2 000 sweeps above 60 contacts, 20 000 below;
  Newton on Alart–Curnier and Fischer–Burmeister, dense LU, or GMRES or a
  sparse direct LU on block rows):
  converged, error, iterations, steady-state time (compile apart); beside
  it Siconos' NSGS (10 000 sweeps), NSN_AC and NSN_FB (1 000 steps) at the
  same tolerance, run now by ``bench/peers/siconos/siconos_fc3d.py`` under /usr/bin/python3
  (driver call only, median of 3).
* ``solved-small`` — which of the files with ≤ 60 contacts every dense
  configuration solves, float64 (≤ 1e-8) and float32 (≤ 1e-4), padded to
  one size so each configuration compiles once (no timing).
* ``batch`` — B = 256 perturbed copies (q × (1 ± 5 %), μ × (1 ± 20 %)) of
  Rover1039 and of BoxesStack1, vmapped, float64 and float32, against
  Siconos' fastest converging solver called once per problem (Newton on
  both functions and NSGS on the Rover; Fischer–Burmeister Newton, the one
  that converges there, on the box stack).
* ``scaling`` — time per NSGS sweep with W dense and by block rows (beside
  Siconos' NSGS time per sweep from the stored reference), and per Newton
  step with a dense LU, with GMRES and with a sparse LU on block rows, from 4 to 2 020 contacts
  (Rover1039, Capsules-i100-889, the planar granular flows of the shared fc2d data when present).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/, for common.py
import common  # noqa: E402

ROOT = common.BENCH_DIR.parent
SHARED_FC2D = ROOT.parent.parent / "shared" / "data" / "fc2d_siconos"
TOL = 1e-8


def siconos_run(files, passes=3):
    from jaxcontact.cones.problem import read_fclib

    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for f in files:
            if f.suffix == ".hdf5":
                p = read_fclib(f)
                npz = Path(tmp) / f"{p.name}.npz"
                np.savez(npz, W=p.W, q=p.q, mu=p.mu)
                args.append(str(npz))
            else:
                args.append(str(f))
        out = Path(tmp) / "siconos.npz"
        subprocess.run(
            [
                "nice",
                "-n",
                "10",
                "/usr/bin/python3",
                str(Path(__file__).resolve().parent / "siconos_fc3d.py"),
                "--passes",
                str(passes),
                "--out",
                str(out),
                *args,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        d = np.load(out)
        return {k: d[k] for k in d.files if "/W" not in k}


JACOBI_LARGE_NC = 60  # above it Jacobi gets 2 000 sweeps (20 000 on the capsules: 6.5 min each, still 1e-7)


BLOCK_CONFIGS = (
    "nsgs-blocks",
    "newton-krylov-blocks",
    "newton-sparse-lu-blocks",
    "newton-fb-sparse-lu-blocks",
)  # W handed over by block rows


def configs(nc, tol=TOL):
    from jaxcontact.cones import GMRES, SparseLU, jacobi, newton, nsgs, proximal_newton

    jacobi_sweeps = 20000 if nc <= JACOBI_LARGE_NC else 2000
    return {
        "newton": lambda W, q, mu: newton(W, q, mu, tol=tol, iterations=200),
        "newton-fb": lambda W, q, mu: newton(W, q, mu, tol=tol, iterations=200, function="fischer_burmeister"),
        "newton-krylov-blocks": lambda W, q, mu: newton(W, q, mu, tol=tol, iterations=200, linear_solver=GMRES(30)),
        "newton-sparse-lu-blocks": lambda W, q, mu: newton(W, q, mu, tol=tol, iterations=200, linear_solver=SparseLU()),
        "newton-fb-sparse-lu-blocks": lambda W, q, mu: newton(
            W, q, mu, tol=tol, iterations=200, linear_solver=SparseLU(), function="fischer_burmeister"
        ),
        "proximal-newton": lambda W, q, mu: proximal_newton(W, q, mu, tol=tol),
        "nsgs": lambda W, q, mu: nsgs(W, q, mu, tol=tol, iterations=10000),
        "nsgs-blocks": lambda W, q, mu: nsgs(W, q, mu, tol=tol, iterations=10000),
        "jacobi": lambda W, q, mu: jacobi(W, q, mu, tol=tol, iterations=jacobi_sweeps),
    }


def timed(fn, *args, long_s=2.0):
    import jax

    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    first = time.perf_counter() - t0
    if first > long_s:  # a long solve: one more call is the steady time, the difference the compile
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        steady = time.perf_counter() - t0
        return out, steady, max(first - steady, 0.0)
    t = common.time_call(fn, *args, min_repeats=3, max_repeats=10, min_total_s=0.3)
    return out, t.steady_s, t.compile_s


def part_success(sic, dtype):
    import jax

    from jaxcontact.cones import block_rows, bundled_files, read_problem

    tol = TOL if dtype == np.float64 else 1e-4
    rows, success = [], {}
    for f in bundled_files():
        p = read_problem(f)
        for name, solve in configs(p.nc, tol).items():
            W = p.W.astype(dtype)
            if name in BLOCK_CONFIGS:
                if p.blocks is None:
                    continue
                W = block_rows(p.blocks, p.nc)
                W = W._replace(values=W.values.astype(dtype))
            fn = jax.jit(solve)
            sol, t, comp = timed(fn, W, p.q.astype(dtype), p.mu.astype(dtype))
            ok = bool(sol.converged)
            success.setdefault(name, []).append((p.name, ok))
            rows.append(
                [
                    p.name,
                    p.nc,
                    name,
                    ok,
                    f"{float(sol.residual):.1e}",
                    int(sol.iterations),
                    f"{t * 1e3:.2f}",
                    "—" if np.isnan(comp) else f"{comp:.1f}",
                ]
            )
            print(np.dtype(dtype).name, rows[-1], flush=True)
        for s in ("NSGS", "NSN_AC", "NSN_FB"):
            if dtype != np.float64:
                break
            key = f"{p.name}/{s}"
            rows.append(
                [
                    p.name,
                    p.nc,
                    f"Siconos {s}",
                    int(sic[f"{key}/info8"]) == 0,
                    f"{float(sic[f'{key}/error8']):.1e}",
                    int(sic[f"{key}/iters8"]),
                    f"{float(sic[f'{key}/time8']) * 1e3:.2f}",
                    "—",
                ]
            )
            success.setdefault(f"Siconos {s}", []).append((p.name, int(sic[f"{key}/info8"]) == 0))
    table = common.markdown_table(
        ["problem", "nc", "solver", "converged", "error", "iterations", "time ms", "compile s"], rows
    )
    summary = common.markdown_table(
        ["solver", f"solved ≤ {tol:g}", "not solved"],
        [
            [k, f"{sum(ok for _, ok in v)}/{len(v)}", ", ".join(n for n, ok in v if not ok) or "—"]
            for k, v in success.items()
        ],
    )
    return table, summary


def part_solved_small(dtype):
    """Which small files (≤ 60 contacts) each dense configuration solves, and any false "converged": no timing.

    Every file is padded to 60 contacts with separated dummies (as the tests do) so a
    configuration compiles once; the error is recomputed on the unpadded problem.
    """
    import jax
    import jax.numpy as jnp

    from jaxcontact.cones import bundled_files, fc3d_error, read_problem
    from jaxcontact.cones.problem import pad_problem

    tol = TOL if dtype == np.float64 else 1e-4
    probs = [p for p in map(read_problem, bundled_files()) if p.nc <= JACOBI_LARGE_NC]
    rows = []
    for name, solve in configs(1, tol).items():
        if name in BLOCK_CONFIGS:
            continue
        fn = jax.jit(solve)
        solved, failed, false_claims = [], [], []
        for p in probs:
            W, q, mu = (x.astype(dtype) for x in pad_problem(p.W, p.q, p.mu, JACOBI_LARGE_NC))
            sol = fn(W, q, mu)
            n = p.q.size
            r = jnp.asarray(sol.r[:n], jnp.float64)
            err = float(fc3d_error(r, jnp.asarray(p.W) @ r + p.q, jnp.asarray(p.mu), jnp.asarray(p.q)))
            (solved if err <= tol else failed).append(f"{p.name} ({err:.0e})" if err > tol else p.name)
            if bool(sol.converged) and err > tol:  # the solver says converged, the float64 error says not
                false_claims.append(f"{p.name} ({err:.0e})")
        rows.append([name, f"{len(solved)}/{len(probs)}", ", ".join(failed) or "—", ", ".join(false_claims) or "—"])
        print(np.dtype(dtype).name, rows[-1], flush=True)
    return common.markdown_table(
        ["solver", f"solved ≤ {tol:g}", "not solved (error)", "says converged, is not (error in float64)"], rows
    )


def perturbed(p, B, seed=0):
    rng = np.random.default_rng(seed)
    qs = p.q * (1 + 0.05 * rng.uniform(-1, 1, size=(B, p.q.size)))
    mus = p.mu * (1 + 0.2 * rng.uniform(-1, 1, size=(B, p.nc)))
    return qs, mus


def part_batch(sic):
    from functools import partial

    import jax

    from jaxcontact.cones import bundled_dir, newton, nsgs, read_problem

    B = 256
    rows = []
    fb = partial(newton, function="fischer_burmeister")
    for fname, solver, name in (
        ("Rover1039.dat", newton, "newton"),
        ("Rover1039.dat", fb, "newton-fb"),
        ("Rover1039.dat", partial(nsgs, iterations=1000), "nsgs"),
        # Not the proximal Newton on the box stack: under vmap every member runs its
        # hundreds of inner Newton steps until the slowest has converged.
        ("BoxesStack1-i100000-32.hdf5.dat", fb, "newton-fb"),
    ):
        p = read_problem(bundled_dir() / fname)
        qs, mus = perturbed(p, B)
        sic_t = min(
            float(sic[f"{p.name}/{s}/time8"])
            for s in ("NSGS", "NSN_AC", "NSN_FB")
            if int(sic[f"{p.name}/{s}/info8"]) == 0
        )
        for dtype in (np.float64, np.float32):
            tol = TOL if dtype == np.float64 else 1e-4
            fn = jax.jit(jax.vmap(lambda q, mu, W=p.W.astype(dtype), s=solver, tol=tol: s(W, q, mu, tol=tol)))
            sol, t, comp = timed(fn, qs.astype(dtype), mus.astype(dtype))
            rows.append(
                [
                    p.name,
                    p.nc,
                    name,
                    np.dtype(dtype).name,
                    B,
                    f"{float(np.mean(sol.converged)):.3f}",
                    f"{float(np.max(sol.residual)):.1e}",
                    f"{B / t:.0f}",
                    f"{1 / sic_t:.0f}",
                    f"{(B / t) * sic_t:.1f}",
                    "—" if np.isnan(comp) else f"{comp:.1f}",
                ]
            )
            print(rows[-1], flush=True)
    return common.markdown_table(
        [
            "problem",
            "nc",
            "solver",
            "dtype",
            "batch",
            "converged",
            "max error",
            "problems/s",
            "Siconos problems/s (fastest, 1 by 1)",
            "ratio",
            "compile s",
        ],
        rows,
    )


def part_scaling():
    import jax

    from jaxcontact.cones import GMRES, SparseLU, block_rows, bundled_dir, newton, nsgs, read_problem
    from jaxcontact.cones.problem import ContactProblem, dense_to_blocks

    probs = [read_problem(bundled_dir() / "Rover1039.dat"), read_problem(bundled_dir() / "Capsules-i100-889.dat")]
    if SHARED_FC2D.is_dir():
        from jaxcontact.lcp.fc2d_io import block_permutation, read_fc2d

        for f in sorted(SHARED_FC2D.glob("fc2d_granularflowonwall_0[02]*.dat")):
            pr = read_fc2d(f)
            inv = np.argsort(block_permutation(pr.mu.size))
            W = pr.W[np.ix_(inv, inv)]
            probs.append(ContactProblem(pr.name, W, pr.q[inv], pr.mu, dense_to_blocks(W, 2)))
    rows = []
    sweeps = 10
    sic = {}
    ref = ROOT / "tests" / "data" / "fc3d_siconos_reference.npz"
    if ref.is_file():
        sic = np.load(ref)
    for p in probs:
        blocks = p.blocks if p.blocks is not None else dense_to_blocks(p.W, p.dim)
        Wb = block_rows(blocks, p.nc)
        f_dense = jax.jit(lambda W, q, mu: nsgs(W, q, mu, iterations=sweeps, differentiation="unroll"))
        f_blocks = jax.jit(lambda W, q, mu: nsgs(W, q, mu, iterations=sweeps, differentiation="unroll"))
        _, td, _ = timed(f_dense, p.W, p.q, p.mu)
        _, tb, _ = timed(f_blocks, Wb, p.q, p.mu)
        if p.nc <= 300:
            f_newton = jax.jit(lambda W, q, mu: newton(W, q, mu, iterations=3, tol=0.0))
            _, tn, _ = timed(f_newton, p.W, p.q, p.mu)
            tn = f"{tn / 3 * 1e3:.2f}"
        else:
            tn = "—"
        f_krylov = jax.jit(lambda W, q, mu: newton(W, q, mu, iterations=3, tol=0.0, linear_solver=GMRES(30)))
        _, tk, _ = timed(f_krylov, Wb, p.q, p.mu)
        f_sparse = jax.jit(lambda W, q, mu: newton(W, q, mu, iterations=3, tol=0.0, linear_solver=SparseLU()))
        _, ts, _ = timed(f_sparse, Wb, p.q, p.mu)
        key = f"{p.name}/NSGS"
        sic_sweep = (
            f"{float(sic[key + '/time8']) / max(int(sic[key + '/iters8']), 1) * 1e3:.3f}"
            if f"{key}/time8" in getattr(sic, "files", ())
            else "—"
        )
        rows.append(
            [
                p.name,
                p.nc,
                p.dim,
                len(blocks.rows),
                f"{td / sweeps * 1e3:.3f}",
                f"{tb / sweeps * 1e3:.3f}",
                sic_sweep,
                tn,
                f"{tk / 3 * 1e3:.2f}",
                f"{ts / 3 * 1e3:.2f}",
            ]
        )
        print(rows[-1], flush=True)
    return common.markdown_table(
        [
            "problem",
            "nc",
            "d",
            "nonzero blocks",
            "NSGS sweep dense ms",
            "NSGS sweep block rows ms",
            "Siconos NSGS sweep ms",
            "Newton step (dense LU) ms",
            "Newton step (block rows, GMRES 30 × ≤ 4) ms",
            "Newton step (block rows, sparse LU) ms",
        ],
        rows,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="success,batch,scaling")
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument(
        "--siconos-from",
        type=Path,
        default=None,
        help="take Siconos' timings from a stored bench/peers/siconos/siconos_fc3d.py output instead of running it",
    )
    args = ap.parse_args()
    parts = args.parts.split(",")
    import jax

    jax.config.update("jax_enable_x64", True)
    from jaxcontact.cones import bundled_files

    info = common.machine_info()
    out = [
        f"## 3D frictional contact on cones vs Siconos 4.4 (`bench/peers/siconos/fc3d.py`) — {info['date_utc']}",
        "",
        common.machine_markdown(info),
        "",
    ]
    if args.siconos_from is not None:
        d = np.load(args.siconos_from)
        sic = {k: d[k] for k in d.files}
        out += [
            f"Siconos timings from `{args.siconos_from.name}` (bench/peers/siconos/siconos_fc3d.py, same machine, "
            "earlier the same day), not re-run.",
            "",
        ]
    elif "success" in parts or "batch" in parts:
        sic = siconos_run(bundled_files())
    else:
        sic = None
    if "success" in parts:
        for dtype, label in ((np.float64, "Siconos error ≤ 1e-8, float64"), (np.float32, "≤ 1e-4, float32")):
            table, summary = part_success(sic, dtype)
            out += [
                f"### Which solver solves which problem ({label})",
                "",
                summary,
                "",
                f"### Per problem and solver ({label})",
                "",
                table,
                "",
            ]
    if "solved-small" in parts:
        for dtype, label in ((np.float64, "≤ 1e-8, float64"), (np.float32, "≤ 1e-4, float32")):
            out += [
                f"### Small files (≤ {JACOBI_LARGE_NC} contacts, padded to one size): solved {label}",
                "",
                part_solved_small(dtype),
                "",
            ]
    if "batch" in parts:
        out += ["### Batched: 256 perturbed copies, vmapped, against Siconos one by one", "", part_batch(sic), ""]
    if "scaling" in parts:
        out += ["### Cost per sweep / Newton step against contact count", "", part_scaling(), ""]
    text = "\n".join(out)
    print(text)
    if not args.no_append:
        common.append_results(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

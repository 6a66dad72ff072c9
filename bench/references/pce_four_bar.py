"""Polynomial chaos against Monte Carlo on the four-bar linkage hitting a wall, and a chaospy cross-check.

    nice -n 10 python bench/references/pce_four_bar.py            # ~2–3 min on 2 cores; appends to bench/RESULTS.md
    python bench/references/pce_four_bar.py --no-append

The study: the four-bar of ``jaxcontact.models`` with uncertain restitution U(0.6, 0.95), wall distance
U(0.04, 0.08) m and bar-1 length l1 U(0.19, 0.21) m, 2 s at dt = 1e-3, Moreau–Jean with the projection
of resting contacts onto the wall (so the linkage rests *on* the wall and its final angle is
θ = arccos(−w / l1), a smooth function of w and l1 whose Sobol indices are computed here by quadrature
as an independent truth). Outcomes: the final angle (smooth) and the impact count (jumps).

1. Monte Carlo reference: a Saltelli design of ``--n-mc`` simulations (Sobol points), bootstrap 95 %
   intervals (``jaxcontact.studies.montecarlo.run_study``).
2. Polynomial chaos from ``--n-pce`` simulations (LHS) and gradient-enhanced from ``--n-grad``
   (``jaxcontact.studies.pce_study.run_pce_study``): indices inside the Monte Carlo intervals? Q²?
3. chaospy (an established PCE library) fitted by least squares on the same samples with the same
   total-degree Legendre basis: its indices against ours on that basis and against our sparse fit.

Writes ``tests/data/pce_four_bar.json`` (the Monte Carlo intervals, the quadrature truth and chaospy's
indices), which the fast tests read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
from common import BENCH_DIR, OUT_DIR, append_results, machine_info, machine_markdown, markdown_table  # noqa: E402

PARAMS = ("restitution=uniform(0.6,0.95)", "wall_distance=uniform(0.04,0.08)", "l1=uniform(0.19,0.21)")
OUTCOMES = ("final:bar1.theta", "impacts")
# 2 s: at 1 s, 79 of 10 000 samples with restitution near 0.95 were still bouncing, which leaves the
# final angle a (small) function of the restitution.
T_FINAL = 2.0
DATA = BENCH_DIR.parent / "tests" / "data" / "pce_four_bar.json"


def spec(n, sampler):
    from jaxcontact.models import get_model
    from jaxcontact.stepping.moreau_jean import MoreauJean
    from jaxcontact.stepping.projection import Projection
    from jaxcontact.studies.montecarlo import default_study

    return default_study(
        get_model("four-bar"),
        n=n,
        params=PARAMS,
        only=True,
        outcomes=OUTCOMES,
        sampler=sampler,
        seed=0,
        dt=1e-3,
        t_final=T_FINAL,
        scheme=MoreauJean(projection=Projection()),
    )


def quadrature_indices(names):
    """Sobol indices of θ = arccos(−w / l1) (restitution plays no part) by Gauss–Legendre quadrature."""
    x, wq = np.polynomial.legendre.leggauss(64)
    wq = wq / 2
    w = 0.06 + 0.02 * x
    l1 = 0.20 + 0.01 * x
    th = np.arccos(-w[:, None] / l1[None, :])
    W = wq[:, None] * wq[None, :]
    mean = np.sum(W * th)
    V = np.sum(W * (th - mean) ** 2)
    Vw = np.sum(wq * (th @ wq - mean) ** 2)
    Vl = np.sum(wq * (wq @ th - mean) ** 2)
    S1 = {"restitution": 0.0, "wall_distance": Vw / V, "l1": Vl / V}
    ST = {"restitution": 0.0, "wall_distance": 1 - Vl / V, "l1": 1 - Vw / V}
    return {k: {"S1": S1[k], "ST": ST[k]} for k in names}, float(mean), float(np.sqrt(V))


def chaospy_indices(x, y, order):
    import chaospy

    joint = chaospy.J(chaospy.Uniform(0.6, 0.95), chaospy.Uniform(0.04, 0.08), chaospy.Uniform(0.19, 0.21))
    expansion = chaospy.generate_expansion(order, joint, normed=True)
    model = chaospy.fit_regression(expansion, x.T, y)
    return np.asarray(chaospy.Sens_m(model, joint)), np.asarray(chaospy.Sens_t(model, joint))


def pce_samples() -> dict:
    """The plain PCE study's simulated samples (parameters and outcomes), for the fast tests to refit."""
    smp = np.load(OUT_DIR / "pce_four_bar_pce" / "samples.npz")
    names = [p.split("=")[0] for p in PARAMS]
    return {
        "names": names,
        "x": np.stack([smp[f"param:{k}"] for k in names], axis=1).tolist(),
        **{o: smp[f"out:{o}"].tolist() for o in OUTCOMES},
    }


def add_samples() -> None:
    """Add the PCE samples to an existing tests/data/pce_four_bar.json (written by main)."""
    data = json.loads(DATA.read_text())
    data["pce_samples"] = pce_samples()
    DATA.write_text(json.dumps(data, indent=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-mc", type=int, default=5_000)
    ap.add_argument("--n-pce", type=int, default=64)
    ap.add_argument("--n-grad", type=int, default=32)
    ap.add_argument("--chaospy-order", type=int, default=4)
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    import jax

    jax.config.update("jax_enable_x64", True)
    from jaxcontact.studies.montecarlo import run_study
    from jaxcontact.studies.pce import PCE, design_matrix, germs_of, multi_indices
    from jaxcontact.studies.pce_study import run_pce_study

    info = machine_info()
    t = time.perf_counter()
    mc = run_study(spec(args.n_mc, "sobol"), str(OUT_DIR / "pce_four_bar_mc"), progress=False, plot=False)
    t_mc = time.perf_counter() - t
    names = mc["study"]["uncertain"]
    truth, th_mean, th_std = quadrature_indices(names)
    res = {}
    for method, n in (("pce", args.n_pce), ("pce-grad", args.n_grad)):
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res[method] = run_pce_study(
                spec(n, "lhs"), str(OUT_DIR / f"pce_four_bar_{method}"), method=method, progress=False, plot=True
            )
        res[method]["_wall"] = time.perf_counter() - t
        res[method]["_warnings"] = [str(w.message) for w in caught if "polynomial chaos" in str(w.message)]

    # The PCE samples: every one at rest on the wall?
    smp = np.load(OUT_DIR / "pce_four_bar_pce" / "samples.npz")
    x = np.stack([smp[f"param:{k}"] for k in names], axis=1)
    theta = smp["out:final:bar1.theta"]
    rest_dev = float(np.max(np.abs(theta - np.arccos(-x[:, 1] / x[:, 2]))))
    smc = np.load(OUT_DIR / "pce_four_bar_mc" / "samples.npz")
    rest_dev_mc = float(
        np.max(np.abs(smc["out:final:bar1.theta"] - np.arccos(-smc["param:wall_distance"] / smc["param:l1"])))
    )

    # chaospy and our own least squares on the same total-degree basis and samples.
    t = time.perf_counter()
    cS1, cST = chaospy_indices(x, theta, args.chaospy_order)
    t_cp = time.perf_counter() - t
    from jaxcontact.studies.distributions import ParamSpace

    germs = germs_of(ParamSpace.parse(PARAMS))
    xi = np.stack([g.to_standard(x[:, j]) for j, g in enumerate(germs)], axis=1)
    alphas = multi_indices(3, args.chaospy_order)
    coef = np.linalg.lstsq(design_matrix(germs, alphas, xi), theta, rcond=None)[0]
    oS1, oST = PCE(germs, alphas, coef, 0.0, 0.0, args.chaospy_order, 1.0, len(theta), False).sobol()

    rows = []
    for j, k in enumerate(names):
        m = mc["outcomes"]["final:bar1.theta"]["sobol"]["indices"][k]
        row = [
            k,
            f"{truth[k]['S1']:.4f} / {truth[k]['ST']:.4f}",
            f"{m['S1']:.4f} [{m['S1_ci'][0]:.4f}, {m['S1_ci'][1]:.4f}] / {m['ST']:.4f} [{m['ST_ci'][0]:.4f}, "
            f"{m['ST_ci'][1]:.4f}]",
        ]
        for method in ("pce", "pce-grad"):
            p = res[method]["outcomes"]["final:bar1.theta"]["sobol"]["indices"][k]
            # Widened by 1e-12: an index that is 0 up to rounding has a rounding-sized interval.
            inside = (
                m["S1_ci"][0] - 1e-12 <= p["S1"] <= m["S1_ci"][1] + 1e-12
                and m["ST_ci"][0] - 1e-12 <= p["ST"] <= m["ST_ci"][1] + 1e-12
            )
            row.append(f"{p['S1']:.4f} / {p['ST']:.4f} ({'inside' if inside else 'OUTSIDE'})")
        row.append(f"{cS1[j]:.5f} / {cST[j]:.5f} (ours, same basis: {oS1[j]:.5f} / {oST[j]:.5f})")
        rows.append(row)
    q2 = {m: {o: res[m]["outcomes"][o]["pce"]["q2"] for o in OUTCOMES} for m in res}
    data = {
        "description": "four-bar against the wall; see bench/references/pce_four_bar.py",
        "params": list(PARAMS),
        "outcomes": list(OUTCOMES),
        "dt": 1e-3,
        "t_final": T_FINAL,
        "rest_deviation": {"mc": rest_dev_mc, "pce": rest_dev},
        "n_mc": mc["failures"]["n_samples"],
        "mc": {o: mc["outcomes"][o]["sobol"] for o in OUTCOMES},
        "mc_moments": {o: {"mean": mc["outcomes"][o]["mean"], "std": mc["outcomes"][o]["std"]} for o in OUTCOMES},
        "quadrature": {"indices": truth, "mean": th_mean, "std": th_std},
        "chaospy": {
            "version": __import__("chaospy").__version__,
            "order": args.chaospy_order,
            "n_samples": int(len(theta)),
            "sampler": "lhs",
            "seed": 0,
            "S1": cS1.tolist(),
            "ST": cST.tolist(),
        },
        "pce_samples": pce_samples(),
    }
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1))
    section = "\n".join(
        [
            "## Polynomial chaos vs Monte Carlo on the four-bar (`bench/references/pce_four_bar.py`) — "
            + info["date_utc"],
            "",
            machine_markdown(info),
            "",
            f"Uncertain restitution U(0.6, 0.95), wall distance U(0.04, 0.08) m, l1 U(0.19, 0.21) m; {T_FINAL:g} s "
            "at dt = 1e-3, "
            "Moreau–Jean with resting contacts projected onto the wall. Final angle θ (smooth; at rest θ = "
            "arccos(−w/l1), "
            f"largest deviation over the PCE samples {rest_dev:.1e} rad, over the Monte Carlo ones {rest_dev_mc:.1e}) "
            "and impact count (jumps).",
            "",
            f"- Monte Carlo: {mc['failures']['n_samples']} simulations (Saltelli, Sobol points, bootstrap 95 % "
            "intervals), "
            f"{t_mc:.0f} s wall.",
            f"- PCE: {args.n_pce} simulations (LHS), {res['pce']['_wall']:.0f} s wall; gradient-enhanced: "
            f"{args.n_grad} "
            f"simulations with jacfwd gradients, {res['pce-grad']['_wall']:.0f} s wall (compilation included).",
            f"- Simulations: {mc['failures']['n_samples'] / args.n_pce:.0f}× fewer (PCE), "
            f"{mc['failures']['n_samples'] / args.n_grad:.0f}× fewer (gradient-enhanced).",
            f"- Cross-validated Q²: {json.dumps({m: {o: round(v, 4) for o, v in d.items()} for m, d in q2.items()})}; "
            f"unreliable-fit warnings: pce {len(res['pce']['_warnings'])}, pce-grad "
            f"{len(res['pce-grad']['_warnings'])} "
            f"({'; '.join(w.split(':')[0] for w in res['pce']['_warnings'] + res['pce-grad']['_warnings'])}).",
            f"- chaospy {data['chaospy']['version']}: least squares on the total-degree-{args.chaospy_order} Legendre "
            f"basis, the {len(theta)} PCE samples, {t_cp:.0f} s.",
            "",
            markdown_table(
                [
                    "parameter",
                    "quadrature S1 / ST",
                    "Monte Carlo S1 [95 %] / ST [95 %]",
                    "PCE S1 / ST",
                    "PCE-grad S1 / ST",
                    "chaospy S1 / ST",
                ],
                rows,
            ),
            "",
            "Impact count, Monte Carlo vs PCE (the PCE ones are flagged unreliable): "
            + json.dumps(
                {
                    k: {
                        "mc_ST": round(mc["outcomes"]["impacts"]["sobol"]["indices"][k]["ST"], 3),
                        "pce_ST": round(res["pce"]["outcomes"]["impacts"]["sobol"]["indices"][k]["ST"], 3),
                    }
                    for k in names
                }
            ),
        ]
    )
    print(section)
    if not args.no_append:
        append_results(section)


if __name__ == "__main__":
    sys.exit(main())

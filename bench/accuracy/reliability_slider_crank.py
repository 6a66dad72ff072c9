"""The probability that the clearance slider–crank's peak journal force exceeds a threshold: subset simulation,
FORM and importance sampling against plain Monte Carlo, through the command line (``jaxcontact mc``).

    nice -n 10 python bench/accuracy/reliability_slider_crank.py                 # appends to bench/RESULTS.md
    python bench/accuracy/reliability_slider_crank.py --n-mc 2000 --no-append     # a quick look

The model's default study (compliant journal, penalty scheme; uncertain clearance, restitution, friction and
crank speed) over ``--t-final`` seconds; failure when ``peak_force`` exceeds ``--threshold`` newtons. Plain Monte
Carlo with ``--n-mc`` samples is the reference; each method's estimate, standard error, simulations and wall
time go into one table, with the distance to the Monte Carlo estimate in combined standard errors. The runs'
folders stay under bench/out/reliability_slider_crank/ (rerunning resumes them).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
from common import OUT_DIR, append_results, machine_info, machine_markdown, markdown_table  # noqa: E402


def run(method: str, args, extra: list[str]) -> tuple[dict, float]:
    out = OUT_DIR / "reliability_slider_crank" / method
    cmd = [sys.executable, "-m", "jaxcontact.cli", "mc", "slider-crank-clearance", "--t-final", str(args.t_final),
           "--limit", f"peak_force>{args.threshold:g}", "--method", method, "--out", str(out), "--quiet",
           "--no-plots", *extra]  # fmt: skip
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    print(done.stdout, flush=True)
    return json.loads((out / "summary.json").read_text()), wall


def _own(r: dict) -> str:
    if r.get("beta") is not None:
        return f"β = {r['beta']:.3f}" + ("" if r.get("converged", True) else ", FORM did not converge")
    return f"{r['levels']} levels" if "levels" in r else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", type=float, default=30000.0)
    ap.add_argument("--t-final", type=float, default=0.03)
    ap.add_argument("--n-mc", type=int, default=20000)
    ap.add_argument("--n-subset", type=int, default=1000)
    ap.add_argument("--n-importance", type=int, default=1000)
    ap.add_argument("--methods", default="mc,subset,form,importance")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    info = machine_info()
    extras = {
        "mc": ["--n", str(args.n_mc), "--no-sobol"],
        "subset": ["--n", str(args.n_subset)],
        "form": [],
        "importance": ["--n", str(args.n_importance)],
    }
    results = {}
    for method in args.methods.split(","):
        summary, wall = run(method, args, extras[method])
        results[method] = (summary["reliability"], summary["failures"], wall, summary["timing"])
    ref = results.get("mc", (None,))[0]
    rows = []
    for method, (r, fail, wall, timing) in results.items():
        se = r["standard_error"] or 0.0
        if ref is not None and method != "mc":
            combined = math.hypot(se, ref["standard_error"] or 0.0)
            off = f"{(r['probability'] - ref['probability']) / combined:+.2f}" if combined > 0 else "n/a"
        else:
            off = "—"
        rows.append(
            [
                method,
                f"{r['probability']:.4g}",
                f"{se:.2g}" if se else "none (an approximation)",
                f"{r['cov']:.2f}" if r["cov"] else "—",
                str(r["n_simulations"]),
                off,
                f"{wall:.0f}",
                f"{timing['compile_seconds']:.0f}",
                str(fail["n_failed"]),
                _own(r),
            ]
        )
    section = "\n".join(
        [
            f"## Failure probability of the clearance slider–crank's peak journal force "
            f"(`bench/accuracy/reliability_slider_crank.py`, issue 34) — {info['date_utc']}",
            "",
            machine_markdown(info),
            "",
            f"`jaxcontact mc slider-crank-clearance --t-final {args.t_final:g} --limit 'peak_force>{args.threshold:g}' "
            f"--method …` (the model's default study: compliant journal, penalty scheme, uncertain clearance, "
            f"restitution, friction and crank speed). Off by: (estimate − Monte Carlo) / combined standard error.",
            "",
            markdown_table(
                [
                    "method",
                    "P_f",
                    "standard error",
                    "c.o.v.",
                    "simulations",
                    "off by",
                    "wall s",
                    "compile s",
                    "simulations not converged",
                    "method's own",
                ],
                rows,
            ),  # fmt: skip
        ]
    )
    print(section)
    if not args.no_append:
        append_results(section)


if __name__ == "__main__":
    main()

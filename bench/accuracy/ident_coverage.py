"""Coverage of identify's 95 % intervals: R noisy repetitions per case, how many intervals contain the truth.

    python bench/accuracy/ident_coverage.py [ball block four-bar] [--reps 20] [--impact-location interpolated|step]
                                   [--data-refine 4]

Noise: Gaussian, sd 1 % of the observed signal's standard deviation, known to the fit (noise=σ).
Plain settings: L-BFGS from a guess 20 % off, 50 iterations, no grid start; the interval is the
one identify reports (Laplace when the loss along the parameter agrees, else read from the loss).
Data: simulated at the fit's step divided by ``--data-refine`` (data that do not come from the fitting
model), sampled at the fit's step; both with ``--impact-location`` (the fit's Moreau–Jean option).
"""

import argparse
import os
import platform
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
# Every repetition builds the same programs (the data are arguments): compile them once, on disk.
jax.config.update(
    "jax_compilation_cache_dir",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out", "jax_cache"),
)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import MoreauJean  # noqa: E402
from jaxcontact.studies.identify import coordinates, fit  # noqa: E402

CASES = {  # model, overrides, fitted name, bounds, record length (s), step (s)
    "ball": (
        "bouncing-ball",
        {"restitution": 0.73, "radius": 0.1, "height": 1.3},
        "restitution",
        (0.05, 0.99),
        2.0,
        4e-3,
    ),
    "block": ("sliding-block", {}, "friction", (0.05, 2.0), 0.3, 1e-3),
    "four-bar": ("four-bar", {}, "restitution", (0.05, 0.99), 1.0, 1e-2),
}


def run(case, reps, location, refine):
    name, over, par, bounds, t_final, dt = CASES[case]
    model = get_model(name, **over)
    scheme = MoreauJean(impact_location=location)
    q0, u0 = model.initial_state(model.params)
    tr = simulate(
        model.system, model.params, q0, u0, dt=dt / refine, n_steps=int(round(t_final / dt)) * refine + 1, scheme=scheme
    )
    t, clean = np.asarray(tr.t)[::refine], np.asarray(tr.q)[::refine]
    sigma = 0.01 * clean.std(axis=0).mean()
    truth = float(model.params[par])
    rng = np.random.default_rng(0)
    hits, methods, t0 = 0, [], time.perf_counter()
    for r in range(reps):
        y = clean + sigma * rng.standard_normal(clean.shape)
        res = fit(
            model,
            t,
            y,
            (par,),
            {par: 0.8 * truth},
            {par: bounds},
            observe=coordinates(),
            dt=dt,
            steps=50,
            noise=sigma,
            seed=r,
            scheme=scheme,
        )
        lo, hi = res.interval95[par]
        hits += lo < truth < hi
        methods.append(res.interval_method[par])
        print(
            f"  {case} {r:2d}: {res.estimates[par]:.6f} [{lo:.6f}, {hi:.6f}] {res.interval_method[par]}"
            f"{'' if lo < truth < hi else '  MISS'}  ({res.wall_time:.0f} s, {time.strftime('%H:%M')}, "
            f"load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    print(
        f"{case} (impacts: {location}, data at dt/{refine}): truth {par} = {truth}, {hits}/{reps} intervals contain "
        f"it (laplace {methods.count('laplace')}, "
        f"profile {methods.count('profile')}); {time.perf_counter() - t0:.0f} s on {platform.machine()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=list(CASES), choices=list(CASES))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--impact-location", choices=("interpolated", "step"), default="interpolated")
    ap.add_argument("--data-refine", type=int, default=4, help="data simulated at the fit's step / this")
    a = ap.parse_args()
    for c in a.cases:
        run(c, a.reps, a.impact_location, a.data_refine)

"""The bouncing ball's restitution fitted with impacts on the step grid or located inside the step.

    python bench/ident_located.py [--t-final 6]

The ball of the identification issue (ε = 0.73, r = 0.1 m, from 1.3 m), fitted at h = 4 ms over
``--t-final`` seconds with L-BFGS (50 iterations from ε = 0.6, plain settings), noise-free, on data
simulated by the project at h = 4 ms and at h = 0.4 ms (sampled every 4 ms), with either impact law.
Prints one row per (data, fit) pair: estimate, the reported 95 % interval and how it was read.
"""

import argparse
import platform
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import MoreauJean  # noqa: E402
from jaxcontact.studies.identify import coordinates, fit  # noqa: E402

H = 4e-3
ROWS = ((4e-3, "interpolated", "interpolated"), (4e-4, "interpolated", "interpolated"),
        (4e-4, "step", "interpolated"), (4e-3, "step", "interpolated"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-final", type=float, default=6.0)
    a = ap.parse_args()
    m = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)
    q0, u0 = m.initial_state(m.params)
    print(f"# {platform.machine()}, {time.strftime('%Y-%m-%d %H:%M')}, float64, record {a.t_final} s, fit at h = {H}")
    print("| data step | data impacts | fit impacts | estimate | 95 % interval | method | loss | wall |")
    print("|---|---|---|---|---|---|---|---|")
    for h_data, data_law, fit_law in ROWS:
        every = int(round(H / h_data))
        tr = simulate(m.system, m.params, q0, u0, dt=h_data, n_steps=int(round(a.t_final / h_data)) + 1,
                      scheme=MoreauJean(impact_location=data_law))
        t, y = np.asarray(tr.t)[::every], np.asarray(tr.q[:, 0])[::every]
        t0 = time.perf_counter()
        r = fit(m, t, y, ("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)},
                observe=coordinates(0), dt=H, steps=50, scheme=MoreauJean(impact_location=fit_law))
        lo, hi = r.interval95["restitution"]
        print(f"| {h_data:g} s | {data_law} | {fit_law} | {r.estimates['restitution']:.8f} | [{lo:.8f}, {hi:.8f}] | "
              f"{r.interval_method['restitution']} | {r.loss:.3g} | {time.perf_counter() - t0:.0f} s |", flush=True)


if __name__ == "__main__":
    main()

"""The bouncing ball's restitution fitted with impacts on the step grid or located inside the step.

    python bench/accuracy/ident_located.py [--t-final 6] [--four-bar]

The ball of the identification issue (ε = 0.73, r = 0.1 m, from 1.3 m), fitted at h = 4 ms over
``--t-final`` seconds with L-BFGS (50 iterations from ε = 0.6, plain settings), noise-free, on data
simulated by the project at h = 4 ms and at h = 0.4 ms (sampled every 4 ms), with either impact law;
the fit's model with or without resting contacts projected after every step (``Projection``: what
``identify`` does by default). Prints one row per (data, fit) pair: estimate, the reported 95 %
interval and how it was read. ``--rows`` picks rows by their index (default all).
``--four-bar``: instead, the four-bar's motion over 1 s at h = 10 ms with either impact law against
located impacts at h = 0.1 ms (max and rms difference over all coordinates at the 10 ms samples).
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
from jaxcontact.stepping.projection import Projection  # noqa: E402
from jaxcontact.studies.identify import coordinates, fit  # noqa: E402

H = 4e-3
ROWS = (
    (4e-3, "interpolated", "interpolated", False),
    (4e-4, "interpolated", "interpolated", False),
    (4e-4, "step", "interpolated", False),
    (4e-3, "step", "interpolated", False),
    (4e-4, "interpolated", "interpolated", True),
    (4e-3, "interpolated", "interpolated", True),
)


def four_bar_motion(t_final=1.0):
    """Max and rms difference of the four-bar's q at h = 10 ms (each impact law) from located h = 0.1 ms."""
    m = get_model("four-bar")
    q0, u0 = m.initial_state(m.params)
    run = lambda h, law: np.asarray(
        simulate(
            m.system,
            m.params,
            q0,
            u0,
            dt=h,
            n_steps=int(round(t_final / h)) + 1,  # noqa: E731
            scheme=MoreauJean(impact_location=law, diagnostics=False),
        ).q
    )
    ref = run(1e-4, "interpolated")[::100]
    for law in ("step", "interpolated"):
        d = run(1e-2, law)[: len(ref)] - ref  # both at t = 0, 10 ms, …
        print(f"four-bar, h = 10 ms, impacts {law}: max {np.max(np.abs(d)):.3g}, rms {np.sqrt(np.mean(d**2)):.3g}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-final", type=float, default=6.0)
    ap.add_argument("--four-bar", action="store_true")
    ap.add_argument("--rows", type=int, nargs="*", default=list(range(len(ROWS))))
    a = ap.parse_args()
    if a.four_bar:
        four_bar_motion()
        return
    m = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)
    q0, u0 = m.initial_state(m.params)
    print(f"# {platform.machine()}, {time.strftime('%Y-%m-%d %H:%M')}, float64, record {a.t_final} s, fit at h = {H}")
    print(
        "| data step | data impacts | fit impacts | fit resting contacts | estimate | 95 % interval | method | loss "
        "| wall |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for h_data, data_law, fit_law, projected in (ROWS[i] for i in a.rows):
        every = int(round(H / h_data))
        tr = simulate(
            m.system,
            m.params,
            q0,
            u0,
            dt=h_data,
            n_steps=int(round(a.t_final / h_data)) + 1,
            scheme=MoreauJean(impact_location=data_law),
        )
        t, y = np.asarray(tr.t)[::every], np.asarray(tr.q[:, 0])[::every]
        t0 = time.perf_counter()
        r = fit(
            m,
            t,
            y,
            ("restitution",),
            {"restitution": 0.6},
            {"restitution": (0.05, 0.99)},
            observe=coordinates(0),
            dt=H,
            steps=50,
            scheme=MoreauJean(impact_location=fit_law, projection=Projection() if projected else False),
        )
        lo, hi = r.interval95["restitution"]
        print(
            f"| {h_data:g} s | {data_law} | {fit_law} | {'projected' if projected else 'as stepped'} | "
            f"{r.estimates['restitution']:.8f} | [{lo:.8f}, {hi:.8f}] | "
            f"{r.interval_method['restitution']} | {r.loss:.3g} | {time.perf_counter() - t0:.0f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Spatial slider–crank with a clearance ball joint: peaks against the clearance, rigid and compliant, and step rates.

    PYTHONPATH=. python bench/accuracy/spatial_slider_crank.py [--t-final 0.0314] [--dt 5e-6]

One crank turn at 200 rad/s for each clearance, batched per variant (one compile each): the rigid ball
(Moreau–Jean, Newton impacts) and the compliant ball (penalty, Hertz + Hunt–Crossley matched to ε), the
slider's largest departure from the ideal mechanism's closed-form path, and the time per step. Prints a
Markdown table for bench/RESULTS.md.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.stepping import MoreauJean, Penalty  # noqa: E402
from jaxcontact.studies.montecarlo import make_evaluator  # noqa: E402
from jaxcontact.studies.outcomes import outcome  # noqa: E402

CLEARANCES = (5e-4, 2.5e-4, 1e-4, 5e-5, 2e-5)
NAMES = (
    "peak_impulse",
    "peak_force",
    "peak_accel:slider.vx",
    "impacts",
    "free_flight",
    "max:eccentricity",
    "series:slider.x",
)


def ideal_x(p, t):
    th = float(p["omega"]) * t
    l1, l2, oy, oz = (float(p[k]) for k in ("l1", "l2", "offset_y", "offset_z"))
    return np.sqrt(l2**2 - (oy - l1 * np.cos(th)) ** 2 - (oz - l1 * np.sin(th)) ** 2)


def run(contact, scheme, dt, t_final):
    m = get_model("spatial-slider-crank", contact=contact)
    n = int(round(t_final / dt))
    save = 20
    outs = [outcome(k, m.system, dt=dt, observables=m.observables, save_every=save) for k in NAMES]
    f = jax.jit(jax.vmap(make_evaluator(m, outs, dt=dt, n_steps=n, scheme=scheme, save_every=save)))
    x = {"clearance": jnp.asarray(CLEARANCES)}
    t0 = time.perf_counter()
    f.lower(x).compile()
    t1 = time.perf_counter()
    r = jax.block_until_ready(f(x))
    t2 = time.perf_counter()
    r = {k: np.asarray(v) for k, v in r.items()}
    t = dt * np.arange(n + 1)[::save]
    r["deviation"] = np.max(np.abs(r["series:slider.x"] - ideal_x(m.params, t)[None]), axis=1)
    return r, t1 - t0, t2 - t1, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-final", type=float, default=0.0314)
    ap.add_argument("--dt", type=float, default=5e-6)
    a = ap.parse_args()
    print(f"one turn: t_final = {a.t_final} s, dt = {a.dt} s, clearances {CLEARANCES} (batched)")
    print(
        "| variant | clearance [mm] | peak impulse [N·s] | peak force [N] | peak slider acc. [m/s²] | impacts | "
        "free flight | max ecc. [mm] | slider vs ideal [mm] |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rates = []
    for contact, scheme in (("rigid", MoreauJean()), ("compliant", Penalty())):
        r, comp, wall, n = run(contact, scheme, a.dt, a.t_final)
        assert np.all(r["converged"]) and np.all(r["state_finite"])
        for i, c in enumerate(CLEARANCES):
            print(
                f"| {contact} | {c * 1e3:g} | {r['peak_impulse'][i]:.3g} | {r['peak_force'][i]:.3g} | "
                f"{r['peak_accel:slider.vx'][i]:.3g} | {int(r['impacts'][i])} | {r['free_flight'][i]:.2f} | "
                f"{r['max:eccentricity'][i] * 1e3:.3f} | {r['deviation'][i] * 1e3:.3f} |"
            )
        rates.append((contact, comp, wall, n * len(CLEARANCES) / wall))
    for contact, comp, wall, rate in rates:
        print(f"{contact}: compile {comp:.1f} s, run {wall:.1f} s, {rate:.3g} env-steps/s (batch {len(CLEARANCES)})")


if __name__ == "__main__":
    main()

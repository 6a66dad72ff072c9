"""Forward- against reverse-mode loss gradients of an identification fit: compile time, memory, run time.

    python bench/perf/ident_gradient.py [--gradient forward|reverse] [--fit-steps 50] [--case four-bar|ball]

One process per mode (so its peak RSS is its own). The case is the coverage study's four-bar
restitution fit (``bench/accuracy/ident_coverage.py``: located impacts, h = 10 ms, 1 s, data simulated at
h/4 with 1 % noise, guess 20 % off). Prints, as one JSON line:

* ``vg_compile_s``, ``vg_run_s``: the loss's ``value_and_grad`` alone (what optax calls), jitted —
  first call minus steady state, and the steady state;
* ``vg_temp_bytes``: XLA's temporary buffer size of that compiled function (reverse mode stores the
  steps for the transpose);
* ``fit_s`` (with ``--fit-steps N`` > 0): the whole ``fit`` (L-BFGS, N iterations, the interval
  check), compile included;
* ``peak_rss_gb``: the process's peak resident memory at the end;
* ``grad_diff`` (reverse run): max |forward − reverse| of the gradient at the guess.
"""

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

BENCH_DIR = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR / "accuracy")]  # common.py; ident_coverage.py, whose case this times
from common import time_call  # noqa: E402
from ident_coverage import CASES  # noqa: E402

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import MoreauJean  # noqa: E402
from jaxcontact.studies.identify import coordinates, fit, forward_gradient, make_residuals  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradient", choices=("forward", "reverse"), default="forward")
    ap.add_argument("--fit-steps", type=int, default=0)
    ap.add_argument("--case", choices=("four-bar", "ball"), default="four-bar")
    a = ap.parse_args()
    name, over, par, bounds, t_final, dt = CASES[a.case]
    model = get_model(name, **over)
    scheme = MoreauJean(impact_location="interpolated")
    q0, u0 = model.initial_state(model.params)
    tr = simulate(
        model.system, model.params, q0, u0, dt=dt / 4, n_steps=int(round(t_final / dt)) * 4 + 1, scheme=scheme
    )
    t, clean = np.asarray(tr.t)[::4], np.asarray(tr.q)[::4]
    sigma = 0.01 * clean.std(axis=0).mean()
    y = clean + sigma * np.random.default_rng(0).standard_normal(clean.shape)
    truth = float(model.params[par])

    res = make_residuals(model, t, coordinates(), (par,), scheme=scheme, dt=dt)
    loss = lambda th: jnp.mean(res(th, y, 1.0) ** 2)  # noqa: E731
    th = jnp.array([0.8 * truth])
    f = forward_gradient(loss) if a.gradient == "forward" else loss
    vg = jax.jit(jax.value_and_grad(f))
    timing = time_call(vg, th, min_repeats=3, max_repeats=5, min_total_s=0.0)
    temp = vg.lower(th).compile().memory_analysis()
    g = np.asarray(vg(th)[1])
    # The forward-mode gradient is cheap next to the reverse one: computed in the reverse run only, so the
    # forward run's peak memory is its own.
    other = jax.jit(jax.grad(forward_gradient(loss)))(th) if a.gradient == "reverse" else None

    out = {}
    if a.fit_steps:
        t0 = time.perf_counter()
        r = fit(
            model,
            t,
            y,
            (par,),
            {par: 0.8 * truth},
            {par: bounds},
            observe=coordinates(),
            dt=dt,
            steps=a.fit_steps,
            noise=sigma,
            scheme=scheme,
            gradient=a.gradient,
        )
        out = {
            "fit_s": round(time.perf_counter() - t0, 1),
            "estimate": r.estimates[par],
            "interval": list(r.interval95[par]),
            "method": r.interval_method[par],
        }
    print(
        json.dumps(
            {
                "case": a.case,
                "gradient": a.gradient,
                "fit_steps": a.fit_steps,
                "vg_compile_s": round(timing.compile_s, 2),
                "vg_run_s": round(timing.steady_s, 4),
                "vg_temp_bytes": None if temp is None else int(temp.temp_size_in_bytes),
                "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
                "grad_diff": None if other is None else float(np.max(np.abs(g - np.asarray(other)))),
                "grad": g.tolist(),
                "load": os.getloadavg()[0],
                "date": time.strftime("%Y-%m-%d %H:%M"),
            }
            | out
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()

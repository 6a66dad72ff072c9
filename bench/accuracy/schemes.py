"""Cost and accuracy of the time-stepping schemes on the slider–bar of the 2015 LCP paper.

    nice -n 10 /work/venv/bin/python bench/accuracy/schemes.py            # ~4 min on 2 busy cores
    /work/venv/bin/python bench/accuracy/schemes.py --no-append --t-final 0.5

Schemes: the event-driven acceleration-level scheme (compliant corners,
stick–slip LCP), the penalty/ODE scheme (compliant corners, regularized
exponential friction of width v_r = 1e-3 and 1e-4 m/s) with fixed-step RK4 and with
adaptive Tsit5 (diffrax; output step 0.01 s, the error set by rtol, its step the mean
accepted one), and Moreau–Jean (θ = 0.5, rigid corners, ε = 0: it refuses
compliant contacts). Moreau–Jean's LCP and the regularized laws have no static friction,
so the case is μ0 = μ = 0.2 for every scheme (e = 0.1 m, the model's other values).

Accuracy, on x_C1(t) sampled every 0.01 s over [0, t_final]: each scheme's
discretisation error is max |x(h) − x(h_finest)| against its own finest setting, and
its model bias is max |x(h_finest) − x_ref| against the reference, the event-driven
scheme at h = 1e-4 s (its own finest). The penalty and Moreau–Jean schemes converge
to their own models (regularized friction; rigid corners), not to the reference.
"Step needed": the largest step whose discretisation error is ≤ each ``--tol``
(0.1 mm and 10 µm); for first-order schemes the error against the own finest step
underestimates the true one by the factor 1 − h_finest/h.
Cost: the steady-state wall time (median of 3) of one unbatched run per simulated
second, compile apart. Schemes that offer ``diagonal_mass`` use it (planar M is
diagonal); EventDriven has no such option.
"""

from __future__ import annotations

import argparse
import os
import sys

# The repository root: bench.common, and this tree's jaxcontact before an installed one.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.common import append_results, machine_info, machine_markdown, markdown_table, time_call  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-final", type=float, default=1.0)
    ap.add_argument(
        "--tol", type=float, nargs="+", default=[1e-4, 1e-5], help="discretisation error tolerances on x_C1 [m]"
    )
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.models import slider_bar
    from jaxcontact.simulate import n_steps_for, simulate
    from jaxcontact.stepping import MoreauJean
    from jaxcontact.stepping.event_driven import EventDriven
    from jaxcontact.stepping.penalty import Penalty

    info = machine_info()
    grid = 0.01  # comparison grid [s]
    m = slider_bar.model(static_friction=0.2)
    rigid_system, _ = slider_bar.mechanism(compliant=False).build({**slider_bar.DEFAULTS, "restitution": 0.0})
    q0, u0 = m.initial_state(m.params)
    lift = 0.5 * m.params["height"] - q0[1]  # rigid corners start on the floor, not in it
    q0_rigid = q0.at[1].add(lift).at[4].add(lift)
    rigid_params = {**m.params, "restitution": jnp.asarray(0.0)}

    def run(scheme, system, params, q, dt):
        """x_C1 on the comparison grid, the mean step (inner steps for adaptive schemes), timing."""
        n = n_steps_for(dt, args.t_final)
        every = max(1, int(round(grid / dt)))

        @jax.jit
        def fn(p, q0_, u0_):
            tr = simulate(system, p, q0_, u0_, dt=dt, n_steps=n, scheme=scheme, save_every=every)
            return tr.q[:, 0], jnp.sum(tr.diagnostics.iterations[1:])  # Tsit5 (every = 1): accepted steps

        out = {}

        def keep(*a):
            out["x"], out["steps"] = fn(*a)
            return out["x"]

        timing = time_call(keep, params, q, u0, min_repeats=3, max_repeats=3, min_total_s=0.0)
        adaptive = getattr(scheme, "method", "rk4") != "rk4"
        return np.asarray(out["x"]), args.t_final / int(out["steps"]) if adaptive else dt, timing

    # (name, scheme for a setting, system, params, q0, output step for a setting, settings: finest last).
    cases = [
        (
            "event-driven (F3)",
            lambda h: EventDriven(),
            m.system,
            m.params,
            q0,
            lambda h: h,
            (1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4),
        )
    ]
    for width in (1e-3, 1e-4):
        params = {**m.params, "slip_width": jnp.asarray(width)}
        cases.append(
            (
                f"penalty RK4 (F4), v_r = {width:g}",
                lambda h: Penalty(diagonal_mass=True),
                m.system,
                params,
                q0,
                lambda h: h,
                (5e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4),
            )
        )
        cases.append(
            (
                f"penalty Tsit5 (F4), v_r = {width:g}",
                lambda rtol: Penalty(diagonal_mass=True, method="tsit5", rtol=rtol, atol=1e-3 * rtol),
                m.system,
                params,
                q0,
                lambda rtol: grid,
                (1e-2, 1e-3, 1e-4, 1e-6, 1e-8),
            )
        )
    cases.append(
        (
            "Moreau–Jean (F1), rigid",
            lambda h: MoreauJean(diagonal_mass=True),
            rigid_system,
            rigid_params,
            q0_rigid,
            lambda h: h,
            (5e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4),
        )
    )

    rows, needed, ref = [], [], None
    for name, make, system, params, q, output_step, settings in cases:
        runs = []
        for setting in settings:
            x, step, timing = run(make(setting), system, params, q, output_step(setting))
            runs.append((setting, x, step, timing.steady_s / args.t_final, timing.compile_s))
            print(
                f"{name:38s} {setting:8g}: h = {step:8.3g}  {runs[-1][3] * 1e3:9.1f} ms per simulated s  "
                f"compile {timing.compile_s:.1f} s",
                flush=True,
            )
        finest = runs[-1][1]
        ref = finest if ref is None else ref  # the first case, event-driven, at its finest step
        bias = float(np.max(np.abs(finest - ref)))
        errors = []
        for setting, x, step, per_s, compile_s in runs:
            errors.append(float(np.max(np.abs(x - finest))) if np.all(np.isfinite(x)) else float("inf"))
            label = f"{name}, rtol = {setting:g}" if "Tsit5" in name else name
            rows.append([label, f"{step:.3g}", errors[-1], per_s * 1e3, compile_s])
        row = [name]
        for tol in args.tol:  # the coarsest setting (finest excluded: its error is 0 by definition) within tol
            ok = [(r[2], r[3]) for r, err in zip(runs[:-1], errors) if err <= tol]
            row += [f"{ok[0][0]:.3g}", ok[0][1] * 1e3] if ok else [f"< {runs[-2][2]:.3g}", "—"]
        needed.append(row + [bias])

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    section = "\n\n".join(
        [
            "## Schemes on the slider–bar (`bench/accuracy/schemes.py`)",
            machine_markdown(
                info,
                {
                    "Load average at end": ", ".join(f"{x:.2f}" for x in load),
                    "Case": f"slider–bar, e = 0.1 m, μ0 = μ = 0.2, t_final = {args.t_final} s, "
                    f"batch 1, float64; reference: event-driven at h = 1e-4 s",
                },
            ),
            markdown_table(
                [
                    "scheme",
                    "h (Tsit5: mean accepted) [s]",
                    "error vs own finest [m]",
                    "ms per simulated s",
                    "compile s",
                ],
                rows,
            ),
            "Errors are max over the 0.01 s grid of the absolute difference in x_C1. Largest step whose "
            "discretisation error is within each tolerance, its cost, and the scheme's model bias (its finest "
            "setting vs the event-driven reference):",
            markdown_table(
                ["scheme"]
                + [f"{c} (≤ {tol:g} m)" for tol in args.tol for c in ("h [s]", "ms per sim. s")]
                + ["bias vs reference [m]"],
                needed,
            ),
        ]
    )
    print(section)
    if not args.no_append:
        append_results(section)


if __name__ == "__main__":
    main()

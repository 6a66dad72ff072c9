"""Parameter identification through contact (docs/theory/gradients.md): five cases on synthetic data.

Each case simulates the model at its true parameters (the "measurement"), starts
the fit 30 % off the truth and fits with L-BFGS through the simulation
(:func:`jaxcontact.studies.identify.fit`):

  ball      restitution of the bouncing ball from its heights (1.5 s, 150 samples)
  block     friction μ of the block on the incline from its down-slope position
            history (launched at 1 m/s, stops after ≈ 0.8 s). Moreau–Jean has a single
            Coulomb coefficient, so this is the dynamic μ (static μ0: next case).
  pushed-block  static μ0 and dynamic μ of a block pushed by a growing force, from its
            position history (event-driven scheme, 0.8 s, h = 0.01 s): the slip onset
            (located inside its step, so continuous in μ0) gives μ0, the sliding gives μ.
            4 starts: from the guess alone L-BFGS overshoots into μ0 < μ, where the block
            creeps as with one coefficient (a local minimum); the jittered starts do not.
  slider-crank  radial clearance of the crank–rod joint (Flores et al.) from the slider's
            position over the first 5 ms (1 rad of crank at 200 rad/s; h = 20 µs, 250 steps),
            compliant journal contact with the penalty scheme. Our choices: h = 20 µs and
            K = 1e10 N/m^1.5 (the journal penetrates up to 99 µm, 20 % of the 0.5 mm clearance).
            With the model's steel Hertz K = 6.9e10 (44 µm) L-BFGS stayed at the 0.35 mm guess
            (a flat local piece of the misfit); with K = 1e10 the misfit is unimodal over
            0.25–0.7 mm for this 5 ms record (over 10 ms the journal's impacts add local minima).
  four-bar  restitution and wall distance of the four-bar (h = 0.01 s, with projection) from
            the (x, y) trajectory of point a over 1 s: repeated impacts, then rest
            against the wall (the rest position, projected onto the wall, fixes the distance).

Writes <out>/<case>_convergence.png and <case>_fit_vs_data.png, and prints the
estimates, their 95 % intervals and relative errors against the truth. With
``--noise-reps 20`` it instead fits 20 data sets with 1 % Gaussian noise (one vmapped
call) and counts how often the Laplace 95 % interval holds the truth (``--grid-start K``:
a K-point coordinate grid search before L-BFGS, for the four-bar's staircase misfit in ε).

Run: python examples/identify_contact.py [--case ball|block|pushed-block|slider-crank|four-bar|all] [--out DIR]
                                         [--noise-reps N --starts S --grid-start K]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NamedTuple

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from jaxcontact.models import four_bar, get_model, pushed_block, slider_crank, sliding_block  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import EventDriven, MoreauJean, Penalty  # noqa: E402
from jaxcontact.stepping.projection import Projection  # noqa: E402
from jaxcontact.studies.identify import coordinates, fit, fit_batch  # noqa: E402
from jaxcontact.studies.identify_plots import convergence_plot, fit_vs_data_plot  # noqa: E402


def _point_a(q, p):
    return jax.vmap(lambda qq: four_bar.point_a(qq, p))(q)


class Case(NamedTuple):
    model: object
    scheme: object
    n_steps: int  # steps simulated
    every: int  # keep every k-th state as data
    observe: object
    bounds: dict  # of the fitted parameters
    iterations: int  # L-BFGS
    starts: int = 1


CASES = {
    "ball": Case(get_model("bouncing-ball"), MoreauJean(), 1500, 10, coordinates(0), {"restitution": (0.05, 0.99)}, 30),
    "block": Case(
        get_model("sliding-block")._replace(dt=2e-3),
        MoreauJean(),
        600,
        10,
        sliding_block.distance_along_slope,
        {"friction": (0.01, 2.0)},
        20,
    ),
    "pushed-block": Case(
        get_model("pushed-block"),
        EventDriven(),
        80,
        1,
        pushed_block.position,
        {"static_friction": (0.01, 0.75), "friction": (0.01, 0.75)},
        30,
        starts=4,
    ),
    "slider-crank": Case(
        slider_crank.model("compliant", stiffness=1e10)._replace(dt=2e-5),
        Penalty(diagonal_mass=True),
        250,
        5,
        coordinates(6),
        {"clearance": (1e-4, 1e-3)},
        15,
    ),
    "four-bar": Case(
        get_model("four-bar"),
        MoreauJean(projection=Projection()),
        100,
        1,
        _point_a,
        {"restitution": (0.05, 0.99), "wall_distance": (0.01, 0.2)},
        60,
    ),
}

GUESS = 0.7  # every fit starts from guesses 30 % below the truth
LABELS = {
    "ball": ("height (m)",),
    "block": ("down-slope distance (m)",),
    "pushed-block": ("pushed distance (m)",),
    "slider-crank": ("slider x (m)",),
    "four-bar": ("x of a (m)", "y of a (m)"),
}


def measurement(case):
    """(t, y, truth) of a case: the model simulated at its default (true) parameters."""
    c = CASES[case]
    q0, u0 = c.model.initial_state(c.model.params)
    tr = simulate(c.model.system, c.model.params, q0, u0, dt=c.model.dt, n_steps=c.n_steps, scheme=c.scheme)
    truth = {name: float(c.model.params[name]) for name in c.bounds}
    return np.asarray(tr.t[:: c.every]), np.asarray(c.observe(tr.q, c.model.params))[:: c.every], truth


def run_case(case, out=None, progress=10):
    """Fit a case from guesses ``GUESS`` × truth; returns (FitResult, truth). PNGs in ``out`` if given."""
    c = CASES[case]
    t, y, truth = measurement(case)
    res = fit(
        c.model,
        t,
        y,
        tuple(c.bounds),
        {n: GUESS * v for n, v in truth.items()},
        c.bounds,
        observe=c.observe,
        scheme=c.scheme,
        steps=c.iterations,
        starts=c.starts,
        progress=progress,
    )
    if out:
        convergence_plot(res, os.path.join(out, f"{case}_convergence.png"), truth=truth)
        fit_vs_data_plot(
            c.model,
            res,
            t,
            y,
            c.observe,
            os.path.join(out, f"{case}_fit_vs_data.png"),
            scheme=c.scheme,
            labels=LABELS[case],
        )
    return res, truth


def noise_coverage(case, reps=20, starts=1, seed=0, grid_start=0):
    """Gaussian noise of 1 % of each observed signal's range, ``reps`` noisy data sets fitted in one
    vmapped call (guesses 30 % off, ``starts`` starts each, after a ``grid_start`` search); returns
    ({name: how many 95 % intervals hold the truth}, BatchFitResult). Residuals are scaled by the
    noise sd, so ``noise=1``."""
    c = CASES[case]
    t, y, truth = measurement(case)
    sd = 0.01 * np.ptp(y, axis=0)
    ys = y + np.random.default_rng(seed).normal(size=(reps,) + y.shape) * sd
    r = fit_batch(
        c.model,
        t,
        ys / sd,
        tuple(c.bounds),
        {n: GUESS * v for n, v in truth.items()},
        c.bounds,
        observe=lambda q, p: c.observe(q, p) / sd,
        scheme=c.scheme,
        steps=c.iterations,
        starts=starts,
        noise=1.0,
        seed=seed,
        grid_start=grid_start,
    )
    half = 1.96 * r.std
    inside = np.abs(r.estimates - np.array(list(truth.values()))) <= half
    return {n: int(np.sum(inside[:, i])) for i, n in enumerate(r.names)}, r


def iterations_to(res, truth, rel=0.01) -> int:
    """How many iterations until the parameters are all within ``rel`` of the truth (None: never)."""
    true = np.array([truth[n] for n in res.estimates])
    path = np.vstack([res.param_history, [list(res.estimates.values())]])  # row k: after k iterations
    ok = np.flatnonzero(np.all(np.abs(path - true) < rel * np.abs(true), axis=1))
    return int(ok[0]) if ok.size else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=(*CASES, "all"), default="all")
    ap.add_argument("--out", default="out/identify")
    ap.add_argument(
        "--noise-reps",
        type=int,
        default=0,
        help="instead of the fits: coverage of the 95 %% intervals over this many noisy repetitions",
    )
    ap.add_argument("--starts", type=int, default=1, help="multi-start count of the noisy fits")
    ap.add_argument(
        "--grid-start",
        type=int,
        default=0,
        help="noisy fits: K-point coordinate grid search over the bounds before L-BFGS (0: off)",
    )
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    cases = tuple(CASES) if args.case == "all" else (args.case,)
    if args.noise_reps:
        for case in cases:
            counts, r = noise_coverage(case, args.noise_reps, args.starts, grid_start=args.grid_start)
            print(
                f"{case}: truth inside the 95 % interval in "
                + ", ".join(f"{n} {c}/{args.noise_reps}" for n, c in counts.items())
                + f" ({args.starts} start(s), "
                f"grid start {args.grid_start}, "
                f"{r.wall_time:.0f} s; final losses {np.round(r.loss, 2).tolist()}, 1 = the noise level)"
            )
        return 0
    for case in cases:
        print(f"{case}:")
        res, truth = run_case(case, args.out)
        for n, v in truth.items():
            lo, hi = res.interval95[n]
            print(
                f"  {n}: truth {v:.6g}, guess {GUESS * v:.6g}, estimate {res.estimates[n]:.8g} "
                f"(rel. error {abs(res.estimates[n] - v) / v:.1e}, 95 % [{lo:.6g}, {hi:.6g}])"
            )
        print(
            f"  within 1 % after {iterations_to(res, truth)} of {res.iterations} L-BFGS iterations, "
            f"final loss {res.loss:.3g}, {res.wall_time:.1f} s"
        )
    print(f"wrote PNGs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

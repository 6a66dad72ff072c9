"""Outcome ranges over interval and fuzzy inputs: the ``--method interval | fuzzy`` engine of ``jaxcontact mc``.

    summary = run_interval_study(spec, "iv-four-bar", method="interval", outcome="peak_impulse")

**Interval** (every uncertain input ``name=interval(lo,hi)``): the range [min y, max y] of one scalar outcome
over the box, found twice, independently:

1. the Chebyshev surrogate of :func:`jaxcontact.studies.bounds.outcome_bounds` (tensor grid of
   (degree + 1)^d simulations, dense search of the polynomial, both extremes re-simulated, the surrogate's
   error on check points that were simulated too). Its *check error* e is the tolerance of the result: if e
   bounds the surrogate's error over the box, the true range lies inside the *enclosure*
   [min(lower, s_min − e), max(upper, s_max + e)] (s: the surrogate's extremes), and each located extreme
   is within 2e of the true one;
2. a gradient search (:func:`gradient_search`): projected L-BFGS from several starts in the box, for the
   minimum and for the maximum, every start's trial point of an iteration in one batch of simulations with
   ``jax.jacfwd`` gradients (:func:`~jaxcontact.studies.pce_study.with_gradients`). It is written here in
   numpy rather than driven through scipy's L-BFGS-B, whose one-point-at-a-time callback cannot put all
   starts into one batch; it is L-BFGS-B's scheme reduced to its core: the variables at a bound whose
   gradient points outward are held, the two-loop recursion gives the step on the others, the step is
   projected onto the box and halved until it decreases the objective enough (Armijo).

A check error above 1 % of the range marks the result ``resolved: false`` with a warning: the polynomial
does not follow the outcome (a jump, e.g. an impact instant moving by whole steps on the step grid), and the
range holds only to that tolerance.

The two are compared: they *agree* when both extremes differ by at most ``2 e + 1e-6 × range`` (the
Chebyshev result's own error bound, plus the gradient search's stopping tolerance). The reported range
is the wider of the two located ranges (both are simulated values at points of the box).

The gradient search needs a smooth outcome and a scheme differentiated in forward mode: a piecewise
constant outcome (an impact count, a time on the step grid: :attr:`~jaxcontact.studies.outcomes.Outcome.smooth`
False) is refused by name when ``--starts`` asks for the search, and otherwise the search is skipped with the
reason in summary.json.

**Fuzzy** (every uncertain input ``name=triangular(lo,mode,hi)``, a membership function): the output's
membership function by α-cuts. At α = 1 every input is at its mode: one simulation, the crisp result. At
each lower α the inputs' cuts form a box and the interval problem above is solved on it. The cuts of an
output must be nested (a lower α, a wider box, a range containing the narrower ones'); a located range
can miss a little of an inner cut's, so each cut's range is the union with the inner cuts' ranges, and
the cuts where that widened anything are named (``widened`` in summary.json).

**Rounds.** Every batch of simulations is one round of the study runner in its own chunk folder
(``chunks/forward/round_k``, ``chunks/gradient/round_k``), through the reliability study's rounds
(:class:`~jaxcontact.studies.reliability_study.Rounds`): the compiled programs are kept between rounds and
an interrupted study resumes from disk when the same command runs again. A batch smaller than one already
compiled is padded to it by repeating its first point (a simulation is cheaper than a compilation); the
results count the simulations asked for, the timing those run.

summary.json holds ``interval`` (or ``fuzzy``: one entry per α) with both searches, their comparison, the
enclosure, the box and the options that reproduce it; samples.npz every simulated point; ``interval.png``
or ``fuzzy.png`` the result.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from typing import NamedTuple

import numpy as np

from jaxcontact.studies import plots
from jaxcontact.studies.bounds import outcome_bounds
from jaxcontact.studies.distributions import Interval, Triangular
from jaxcontact.studies.montecarlo import StudySpec, make_evaluator, parameters_line, study_model, write_summary
from jaxcontact.studies.pce_study import grad_key, with_gradients
from jaxcontact.studies.reliability_study import Rounds, rounds_folder
from jaxcontact.studies.sampling import unit_points

METHODS = ("interval", "fuzzy")
DEFAULT_DEGREE = 6
DEFAULT_STARTS = 4
DEFAULT_ALPHA_LEVELS = 5
N_DENSE = 2**14  # surrogate evaluations of the dense search (a polynomial: no simulation)
MAX_CHECK = 256  # the check batch takes the grid's size up to this many points (one compiled program for both)
MAX_ITER = 40  # gradient-search iterations per start
SEARCH_RTOL = 1e-6  # the gradient search's tolerance, relative to the outcome's range, in the comparison
UNRESOLVED_SHARE = 0.01  # a check error above this share of the range is reported: the surrogate misses a jump
_MEMORY = 5  # (s, y) pairs of the L-BFGS recursion
_ARMIJO = 1e-4


# --- the gradient search (numpy, batched over starts) -------------------------------------------------------


class SearchResult(NamedTuple):
    """The gradient search's extremes over a box.

    lower, upper: the smallest value any minimising start reached and the largest any maximising one reached
    (simulated values at argmin, argmax); starts (S, d): the starting points (shared by both directions);
    ends_min, ends_max (S, d) and values_min, values_max (S,): each start's final point and value;
    iterations, converged (2S,): per search (the S minimisations, then the S maximisations);
    n_simulations: points asked for; n_rounds: batches; paths: each search's accepted iterates (for plots);
    zero_gradient (d,): the inputs whose derivative was exactly zero at every start (the search cannot move them).
    """

    lower: float
    upper: float
    argmin: np.ndarray
    argmax: np.ndarray
    starts: np.ndarray
    ends_min: np.ndarray
    ends_max: np.ndarray
    values_min: np.ndarray
    values_max: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    n_simulations: int
    n_rounds: int
    paths: list
    zero_gradient: np.ndarray

    def to_json(self, names) -> dict:
        """The result for summary.json, points as {input name: value} (``names``: the inputs in column order)."""
        return {
            "lower": self.lower,
            "upper": self.upper,
            "argmin": dict(zip(names, self.argmin.tolist())),
            "argmax": dict(zip(names, self.argmax.tolist())),
            "n_simulations": self.n_simulations,
            "rounds": self.n_rounds,
            "starts": self.starts.tolist(),
            "ends_min": self.ends_min.tolist(),
            "ends_max": self.ends_max.tolist(),
            "values_min": self.values_min.tolist(),
            "values_max": self.values_max.tolist(),
            "iterations": self.iterations.tolist(),
            "converged": self.converged.tolist(),
            "zero_gradient": [k for k, z in zip(names, self.zero_gradient) if z],
        }


def search_starts(starts: int, d: int, seed: int) -> np.ndarray:
    """``starts`` points of the unit cube: its centre, then a Latin hypercube (every input's range covered)."""
    centre = np.full((1, d), 0.5)
    if starts == 1:
        return centre
    return np.concatenate([centre, unit_points(starts - 1, d, "lhs", seed)])


def gradient_search(
    value_and_grad, lo, hi, *, starts: int = DEFAULT_STARTS, seed: int = 0, max_iter: int = MAX_ITER
) -> SearchResult:
    """Minimum and maximum of f over the box [lo, hi] by projected L-BFGS from ``starts`` points (module doc).

    ``value_and_grad(X (n, d)) -> (f (n,), ∇f (n, d))`` in the parameters' units, called once per iteration
    with every search's trial point (the S minimisations and the S maximisations: n = 2S, always the same
    size; a finished search repeats its last point). A non-finite value rejects the trial step.
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    if starts < 1:
        raise ValueError(f"starts = {starts} must be ≥ 1")
    d = lo.size
    width = hi - lo
    z0 = search_starts(starts, d, seed)
    n = 2 * starts
    sign = np.repeat([1.0, -1.0], starts)  # minimise f, then minimise −f
    z = np.concatenate([z0, z0])  # current points in the unit cube
    phi = np.full(n, np.inf)
    grad = np.zeros((n, d))
    memory = [[] for _ in range(n)]
    active = np.ones(n, bool)
    converged = np.zeros(n, bool)
    iterations = np.zeros(n, int)
    step = np.ones(n)
    direction = np.zeros((n, d))
    paths = [[z0[i % starts].copy()] for i in range(n)]
    rounds = sims = 0

    def evaluate(Z):
        nonlocal rounds, sims
        y, g = value_and_grad(lo + Z * width)
        rounds += 1
        sims += len(Z)
        y, g = np.asarray(y, float).reshape(-1), np.asarray(g, float).reshape(len(Z), d)
        return sign * y, sign[:, None] * g * width

    phi, grad = evaluate(z)
    bad = ~(np.isfinite(phi) & np.all(np.isfinite(grad), axis=1))
    if bad.all():
        raise ValueError("the gradient search's starts all gave a non-finite outcome or gradient")
    active &= ~bad
    # A derivative exactly zero at every start is most often the step grid (an impact instant that does not
    # move with the input unless located inside the step), not an input without influence: reported by name.
    zero_gradient = np.all(grad[~bad] == 0.0, axis=0)
    scale = float(np.max(np.abs(phi[np.isfinite(phi)]))) or 1.0
    gtol = 1e-9 * scale  # a projected gradient (per box width) below this is a stationary point

    def new_direction(i):
        free = ~(((z[i] <= 0.0) & (grad[i] > 0)) | ((z[i] >= 1.0) & (grad[i] < 0)))
        g = np.where(free, grad[i], 0.0)
        if np.max(np.abs(g)) <= gtol:
            return None
        q = g.copy()
        pairs = [(np.where(free, s, 0.0), np.where(free, y, 0.0)) for s, y in memory[i]]
        pairs = [(s, y) for s, y in pairs if s @ y > 1e-12 * np.linalg.norm(s) * np.linalg.norm(y)]
        alphas = []
        for s, y in reversed(pairs):
            a = (s @ q) / (s @ y)
            alphas.append(a)
            q -= a * y
        if pairs:
            s, y = pairs[-1]
            q *= (s @ y) / (y @ y)
        else:
            q *= 0.25 / np.max(np.abs(g))  # the first step: a quarter of the box along the steepest input
        for (s, y), a in zip(pairs, reversed(alphas)):
            q += (a - (y @ q) / (s @ y)) * s
        p = -q
        if p @ g >= 0:  # not a descent direction on the free inputs: steepest descent
            p = -g * 0.25 / np.max(np.abs(g))
        return p

    for i in np.flatnonzero(active):
        direction[i] = p = new_direction(i)
        if p is None:
            active[i], converged[i] = False, True
    trial = z.copy()
    while active.any():
        for i in np.flatnonzero(active):
            trial[i] = np.clip(z[i] + step[i] * direction[i], 0.0, 1.0)
        batch = np.where(active[:, None], trial, z)
        phi_t, grad_t = evaluate(batch)
        for i in np.flatnonzero(active):
            s = trial[i] - z[i]
            ok = np.isfinite(phi_t[i]) and np.all(np.isfinite(grad_t[i]))
            if ok and phi_t[i] <= phi[i] + _ARMIJO * (grad[i] @ s):
                decrease = phi[i] - phi_t[i]
                memory[i] = (memory[i] + [(s, grad_t[i] - grad[i])])[-_MEMORY:]
                z[i], phi[i], grad[i] = trial[i], phi_t[i], grad_t[i]
                paths[i].append(z[i].copy())
                iterations[i] += 1
                step[i] = 1.0
                p = new_direction(i)
                if p is None or decrease <= 1e-12 * scale:
                    active[i], converged[i] = False, True
                elif iterations[i] >= max_iter:
                    active[i] = False
                else:
                    direction[i] = p
            else:
                step[i] *= 0.5
                if step[i] * np.max(np.abs(direction[i])) < 1e-12:  # no decrease left to find at this precision
                    active[i], converged[i] = False, True
    x = lo + z * width
    y = sign * phi
    i_min = int(np.nanargmin(np.where(np.isfinite(y[:starts]), y[:starts], np.nan)))
    i_max = starts + int(np.nanargmax(np.where(np.isfinite(y[starts:]), y[starts:], np.nan)))
    return SearchResult(
        float(y[i_min]), float(y[i_max]), x[i_min], x[i_max], lo + z0 * width, x[:starts], x[starts:],
        y[:starts], y[starts:], iterations, converged, sims, rounds,
        [lo + np.asarray(p) * width for p in paths], zero_gradient,
    )  # fmt: skip


# --- one box: both searches and their comparison -------------------------------------------------------------


def compare(cheb, search: SearchResult | None) -> dict:
    """The interval result of one box: the Chebyshev result, the gradient search's, their comparison and the
    range and enclosure reported (see the module doc)."""
    e = cheb.check_error
    lower, upper = cheb.lower, cheb.upper
    found_min = found_max = "chebyshev"
    out = {}
    if search is not None:
        span = max(cheb.upper, search.upper) - min(cheb.lower, search.lower)
        tol = 2 * e + SEARCH_RTOL * span
        d_lo, d_hi = search.lower - cheb.lower, search.upper - cheb.upper
        out["comparison"] = {
            "lower_difference": d_lo,
            "upper_difference": d_hi,
            "tolerance": tol,
            "tolerance_rule": "2 × check error + 1e-6 × range",
            "agree": bool(abs(d_lo) <= tol and abs(d_hi) <= tol),
        }
        if search.lower < lower:
            lower, found_min = search.lower, "gradient"
        if search.upper > upper:
            upper, found_max = search.upper, "gradient"
    out.update(
        {
            "lower": lower,
            "upper": upper,
            "lower_found_by": found_min,
            "upper_found_by": found_max,
            "tolerance": e,
            "enclosure": [min(lower, cheb.surrogate_lower - e), max(upper, cheb.surrogate_upper + e)],
            "resolved": bool(e <= UNRESOLVED_SHARE * (upper - lower)),
        }
    )
    return out


def chebyshev_json(cheb, names, degree: int) -> dict:
    """The Chebyshev result (:class:`~jaxcontact.studies.bounds.Bounds`) for summary.json."""
    return {
        "lower": cheb.lower,
        "upper": cheb.upper,
        "argmin": dict(zip(names, np.asarray(cheb.argmin).tolist())),
        "argmax": dict(zip(names, np.asarray(cheb.argmax).tolist())),
        "surrogate_lower": cheb.surrogate_lower,
        "surrogate_upper": cheb.surrogate_upper,
        "check_error": cheb.check_error,
        "degree": degree,
        "n_simulations": cheb.n_simulations,
    }


def check_count(degree: int, d: int) -> int:
    """Random check points of the Chebyshev result: with the two extremes, a batch of the grid's size (one compiled
    program for both) up to MAX_CHECK points; at least 8."""
    return max(8, min((degree + 1) ** d, MAX_CHECK) - 2)


# --- the study -----------------------------------------------------------------------------------------------


def check_study(spec: StudySpec, method: str, outcomes, starts: int | None) -> str | None:
    """Refuse, by name, what the method cannot do with this study (before any simulation); return why the
    gradient search is skipped (None: it runs)."""
    if method not in METHODS:
        raise ValueError(f"method {method!r} must be one of {', '.join(METHODS)}")
    kind = Interval if method == "interval" else Triangular
    spec.space.check_possibilistic(f"--method {method}", kind)
    if not spec.space.uncertain:
        raise ValueError(f"--method {method} needs at least one uncertain (not fixed) input")
    if len(outcomes) != 1:
        raise ValueError(
            f"--method {method} bounds one outcome; give --outcome once (got {', '.join(o.name for o in outcomes)})"
        )
    target = outcomes[0]
    if target.kind == "series":
        raise ValueError(f"--method {method} bounds a scalar outcome; {target.name!r} is a time series")
    reason = None
    if not target.smooth:
        reason = (
            f"{target.name!r} ({target.description}) is piecewise constant in the parameters (its derivative is "
            f"zero almost everywhere): no gradient search"
        )
    elif "forward" not in spec.scheme.differentiation_modes:
        reason = (
            f"the {spec.scheme.name} scheme with these options is differentiated in "
            f"{', '.join(sorted(spec.scheme.differentiation_modes))} mode only, and the gradient search takes "
            f"forward-mode gradients"
        )
    if reason is not None and starts:
        raise ValueError(f"--starts {starts}: {reason}; use --starts 0 (the Chebyshev result alone)")
    return reason


def _alpha_levels(count: int) -> list[float]:
    if count < 2:
        raise ValueError(f"--alpha-levels {count} must be ≥ 2 (α = 0 and α = 1 at least)")
    return [float(a) for a in np.linspace(0.0, 1.0, count)]


class _Batches:
    """A study's forward simulations as rounds, a batch smaller than an already compiled one padded to it."""

    def __init__(self, rounds: Rounds, outcome: str):
        self.rounds, self.outcome = rounds, outcome
        self.sizes: set[int] = set()
        self.n_asked = 0
        self.n_failed = 0

    def outputs(self, X) -> dict:
        X = np.asarray(X, float)
        n = len(X)
        pad = min((s for s in self.sizes if s >= n), default=n)
        self.sizes.add(pad)
        out = self.rounds(np.concatenate([X, np.repeat(X[:1], pad - n, axis=0)]))
        self.n_asked += n
        return {k: np.asarray(v)[:n] for k, v in out.items()}

    def values(self, X) -> np.ndarray:
        """The outcome at X (n, d); NaN where the simulation failed (not converged, state not finite)."""
        out = self.outputs(X)
        ok = np.asarray(out["converged"], bool) & np.asarray(out["state_finite"], bool)
        self.n_failed += int((~ok).sum())
        return np.where(ok, np.asarray(out[self.outcome], float), np.nan)

    def value_and_grad(self, uncertain):
        def vg(X):
            out = self.outputs(X)
            ok = np.asarray(out["converged"], bool) & np.asarray(out["state_finite"], bool)
            self.n_failed += int((~ok).sum())
            y = np.where(ok, np.asarray(out[self.outcome], float), np.nan)
            g = np.stack([np.asarray(out[grad_key(self.outcome, p)], float) for p in uncertain], axis=1)
            return y, g

        return vg


def _box(spec: StudySpec, uncertain, alpha: float | None):
    """The box of the uncertain inputs: the intervals, or the triangular inputs' α-cuts."""
    if alpha is None:
        return (np.array([spec.space[k].lo for k in uncertain]), np.array([spec.space[k].hi for k in uncertain]))
    cuts = [spec.space[k].cut(alpha) for k in uncertain]
    return np.array([c[0] for c in cuts]), np.array([c[1] for c in cuts])


def _solve_box(forward: _Batches, gradient: _Batches | None, uncertain, lo, hi, degree, starts, seed) -> dict:
    cheb = outcome_bounds(
        forward.values, lo, hi, degree=degree, n_dense=N_DENSE, n_check=check_count(degree, len(lo)), seed=seed
    )
    search = None
    if gradient is not None:
        search = gradient_search(gradient.value_and_grad(uncertain), lo, hi, starts=starts, seed=seed)
    entry = {
        "box": {k: [a, b] for k, a, b in zip(uncertain, lo.tolist(), hi.tolist())},
        **compare(cheb, search),
        "chebyshev": chebyshev_json(cheb, uncertain, degree),
    }
    if search is not None:
        entry["gradient"] = search.to_json(uncertain)
    return entry, cheb, search


def run_interval_study(
    spec: StudySpec,
    out_dir: str,
    *,
    method: str,
    degree: int = DEFAULT_DEGREE,
    starts: int | None = None,
    alpha_levels: int = DEFAULT_ALPHA_LEVELS,
    progress: bool = True,
    plot: bool = True,
) -> dict:
    """Run (or resume) the interval or fuzzy study of ``spec``'s one scalar outcome in ``out_dir``; return the
    summary (also summary.json).

    ``degree``: the Chebyshev surrogate's degree per input; ``starts``: gradient-search starts per direction
    (None: :data:`DEFAULT_STARTS` where the search applies, 0: no search; an explicit count on an outcome or
    scheme without gradients is refused); ``alpha_levels``: the fuzzy study's α levels, evenly from 0 to 1.
    """
    t_wall = time.perf_counter()
    spec = dataclasses.replace(spec, sensitivity=False)
    model, dt, t_final, n_steps, outcomes = study_model(spec)
    skipped = check_study(spec, method, outcomes, starts)
    if degree < 1:
        raise ValueError(f"--degree {degree} must be ≥ 1")
    n_starts = 0 if skipped is not None else (DEFAULT_STARTS if starts is None else starts)
    levels = _alpha_levels(alpha_levels) if method == "fuzzy" else None
    outcome = outcomes[0].name
    uncertain = list(spec.space.uncertain)
    folder = rounds_folder(out_dir, "an interval study")
    scheme = spec.scheme.for_forward_runs()
    evaluate = make_evaluator(model, outcomes, dt=dt, n_steps=n_steps, scheme=scheme, save_every=spec.save_every)
    options = {"degree": degree, "starts": n_starts, "alpha_levels": levels, "n_dense": N_DENSE}
    config = {**spec.config(n_steps, dt, scheme), "n": None, "method": method, "options": options}
    forward = _Batches(
        Rounds(spec, model, evaluate, uncertain, os.path.join(folder, "forward"), config, None, progress,
                f"{method} {spec.name}", scheme.samples_per_call(model.system)),
        outcome,
    )  # fmt: skip
    gradient = None
    if n_starts:
        g_eval = with_gradients(
            make_evaluator(model, outcomes, dt=dt, n_steps=n_steps, scheme=spec.scheme, save_every=spec.save_every),
            uncertain,
            [outcome],
        )
        gradient = _Batches(
            Rounds(spec, model, g_eval, uncertain, os.path.join(folder, "gradient"),
                    {**config, "scheme": spec.scheme.config()}, None, progress, f"{method} {spec.name} gradients"),
            outcome,
        )  # fmt: skip
    try:
        if method == "interval":
            lo, hi = _box(spec, uncertain, None)
            entry, cheb, search = _solve_box(forward, gradient, uncertain, lo, hi, degree, n_starts, spec.seed)
            result = {"method": "interval", "outcome": outcome, "inputs": uncertain, **entry}
            if skipped:
                result["gradient_skipped"] = skipped
            draw = (cheb, search)
        else:
            result, draw = _fuzzy(spec, forward, gradient, uncertain, levels, degree, n_starts, outcome)
            if skipped:
                result["gradient_skipped"] = skipped
    finally:
        forward.rounds.close()
        if gradient is not None:
            gradient.rounds.close()

    batches = [b for b in (forward, gradient) if b is not None]
    n_sim = sum(b.n_asked for b in batches)
    result["n_simulations"] = n_sim
    result["failed_simulations"] = sum(b.n_failed for b in batches)
    summary = {
        "study": {
            **config,
            "t_final": t_final,
            "n_simulations": n_sim,
            "uncertain": uncertain,
            "model_description": model.description,
        },
        method: result,
        "outcomes": {outcomes[0].name: {"description": outcomes[0].description, "unit": outcomes[0].unit}},
    }
    arrays = {}
    for label, b in (("forward", forward), ("gradient", gradient)):
        if b is None or not b.rounds.points:
            continue
        X = np.concatenate(b.rounds.points)
        out = {k: np.concatenate([o[k] for o in b.rounds.outputs]) for k in b.rounds.outputs[0]}
        arrays[f"{label}:round"] = np.concatenate(b.rounds.round_of)
        arrays.update({f"{label}:param:{k}": X[:, j] for j, k in enumerate(uncertain)})
        arrays.update({f"{label}:out:{k}": v for k, v in out.items()})
    np.savez(os.path.join(out_dir, "samples.npz"), **arrays)
    figures = []
    if plot:
        labels = plots.study_labels(outcomes, uncertain, model.param_table.unit)
        if method == "interval":
            cheb, search = draw
            X = np.concatenate(forward.rounds.points)
            y = np.concatenate([np.asarray(o[outcome], float) for o in forward.rounds.outputs])
            plots.interval_range(
                X, y, uncertain, outcome, result, os.path.join(out_dir, "interval.png"),
                paths=None if search is None else search.paths, title=f"{spec.name}: interval", labels=labels,
            )  # fmt: skip
            figures.append("interval.png")
        else:
            plots.fuzzy_membership(
                result, {k: spec.space[k] for k in uncertain}, outcome, os.path.join(out_dir, "fuzzy.png"),
                title=f"{spec.name}: fuzzy", labels=labels,
            )  # fmt: skip
            figures.append("fuzzy.png")
    run = forward.rounds.run_result()
    if gradient is not None:
        g_run = gradient.rounds.run_result()
        run = run._replace(
            n_samples=run.n_samples + g_run.n_samples,
            n_computed=run.n_computed + g_run.n_computed,
            n_loaded=run.n_loaded + g_run.n_loaded,
            compile_seconds=run.compile_seconds + g_run.compile_seconds,
            run_seconds=run.run_seconds + g_run.run_seconds,
        )
    return write_summary(summary, out_dir, figures, run, n_steps, t_wall)


def nest(crisp: float, located) -> list[tuple[float, float, bool]]:
    """Nested α-cut ranges: ``located`` (lower, upper) pairs from the narrowest cut to the widest, each made the
    union with the crisp value and every narrower cut's range; returns (lower, upper, widened) per cut."""
    lower = upper = crisp
    out = []
    for a, b in located:
        lower, upper = min(lower, a), max(upper, b)
        out.append((lower, upper, bool(lower < a or upper > b)))
    return out


def _fuzzy(spec, forward, gradient, uncertain, levels, degree, n_starts, outcome):
    """The α-cuts from the supports (α = 0) up, then the crisp point (α = 1: run last, so that its single
    simulation pads to a batch already compiled); each cut's range is then made the union with the
    narrower cuts' (nestedness)."""
    solved = {}
    for alpha in sorted(levels)[:-1]:
        lo, hi = _box(spec, uncertain, alpha)
        solved[alpha], _, _ = _solve_box(forward, gradient, uncertain, lo, hi, degree, n_starts, spec.seed)
    modes = np.array([[spec.space[k].mode for k in uncertain]])
    crisp = float(forward.values(modes)[0])
    if not math.isfinite(crisp):
        raise ValueError(
            f"the simulation at the modes ({', '.join(f'{k} = {m:g}' for k, m in zip(uncertain, modes[0]))}) "
            f"failed: no crisp result"
        )
    cuts = [
        {
            "alpha": 1.0,
            "box": {k: [m, m] for k, m in zip(uncertain, modes[0].tolist())},
            "lower": crisp,
            "upper": crisp,
            "located_lower": crisp,
            "located_upper": crisp,
            "widened": False,
        }
    ]
    inward = sorted(solved, reverse=True)
    nested = nest(crisp, [(solved[a]["lower"], solved[a]["upper"]) for a in inward])
    for alpha, (lower, upper, widened) in zip(inward, nested):
        entry = solved[alpha]
        cuts.append(
            {
                "alpha": alpha,
                **entry,
                "located_lower": entry["lower"],
                "located_upper": entry["upper"],
                "lower": lower,
                "upper": upper,
                "enclosure": [min(entry["enclosure"][0], lower), max(entry["enclosure"][1], upper)],
                "widened": widened,
            }
        )
    cuts = cuts[::-1]  # α ascending: the support first
    result = {
        "method": "fuzzy",
        "outcome": outcome,
        "inputs": uncertain,
        "crisp": crisp,
        "modes": dict(zip(uncertain, modes[0].tolist())),
        "alpha_levels": sorted(levels),
        "cuts": cuts,
        "widened": [c["alpha"] for c in cuts if c["widened"]],
        "nested_by": "each cut's range is the union of its located range with the narrower cuts' ranges",
        "support": [cuts[0]["lower"], cuts[0]["upper"]],
    }
    agree = [c["comparison"]["agree"] for c in cuts if "comparison" in c]
    if agree:
        result["agree"] = bool(all(agree))
    return result, None


# --- the command line's plan and report -----------------------------------------------------------------------


def plan_line(spec: StudySpec, method: str, degree: int, starts: int | None, alpha_levels: int, dtype: str):
    """What will run, in the terms of :func:`jaxcontact.commands.mc.plan`: (line, size of one batch, warnings,
    simulations already saved); no compute."""
    from jaxcontact.commands import checks

    spec = dataclasses.replace(spec, sensitivity=False)
    model, dt, _, n_steps, outcomes = study_model(spec)
    skipped = check_study(spec, method, outcomes, starts)
    if degree < 1:
        raise ValueError(f"--degree {degree} must be ≥ 1")
    levels = _alpha_levels(alpha_levels) if method == "fuzzy" else None
    d = len(spec.space.uncertain)
    grid = (degree + 1) ** d
    from jaxcontact.studies.bounds import MAX_GRID

    if grid > MAX_GRID:
        raise ValueError(
            f"--degree {degree} in {d} inputs needs a grid of {grid} simulations (more than {MAX_GRID}); lower --degree"
        )
    n_starts = 0 if skipped else (DEFAULT_STARTS if starts is None else starts)
    per_box = grid + check_count(degree, d) + 2
    boxes = 1 if levels is None else len(levels) - 1
    size = checks.study_size(
        model,
        n_simulations=grid,
        n_params=len(spec.space),
        n_steps=n_steps,
        save_every=spec.save_every,
        n_series=0,
        n_scalars=1,
        chunk=spec.chunk_size or grid,
    )
    what = "interval range" if levels is None else f"fuzzy membership at α = {', '.join(f'{a:g}' for a in levels)}"
    line = (
        f"{spec.name}: {what} of {outcomes[0].name}: Chebyshev degree {degree} ({per_box} simulations per box"
        + (f", {boxes} boxes and the crisp point" if levels is not None else "")
        + ")"
        + (f", gradient search from {n_starts} starts per direction" if n_starts else "")
        + f", each {n_steps} steps of {dt:g} s"
        + "\n"
        + parameters_line(spec, model)
    )
    warns = checks.step_warnings(model, dt, dtype)
    if skipped:
        warns.append(skipped)
    return line, size, warns, 0


def _range_line(label: str, r: dict, unit: str) -> str:
    line = f"  {label}[{r['lower']:.6g}, {r['upper']:.6g}] {unit}".rstrip()
    line += f" (tolerance {r['tolerance']:.2g}: enclosure [{r['enclosure'][0]:.6g}, {r['enclosure'][1]:.6g}])"
    return line


def format_interval(summary: dict) -> str:
    """A short text report of an interval or fuzzy study: the range(s), both searches and their comparison."""
    st, tm = summary["study"], summary["timing"]
    method = "interval" if "interval" in summary else "fuzzy"
    r = summary[method]
    unit = next(iter(summary["outcomes"].values()))["unit"] or ""
    unit = "" if unit == "1" else unit
    lines = [
        f"{st['model']}: {method} range of {r['outcome']}, {st['n_steps']} steps of {st['dt']:g} s; inputs: "
        + ", ".join(f"{k}={v}" for k, v in st["params"].items())
    ]
    entries = [("", r)] if method == "interval" else [(f"α = {c['alpha']:<5g} ", c) for c in r["cuts"]]
    for label, c in entries:
        if "chebyshev" not in c:
            lines.append(f"  {label}{c['lower']:.6g} {unit} (crisp: one simulation at the modes)".rstrip())
            continue
        lines.append(_range_line(label, c, unit))
        ch = c["chebyshev"]
        lines.append(
            f"      Chebyshev degree {ch['degree']}: [{ch['lower']:.6g}, {ch['upper']:.6g}], check error "
            f"{ch['check_error']:.2g}, {ch['n_simulations']} simulations"
        )
        if "gradient" in c:
            g, cmp = c["gradient"], c["comparison"]
            lines.append(
                f"      gradient search: [{g['lower']:.6g}, {g['upper']:.6g}], {g['n_simulations']} simulations; "
                + ("agrees" if cmp["agree"] else "DISAGREES")
                + f" (differences {cmp['lower_difference']:.2g}, {cmp['upper_difference']:.2g}; tolerance "
                f"{cmp['tolerance']:.2g})"
            )
    if method == "interval":
        at_min, at_max = r[r["lower_found_by"]]["argmin"], r[r["upper_found_by"]]["argmax"]
        lines.append(
            "  argmin: "
            + ", ".join(f"{k} = {v:.6g}" for k, v in at_min.items())
            + "; argmax: "
            + ", ".join(f"{k} = {v:.6g}" for k, v in at_max.items())
        )
    elif r["widened"]:
        lines.append(f"  α = {', '.join(f'{a:g}' for a in r['widened'])}: widened to contain the narrower cuts' ranges")
    unresolved = [label.strip() for label, c in entries if c.get("resolved") is False]
    if unresolved:
        where = "" if method == "interval" else f"at {', '.join(unresolved)}, "
        lines.append(
            f"  warning: {where}the surrogate's check error is more than "
            f"{UNRESOLVED_SHARE:.0%} of the range: it does not resolve the outcome (a jump or kink; on the step grid "
            f"an impact instant moves by whole steps: try --impact-location interpolated, or a higher --degree), "
            f"and the range is located to that tolerance only"
        )
    zero = sorted({k for _, c in entries for k in c.get("gradient", {}).get("zero_gradient", [])})
    if zero:
        lines.append(
            f"  warning: the outcome's derivative in {', '.join(zero)} is exactly zero at every start of the gradient "
            f"search, which cannot move it: if the input moves an impact instant, the time-stepping misses it "
            f"(try --impact-location interpolated)"
        )
    if r.get("gradient_skipped"):
        lines.append(f"  note: {r['gradient_skipped']}")
    if r["failed_simulations"]:
        lines.append(f"  warning: {r['failed_simulations']} simulations failed (not converged or not finite)")
    lines.append(
        f"  {r['n_simulations']} simulations; wall {tm['wall_seconds']:.1f} s (compile {tm['compile_seconds']:.1f} s), "
        f"{tm['n_computed']} simulated, {tm['n_loaded']} resumed from disk"
    )
    return "\n".join(lines)

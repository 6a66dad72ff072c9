"""Failure probability of a model's outcome by simulation: the ``--method form|sorm|subset|importance`` engine
of ``jaxcontact mc ... --limit 'OUTCOME>VALUE'``.

    summary = run_reliability_study(spec, "rel-bouncing-ball", limit=parse_limit("peak_impulse>2.6"),
                                    method="subset")

The study's uncertain parameters are the inputs of the reliability problem (their laws are the marginals of
:mod:`jaxcontact.studies.reliability`, which maps them from standard normal space); the limit state is the
outcome's distance to the threshold, ``g = threshold - outcome`` for ``>`` (``outcome - threshold`` for ``<``),
every value of it one simulation of the model.

**Rounds.** The methods are sequential: a subset level's chains take a step, FORM tries its step lengths,
each asking for one batch of simulations. Every batch is a *round*: one chunked run of the study runner
(:func:`~jaxcontact.studies.runner.run_samples`) in ``chunks/round_00007/``, with its manifest and checksums.
The methods are deterministic for a seed, so running the same command again finds each round's inputs
identical and loads the round from disk instead of simulating it: an interrupted study resumes where it
stopped. The compiled programs are kept from one round to the next (one per batch shape).

**Gradients.** FORM, SORM and importance sampling (which starts from FORM's design point) take the outcome's
derivatives with respect to the uncertain parameters by ``jax.jacfwd`` through the simulation (forward mode, as
the gradient-enhanced polynomial chaos does), so the scheme must declare forward-mode differentiation; an
outcome that is piecewise constant in the parameters (a count of impacts, a time read off the step grid,
:attr:`~jaxcontact.studies.outcomes.Outcome.smooth` False) is refused by name for them. Subset simulation
and plain Monte Carlo need no gradient.

**Failed simulations.** A simulation whose contact solve did not converge still gives a value, which the method
uses; the study counts such simulations and reports them (``failures`` in summary.json) — a method cannot
leave a sample out the way a Monte Carlo average does. A value that is not finite stops the study with the
parameters that gave it.

The summary (``summary.json``) holds ``reliability``: the method's estimate, its standard error and c.o.v.,
the number of simulations, the limit, and the method's own results (FORM: β, the design point in the
parameters' units, the importance factors; subset: the levels); ``samples.npz`` holds every simulated point with
its outcome; ``reliability.png`` shows them on the two most important inputs with the failure domain.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time

import numpy as np

from jaxcontact.studies import plots, statistics
from jaxcontact.studies import reliability as rel
from jaxcontact.studies.montecarlo import (
    StudySpec,
    _check_out_dir,
    check_samples,
    make_evaluator,
    parameters_line,
    start_checker,
    study_model,
    write_summary,
)
from jaxcontact.studies.pce_study import grad_key, with_gradients
from jaxcontact.studies.runner import RunResult, read_manifest, run_samples

METHODS = ("form", "sorm", "subset", "importance")
GRADIENT_METHODS = ("form", "sorm", "importance")
DEFAULT_N = {"subset": 1000, "importance": 1000}
FORM_TOL = 1e-6  # a simulated limit state carries the contact solve's error: tighter than this is noise
# Each iteration is a round of simulations with gradients; an outcome that is only piecewise smooth (a peak over
# impacts) can keep the iteration from converging, and more iterations rarely rescue it.
FORM_MAX_ITER = 40


class Rounds:
    """A study's simulations asked for batch by batch (a sequential method's): each call one round of the
    runner in its own chunk folder ``round_<k>``, resumed from disk when the same round comes again, the compiled
    programs kept between rounds. Also the limit state of a reliability study (:meth:`g`,
    :meth:`value_and_grad`); the interval study uses the rounds alone."""

    def __init__(self, spec, model, evaluate, uncertain, folder, config, limit, progress, desc, samples_per_call=None):
        from tqdm.auto import tqdm

        self.spec, self.model, self.evaluate, self.uncertain = spec, model, evaluate, uncertain
        self.samples_per_call = samples_per_call  # the evaluator's scheme's (run_samples)
        self.folder, self.config, self.limit = folder, config, limit
        self.fixed = {k: spec.space[k].v for k in spec.space.names if k not in uncertain}
        self.check_starts = start_checker(model)
        self.programs = {}
        self.points, self.outputs, self.round_of = [], [], []
        self.compile_seconds = self.run_seconds = 0.0
        self.n_computed = self.n_loaded = 0
        self.last = None
        self.bar = tqdm(unit="sim", desc=desc, disable=not progress, dynamic_ncols=True, smoothing=0)

    def __call__(self, X) -> dict:
        X = np.asarray(X, float)
        k = len(self.round_of)
        values = {name: X[:, j] for j, name in enumerate(self.uncertain)}
        values.update({name: np.full(len(X), v) for name, v in self.fixed.items()})
        check_samples(self.spec.model, dict(self.spec.overrides), values, dict(self.spec.model_options))
        self.check_starts(values)
        compiled_before = len(self.programs)
        t0 = time.perf_counter()
        result: RunResult = run_samples(
            self.evaluate,
            {name: values[name] for name in self.spec.space.names},
            chunk_size=self.spec.chunk_size,
            out_dir=os.path.join(self.folder, f"round_{k:05d}"),
            config={**self.config, "round": k},
            progress=False,
            programs=self.programs,
            samples_per_call=self.samples_per_call,
        )
        if len(self.programs) > compiled_before and not self.bar.disable:
            self.bar.write(
                f"compiled a program for batches of {result.chunk_size} simulations in {result.compile_seconds:.1f} s",
                file=sys.stderr,
            )
        self.compile_seconds += result.compile_seconds
        self.run_seconds += time.perf_counter() - t0 - result.compile_seconds
        self.n_computed += result.n_computed
        self.n_loaded += result.n_loaded
        self.last = result
        self.points.append(X)
        self.outputs.append(result.outputs)
        self.round_of.append(np.full(len(X), k))
        self.bar.update(len(X))
        self.bar.set_postfix_str(f"round {k}", refresh=False)
        return result.outputs

    def g(self, X):
        """The limit state of a batch of physical points (n, d): ``(n,)``."""
        return self.limit.g(np.asarray(self(X)[self.limit.outcome], float))

    def value_and_grad(self, X):
        """The limit state and its gradient in the parameters' units: ``((n,), (n, d))``."""
        out = self(X)
        grad = np.stack([np.asarray(out[grad_key(self.limit.outcome, p)], float) for p in self.uncertain], axis=1)
        return self.limit.g(np.asarray(out[self.limit.outcome], float)), (-grad if self.limit.above else grad)

    def close(self):
        """Close the progress bar (the rounds stay on disk)."""
        self.bar.close()

    def run_result(self) -> RunResult:
        """The rounds' totals in the runner's terms (for the summary's timing)."""
        n = sum(len(x) for x in self.points)
        last = self.last
        return RunResult(
            {}, n, self.n_computed, self.n_loaded, self.compile_seconds, self.run_seconds,
            last.n_devices if last else 1, last.chunk_size if last else 0,
        )  # fmt: skip


def _reliability_spec(spec: StudySpec, limit: rel.Limit) -> StudySpec:
    """The study run: no Sobol design, the limit's outcome first and the spec's other outcomes after it."""
    outcomes = (limit.outcome, *(o for o in spec.outcomes if o != limit.outcome))
    return dataclasses.replace(spec, sensitivity=False, outcomes=outcomes)


def rounds_folder(out_dir: str, study: str) -> str:
    """The folder of a study's :class:`Rounds` (``out_dir/chunks``), after checking that ``out_dir`` is
    writable and holds no Monte Carlo study's chunks there (``study`` names the study in the error)."""
    _check_out_dir(out_dir)
    folder = os.path.join(out_dir, "chunks")
    if read_manifest(folder) is not None:
        raise ValueError(
            f"{folder} holds the chunks of a Monte Carlo study; {study} keeps rounds there: choose another --out"
        )
    return folder


def check_method(spec: StudySpec, limit: rel.Limit, method: str, outcomes) -> None:
    """Refuse, by name, what the method cannot do with this study (before any simulation)."""
    if method not in METHODS:
        raise ValueError(f"reliability method {method!r} must be one of {', '.join(METHODS)}")
    if not spec.space.uncertain:
        raise ValueError("a reliability study needs at least one uncertain (not fixed) parameter")
    try:
        rel._check_marginals([spec.space[k] for k in spec.space.uncertain])
    except ValueError as e:
        raise ValueError(f"reliability inputs: {e}") from None
    target = next(o for o in outcomes if o.name == limit.outcome)
    if target.kind == "series":
        raise ValueError(f"--limit needs a scalar outcome; {limit.outcome!r} is a time series")
    series = [o.name for o in outcomes if o.kind == "series"]
    if series:
        raise ValueError(
            f"a reliability study keeps scalar outcomes only (its rounds would store every series); drop "
            f"--outcome {', '.join(series)}"
        )
    if method in GRADIENT_METHODS:
        if not target.smooth:
            raise ValueError(
                f"--method {method} needs the gradient of the limit's outcome, and {limit.outcome!r} "
                f"({target.description}) is piecewise constant in the parameters (its derivative is zero "
                f"almost everywhere): use --method subset, or a smooth outcome"
            )
        modes = spec.scheme.differentiation_modes
        if "forward" not in modes:
            raise ValueError(
                f"--method {method} takes forward-mode gradients through the simulation, and the "
                f"{spec.scheme.name} scheme with these options is differentiated in "
                f"{', '.join(sorted(modes))} mode only: use --method subset, or scheme options with "
                f"forward-mode gradients"
            )


def run_reliability_study(
    spec: StudySpec,
    out_dir: str,
    *,
    limit: rel.Limit,
    method: str,
    n: int | None = None,
    p0: float = 0.1,
    progress: bool = True,
    plot: bool = True,
) -> dict:
    """Run (or resume) the reliability study of ``limit`` in ``out_dir``; return the summary (also summary.json).

    ``n``: samples per level (subset) or importance samples (default :data:`DEFAULT_N`; FORM and SORM take
    none); ``p0``: subset simulation's level probability. The study's outcomes are the limit's and any other
    scalar outcomes of ``spec`` (recorded for every simulated point).
    """
    t_wall = time.perf_counter()
    spec = _reliability_spec(spec, limit)
    model, dt, t_final, n_steps, outcomes = study_model(spec)
    check_method(spec, limit, method, outcomes)
    if method in GRADIENT_METHODS and n is not None and method != "importance":
        raise ValueError(f"--n does not apply to --method {method}: it takes the simulations its iteration needs")
    n = DEFAULT_N.get(method) if n is None else n
    folder = rounds_folder(out_dir, "a reliability study")
    uncertain = list(spec.space.uncertain)
    marginals = [spec.space[k] for k in uncertain]
    differentiated = method in GRADIENT_METHODS
    scheme = spec.scheme if differentiated else spec.scheme.for_forward_runs()
    evaluate = make_evaluator(model, outcomes, dt=dt, n_steps=n_steps, scheme=scheme, save_every=spec.save_every)
    scalar_names = [o.name for o in outcomes]
    if differentiated:
        evaluate = with_gradients(evaluate, uncertain, [limit.outcome])
    options = {"n": n, "p0": p0} if method == "subset" else {"n": n} if method == "importance" else {}
    config = {
        **spec.config(n_steps, dt, scheme),
        "n": None,
        "method": method,
        "limit": str(limit),
        "options": options,
    }
    desc = f"{method} {spec.name}"
    rounds = Rounds(
        spec, model, evaluate, uncertain, folder, config, limit, progress, desc, scheme.samples_per_call(model.system)
    )
    try:
        result = _estimate(rounds, marginals, method, n, p0, spec.seed)
    finally:
        rounds.close()

    X = np.concatenate(rounds.points)
    out = {k: np.concatenate([o[k] for o in rounds.outputs]) for k in rounds.outputs[0]}
    g = limit.g(np.asarray(out[limit.outcome], float))
    _, fail = statistics.failures({k: out[k] for k in ("converged", "state_finite", *scalar_names) if k in out})
    importance = _importance(result, X, g, marginals)
    reliability = {
        **result.to_json(),
        **limit.to_json(),
        "inputs": uncertain,
        "importance": dict(zip(uncertain, importance.tolist())),
    }
    if "x_star" in result.extras:
        reliability["design_point"] = dict(zip(uncertain, np.asarray(result.extras["x_star"]).tolist()))
        # A derivative that is exactly zero is most often a step-grid effect (an impact instant that does
        # not move with the input unless it is located inside the step), not an input without influence.
        reliability["zero_gradient"] = [k for k, a in zip(uncertain, importance) if a == 0]
    summary = {
        "study": {
            **config,
            "t_final": t_final,
            "n_simulations": len(X),
            "uncertain": uncertain,
            "model_description": model.description,
        },
        "reliability": reliability,
        "failures": fail,
        "outcomes": {
            o.name: {"description": o.description, "unit": o.unit, **statistics.scalar_summary(out[o.name])}
            for o in outcomes
        },
    }
    np.savez(
        os.path.join(out_dir, "samples.npz"),
        round=np.concatenate(rounds.round_of),
        failed=g <= 0,
        **{f"param:{k}": X[:, j] for j, k in enumerate(uncertain)},
        **{f"out:{k}": v for k, v in out.items()},
    )
    figures = []
    if plot:
        labels = plots.study_labels(outcomes, uncertain, model.param_table.unit)
        plots.reliability_domain(
            X, np.asarray(out[limit.outcome], float), g <= 0, uncertain, importance, limit, reliability,
            os.path.join(out_dir, "reliability.png"), title=f"{spec.name}: {method}", labels=labels,
            boundary=_form_plane(result, marginals, importance),
        )  # fmt: skip
        figures.append("reliability.png")
    return write_summary(summary, out_dir, figures, rounds.run_result(), n_steps, t_wall)


def _estimate(rounds: Rounds, marginals, method: str, n, p0: float, seed: int) -> rel.ReliabilityResult:
    if method == "subset":
        return rel.subset_simulation(rounds.g, marginals, n_per_level=n, p0=p0, seed=seed, batched=True)
    form_result = rel.form(
        rounds.g, marginals, batched=True, value_and_grad=rounds.value_and_grad, tol=FORM_TOL, max_iter=FORM_MAX_ITER
    )
    if not form_result.extras["converged"]:
        print(
            f"warning: FORM did not converge in {form_result.extras['iterations']} iterations "
            f"(|G(u)| = {form_result.extras['g_residual']:.3g}, alignment residual "
            f"{form_result.extras['alignment_residual']:.3g}): its design point is the last iterate",
            file=sys.stderr,
        )
    if method == "form":
        return form_result
    if method == "sorm":
        result = rel.sorm(
            rounds.g, marginals, batched=True, value_and_grad=rounds.value_and_grad, form_result=form_result
        )
        return result._replace(n_simulations=result.n_simulations + form_result.n_simulations)
    result = rel.importance_sampling(
        rounds.g, marginals, n=n, seed=seed, design_point=form_result.extras["u_star"], batched=True
    )
    extras = {
        **result.extras,
        "form_simulations": form_result.n_simulations,
        "beta_form": form_result.extras["beta"],
        "form_converged": form_result.extras["converged"],
        "x_star": form_result.extras["x_star"],
        "importance_factors": form_result.extras["importance_factors"],
    }
    return result._replace(n_simulations=result.n_simulations + form_result.n_simulations, extras=extras)


def _importance(result: rel.ReliabilityResult, X, g, marginals) -> np.ndarray:
    """Each input's share in the failure: FORM's importance factors ``α²`` where the method found a design
    point; else the squared mean, in standard normal space, of the simulated points that failed, normalised
    (the same direction as ``α`` for a linear limit state)."""
    if "importance_factors" in result.extras:
        return np.asarray(result.extras["importance_factors"], float)
    failed = g <= 0
    if not failed.any():
        return np.full(len(marginals), math.nan)
    u = np.stack([_to_standard(m, X[failed, j]) for j, m in enumerate(marginals)], axis=1)
    shift = np.mean(u, axis=0) ** 2
    return shift / shift.sum() if shift.sum() > 0 else np.full(len(marginals), math.nan)


def _form_plane(result: rel.ReliabilityResult, marginals, importance, half_width: float = 3.0):
    """FORM's linearised limit state ``α·u = β`` drawn on the two most important inputs: the line through the
    design point along the plane's direction in those two coordinates (the others at the design point), mapped
    to the parameters' units, as points (m, 2); None without a design point or with one input."""
    if "u_star" not in result.extras or len(marginals) < 2:
        return None
    u_star = np.asarray(result.extras["u_star"], float)
    if not np.any(u_star):
        return None
    alpha = u_star / np.linalg.norm(u_star)  # at a converged design point u* = β α
    i, j = np.argsort(-np.nan_to_num(importance, nan=-1.0), kind="stable")[:2]
    along = np.zeros_like(u_star)
    along[i], along[j] = alpha[j], -alpha[i]
    if not np.any(along):
        return None
    along /= np.linalg.norm(along)
    U = u_star + np.linspace(-half_width, half_width, 61)[:, None] * along
    return np.asarray(rel.standard_to_physical(marginals, U))[:, [i, j]]


def _to_standard(m, x):
    from scipy.special import ndtri

    return ndtri(np.clip(m.cdf(x), 1e-300, 1 - 1e-16))


_DESCRIBE = {
    "subset": "subset simulation",
    "form": "FORM",
    "sorm": "SORM",
    "importance": "importance sampling at FORM's design point",
}


def plan_line(spec: StudySpec, limit: rel.Limit, method: str, n: int | None, p0: float, dtype: str):
    """What will run, in the terms of :func:`jaxcontact.commands.mc.plan`: (line, size of one batch, warnings,
    simulations already saved by an earlier run); no compute."""
    from jaxcontact.commands import checks

    spec = _reliability_spec(spec, limit)
    model, dt, _, n_steps, outcomes = study_model(spec)
    check_method(spec, limit, method, outcomes)
    n = DEFAULT_N.get(method) if n is None else n
    per_round = {"subset": f"{n} samples per level, p0 = {p0:g}", "importance": f"{n} samples after FORM"}
    size = checks.study_size(
        model,
        n_simulations=n or 1,
        n_params=len(spec.space),
        n_steps=n_steps,
        save_every=spec.save_every,
        n_series=0,
        n_scalars=len(outcomes),
        chunk=spec.chunk_size or n or 1,
    )
    line = (
        f"{spec.name}: {_DESCRIBE[method]} of {limit.outcome} {'>' if limit.above else '<'} {limit.threshold:g}"
        + (f" ({per_round[method]})" if method in per_round else " (the simulations its iteration needs)")
        + f", each {n_steps} steps of {dt:g} s"
        + "\n"
        + parameters_line(spec, model)
    )
    return line, size, checks.step_warnings(model, dt, dtype), 0


def saved_rounds(folder) -> tuple[int, int]:
    """(rounds, simulations) an interrupted reliability study has in ``folder`` (its ``chunks``)."""
    from jaxcontact.studies.runner import saved_samples

    rounds = sims = 0
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            if name.startswith("round_"):
                done, total = saved_samples(os.path.join(folder, name))
                rounds += total > 0 and done == total
                sims += done
    return rounds, sims


def reliability_line(r: dict) -> str:
    """The estimate in one line: probability, its error, simulations, and β where the method has one."""
    p, se = r["probability"], r["standard_error"]
    line = f"  P[{r['failure_when']}] = {p:.4g}"
    if r["method"] in ("form", "sorm"):
        line += f" (β = {r['beta']:.4g}; an approximation, no sampling error)"
    elif se is not None:
        cov = r["cov"]
        line += f" ± {se:.2g} (standard error" + (f", c.o.v. {cov:.2g})" if cov is not None else ")")
    return line + f" by {r['method']}, {r['n_simulations']} simulations"


def format_reliability(summary: dict) -> str:
    """A short text report of a reliability study: the estimate, the method's diagnostics, failures, speed."""
    st, r, fail, tm = summary["study"], summary["reliability"], summary["failures"], summary["timing"]
    lines = [
        f"{st['model']}: {_DESCRIBE[r['method']]}, {st['n_steps']} steps of {st['dt']:g} s; uncertain: "
        + ", ".join(f"{k}={v}" for k, v in st["params"].items()),
        reliability_line(r),
    ]
    if "design_point" in r:
        point = ", ".join(f"{k} = {v:.6g}" for k, v in r["design_point"].items())
        converged = r.get("converged", r.get("form_converged", True))
        lines.append(f"  design point: {point}" + ("" if converged else " (FORM did not converge)"))
    if "levels" in r:
        lines.append(
            f"  levels: {r['levels']} (thresholds "
            + ", ".join(f"{b:.4g}" for b in r["thresholds"])
            + ")"
            + ("" if r["converged"] else " — stopped at the last level with fewer than n·p0 failures")
        )
    if r.get("zero_gradient"):
        lines.append(
            f"  warning: the outcome's derivative in {', '.join(r['zero_gradient'])} is exactly zero at the design "
            f"point: if the input moves an impact instant, the time-stepping misses it (try --impact-location "
            f"interpolated) and the method treats the input as without influence"
        )
    top = sorted(r["importance"].items(), key=lambda kv: -(kv[1] or 0))
    lines.append("  importance: " + ", ".join(f"{k} {v:.2f}" if v is not None else f"{k} n/a" for k, v in top))
    if fail["n_failed"]:
        lines.append(
            f"  warning: {fail['n_failed']} of {fail['n_samples']} simulations did not converge or were not "
            f"finite; the estimate uses their values (see failures in summary.json)"
        )
    lines.append(
        f"  wall {tm['wall_seconds']:.1f} s (compile {tm['compile_seconds']:.1f} s), {tm['n_computed']} simulated, "
        f"{tm['n_loaded']} resumed from disk"
    )
    return "\n".join(lines)

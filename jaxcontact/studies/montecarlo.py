"""Monte Carlo study of a model: sample, simulate in chunks, reduce, summarise, plot.

    summary = run_study(default_study(get_model("four-bar")), out_dir="mc-four-bar")

The study takes the :class:`jaxcontact.models.Model` object (resolved from a name once, by the caller)
and asks it everything model-specific: its parameters' table (units, bounds), its default study, its
variants by contact kind, its builder for checking sampled values.

Pipeline: the uncertain parameters' unit-cube design (``sampling``; a
Saltelli design when Sobol indices are asked for) is mapped through the
inverse CDFs (``distributions``), every sample's parameters are checked
against the model's rules *before any compute*, the per-sample function
(simulate the model, reducing it to ``outcomes`` inside the scan) runs through the
chunked, sharded, resumable ``runner``, and the outputs become
``summary.json``, ``samples.npz`` and PNG figures.

``n`` counts simulations. With Sobol indices (the default when there is at
least one uncertain parameter) the design has n_base = ceil(n / (d + 2)) base
rows and n_base (d + 2) simulations. Statistics use every valid simulation
(each one is a draw from the joint input distribution); their standard errors
use only the independent A and B blocks, since the AB_i blocks share columns
with A.

Everything in ``summary.json`` except its ``timing`` section is a
deterministic function of the study spec: a resumed study ends with the same
numbers as an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import sys
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.initial import StartError, check_state
from jaxcontact.simulate import check_scheme, n_steps_for
from jaxcontact.stepping import SCHEMES
from jaxcontact.stepping.base import Scheme
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.studies import plots, statistics
from jaxcontact.studies.distributions import ParamSpace
from jaxcontact.studies.outcomes import outcome as make_outcome
from jaxcontact.studies.outcomes import simulate_outcomes
from jaxcontact.studies.runner import run_samples
from jaxcontact.studies.sampling import SAMPLERS, unit_points
from jaxcontact.studies.sensitivity import base_rows, saltelli_design, study_indices
from jaxcontact.studies.step_check import format_step_check, step_check


@dataclasses.dataclass(frozen=True)
class StudySpec:
    """Everything that defines a study (and its identity for resuming).

    model: the :class:`jaxcontact.models.Model` (its ``label`` names the study); space: uncertain parameters;
    n: simulations;
    outcomes: outcome names (see ``outcomes``); sampler: random | lhs | sobol;
    sensitivity: compute Sobol indices (Saltelli design); dt, t_final: time
    grid (None: the model's); save_every: keep every k-th row of time series;
    overrides: fixed parameter values replacing the model defaults;
    scheme: the time-stepping scheme and its options (any scheme that treats the model's contacts);
    model_options: keyword options of the model's builder (its variant for the scheme's contact kind);
    chunk_size: samples per compiled call (None: ``runner.CHUNK_PER_DEVICE`` per device);
    step_check: where the scheme asks for it (``Scheme.step_checked``), rerun the extreme samples at half the
    step (``step_check``) and flag those it changes.
    """

    model: Any
    space: ParamSpace
    n: int
    outcomes: tuple[str, ...]
    sampler: str = "random"
    seed: int = 0
    sensitivity: bool = True
    dt: float | None = None
    t_final: float | None = None
    save_every: int = 10
    overrides: tuple[tuple[str, float], ...] = ()
    scheme: Scheme = MoreauJean()
    model_options: tuple[tuple[str, str], ...] = ()
    chunk_size: int | None = None
    n_bootstrap: int = 1000
    step_check: bool = True

    @property
    def name(self) -> str:
        """The study's model as the user named it (a registry name or ``FILE.py:FUNCTION``)."""
        return self.model.label

    def config(self, n_steps: int, dt: float, scheme: Scheme) -> dict:
        """JSON identity of the study (what must match for a resume); ``scheme``: the one run.

        The model is identified by its name alone, as studies written before models were objects
        were: a folder they wrote still resumes (a digest of the parameters would refuse it).
        """
        return {
            "model": self.name,
            "params": self.space.to_json(),
            "n": self.n,
            "outcomes": list(self.outcomes),
            "sampler": self.sampler,
            "seed": self.seed,
            "sensitivity": self.sensitivity,
            "dt": dt,
            "n_steps": n_steps,
            "save_every": self.save_every,
            "overrides": dict(self.overrides),
            "model_options": dict(self.model_options),
            "scheme": scheme.config(),
            "dtype": str(jnp.zeros(()).dtype),
        }


def check_samples(model, overrides: dict, values: dict, options: dict | None = None) -> None:
    """Every sample must pass the model's own parameter checks; raise before any compute.

    The model's builder (``model.build``) is called once with the sampled arrays (the built-in
    models validate batched leaves). A builder that only accepts scalars (TypeError) is called at
    every corner of the sampled box instead (the componentwise min and max of each varied
    parameter). A model without a builder has its parameter table check the samples.
    """
    prefix = (
        f"sampled parameters ({', '.join(f'{k} in [{np.min(v):.6g}, {np.max(v):.6g}]' for k, v in values.items())})"
    )
    if model.build is None:
        try:
            model.param_table.check(values)
            return
        except ValueError as e:
            raise ValueError(f"{prefix}: {e}; narrow the distributions") from None
    try:
        model.build(**(options or {}), **overrides, **values)
        return
    except ValueError as e:
        raise ValueError(f"{prefix}: {e}; narrow the distributions") from None
    except TypeError:
        pass
    names = list(values)
    for corner in itertools.product(*[(float(np.min(values[k])), float(np.max(values[k]))) for k in names]):
        try:
            model.build(**(options or {}), **overrides, **dict(zip(names, corner)))
        except ValueError as e:
            raise ValueError(f"{prefix}: at {dict(zip(names, corner))}: {e}; narrow the distributions") from None


def design(space: ParamSpace, n: int, sampler: str, seed: int, sensitivity: bool):
    """Sampled parameter values (name -> (N,)), the number of base rows, and block labels.

    blocks[i]: 0 = A, 1 = B, 2 + j = AB_j (Saltelli); all 0 without sensitivity.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"number of samples n = {n!r} must be an int ≥ 1")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler = {sampler!r} must be one of {SAMPLERS}")
    d = len(space.uncertain)
    if sensitivity and d >= 1:
        n_base = base_rows(n, d)
        unit = saltelli_design(unit_points(n_base, 2 * d, sampler, seed))
        blocks = np.repeat(np.arange(d + 2), n_base)
    else:
        n_base = n
        unit = unit_points(n, d, sampler, seed)
        blocks = np.zeros(n, int)
    return space.ppf(unit), n_base, blocks


def make_evaluator(model, outcomes, *, dt: float, n_steps: int, scheme: Scheme, save_every: int):
    """Per-sample function: varied parameter values -> outcomes, convergence and finiteness flags.

    The outcomes are reduced inside the simulation's scan (``outcomes.simulate_outcomes``): no
    trajectory is stored and no per-step diagnostic is computed that no outcome reads.
    """

    def evaluate(sample: dict) -> dict:
        p = sample_params(model, sample)
        q0, u0 = model.initial_state(p)
        return simulate_outcomes(
            model.system, p, q0, u0, dt=dt, n_steps=n_steps, outcomes=outcomes, scheme=scheme, save_every=save_every
        )

    return evaluate


def sample_params(model, sample: dict) -> dict:
    """The model's parameters with one sample's values set (pure jnp), and the parameters that follow them
    recomputed (``model.derive``), as building the model does."""
    p = dict(model.params)
    for k, v in sample.items():
        p[k] = jnp.broadcast_to(jnp.asarray(v, jnp.asarray(p[k]).dtype), jnp.shape(p[k]))
    return p if model.derive is None else model.derive(p)


def check_starts(model, values: dict) -> None:
    """Every sample's initial state must be consistent (:func:`jaxcontact.initial.check_state`: on its
    manifold, joints assembled, no contact in penetration); the error names the sample's values."""
    start_checker(model)(values)


def start_checker(model):
    """:func:`check_starts` for ``model`` as a function of the samples' values, its program compiled once
    (for each batch shape): a study that checks batch after batch keeps it."""

    def start(sample):  # the sample's parameters and start in one program
        p = sample_params(model, sample)
        return p, model.initial_state(p)[0]

    starts = jax.jit(jax.vmap(start))

    def check(values: dict) -> None:
        if not values:
            return
        p, q0 = starts(values)
        try:
            check_state(model.system, p, q0)
        except StartError as e:
            at = ", ".join(f"{k} = {float(np.asarray(v)[e.sample]):.6g}" for k, v in values.items())
            raise ValueError(f"sampled parameters {at}: {e}; narrow the distributions") from None

    return check


def _check_out_dir(out_dir: str) -> None:
    try:
        os.makedirs(out_dir, exist_ok=True)
        probe = os.path.join(out_dir, f".write-test.{os.getpid()}")  # one per process: several may share out_dir
        with open(probe, "w") as f:
            f.write("ok")
        os.unlink(probe)
    except OSError as e:
        raise ValueError(f"output folder {out_dir!r} is not writable: {e.strerror or e}") from None


class PreparedStudy(NamedTuple):
    """Everything a study needs before it runs: the model, time grid, outcomes, design and evaluator."""

    model: Any
    dt: float
    t_final: float
    n_steps: int
    outcomes: list
    values: dict
    n_base: int
    blocks: np.ndarray
    scheme: Scheme
    evaluate: object


def study_model(spec: StudySpec):
    """The study's model (with the scheme's model options), step, final time, step count and outcomes —
    validated, without building the sample design: (model, dt, t_final, n_steps, outcomes)."""
    if spec.save_every < 1:
        raise ValueError(f"save_every = {spec.save_every} must be ≥ 1")
    model = spec_model(spec)
    spec.space.validate(model.params, model.param_table.bounds)
    dt = float(model.dt if spec.dt is None else spec.dt)
    t_final = float(model.t_final if spec.t_final is None else spec.t_final)
    n_steps = n_steps_for(dt, t_final)
    outcomes = study_outcomes(spec, model, dt, spec.save_every)
    if not outcomes:
        raise ValueError("a study needs at least one outcome")
    check_scheme(spec.scheme, model.system, spec.name)
    return model, dt, t_final, n_steps, outcomes


def study_outcomes(spec: StudySpec, model, dt: float, save_every: int) -> list:
    """The study's outcomes on a grid of step ``dt`` whose series keep every ``save_every``-th row."""
    return [
        make_outcome(
            name, model.system, save_every=save_every, dt=dt, observables=model.observables, references=model.references
        )
        for name in spec.outcomes
    ]


def parameters_line(spec: StudySpec, model) -> str:
    """The study's parameters for its plan: each name with its law and unit, then the values fixed for it."""
    line = "  parameters: " + ", ".join(f"{k}={spec.space[k]} [{model.param_table.unit(k)}]" for k in spec.space.names)
    if spec.overrides:
        line += "; fixed: " + ", ".join(f"{k}={v:g} [{model.param_table.unit(k)}]" for k, v in spec.overrides)
    return line


def spec_model(spec: StudySpec):
    """The study's model with its options and overrides: ``spec.model`` itself when it has none (no rebuild)."""
    options = {**dict(spec.model_options), **dict(spec.overrides)}
    if not options:
        return spec.model
    if spec.model.build is None:
        raise ValueError(f"model {spec.name!r} has no builder to apply {sorted(options)} to")
    built = spec.model.build(**options)
    # The reference models the caller gave the study's model stay with it (the builder knows only its own).
    return built._replace(references={**built.references, **spec.model.references})


def prepare_study(spec: StudySpec, *, differentiated: bool = False) -> PreparedStudy:
    """Validate ``spec`` and build its model, outcomes, sample design and per-sample evaluator (no compute).

    Unless the evaluator is to be ``differentiated``, it runs the scheme's variant for forward runs
    (:meth:`jaxcontact.stepping.base.Scheme.for_forward_runs`), returned as the study's ``scheme``.
    """
    model, dt, t_final, n_steps, outcomes = study_model(spec)
    values, n_base, blocks = design(spec.space, spec.n, spec.sampler, spec.seed, spec.sensitivity)
    check_samples(spec.model, dict(spec.overrides), values, dict(spec.model_options))
    check_starts(model, {k: values[k] for k in spec.space.names})
    scheme = spec.scheme if differentiated else spec.scheme.for_forward_runs()
    evaluate = make_evaluator(model, outcomes, dt=dt, n_steps=n_steps, scheme=scheme, save_every=spec.save_every)
    return PreparedStudy(model, dt, t_final, n_steps, outcomes, values, n_base, blocks, scheme, evaluate)


def run_study(spec: StudySpec, out_dir: str, *, progress: bool = True, plot: bool = True, limit=None) -> dict:
    """Run (or resume) ``spec`` writing into ``out_dir``; return the summary dict (also summary.json).

    NaN statistics (e.g. Sobol indices of a constant outcome) appear as None (JSON null). ``limit`` (a
    :class:`~jaxcontact.studies.reliability.Limit` on one of the study's scalar outcomes) adds
    ``reliability``: the failed fraction of the valid independent samples (a Saltelli design's A and B
    rows) with its standard error.
    """
    t_wall = time.perf_counter()
    model, dt, t_final, n_steps, outcomes, values, n_base, blocks, scheme, evaluate = prepare_study(spec)
    _check_out_dir(out_dir)
    varied = {k: values[k] for k in spec.space.names}
    config = spec.config(n_steps, dt, scheme)
    result = run_samples(
        evaluate,
        varied,
        chunk_size=spec.chunk_size,
        out_dir=os.path.join(out_dir, "chunks"),
        config=config,
        progress=progress,
        desc=f"mc {spec.name}",
        samples_per_call=scheme.samples_per_call(model.system),
    )
    out = result.outputs
    valid, fail = statistics.failures(out)
    N = len(valid)
    t_series = (dt * np.arange(n_steps + 1))[:: spec.save_every]

    uncertain = list(spec.space.uncertain)
    independent = blocks < 2
    summary = {
        "study": {
            **config,
            "t_final": t_final,
            "n_simulations": N,
            "n_base": int(n_base),
            "uncertain": uncertain,
            "model_description": model.description,
        },
        "failures": fail,
        "outcomes": {},
    }
    scalars, series = {}, {}
    sobol = {}
    for o in outcomes:
        x = out[o.name]
        if o.kind == "series":
            series[o.name] = x
            continue
        scalars[o.name] = x
        s = statistics.scalar_summary(x, valid)
        n_ind = int((valid & independent & np.isfinite(x)).sum())
        s["sem"] = s["std"] / math.sqrt(n_ind) if n_ind > 1 else float("nan")
        entry = {"description": o.description, "unit": o.unit, **s}
        if spec.sensitivity and uncertain:
            idx, entry["sobol"] = study_indices(x, uncertain, valid, n_bootstrap=spec.n_bootstrap, seed=spec.seed)
            if idx is not None:
                sobol[o.name] = idx
        summary["outcomes"][o.name] = entry
    bands = {name: statistics.time_bands(x, valid) for name, x in series.items()}
    summary["series"] = {
        name: {
            "description": next(o.description for o in outcomes if o.name == name),
            "rows": int(x.shape[1]),
            "save_every": spec.save_every,
        }
        for name, x in series.items()
    }
    judged = {o.name: scalars[o.name] for o in outcomes if o.name in scalars and not o.measures_error}
    if spec.step_check and scheme.step_checked and judged:

        def at(k: int):  # the same samples on a grid of dt/k, their series rows at the same times
            return make_evaluator(
                model,
                study_outcomes(spec, model, dt / k, k * spec.save_every),
                dt=dt / k,
                n_steps=k * n_steps,
                scheme=scheme,
                save_every=k * spec.save_every,
            )

        if progress:
            print(f"step check: the extreme samples again at dt/2 = {dt / 2:g} s", file=sys.stderr, flush=True)
        floors = {o.name: o.floor for o in outcomes}  # step_check keeps the judged ones
        summary["step_check"] = step_check(at, varied, judged, valid, dt=dt, seed=spec.seed, floors=floors)
    if limit is not None:
        from jaxcontact.studies.reliability import from_samples

        use = valid & independent
        estimate = from_samples(limit.g(np.asarray(out[limit.outcome], float)[use]))
        left_out = int((independent & ~valid).sum())
        summary["reliability"] = {**estimate.to_json(), **limit.to_json(), "n_left_out": left_out}

    if jax.process_index() != 0:
        # Several processes: process 0 alone writes the files (every process holds the same outputs).
        return _jsonable(summary)
    np.savez(
        os.path.join(out_dir, "samples.npz"),
        t=t_series,
        valid=valid,
        block=blocks,
        **{f"param:{k}": v for k, v in varied.items()},
        **{f"out:{k}": v for k, v in out.items()},
        **(_step_marks(summary["step_check"], N) if "step_check" in summary else {}),
    )
    figures = []
    if plot:
        title = f"{spec.name}: {fail['n_valid']} valid of {N} samples"
        labels = plots.study_labels(outcomes, spec.space.names, model.param_table.unit)
        if bands:
            plots.quantile_bands(t_series, bands, os.path.join(out_dir, "bands.png"), title, labels=labels)
            figures.append("bands.png")
        if scalars:
            plots.histograms(scalars, valid, os.path.join(out_dir, "histograms.png"), title=title, labels=labels)
            figures.append("histograms.png")
            if uncertain:
                plots.scatter(
                    {k: values[k] for k in uncertain},
                    scalars,
                    valid,
                    os.path.join(out_dir, "scatter.png"),
                    labels=labels,
                )
                figures.append("scatter.png")
                by_index = {k: values[k] for k in uncertain}
                if plots.scatter_by_index(by_index, scalars, valid, os.path.join(out_dir, "by_index.png"), labels):
                    figures.append("by_index.png")
        if sobol:
            plots.sensitivity_bars(
                sobol,
                uncertain,
                os.path.join(out_dir, "sensitivity.png"),
                f"{spec.name}: Sobol indices",
                labels=labels,
            )
            figures.append("sensitivity.png")
    return write_summary(summary, out_dir, figures, result, n_steps, t_wall)


def _step_marks(check: dict, n: int) -> dict:
    """samples.npz's marks of the step check: the samples it reran and those it flagged, as (N,) booleans."""
    rerun, flagged = np.zeros(n, bool), np.zeros(n, bool)
    rerun[check["samples"]] = True
    flagged[[f["sample"] for f in check["flagged"]]] = True
    return {"step_check:rerun": rerun, "step_check:flagged": flagged}


def write_summary(summary: dict, out_dir: str, figures: list, result, n_steps: int, t_wall: float) -> dict:
    """Add the files written and the run's timing to ``summary``, write it as strict JSON, return it."""
    summary["files"] = ["summary.json", "samples.npz"] + figures
    summary["timing"] = {
        "wall_seconds": time.perf_counter() - t_wall,
        "compile_seconds": result.compile_seconds,
        "run_seconds": result.run_seconds,
        "n_computed": result.n_computed,
        "n_loaded": result.n_loaded,
        "samples_per_second": result.samples_per_second,
        "env_steps_per_second": result.samples_per_second * n_steps,
        "n_devices": result.n_devices,
        "chunk_size": result.chunk_size,
    }
    summary = _jsonable(summary)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def _jsonable(x):
    """NaN/inf -> None so summary.json is strict JSON."""
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def default_study(model, *, n=None, params=(), only: bool = False, outcomes=(), **kw) -> StudySpec:
    """A StudySpec from the model's default study (``model.study``), with user choices (CLI strings) on top.

    params: ``name=dist(args)`` strings replacing/adding to the defaults (only=True: instead of them);
    the default study's fixed values (``overrides``) apply under the user's ``overrides``;
    outcomes: names replacing the default list; other keywords (None: the default) go to StudySpec
    (the study's default scheme, with its options, when no ``scheme`` is given). A model with variants
    by contact kind runs the one its scheme treats.
    """
    d = model.study
    space = (
        ParamSpace.parse(params) if only or d is None else ParamSpace.parse(d.params).updated(ParamSpace.parse(params))
    )
    if not space.names:
        raise ValueError(
            f"no uncertain parameter for {model.label!r}: give --param 'name=dist(args)' (quoted for the shell)"
        )
    outs = tuple(outcomes) or default_outcomes(model)
    n = (d.n if d is not None else 1024) if n is None else n
    kw = {k: v for k, v in kw.items() if v is not None}
    for key in ("dt", "t_final", "save_every"):
        if key not in kw and d is not None and getattr(d, key) is not None:
            kw[key] = getattr(d, key)
    if "scheme" not in kw and d is not None:
        kw["scheme"] = SCHEMES[d.scheme](**d.scheme_options)
    options = variant_options(model, kw.get("scheme", MoreauJean()))
    if options and "model_options" not in kw:
        kw["model_options"] = tuple(sorted(options.items()))
    # The default study's fixed values under the user's: a --set of the name wins, a --param makes it uncertain.
    fixed = {k: v for k, v in (d.overrides if d is not None else {}).items() if k not in space.names}
    overrides = {**fixed, **dict(kw.get("overrides") or {})}
    if overrides:
        kw["overrides"] = tuple(sorted(overrides.items()))
    return StudySpec(model, space, n, outs, **kw)


def default_outcomes(model) -> tuple[str, ...]:
    """The outcomes a study of ``model`` reports when none are named: its default study's, else three of any
    contact model's."""
    d = model.study
    return tuple(d.outcomes) if d is not None else ("peak_impulse", "impacts", "rest_time")


def variant_options(model, scheme: Scheme) -> dict:
    """The builder options of the model's variant for ``scheme``: the variant of the contact kind the scheme
    treats; of a scheme that treats several, the variant the default study's scheme treats ({}: none)."""
    kinds = [k for k in model.variants if k in scheme.contact_kinds]
    if len(kinds) > 1 and model.study is not None:
        kinds = [k for k in kinds if k in SCHEMES[model.study.scheme].contact_kinds] or kinds
    return dict(model.variants[kinds[0]]) if kinds else {}


def format_summary(summary: dict) -> str:
    """A short text report: outcomes (mean ± std, 5–95 % quantiles), dominant Sobol index, failures, speed."""
    st, fail, tm = summary["study"], summary["failures"], summary["timing"]
    lines = [
        f"{st['model']}: {fail['n_samples']} simulations ({st['sampler']}, seed {st['seed']}), "
        f"{st['n_steps']} steps of {st['dt']:g} s; uncertain: " + ", ".join(f"{k}={v}" for k, v in st["params"].items())
    ]
    for name, o in summary["outcomes"].items():
        q = o["quantiles"]
        line = (
            f"  {name:<18} mean {_g(o['mean'], 5)} ± {_g(o['std'], 3)} "
            f"(5–95 %: {_g(q['0.05'], 5)} … {_g(q['0.95'], 5)}) {o['unit']}"
        ).rstrip()
        if "sobol" in o:
            line += _largest_total_index(o["sobol"])
        lines.append(line)
    lines.append(
        f"  failed samples: {fail['n_failed']} of {fail['n_samples']}"
        + (
            f" (not converged {fail.get('not_converged', 0)}, non-finite state "
            f"{fail.get('non_finite_state', 0)}, non-finite output {fail['non_finite_output']})"
            if fail["n_failed"]
            else ""
        )
    )
    if "step_check" in summary:
        units = {name: o["unit"] for name, o in summary["outcomes"].items()}
        lines += format_step_check(summary["step_check"], units)
    sps = tm["samples_per_second"]  # None when nothing was computed (a fully resumed study)
    lines.append(
        f"  wall {tm['wall_seconds']:.1f} s (compile {tm['compile_seconds']:.1f} s), "
        + (
            f"{sps:.0f} samples/s, {tm['env_steps_per_second']:.3g} env-steps/s"
            if sps is not None
            else "nothing computed (resumed from finished chunks)"
        )
        + f" on {tm['n_devices']} device(s); {tm['n_loaded']} samples resumed from disk"
    )
    return "\n".join(lines)


def _largest_total_index(sobol: dict) -> str:
    """'; largest ST: name value [lo, hi] (level, rows)' — or why no index is given."""
    if "refused" in sobol:
        return f"; {sobol['refused']} base rows (ask a larger --n)"
    idx = sobol["indices"]
    top = max(idx, key=lambda k: -1.0 if idx[k]["ST"] is None else idx[k]["ST"]) if idx else None
    if top is None or idx[top]["ST"] is None:
        return ""
    lo, hi = idx[top]["ST_ci"]
    if lo is None or hi is None:  # an expansion's indices (--method pce) come without intervals
        return f"; largest ST: {top} {idx[top]['ST']:.2f}"
    return (
        f"; largest ST: {top} {idx[top]['ST']:.2f} [{lo:.2f}, {hi:.2f}] "
        f"({100 * sobol['confidence']:g} %, {sobol['n_base_used']} base rows)"
    )


def _g(x, digits: int) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"

"""Polynomial chaos study of a built-in model: the ``--method pce | pce-grad`` engine of ``jaxcontact mc``.

    summary = run_pce_study(spec, out_dir="pce-four-bar", method="pce-grad")

The same study spec, evaluator, chunked/resumable runner, failure accounting,
summary.json and plots as the Monte Carlo study (:mod:`~jaxcontact.studies.montecarlo`),
with two differences:

* the design is a plain one of ``spec.n`` points of the spec's sampler (no
  Saltelli blocks): a polynomial chaos expansion of each scalar outcome
  (:func:`~jaxcontact.studies.pce.fit_pce`) gives the mean, standard deviation
  and the first-order and total Sobol indices from its coefficients;
* with ``method="pce-grad"`` every sample also returns the derivative of each
  scalar outcome with respect to each uncertain parameter, by ``jax.jacfwd``
  through the study's own jitted per-sample evaluation (in the physical scale;
  the chain rule to the standard variable is applied before the fit), and the
  fit uses them as extra rows.

Each scalar outcome's entry in summary.json keeps the sample statistics and
adds ``pce`` (Q² by cross-validation, leave-one-out Q², the share of the
variance in the last degrees, degree, terms, reliable and why not, the PCE
mean and std); its ``sobol`` section has the indices of the expansion and no
bootstrap intervals (``[null, null]``). An outcome whose Q² is below the
threshold, or whose coefficients do not decay, is reported with
``reliable: false``, the reason and a warning — its indices are then not to
be trusted (an impact count is not smooth).
``pce_diagnostics.png`` plots Q² per outcome and each expansion's coefficient
decay (the largest |c_α| of each total degree).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
import warnings

import jax
import numpy as np

from jaxcontact.studies import plots, statistics

# The output-folder check and the strict-JSON conversion are the Monte Carlo study's own (one copy of each).
from jaxcontact.studies.montecarlo import StudySpec, _check_out_dir, prepare_study, write_summary
from jaxcontact.studies.pce import MIN_Q2, PCEWarning, fit_pce, germs_of
from jaxcontact.studies.runner import run_samples
from jaxcontact.studies.sensitivity import SobolIndices

METHODS = ("pce", "pce-grad")


def grad_key(outcome: str, param: str) -> str:
    """Output name of d(outcome)/d(param) in a gradient-enhanced study's samples."""
    return f"d({outcome})/d({param})"


def with_gradients(evaluate, uncertain, scalar_names):
    """Per-sample function: ``evaluate``'s outputs plus d(scalar outcome)/d(uncertain parameter).

    Forward mode (``jax.jacfwd``): one tangent per uncertain parameter through the same scan, in
    the parameters' physical units; the other sampled names (fixed ones) are held constant.
    """
    uncertain, scalar_names = tuple(uncertain), tuple(scalar_names)

    def fn(sample):
        rest = {k: v for k, v in sample.items() if k not in uncertain}

        def scalars(u):
            out = evaluate({**rest, **u})
            return {k: out[k] for k in scalar_names}, out

        jac, out = jax.jacfwd(scalars, has_aux=True)({k: sample[k] for k in uncertain})
        return {**out, **{grad_key(o, p): jac[o][p] for o in scalar_names for p in uncertain}}

    return fn


def run_pce_study(
    spec: StudySpec,
    out_dir: str,
    *,
    method: str = "pce",
    progress: bool = True,
    plot: bool = True,
    min_q2: float = MIN_Q2,
) -> dict:
    """Run (or resume) a polynomial chaos study of ``spec`` in ``out_dir``; return the summary (also summary.json)."""
    if method not in METHODS:
        raise ValueError(f"method = {method!r} must be one of {METHODS}")
    t_wall = time.perf_counter()
    spec = dataclasses.replace(spec, sensitivity=False)
    uncertain = list(spec.space.uncertain)
    if not uncertain:
        raise ValueError("a polynomial chaos study needs at least one uncertain (not fixed) parameter")
    germs = germs_of(spec.space)  # refuses a law without a family before any compute
    if method == "pce-grad" and "forward" not in spec.scheme.differentiation_modes:
        raise ValueError(
            f"method = 'pce-grad' takes forward-mode gradients, and the {spec.scheme.name} scheme with "
            f"these options is differentiated in {', '.join(sorted(spec.scheme.differentiation_modes))} "
            f"mode only: use method 'pce', or scheme options with forward-mode gradients"
        )
    model, dt, t_final, n_steps, outcomes, values, _, _, scheme, evaluate = prepare_study(
        spec, differentiated=method == "pce-grad"
    )
    _check_out_dir(out_dir)
    scalar_names = [o.name for o in outcomes if o.kind != "series"]
    if not scalar_names:
        raise ValueError("a polynomial chaos study needs at least one scalar outcome (series are not expanded)")
    if method == "pce-grad":
        evaluate = with_gradients(evaluate, uncertain, scalar_names)
    varied = {k: values[k] for k in spec.space.names}
    config = {**spec.config(n_steps, dt, scheme), "method": method}
    result = run_samples(
        evaluate,
        varied,
        chunk_size=spec.chunk_size,
        out_dir=os.path.join(out_dir, "chunks"),
        config=config,
        progress=progress,
        desc=f"{method} {spec.name}",
        samples_per_call=scheme.samples_per_call(model.system),
    )
    out = result.outputs
    valid, fail = statistics.failures(out)
    N = len(valid)
    x = np.stack([np.asarray(values[k], float) for k in uncertain], axis=1)
    xi = np.stack([g.to_standard(x[:, j]) for j, g in enumerate(germs)], axis=1)
    dx_dxi = np.stack([g.dx_dxi(xi[:, j]) for j, g in enumerate(germs)], axis=1)

    summary = {
        "study": {
            **config,
            "t_final": t_final,
            "n_simulations": N,
            "n_base": N,
            "uncertain": uncertain,
            "model_description": model.description,
            "germs": {k: f"{g.family} ({g.transform})" for k, g in zip(uncertain, germs)},
        },
        "failures": fail,
        "outcomes": {},
    }
    scalars, series, sobol, fits = {}, {}, {}, {}
    nan2 = np.full((len(uncertain), 2), np.nan)
    nan1 = np.full(len(uncertain), np.nan)
    for o in outcomes:
        y = np.asarray(out[o.name], float)
        if o.kind == "series":
            series[o.name] = y
            continue
        scalars[o.name] = y
        s = statistics.scalar_summary(y, valid)
        s["sem"] = s["std"] / math.sqrt(s["n"]) if s["n"] > 1 else float("nan")
        entry = {"description": o.description, "unit": o.unit, **s}
        ok = valid & np.isfinite(y)
        grad = None
        if method == "pce-grad":
            grad = np.stack([np.asarray(out[grad_key(o.name, p)], float) for p in uncertain], axis=1) * dx_dxi
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PCEWarning)
            try:
                fit = fit_pce(germs, xi[ok], y[ok], None if grad is None else grad[ok], min_q2=min_q2, name=o.name)
            except ValueError as e:
                entry["pce"] = {"error": str(e)}
                summary["outcomes"][o.name] = entry
                continue
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        fits[o.name] = fit
        S1, ST = fit.sobol()
        sobol[o.name] = SobolIndices(
            S1, ST, nan2, nan2, nan1, nan1, float("nan"), int(ok.sum()), int((~ok).sum()), fit.variance
        )
        entry["pce"] = {
            "q2": fit.q2,
            "q2_loo": fit.q2_loo,
            "reliable": fit.reliable,
            "min_q2": min_q2,
            "tail_share": fit.tail_share,
            "max_tail_share": fit.max_tail_share,
            "unreliable_because": fit.unreliable_because,
            "degree": fit.degree,
            "n_terms": fit.n_terms,
            "n_candidates": int(fit.alphas.shape[0]),
            "mean": fit.mean,
            "std": math.sqrt(fit.variance),
            "gradient_rows": fit.gradient,
            "warning": None if fit.reliable else str(caught[0].message) if caught else None,
        }
        entry["sobol"] = {**sobol[o.name].to_json(uncertain), "method": method, "reliable": fit.reliable}
        summary["outcomes"][o.name] = entry
    bands = {name: statistics.time_bands(v, valid) for name, v in series.items()}
    summary["series"] = {
        name: {
            "description": next(o.description for o in outcomes if o.name == name),
            "rows": int(v.shape[1]),
            "save_every": spec.save_every,
        }
        for name, v in series.items()
    }
    t_series = (dt * np.arange(n_steps + 1))[:: spec.save_every]
    np.savez(
        os.path.join(out_dir, "samples.npz"),
        t=t_series,
        valid=valid,
        xi=xi,
        **{f"param:{k}": v for k, v in varied.items()},
        **{f"out:{k}": v for k, v in out.items()},
    )
    figures = []
    if plot:
        title = f"{spec.name} ({method}): {fail['n_valid']} valid of {N} samples"
        if bands:
            plots.quantile_bands(t_series, bands, os.path.join(out_dir, "bands.png"), title)
            figures.append("bands.png")
        plots.histograms(scalars, valid, os.path.join(out_dir, "histograms.png"), title=title)
        figures.append("histograms.png")
        plots.scatter({k: values[k] for k in uncertain}, scalars, valid, os.path.join(out_dir, "scatter.png"))
        figures.append("scatter.png")
        if sobol:
            plots.sensitivity_bars(
                sobol,
                uncertain,
                os.path.join(out_dir, "sensitivity.png"),
                f"{spec.name}: Sobol indices from the polynomial chaos coefficients",
            )
            figures.append("sensitivity.png")
        if fits:
            plots.pce_diagnostics(fits, os.path.join(out_dir, "pce_diagnostics.png"), f"{spec.name} ({method})")
            figures.append("pce_diagnostics.png")
    return write_summary(summary, out_dir, figures, result, n_steps, t_wall)

"""The step check of a Monte Carlo study: its most extreme samples run again at half the step.

A scheme that integrates stiff forces explicitly (``Scheme.step_checked``: the penalty scheme) can, on a step
too coarse for some samples (a stiff contact, an oil film whose squeeze damping grows as the clearance
shrinks), give outcomes that are finite, pass every convergence test, and are wrong. Such samples show first
at the ends of the outcomes' ranges, so the check runs again, at ``dt / 2``, each scalar outcome's smallest
and largest valid sample, and a few drawn at random (the typical step error). A sample is flagged where it
fails at the half step, or where halving the step moves one of its outcomes by more than ``TOLERANCE`` of the
spread the study finds for that outcome (its 5–95 % range) and by more than ``VALUE_TOLERANCE`` of the
outcome's value: the step, not the parameters, then decides that outcome. (The spread alone would flag an
outcome the parameters hardly move, whose small step error is larger than its small spread; the value alone
would miss an outcome whose variation is small beside its size.)

The check reads the samples it reruns only; it flags, it does not repair. A flagged study is rerun with a
smaller step (``--dt``).
"""

from __future__ import annotations

import jax
import numpy as np

from jaxcontact.studies import statistics

# A change of more than these fractions of an outcome's 5–95 % spread and of its value flags the sample.
TOLERANCE = 0.25
VALUE_TOLERANCE = 0.01
RANDOM_SAMPLES = 4
MAX_SAMPLES = 24


def chosen_samples(scalars: dict, valid: np.ndarray, seed: int) -> np.ndarray:
    """Indices of the samples to rerun: every scalar outcome's largest valid sample, then every one's smallest,
    up to ``MAX_SAMPLES - RANDOM_SAMPLES`` of them, then up to ``RANDOM_SAMPLES`` others at random."""
    idx = np.flatnonzero(valid)
    picked: list[int] = []
    for end in (np.argmax, np.argmin):
        for x in scalars.values():
            x = np.asarray(x, float)[idx]
            ok = np.isfinite(x)
            if ok.any() and len(picked) < MAX_SAMPLES - RANDOM_SAMPLES:
                i = int(idx[ok][end(x[ok])])
                if i not in picked:
                    picked.append(i)
    rest = np.setdiff1d(idx, picked)
    rng = np.random.default_rng(seed)
    picked += [int(i) for i in rng.choice(rest, min(RANDOM_SAMPLES, rest.size), replace=False)]
    return np.sort(np.asarray(picked, int))


def step_check(evaluate_half, varied: dict, scalars: dict, valid: np.ndarray, *, dt: float, seed: int) -> dict:
    """Rerun the chosen samples with ``evaluate_half`` (the study's per-sample function at ``dt / 2``) and
    compare their scalar outcomes; the report of ``summary.json``'s ``step_check``."""
    rows = chosen_samples(scalars, valid, seed)
    report = {
        "dt_half": dt / 2,
        "samples": [int(i) for i in rows],
        "tolerance": {"of_spread": TOLERANCE, "of_value": VALUE_TOLERANCE},
        "outcomes": {},
        "flagged": [],
    }
    if rows.size == 0:
        return report
    out = jax.jit(jax.vmap(evaluate_half))({k: np.asarray(v)[rows] for k, v in varied.items()})
    out = {k: np.asarray(v) for k, v in out.items()}
    ok_half, _ = statistics.failures(out)
    flagged = [{"sample": int(rows[r]), "failed_at_half_step": True} for r in np.flatnonzero(~ok_half)]
    for name, x in scalars.items():
        x = np.asarray(x, float)
        finite = valid & np.isfinite(x)
        lo, hi = np.quantile(x[finite], [0.05, 0.95]) if finite.any() else (np.nan, np.nan)
        spread = float(hi - lo)
        before, after = x[rows], np.asarray(out[name], float)
        change = np.abs(after - before)
        with np.errstate(divide="ignore", invalid="ignore"):
            of_spread = np.where(change > 0, change / spread, 0.0)
            of_value = np.where(change > 0, change / np.maximum(np.abs(before), np.abs(after)), 0.0)
        margin = np.where(ok_half, np.minimum(of_spread / TOLERANCE, of_value / VALUE_TOLERANCE), np.nan)
        if np.isnan(margin).all():
            report["outcomes"][name] = {"spread_5_95": spread, "largest": None}
            continue
        w = int(np.nanargmax(margin))
        report["outcomes"][name] = {
            "spread_5_95": spread,
            "largest": {"sample": int(rows[w]), **_change(before[w], after[w], of_spread[w], of_value[w])},
        }
        for r in np.flatnonzero(margin > 1):
            flagged.append(
                {"sample": int(rows[r]), "outcome": name, **_change(before[r], after[r], of_spread[r], of_value[r])}
            )
    report["flagged"] = sorted(flagged, key=lambda f: -f.get("of_value", np.inf))
    return report


def _change(before, after, of_spread, of_value) -> dict:
    return {
        "value": float(before),
        "value_half_step": float(after),
        "of_spread": float(of_spread),
        "of_value": float(of_value),
    }


def format_step_check(check: dict, units: dict) -> list[str]:
    """The summary's lines for the step check: its largest change, or a warning naming the flagged samples."""
    n = len(check["samples"])
    if n == 0:
        return ["  step check: no valid sample to rerun"]
    tol = check["tolerance"]
    limits = f"{100 * tol['of_spread']:g} % of the outcome's spread and {100 * tol['of_value']:g} % of its value"
    flagged = check["flagged"]
    if not flagged:
        largest = [(name, o["largest"]) for name, o in check["outcomes"].items() if o["largest"] is not None]
        if not largest:
            return [f"  step check: {n} samples rerun at dt/2 = {check['dt_half']:g} s"]
        name, c = max(
            largest, key=lambda t: min(t[1]["of_spread"] / tol["of_spread"], t[1]["of_value"] / tol["of_value"])
        )
        return [
            f"  step check: {n} samples rerun at dt/2 = {check['dt_half']:g} s; no outcome moved by more than "
            f"{limits} (largest: {name} of sample {c['sample']}, {_percent(c['of_spread'])} and "
            f"{_percent(c['of_value'])})"
        ]
    samples = sorted({f["sample"] for f in flagged})
    lines = [
        f"  WARNING step check: of the {n} samples rerun at dt/2 = {check['dt_half']:g} s, halving the step "
        f"changes an outcome of {len(samples)} by more than {limits}, or makes them fail: the step decides their "
        f"outcomes; rerun with --dt {check['dt_half']:g} or smaller"
    ]
    for f in flagged[:5]:
        if f.get("failed_at_half_step"):
            lines.append(f"    sample {f['sample']}: fails at the half step")
        else:
            u = units.get(f["outcome"], "")
            lines.append(
                f"    sample {f['sample']}: {f['outcome']} {f['value']:.4g} → {f['value_half_step']:.4g} {u}".rstrip()
                + f" ({_percent(f['of_spread'])} of its spread, {_percent(f['of_value'])} of its value)"
            )
    if len(flagged) > 5:
        lines.append(f"    … {len(flagged) - 5} more in summary.json (step_check)")
    return lines


def _percent(x: float) -> str:
    return "∞ %" if not np.isfinite(x) else f"{100 * x:.2g} %"

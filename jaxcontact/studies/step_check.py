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
would miss an outcome whose variation is small beside its size.) An outcome may also declare a floor
(``Outcome.floor``): a change no larger is not judged. Both relative rules pass where an outcome hardly leaves
zero (a joint free for a ten-thousandth of the run, then for a little more), though nothing there depends on
the step.

A flagged sample then runs at ``dt / 4`` too. Where its change shrinks by half or more, the step is too coarse
for it, and the study is to be rerun with a smaller step (``--dt``: ``dt / 2`` where the values at ``dt / 2``
and ``dt / 4`` agree within the tolerances, ``dt / 4`` or less where they do not). Where it changes as much
again, the outcome is sensitive to any step (a clearance joint's chaotic chatter, a count of impacts): no step
settles that sample's value, and what the study can give is the outcome's distribution over the samples. Three
steps are little evidence: a chaotic outcome can look settled by chance. The check reads the samples
it reruns only; it flags, it does not repair.
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
# What a flag says of its sample: the step is too coarse for it (dt/2 and dt/4 agree), still too coarse at dt/2
# (the change shrinks at dt/4 but passes the tolerances again), its outcome is sensitive to any step (the change
# does not shrink at dt/4), or it fails at the half step.
COARSE, UNSETTLED = "step too coarse", "step too coarse at dt/2 too"
SENSITIVE, FAILS = "sensitive to the step", "fails at half the step"


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


def step_check(
    evaluator_at, varied: dict, scalars: dict, valid: np.ndarray, *, dt: float, seed: int, floors: dict | None = None
) -> dict:
    """Rerun the chosen samples at ``dt / 2`` and compare their scalar outcomes, then the flagged ones at
    ``dt / 4`` to tell a step too coarse from an outcome sensitive to any step; the report of ``summary.json``'s
    ``step_check``. ``evaluator_at(k)``: the study's per-sample function at ``dt / k``. ``floors``: the outcomes'
    absolute floors (``Outcome.floor``; 0 where absent)."""
    floors = {name: float(f) for name, f in (floors or {}).items() if name in scalars and f > 0}
    rows = chosen_samples(scalars, valid, seed)
    report = {
        "dt_half": dt / 2,
        "samples": [int(i) for i in rows],
        "tolerance": {"of_spread": TOLERANCE, "of_value": VALUE_TOLERANCE, "floor": floors},
        "outcomes": {},
        "flagged": [],
    }
    if rows.size == 0:
        return report
    half, ok_half = _run(evaluator_at(2), varied, rows)
    flagged = [{"sample": int(rows[r]), "kind": FAILS} for r in np.flatnonzero(~ok_half)]
    for name, x in scalars.items():
        x = np.asarray(x, float)
        finite = valid & np.isfinite(x)
        lo, hi = np.quantile(x[finite], [0.05, 0.95]) if finite.any() else (np.nan, np.nan)
        spread = float(hi - lo)
        before, after = x[rows], half[name]
        of_spread, of_value = _relative(before, after, spread)
        margin = np.where(ok_half, _margin(of_spread, of_value, after - before, floors.get(name)), np.nan)
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
    moved = np.array(sorted({f["sample"] for f in flagged if "outcome" in f}), int)
    if moved.size:
        # A step too coarse leaves a change that shrinks as the step does; an outcome that changes as much
        # again at dt/4 is sensitive to any step (a chaotic motion, a count of impacts), not under-resolved.
        quarter, ok_quarter = _run(evaluator_at(4), varied, moved)
        for f in flagged:
            if "outcome" in f:
                i = int(np.flatnonzero(moved == f["sample"])[0])
                value = float(quarter[f["outcome"]][i])
                f["value_quarter_step"] = value
                first, then = abs(f["value_half_step"] - f["value"]), abs(value - f["value_half_step"])
                spread = report["outcomes"][f["outcome"]]["spread_5_95"]
                if not ok_quarter[i] or then > first / 2:
                    f["kind"] = SENSITIVE
                else:  # dt/2 and dt/4 agree by the same rule that flagged dt against dt/2
                    agree = _relative(f["value_half_step"], value, spread)
                    settled = _margin(*agree, then, floors.get(f["outcome"])) <= 1
                    f["kind"] = COARSE if settled else UNSETTLED
    report["flagged"] = sorted(flagged, key=lambda f: -f.get("of_value", np.inf))
    return report


def _relative(before, after, spread):
    """The change from ``before`` to ``after`` as shares of the outcome's spread and of its value (0 where
    nothing changed)."""
    before, after = np.asarray(before, float), np.asarray(after, float)
    change = np.abs(after - before)
    with np.errstate(divide="ignore", invalid="ignore"):
        of_spread = np.where(change > 0, change / spread, 0.0)
        of_value = np.where(change > 0, change / np.maximum(np.abs(before), np.abs(after)), 0.0)
    return of_spread, of_value


def _margin(of_spread, of_value, change=None, floor=None):
    """The flag rule: above 1 where a change passes both ``TOLERANCE`` of the spread and ``VALUE_TOLERANCE`` of
    the value, and the outcome's ``floor`` where it has one."""
    margin = np.minimum(of_spread / TOLERANCE, of_value / VALUE_TOLERANCE)
    return margin if not floor else np.minimum(margin, np.abs(change) / floor)


def _run(evaluate, varied: dict, rows: np.ndarray):
    """The scalar and flag outputs of ``evaluate`` on the samples ``rows``, and which of them are valid."""
    out = jax.jit(jax.vmap(evaluate))({k: np.asarray(v)[rows] for k, v in varied.items()})
    out = {k: np.asarray(v) for k, v in out.items()}
    return {k: v.astype(float) for k, v in out.items() if v.ndim == 1}, statistics.failures(out)[0]


def _change(before, after, of_spread, of_value) -> dict:
    return {
        "value": float(before),
        "value_half_step": float(after),
        "of_spread": float(of_spread),
        "of_value": float(of_value),
    }


def format_step_check(check: dict, units: dict) -> list[str]:
    """The summary's lines for the step check: its largest change, or a warning naming the samples whose step is
    too coarse, and a note naming those whose outcomes are sensitive to any step."""
    n = len(check["samples"])
    if n == 0:
        return ["  step check: no valid sample to rerun"]
    tol = check["tolerance"]
    floors = tol.get("floor", {})
    limits = f"{100 * tol['of_spread']:g} % of the outcome's spread and {100 * tol['of_value']:g} % of its value"
    if floors:
        limits += " (and its floor, where it has one)"
    flagged = check["flagged"]
    if not flagged:
        largest = [(name, o["largest"]) for name, o in check["outcomes"].items() if o["largest"] is not None]
        if not largest:
            return [f"  step check: {n} samples rerun at dt/2 = {check['dt_half']:g} s"]

        def margin(t):
            name, c = t
            return _margin(c["of_spread"], c["of_value"], c["value_half_step"] - c["value"], floors.get(name))

        name, c = max(largest, key=margin)
        return [
            f"  step check: {n} samples rerun at dt/2 = {check['dt_half']:g} s; no outcome moved by more than "
            f"{limits} (largest: {name} of sample {c['sample']}, {_percent(c['of_spread'])} and "
            f"{_percent(c['of_value'])})"
        ]
    lines = []
    coarse = [f for f in flagged if f["kind"] in (COARSE, UNSETTLED, FAILS)]
    sensitive = [f for f in flagged if f["kind"] == SENSITIVE]
    if coarse:
        finer = check["dt_half"] / (2 if any(f["kind"] == UNSETTLED for f in coarse) else 1)
        lines.append(
            f"  WARNING step check: of the {n} samples rerun at dt/2 = {check['dt_half']:g} s, halving the step "
            f"changes an outcome of {_count(coarse)} by more than {limits} (a change that shrinks at dt/4), or "
            f"makes them fail: the step is too coarse for them; rerun with --dt {finer:g} or smaller"
        )
        lines += _flag_lines(coarse, units)
    if sensitive:
        lines.append(
            f"  note, step check: an outcome of {_count(sensitive)} of the {n} samples rerun changes by more than "
            f"{limits} at dt/2 and as much again at dt/4: it is sensitive to any step (a chaotic motion, a count of "
            "impacts), so its value for one sample is not reproducible; read its distribution over the samples"
        )
        lines += _flag_lines(sensitive, units)
    return lines


def _count(flags) -> str:
    return f"{len({f['sample'] for f in flags})}"


def _flag_lines(flags, units) -> list[str]:
    lines = []
    for f in flags[:5]:
        if f["kind"] == FAILS:
            lines.append(f"    sample {f['sample']}: fails at the half step")
            continue
        u = units.get(f["outcome"], "")
        lines.append(
            f"    sample {f['sample']}: {f['outcome']} {f['value']:.4g} → {f['value_half_step']:.4g} → "
            f"{f['value_quarter_step']:.4g} {u}".rstrip()
            + f" at dt, dt/2, dt/4 ({_percent(f['of_spread'])} of its spread, {_percent(f['of_value'])} of its value)"
        )
    if len(flags) > 5:
        lines.append(f"    … {len(flags) - 5} more in summary.json (step_check)")
    return lines


def _percent(x: float) -> str:
    return "∞ %" if not np.isfinite(x) else f"{100 * x:.2g} %"

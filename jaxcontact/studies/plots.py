"""PNG figures of a study (matplotlib, Agg backend: no display needed).

Each function draws one figure with one panel per outcome (or per outcome ×
parameter for scatters) and writes it to ``path``; failed samples are never
plotted (callers pass the ``valid`` mask). ``labels`` maps an outcome or
parameter name to ``(description, unit)``: panels are titled and axes labelled
with the description and ``[unit]``, never with internal names such as
``series:gap``. Figures use matplotlib's constrained layout, which keeps the
suptitle, titles and axis labels from overlapping or being clipped.
"""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np

from jaxcontact.units import conventional_unit, coordinate_unit


def pyplot():
    """matplotlib.pyplot on the Agg backend, imported on first use (a command that only checks its options
    does not pay for it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def describe(name: str, labels: dict | None = None) -> tuple[str, str]:
    """(readable text, unit) of an outcome or parameter; coordinates get m or rad."""
    text, unit = (labels or {}).get(name, (None, ""))
    kind, _, arg = name.partition(":")
    if text is None:
        text = f"{arg} ({kind})" if arg else name.replace("_", " ")
    if not unit and arg and arg not in ("gap", "energy", "phi", "speed"):
        unit = coordinate_unit(arg)
    return text, unit


def study_labels(outcomes, param_names, unit=conventional_unit) -> dict:
    """Labels of a study's outcomes (their description and unit) and parameters (name and unit).

    ``unit``: parameter name -> unit text (a model's ``ParamTable.unit``; default the conventions by name).
    """
    out = {o.name: (o.description, o.unit) for o in outcomes}
    out.update({p: (p, unit(p).replace("?", "")) for p in param_names})
    return out


def axis_label(name: str, labels: dict | None = None, width: int = 38) -> str:
    """An axis label with the quantity's readable name and unit, wrapped to ``width``."""
    text, unit = describe(name, labels)
    return textwrap.fill(f"{text} [{unit}]" if unit and unit != "1" else text, width)


def _tidy(ax, nx: int = 5, ny: int = 5) -> None:
    """At most a few ticks, and a common power of ten for tiny or huge values, so tick labels never collide."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nx))
    ax.yaxis.set_major_locator(MaxNLocator(ny))
    for axis in ("x", "y"):
        try:
            ax.ticklabel_format(axis=axis, style="sci", scilimits=(-2, 4), useMathText=True)
        except AttributeError:  # a categorical or log axis has no scalar formatter
            pass
    ax.tick_params(labelsize=8)


def _grid(n: int, max_cols: int = 3, size=(4.4, 3.4)):
    plt = pyplot()
    cols = min(max_cols, max(1, n))
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(
        rows, cols, figsize=(size[0] * cols, size[1] * rows + 0.4), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat


def _save(fig, path):
    fig.savefig(path, dpi=110)
    pyplot().close(fig)


def quantile_bands(t, bands: dict, path, title: str = "", labels: dict | None = None) -> None:
    """bands: name -> statistics.time_bands(...) dict; median, mean, and the outer/inner quantile bands."""
    fig, axes = _grid(len(bands))
    for i, (ax, (name, b)) in enumerate(zip(axes, bands.items())):
        q, levels = np.asarray(b["quantiles"]), np.asarray(b["levels"])
        m = len(levels)
        for lo in range(m // 2):
            ax.fill_between(
                t,
                q[lo],
                q[m - 1 - lo],
                alpha=0.18 + 0.17 * lo,
                color="C0",
                lw=0,
                label=f"{100 * levels[lo]:g}–{100 * levels[m - 1 - lo]:g} % of samples",
            )
        if m % 2:
            ax.plot(t, q[m // 2], color="C0", lw=1.2, label="median")
        ax.plot(t, b["mean"], color="C3", lw=1.0, ls="--", label="mean")
        text, unit = describe(name, labels)
        ax.set_title(textwrap.fill(f"{text} (n = {b['n']})", 45), fontsize=9)
        ax.set_ylabel(f"[{unit}]" if unit and unit != "1" else "value", fontsize=9)
        ax.set_xlabel("t [s]", fontsize=9)
        _tidy(ax)
        if i == 0:
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    _save(fig, path)


def histograms(values: dict, valid, path, bins: int = 40, title: str = "", labels: dict | None = None) -> None:
    """values: name -> (N,) scalar outcome; one histogram per outcome over the valid samples."""
    fig, axes = _grid(len(values))
    valid = np.asarray(valid, bool)
    for ax, (name, x) in zip(axes, values.items()):
        v = np.asarray(x, float)[valid]
        v = v[np.isfinite(v)]
        ax.hist(v, bins=bins, color="C0", alpha=0.8)
        if v.size:
            ax.axvline(v.mean(), color="C3", ls="--", lw=1, label=f"mean {v.mean():.4g}")
            ax.legend(fontsize=7)
        ax.set_title(f"n = {v.size}", fontsize=8)
        ax.set_xlabel(axis_label(name, labels), fontsize=9)
        ax.set_ylabel("samples", fontsize=9)
        _tidy(ax)
    if title:
        fig.suptitle(title, fontsize=10)
    _save(fig, path)


def sensitivity_bars(indices: dict, param_names, path, title: str = "", labels: dict | None = None) -> None:
    """indices: outcome -> SobolIndices; bars of S1 and ST per parameter with CI error bars."""
    fig, axes = _grid(len(indices))
    x = np.arange(len(param_names))
    w = 0.38
    for i, (ax, (name, s)) in enumerate(zip(axes, indices.items())):
        for off, val, ci, label, color in (
            (-w / 2, s.S1, s.S1_ci, "first order S1", "C0"),
            (w / 2, s.ST, s.ST_ci, "total ST", "C1"),
        ):
            val = np.asarray(val, float)
            ci = np.asarray(ci, float)
            err = np.abs(np.stack([val - ci[:, 0], ci[:, 1] - val]))
            ax.bar(x + off, np.nan_to_num(val), w, yerr=np.nan_to_num(err), capsize=3, color=color, label=label)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xticks(x, [textwrap.fill(describe(p, labels)[0], 14) for p in param_names], fontsize=8)
        ax.set_ylim(min(-0.05, ax.get_ylim()[0]), max(1.05, ax.get_ylim()[1]))
        ax.set_ylabel(f"Sobol index ({100 * s.confidence:g} % interval)", fontsize=8)
        ax.set_title(textwrap.fill(describe(name, labels)[0], 45), fontsize=9)
        if i == 0:
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    _save(fig, path)


def scatter(
    params: dict, outcomes: dict, valid, path, max_points: int = 4000, seed: int = 0, labels: dict | None = None
) -> None:
    """A grid: rows = outcomes, columns = parameters; each valid sample one dot."""
    plt = pyplot()
    valid = np.asarray(valid, bool)
    idx = np.flatnonzero(valid)
    if idx.size > max_points:
        idx = np.sort(np.random.default_rng(seed).choice(idx, max_points, replace=False))
    rows, cols = max(1, len(outcomes)), max(1, len(params))
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols + 0.6, 2.6 * rows), squeeze=False, layout="constrained")
    for r, (oname, y) in enumerate(outcomes.items()):
        for c, (pname, x) in enumerate(params.items()):
            ax = axes[r, c]
            ax.scatter(np.asarray(x)[idx], np.asarray(y)[idx], s=3, alpha=0.35, color="C0", lw=0)
            if r == rows - 1:
                ax.set_xlabel(axis_label(pname, labels, 24), fontsize=8)
            else:
                ax.tick_params(labelbottom=False)
            if c == 0:
                ax.set_ylabel(axis_label(oname, labels, 24), fontsize=8)
            else:
                ax.tick_params(labelleft=False)
            _tidy(ax, 4, 4)
    _save(fig, path)


def _indexed(names) -> dict:
    """Families of names that differ only by a trailing number (``clearance_1 … clearance_6``,
    ``free_flight:joint_1 …``): stem -> {number: name}, families of two or more members only."""
    families: dict = {}
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m:
            families.setdefault(m.group(1), {})[int(m.group(2))] = name
    return {stem: members for stem, members in families.items() if len(members) >= 2}


def indexed_pairs(params, outcomes) -> list:
    """Outcome and parameter families numbered alike, to read outcome k against parameter k (a joint's free
    flight against its own clearance): [({k: outcome name}, {k: parameter name})]."""
    by_params = _indexed(params).values()
    return [(o, p) for o in _indexed(outcomes).values() for p in by_params if set(o) == set(p)]


def scatter_by_index(params: dict, outcomes: dict, valid, path, labels: dict | None = None) -> bool:
    """A row per numbered family of outcomes, a panel per number k: outcome k against parameter k (every
    joint's free flight against its own clearance), the rows' panels on one y scale; False (no file) when
    no family pairs up."""
    pairs = indexed_pairs(params, outcomes)
    if not pairs:
        return False
    plt = pyplot()
    valid = np.asarray(valid, bool)
    cols = max(len(members) for members, _ in pairs)
    fig, axes = plt.subplots(
        len(pairs), cols, figsize=(2.6 * cols + 0.6, 2.5 * len(pairs) + 0.3), squeeze=False, layout="constrained"
    )
    for row, (members, p_members) in zip(axes, pairs):
        first = members[min(members)]
        text, unit = describe(first, labels)
        tail = first.rpartition(":")[2]  # ``joint_1`` of ``free_flight:joint_1``
        for ax, k in zip(row, sorted(members)):
            x = np.asarray(params[p_members[k]], float)[valid]
            y = np.asarray(outcomes[members[k]], float)[valid]
            ax.scatter(x, y, s=4, alpha=0.5, lw=0, color="C0")
            if ax is not row[0]:
                ax.sharey(row[0])
            ax.set_title(textwrap.fill(text.replace(tail, members[k].rpartition(":")[2]), 34), fontsize=8)
            ax.set_xlabel(axis_label(p_members[k], labels, 24), fontsize=8)
            _tidy(ax, 3, 4)
        row[0].set_ylabel(f"[{unit}]" if unit and unit != "1" else "value", fontsize=8)
        for ax in row[len(members) :]:
            ax.set_visible(False)
    _save(fig, path)
    return True


def pce_diagnostics(fits: dict, path, title: str = "") -> None:
    """fits: outcome -> pce.PCE. Left: 1 − Q² per outcome (log scale, the reliability threshold dashed;
    red bars are unreliable fits); right: each expansion's largest |c_α| per total degree (its decay)."""
    names = list(fits)
    fig, (ax0, ax1) = pyplot().subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    err = np.array([max(1.0 - f.q2, 1e-16) for f in fits.values()])
    colors = ["C0" if f.reliable else "C3" for f in fits.values()]
    ax0.bar(np.arange(len(names)), err, color=colors)
    thresholds = {1.0 - f.min_q2 for f in fits.values()}
    for t in thresholds:
        ax0.axhline(t, color="k", ls="--", lw=0.8, label=f"1 − Q² = {t:g} (unreliable above)")
    ax0.set_yscale("log")
    ax0.set_xticks(np.arange(len(names)), names, rotation=25, fontsize=7, ha="right")
    ax0.set_ylabel("1 − Q² (cross-validated)")
    ax0.legend(fontsize=7)
    for name, f in fits.items():
        deg, cmax = f.degree_decay()
        keep = (deg > 0) & (cmax > 0)  # the mean (degree 0) is not part of the decay; unpicked degrees have none
        if f.variance > 0 and keep.any():
            ax1.semilogy(
                deg[keep],
                cmax[keep] / np.sqrt(f.variance),
                "o-",
                ms=3,
                label=f"{name} (p = {f.degree}, {f.n_terms} terms)",
            )
    ax1.set_xlabel("total degree")
    ax1.set_ylabel("largest |c_α| of the degree / std")
    ax1.legend(fontsize=6)
    if title:
        fig.suptitle(title, fontsize=10)
    _save(fig, path)


def reliability_domain(
    X,
    y,
    failed,
    names,
    importance,
    limit,
    result: dict,
    path,
    title: str = "",
    labels: dict | None = None,
    boundary=None,
) -> None:
    """Every simulated point of a reliability study, failed ones in red. Left: the two most important inputs
    (by ``importance``) with the design point where the method has one and ``boundary`` (points (m, 2) on
    those inputs: FORM's linearised limit state) dashed (one input: the outcome against it); right: the
    outcome against the most important input, the threshold dashed."""
    X, y, failed = np.asarray(X, float), np.asarray(y, float), np.asarray(failed, bool)
    order = np.argsort(-np.nan_to_num(np.asarray(importance, float), nan=-1.0), kind="stable")
    first = order[0]
    design = result.get("design_point")
    two = len(names) > 1
    fig, axes = pyplot().subplots(1, 1 + two, figsize=(10 if two else 6.5, 4.2), squeeze=False, layout="constrained")
    axes = axes[0]

    def points(ax, a, b):
        ax.scatter(a[~failed], b[~failed], s=4, alpha=0.4, color="0.55", lw=0, label="safe")
        ax.scatter(a[failed], b[failed], s=5, alpha=0.6, color="C3", lw=0, label="failed")

    def against_outcome(ax):
        points(ax, X[:, first], y)
        ax.axhline(limit.threshold, color="k", ls="--", lw=0.9, label=f"threshold {limit.threshold:g}")
        ax.set_xlabel(axis_label(names[first], labels), fontsize=9)
        ax.set_ylabel(axis_label(limit.outcome, labels), fontsize=9)
        _tidy(ax)

    if len(names) > 1:
        second = order[1]
        ax = axes[0]
        points(ax, X[:, first], X[:, second])
        if boundary is not None:
            b = np.asarray(boundary, float)
            ax.plot(b[:, 0], b[:, 1], "k--", lw=0.9, label="FORM's linearised limit state")
        if design is not None:
            ax.plot(design[names[first]], design[names[second]], "k*", ms=12, label="design point")
        ax.set_xlabel(axis_label(names[first], labels), fontsize=9)
        ax.set_ylabel(axis_label(names[second], labels), fontsize=9)
        ax.set_title("the two most important inputs", fontsize=9)
        _tidy(ax)
        ax.legend(fontsize=7)
        against_outcome(axes[1])
    else:
        against_outcome(axes[0])
        if design is not None:
            axes[0].axvline(design[names[first]], color="k", lw=0.8, label="design point")
        axes[0].legend(fontsize=7)
    p, se = result.get("probability"), result.get("standard_error")
    estimate = "no estimate" if p is None else f"P_f = {p:.3g}" + (f" ± {se:.2g}" if se else "")
    fig.suptitle(
        f"{title}: failure when {result['failure_when']}; {estimate} ({result['n_simulations']} simulations)",
        fontsize=10,
    )
    _save(fig, path)


def interval_range(
    X, y, names, outcome: str, result: dict, path, paths=None, title: str = "", labels: dict | None = None
) -> None:
    """An interval study at a glance. Left: the simulated points on the first two inputs (one input: the
    outcome against it), coloured by the outcome, with the extremes each search located and the gradient
    search's paths; right: the ranges — the Chebyshev result, its surrogate's extremes, the gradient search,
    the enclosure — over every simulated value."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    ok = np.isfinite(y)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2), layout="constrained")
    ch, gr = result["chebyshev"], result.get("gradient")
    ax = axes[0]
    two = len(names) > 1
    if two:
        sc = ax.scatter(X[ok, 0], X[ok, 1], c=y[ok], s=10, cmap="viridis", lw=0, label="simulated")
        fig.colorbar(sc, ax=ax, shrink=0.85).set_label(axis_label(outcome, labels, 30), fontsize=8)
        ax.set_ylabel(axis_label(names[1], labels), fontsize=9)
    else:
        ax.scatter(X[ok, 0], y[ok], s=10, color="0.45", lw=0, label="simulated")
        ax.set_ylabel(axis_label(outcome, labels), fontsize=9)

    def where(point: dict, value: float):
        return (point[names[0]], point[names[1]]) if two else (point[names[0]], value)

    for p in (paths or []) if two else []:  # the paths' values are not kept: drawn on two inputs only
        if len(p) > 1:
            q = np.asarray(p, float)
            ax.plot(q[:, 0], q[:, 1], "-", color="C1", lw=0.7, alpha=0.7)
    ax.plot(*where(ch["argmin"], ch["lower"]), "v", color="C0", ms=10, mec="k", label="Chebyshev minimum")
    ax.plot(*where(ch["argmax"], ch["upper"]), "^", color="C3", ms=10, mec="k", label="Chebyshev maximum")
    if gr is not None:
        ax.plot(*where(gr["argmin"], gr["lower"]), "o", mfc="none", mec="C0", ms=15, mew=1.5, label="gradient minimum")
        ax.plot(*where(gr["argmax"], gr["upper"]), "o", mfc="none", mec="C3", ms=15, mew=1.5, label="gradient maximum")
    ax.set_xlabel(axis_label(names[0], labels), fontsize=9)
    ax.set_title("simulated points and located extremes", fontsize=9)
    _tidy(ax)
    ax.legend(fontsize=7, loc="best")

    ax = axes[1]
    rows = [("Chebyshev (re-simulated)", ch["lower"], ch["upper"], "C0")]
    rows.append(("surrogate's extremes", ch["surrogate_lower"], ch["surrogate_upper"], "C2"))
    if gr is not None:
        rows.append(("gradient search", gr["lower"], gr["upper"], "C1"))
    rows.append((f"enclosure (± tolerance {result['tolerance']:.2g})", *result["enclosure"], "k"))
    for k, (_, a, b, color) in enumerate(rows):
        ax.plot([a, b], [k, k], "-|", color=color, lw=3, ms=14)
    ax.scatter(y[ok], np.full(int(ok.sum()), -1.0), marker="|", s=60, color="0.5", lw=0.6)
    ax.set_yticks(range(-1, len(rows)), ["every simulated value"] + [r[0] for r in rows], fontsize=8)
    ax.set_ylim(-1.7, len(rows) - 0.3)
    ax.set_xlabel(axis_label(outcome, labels), fontsize=9)
    ax.set_title(f"range [{result['lower']:.5g}, {result['upper']:.5g}]", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="x", labelsize=8)
    agree = result.get("comparison", {}).get("agree")
    verdict = "" if agree is None else ("; the searches agree" if agree else "; the searches DISAGREE")
    fig.suptitle(f"{title}{verdict} ({result['n_simulations']} simulations)", fontsize=10)
    _save(fig, path)


def fuzzy_membership(result: dict, inputs: dict, outcome: str, path, title: str = "", labels: dict | None = None):
    """A fuzzy study at a glance: the output's membership function (each α-cut's range as a horizontal bar at
    height α, the lower and upper ends joined, the crisp value at α = 1), and beside it each input's
    triangular membership function."""
    cuts = result["cuts"]
    alpha = np.array([c["alpha"] for c in cuts])
    lower = np.array([c["lower"] for c in cuts])
    upper = np.array([c["upper"] for c in cuts])
    n = len(inputs)
    plt = pyplot()
    fig = plt.figure(figsize=(6.5 + 3.0 * min(n, 3), 4.2), layout="constrained")
    grid = fig.add_gridspec(min(n, 3) if n > 1 else 1, 2, width_ratios=[2.2, 1.0])
    ax = fig.add_subplot(grid[:, 0])
    ax.fill_betweenx(alpha, lower, upper, color="C0", alpha=0.18, lw=0)
    ax.plot(np.r_[lower, upper[::-1]], np.r_[alpha, alpha[::-1]], "-o", color="C0", ms=4, label="membership")
    for c in cuts:
        if c.get("widened"):
            ax.plot([c["located_lower"], c["located_upper"]], [c["alpha"]] * 2, ":", color="C3", lw=1.2)
    if any(c.get("widened") for c in cuts):
        ax.plot([], [], ":", color="C3", label="located range before nesting")
    ax.plot(result["crisp"], 1.0, "k*", ms=12, label=f"crisp (modes): {result['crisp']:.5g}")
    ax.set_ylim(-0.03, 1.05)
    ax.set_ylabel("membership α", fontsize=9)
    ax.set_xlabel(axis_label(outcome, labels), fontsize=9)
    ax.set_title(f"output: support [{lower[0]:.5g}, {upper[0]:.5g}]", fontsize=9)
    ax.grid(alpha=0.3)
    _tidy(ax)
    ax.legend(fontsize=7, loc="upper left")
    for k, (name, law) in enumerate(list(inputs.items())[:3]):
        a = fig.add_subplot(grid[k, 1])
        a.plot([law.lo, law.mode, law.hi], [0.0, 1.0, 0.0], "-", color="C2")
        a.set_xlabel(axis_label(name, labels, 30), fontsize=8)
        a.set_ylabel("membership", fontsize=8)
        a.set_ylim(-0.03, 1.05)
        a.set_yticks([0, 0.5, 1])
        _tidy(a, ny=3)
    agree = result.get("agree")
    verdict = "" if agree is None else ("; the searches agree at every cut" if agree else "; the searches DISAGREE")
    fig.suptitle(f"{title}{verdict} ({result['n_simulations']} simulations)", fontsize=10)
    _save(fig, path)

"""Study figures: every panel has axis labels (with units where the quantity has one), readable names, and a
log axis that stays within the positive losses."""

import types

import numpy as np
import pytest

from jaxcontact.studies import plots
from jaxcontact.studies.identify_plots import convergence_plot
from jaxcontact.studies.sensitivity import sobol_indices

OUTCOMES = [
    types.SimpleNamespace(name="peak_impulse", description="largest normal impulse in one step", unit="N·s"),
    types.SimpleNamespace(name="series:gap", description="gap of contact 0", unit="m"),
    types.SimpleNamespace(name="final:bar1.theta", description="final of bar1.theta over the run", unit=""),
]


@pytest.fixture
def captured(monkeypatch):
    """The figures the plot functions save, kept open for inspection."""
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig))
    monkeypatch.setattr("jaxcontact.studies.identify_plots._save", lambda fig, path: figs.append(fig))
    yield figs
    for f in figs:
        plots.pyplot().close(f)


def _texts(ax):
    return [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()] + [t.get_text() for t in ax.get_xticklabels()]


def test_every_panel_is_labelled_with_units_and_readable_names(captured):
    rng = np.random.default_rng(0)
    labels = plots.study_labels(
        OUTCOMES, ["restitution", "wall_distance"]
    )  # units by the conventions of the names (study_labels takes a unit function, not a model name)
    t = np.linspace(0, 1, 11)
    band = {
        "quantiles": np.sort(rng.random((5, 11)), axis=0),
        "levels": [0.05, 0.25, 0.5, 0.75, 0.95],
        "mean": rng.random(11),
        "n": 8,
    }
    plots.quantile_bands(t, {"series:gap": band}, "x.png", "title", labels=labels)
    scalars = {"peak_impulse": rng.random(24), "final:bar1.theta": rng.random(24)}
    valid = np.ones(24, bool)
    plots.histograms(scalars, valid, "x.png", title="title", labels=labels)
    plots.scatter(
        {"restitution": rng.random(24), "wall_distance": rng.random(24)}, scalars, valid, "x.png", labels=labels
    )
    idx = {k: sobol_indices(v, 2, n_bootstrap=20) for k, v in scalars.items()}
    plots.sensitivity_bars(idx, ["restitution", "wall_distance"], "x.png", "Sobol", labels=labels)
    bands, hist, scat, sens = captured
    ax = bands.axes[0]
    assert ax.get_xlabel() == "t [s]" and ax.get_ylabel() == "[m]" and "gap of contact 0" in ax.get_title()
    xlabels = [" ".join(a.get_xlabel().split()) for a in hist.axes if a.get_visible()]
    assert xlabels == ["largest normal impulse in one step [N·s]", "final of bar1.theta over the run [rad]"]
    assert all(a.get_ylabel() == "samples" for a in hist.axes if a.get_visible())
    assert [a.get_xlabel() for a in scat.axes[-2:]] == ["restitution", "wall_distance [m]"]
    assert all(a.get_ylabel() for a in sens.axes if a.get_visible())
    for fig in captured:
        assert fig.get_layout_engine() is not None  # constrained layout: no overlap, no clipping
        for a in fig.axes:
            assert not any("series:" in s or "final:" in s for s in _texts(a)), _texts(a)


def test_convergence_plot_of_an_exact_fit_keeps_its_log_axis_on_positive_losses(captured):
    loss = np.array([1e2, 1.0, 1e-6, 0.0, 0.0])
    res = types.SimpleNamespace(
        estimates={"restitution": 0.6},
        std={"restitution": 0.0},
        loss_history=loss,
        tau_history=np.full(5, np.nan),
        param_history=np.linspace(0.5, 0.6, 5)[:, None],
    )
    convergence_plot(res, "x.png")
    (fig,) = captured
    lossax, parax = fig.axes
    assert lossax.get_ylim()[0] > 1e-12 and lossax.get_xlim()[1] >= 5
    assert "exact" in " ".join(t.get_text() for t in lossax.get_legend().get_texts())
    assert parax.get_title() == "restitution = 0.6 (exact fit)"


def test_numbered_outcomes_are_drawn_against_their_own_numbered_parameter(captured):
    # Outcome k against parameter k (a joint's free flight against its own clearance): families pair by their
    # numbers only; an outcome or parameter without a family of the same numbers is left out.
    rng = np.random.default_rng(0)
    c = {f"clearance_{k}": rng.uniform(1e-4, 3e-4, 50) for k in (1, 2, 3)}
    params = {**c, "restitution": rng.uniform(0.5, 0.9, 50)}
    outcomes = {f"free_flight:joint_{k}": 100 * c[f"clearance_{k}"] + k for k in (1, 2, 3)}
    outcomes |= {"impacts": rng.integers(0, 9, 50), "max:gap_1": rng.random(50), "max:gap_2": rng.random(50)}
    assert plots.indexed_pairs(params, outcomes) == [
        ({k: f"free_flight:joint_{k}" for k in (1, 2, 3)}, {k: f"clearance_{k}" for k in (1, 2, 3)})
    ]
    labels = {"clearance_1": ("clearance_1", "m"), "free_flight:joint_1": ("fraction of steps with joint_1 open", "")}
    valid = np.ones(50, bool)
    valid[0] = False
    assert plots.scatter_by_index(params, outcomes, valid, "unused.png", labels)
    axes = captured[-1].axes
    assert [ax.get_xlabel() for ax in axes] == ["clearance_1 [m]", "clearance 2", "clearance 3"]
    assert "joint_3 open" in axes[2].get_title().replace("\n", " ")
    dots = [ax.collections[0].get_offsets() for ax in axes]
    assert [len(d) for d in dots] == [49, 49, 49]  # the invalid sample is not drawn
    np.testing.assert_allclose(dots[2][:, 1], 100 * dots[2][:, 0] + 3)  # panel k = 3 reads clearance_3
    assert not plots.scatter_by_index({"restitution": params["restitution"]}, outcomes, valid, "unused.png")

"""Monte Carlo runs every scheme through the one time loop: a study equals single ``simulate`` runs."""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping import EventDriven, MoreauJean, Penalty
from jaxcontact.studies.distributions import ParamSpace
from jaxcontact.studies.montecarlo import StudySpec, run_study
from jaxcontact.studies.outcomes import outcome

SLIDER_OUTCOMES = ("final:slider.x", "max:slider.x", "peak_impulse", "impacts", "max_phi", "series:slider.x")
CASES = {
    "moreau-jean": (
        "bouncing-ball",
        MoreauJean(),
        ("restitution=uniform(0.5,0.9)", "height=uniform(0.5,1.0)"),
        ("peak_impulse", "impacts", "rest_time", "rebound:y", "max_penetration", "series:y"),
        0.6,
    ),
    "penalty": ("slider-bar", Penalty(), ("omega=uniform(10,14)", "friction=uniform(0.1,0.2)"), SLIDER_OUTCOMES, 0.1),
    "event-driven": (
        "slider-bar",
        EventDriven(),
        ("omega=uniform(10,14)", "friction=uniform(0.1,0.2)"),
        SLIDER_OUTCOMES,
        0.02,
    ),
}


@pytest.mark.parametrize(
    "name", [n if n != "event-driven" else pytest.param(n, marks=pytest.mark.slow) for n in CASES]
)  # event-driven: ~45 s of compile and Lemke solves
def test_study_equals_a_loop_of_single_simulate_runs(name, tmp_path):
    model, scheme, params, outcomes, t_final = CASES[name]
    spec = StudySpec(
        get_model(model),  # a study takes the Model object, not its name
        ParamSpace.parse(params),
        n=4,
        outcomes=outcomes,
        sensitivity=False,
        t_final=t_final,
        save_every=4,
        scheme=scheme,
        chunk_size=4,
    )
    summary = run_study(spec, str(tmp_path), progress=False, plot=False)
    assert summary["failures"]["n_failed"] == 0
    assert summary["study"]["scheme"] == scheme.for_forward_runs().config()
    data = np.load(tmp_path / "samples.npz")
    m0 = get_model(model)
    for i in range(4):
        sample = {k.split(":", 1)[1]: float(data[k][i]) for k in data.files if k.startswith("param:")}
        m = get_model(model, **sample)
        traj = simulate_model(m, t_final=t_final, scheme=scheme)
        for o in outcomes:
            single = np.asarray(outcome(o, m0.system, save_every=4).fn(traj, m.system, m.params))
            np.testing.assert_allclose(data[f"out:{o}"][i], single, rtol=1e-12, atol=1e-14, err_msg=f"{name} {o}")
    if model == "slider-bar":  # compliant contacts are simulated, not dropped: the outcomes vary with the samples
        for o in ("final:slider.x", "peak_impulse"):
            assert np.std(data[f"out:{o}"]) > 1e-3 * np.mean(np.abs(data[f"out:{o}"]))
        assert np.all(data["out:peak_impulse"] > 0)


def test_a_study_runs_the_schemes_variant_for_forward_runs_unless_differentiated():
    """Moreau–Jean's forward variant stops the cone sweeps at the tolerance (the implicit solve); the study
    records the scheme it ran, and a differentiated evaluator (pce-grad) keeps the scheme as given."""
    from jaxcontact.studies.montecarlo import prepare_study

    spec = StudySpec(
        get_model("bouncing-ball"),
        ParamSpace.parse(("restitution=uniform(0.5,0.9)",)),
        n=4,
        outcomes=("impacts",),
        sensitivity=False,
        scheme=MoreauJean(iterations=30),
    )
    assert prepare_study(spec).scheme == MoreauJean(iterations=30, differentiation="implicit")
    assert prepare_study(spec, differentiated=True).scheme == MoreauJean(iterations=30)
    assert Penalty().for_forward_runs() == Penalty()


def test_the_study_options_of_a_scheme_yield_to_the_command_line():
    import argparse

    from jaxcontact.commands.scheme_options import add_scheme_arguments, scheme_from_args

    p = argparse.ArgumentParser()
    add_scheme_arguments(p)
    study = {"moreau-jean": {"iterations": 500, "tol": 1e-4}}
    assert scheme_from_args(p.parse_args([]), "moreau-jean", study) == MoreauJean(iterations=500, tol=1e-4)
    assert scheme_from_args(p.parse_args(["--iterations", "20"]), "moreau-jean", study) == MoreauJean(
        iterations=20, tol=1e-4
    )
    assert scheme_from_args(p.parse_args(["--scheme", "penalty"]), "moreau-jean", study) == Penalty()


@pytest.mark.slow  # box tosses of 1 s: ~30 s of compile and solves
def test_box_toss_default_study_converges_and_equals_single_runs(tmp_path):
    """The default box study (NSGS to Siconos' error 1e-4, at most 500 sweeps, see box_toss.STUDY) converges on
    every sample, tumbling boxes included, and equals single runs of the same scheme."""
    from jaxcontact.studies.montecarlo import default_study

    spec = default_study(get_model("box-toss"), n=4, t_final=1.0, sensitivity=False, chunk_size=8)
    summary = run_study(spec, str(tmp_path), progress=False, plot=False)
    assert summary["failures"]["n_failed"] == 0
    run = summary["study"]["scheme"]
    assert (run["differentiation"], run["iterations"], run["tol"]) == ("implicit", 500, 1e-4)
    data = np.load(tmp_path / "samples.npz")
    m0 = get_model("box-toss")
    for i in range(len(data["valid"])):
        sample = {k.split(":", 1)[1]: float(data[k][i]) for k in data.files if k.startswith("param:")}
        m = get_model("box-toss", **sample)
        traj = simulate_model(m, t_final=1.0, scheme=spec.scheme.for_forward_runs())
        for o in ("final:box.x", "final:box.y", "impacts"):
            single = np.asarray(outcome(o, m0.system).fn(traj, m.system, m.params))
            np.testing.assert_allclose(data[f"out:{o}"][i], single, rtol=1e-12, atol=1e-12, err_msg=o)


def test_a_forward_study_of_spatial_cones_runs_in_the_solves_sub_batches(tmp_path, monkeypatch):
    """Cone contacts on the staged sweeps ask for sub-batches of ``SAMPLES_PER_CALL`` samples (a study passes that to
    its runner); the fixed sweeps of a differentiated run, the cones' Newton and planar contacts take the whole
    batch."""
    import jaxcontact.studies.montecarlo as montecarlo
    from jaxcontact.stepping.cone_contacts import SAMPLES_PER_CALL

    box, four_bar = get_model("box-toss"), get_model("four-bar")
    assert MoreauJean().for_forward_runs().samples_per_call(box.system) == SAMPLES_PER_CALL
    assert MoreauJean().samples_per_call(box.system) is None
    assert MoreauJean(solver="newton").for_forward_runs().samples_per_call(box.system) is None
    assert MoreauJean().for_forward_runs().samples_per_call(four_bar.system) is None
    assert Penalty().samples_per_call(get_model("slider-bar").system) is None

    asked = {}

    class Stop(Exception):
        pass

    def spy(*args, **kwargs):
        asked.update(kwargs)
        raise Stop

    monkeypatch.setattr(montecarlo, "run_samples", spy)
    for model, expected in ((box, SAMPLES_PER_CALL), (four_bar, None)):
        spec = montecarlo.default_study(model, n=4, sensitivity=False)
        with pytest.raises(Stop):
            run_study(spec, str(tmp_path / model.name), progress=False, plot=False)
        assert asked["samples_per_call"] == expected
